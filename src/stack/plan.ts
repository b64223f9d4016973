import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { StackError } from './errors.ts';
import { readJsonFile, writeJsonAtomic } from './files.ts';
import { LOOPBACK, allocatePorts } from './net.ts';
import type { StackHost, StackInfo } from './types.ts';

/**
 * Internal, persisted description of the stack: everything needed to (re)start
 * any service with the same ports and credentials. Written to plan.json before
 * anything starts (so a half-finished first `up` is resumable and stoppable);
 * the public stack.json is written only once everything is up.
 */
export interface StackPlan {
  version: 1;
  info: StackInfo & { replication: { user: string; password: string } };
  /** etcd's peer port is not part of the public info. */
  etcdPeerPort: number;
  /** Cluster bus ports of the Redis Cluster's nodes (same order as info.redisCluster.nodes). */
  redisClusterBusPorts?: number[];
  /** InnoDB buffer pool of every MariaDB instance, MiB (absent: DEFAULT_INNODB_BUFFER_POOL_MB). */
  innodbBufferPoolMb?: number;
}

export const PLAN_FILE = 'plan.json';
export const INFO_FILE = 'stack.json';
export const DEFAULT_HOSTS = 2;
/** Several instances share a small machine (the test stack: 3 hosts with replicas): keep caches small. */
export const DEFAULT_INNODB_BUFFER_POOL_MB = 64;
/** The buffer pool sizes a stack takes, MiB: below 32 MiB InnoDB does not start. */
export const INNODB_BUFFER_POOL_MB_RANGE = { min: 32, max: 1_048_576 } as const;
/** Primaries of the stack's Redis Cluster (`stack up --redis-cluster`): the fewest a cluster allows. */
export const REDIS_CLUSTER_NODES = 3;
const MYSQL_USER = 'shardql';
const REPLICATION_USER = 'shardql_repl';
const ADMIN_USER = 'shardql_admin';

export function hostName(index: number): string {
  return `mysql${String(index + 1).padStart(3, '0')}`;
}

function newPassword(): string {
  // base64url: no quotes/backslashes, safe in SQL literals and CLI args.
  return randomBytes(18).toString('base64url');
}

export function readPlan(dir: string): StackPlan | null {
  const raw = readJsonFile(join(dir, PLAN_FILE));
  if (raw === null) return null;
  const plan = raw as Partial<StackPlan>;
  if (plan.version !== 1 || plan.info === undefined || typeof plan.etcdPeerPort !== 'number') {
    throw new StackError(`${join(dir, PLAN_FILE)} is not a stack plan this version understands`);
  }
  return plan as StackPlan;
}

export function writePlan(dir: string, plan: StackPlan): void {
  writeJsonAtomic(join(dir, PLAN_FILE), plan);
}

export function readInfo(dir: string): StackInfo | null {
  return readJsonFile(join(dir, INFO_FILE)) as StackInfo | null;
}

export function writeInfo(dir: string, info: StackInfo): void {
  writeJsonAtomic(join(dir, INFO_FILE), info);
}

function usedPorts(plan: StackPlan): Set<number> {
  const ports = [plan.etcdPeerPort, plan.info.redis.port, plan.info.memcached.port];
  for (const url of plan.info.etcd.endpoints) ports.push(Number(new URL(url).port));
  for (const h of plan.info.mysql.hosts) {
    ports.push(h.primary.port);
    if (h.replica) ports.push(h.replica.port);
  }
  for (const n of plan.info.redisCluster?.nodes ?? []) ports.push(n.port);
  ports.push(...(plan.redisClusterBusPorts ?? []));
  return new Set(ports);
}

async function freshPlan(dir: string): Promise<StackPlan> {
  // Data without a plan means ports/passwords are lost; guessing would break replication.
  const leftovers = existsSync(dir) ? readdirSync(dir).filter((f) => /^(mysql\d{3}-|redis$|redis-cluster-\d+$|memcached$|etcd$)/.test(f)) : [];
  if (leftovers.length > 0) {
    throw new StackError(
      `${dir} contains service data (${leftovers.join(', ')}) but no ${PLAN_FILE}; ` +
        `stop any leftover processes and delete the directory to start over`,
    );
  }
  const [redis, memcached, etcdClient, etcdPeer] = (await allocatePorts(4)) as [number, number, number, number];
  return {
    version: 1,
    info: {
      dir,
      mysql: { user: MYSQL_USER, password: newPassword(), admin: { user: ADMIN_USER, password: newPassword() }, hosts: [] },
      replication: { user: REPLICATION_USER, password: newPassword() },
      redis: { host: LOOPBACK, port: redis },
      memcached: { host: LOOPBACK, port: memcached },
      etcd: { endpoints: [`http://${LOOPBACK}:${etcdClient}`] },
    },
    etcdPeerPort: etcdPeer,
  };
}

/**
 * Load the persisted plan (or create one) and grow it to the requested shape.
 * Hosts and replicas are only ever added: shrinking would orphan data.
 * Returns whether the plan changed and must be persisted.
 */
export async function resolvePlan(
  dir: string,
  want: { hosts?: number; replicas?: boolean; redisCluster?: boolean; innodbBufferPoolMb?: number },
): Promise<{ plan: StackPlan; changed: boolean }> {
  const existing = readPlan(dir);
  const plan = existing ?? (await freshPlan(dir));
  let changed = existing === null || plan.info.dir !== dir;
  plan.info.dir = dir;
  // Stacks made before the admin account existed get one (their accounts are redone at the next up).
  if (plan.info.mysql.admin === undefined) {
    plan.info.mysql.admin = { user: ADMIN_USER, password: newPassword() };
    changed = true;
  }

  if (want.innodbBufferPoolMb !== undefined && want.innodbBufferPoolMb !== (plan.innodbBufferPoolMb ?? DEFAULT_INNODB_BUFFER_POOL_MB)) {
    const { min, max } = INNODB_BUFFER_POOL_MB_RANGE;
    if (!Number.isInteger(want.innodbBufferPoolMb) || want.innodbBufferPoolMb < min || want.innodbBufferPoolMb > max) {
      throw new StackError(`innodbBufferPoolMb must be an integer number of MiB between ${min} and ${max} (got ${want.innodbBufferPoolMb})`);
    }
    plan.innodbBufferPoolMb = want.innodbBufferPoolMb;
    changed = true;
  }

  const hosts = plan.info.mysql.hosts;
  const wantHosts = want.hosts ?? (hosts.length > 0 ? hosts.length : DEFAULT_HOSTS);
  if (!Number.isInteger(wantHosts) || wantHosts < 1 || wantHosts > 999) {
    throw new StackError(`hosts must be an integer between 1 and 999 (got ${want.hosts})`);
  }
  if (wantHosts < hosts.length) {
    throw new StackError(
      `The stack in ${dir} has ${hosts.length} MySQL hosts; shrinking to ${wantHosts} is not supported ` +
        `(stop it and delete the directory to recreate it)`,
    );
  }
  // Once a stack has replicas it keeps them, even if this call did not ask for them.
  const wantReplicas = want.replicas === true || hosts.some((h) => h.replica !== undefined);

  const missingPrimaries = wantHosts - hosts.length;
  const missingReplicas = wantReplicas ? hosts.filter((h) => !h.replica).length + missingPrimaries : 0;
  // A client port and a cluster bus port per node (the default bus port, port + 10000, may not exist).
  const missingCluster = want.redisCluster === true && plan.info.redisCluster === undefined ? 2 * REDIS_CLUSTER_NODES : 0;
  const needed = missingPrimaries + missingReplicas + missingCluster;
  if (needed === 0) return { plan, changed };

  const ports = await allocatePorts(needed, usedPorts(plan));
  const take = (): number => {
    const port = ports.shift();
    if (port === undefined) throw new Error('port allocation bug: ran out of ports');
    return port;
  };
  for (let i = hosts.length; i < wantHosts; i++) {
    hosts.push({ name: hostName(i), primary: { host: LOOPBACK, port: take() } } satisfies StackHost);
  }
  if (wantReplicas) {
    for (const h of hosts) h.replica ??= { host: LOOPBACK, port: take() };
  }
  if (missingCluster > 0) {
    plan.info.redisCluster = { nodes: Array.from({ length: REDIS_CLUSTER_NODES }, () => ({ host: LOOPBACK, port: take() })) };
    plan.redisClusterBusPorts = Array.from({ length: REDIS_CLUSTER_NODES }, take);
  }
  return { plan, changed: true };
}
