/**
 * Local development/test stack: N MariaDB primaries (optionally each with a
 * semi-sync GTID replica), Redis, memcached and a single-node etcd, all running
 * as detached processes whose config, data, logs and pid files live under one
 * directory. Ports and credentials are chosen on the first `up` and persisted,
 * so later calls (from any process) find and reuse the same stack.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { ensureBinaries } from './binaries.ts';
import { StackError } from './errors.ts';
import { ensureService, forEachService, inspectService, stopServiceProcess, throwIfFailed } from './lifecycle.ts';
import { withStackLock } from './lock.ts';
import { readInfo, readPlan, resolvePlan, writeInfo, writePlan, type StackPlan } from './plan.ts';
import type { ServiceContext, ServiceSpec } from './service.ts';
import { REDIS_CLUSTER_SERVICE, buildServices } from './services.ts';
import { ensureRedisCluster, redisClusterState } from './redisCluster.ts';
import type { StackInfo, StackOptions, StackStatus } from './types.ts';

export type { MysqlEndpoint, RedisClusterState, ServiceStatus, StackHost, StackInfo, StackOptions, StackStatus } from './types.ts';
export { StackError } from './errors.ts';
export { INNODB_BUFFER_POOL_MB_RANGE } from './plan.ts';

const noop = (): void => undefined;

/**
 * Start every service that is not running (idempotent). The first call creates
 * the stack; later calls reuse ports/credentials, restart only dead services and
 * add hosts/replicas if more are requested. Resolves once all are ready.
 */
export async function stackUp(opts: StackOptions): Promise<StackInfo> {
  const dir = resolve(opts.dir);
  const log = opts.log ?? noop;
  mkdirSync(dir, { recursive: true });
  return withStackLock(dir, async () => {
    const bins = await ensureBinaries(log);
    const want = {
      ...(opts.hosts !== undefined ? { hosts: opts.hosts } : {}),
      ...(opts.replicas !== undefined ? { replicas: opts.replicas } : {}),
      ...(opts.redisCluster !== undefined ? { redisCluster: opts.redisCluster } : {}),
      ...(opts.innodbBufferPoolMb !== undefined ? { innodbBufferPoolMb: opts.innodbBufferPoolMb } : {}),
    };
    const { plan, changed } = await resolvePlan(dir, want);
    // Persist ports before starting anything, so a failed first `up` is resumable and stoppable.
    if (changed) writePlan(dir, plan);

    await ensureAll(buildServices(dir, plan), { plan, bins, log });
    await formRedisCluster(plan, log);

    const info: StackInfo = plan.info;
    if (!isDeepStrictEqual(readInfo(dir), info)) writeInfo(dir, info);
    return structuredClone(info);
  });
}

/** The stack's Redis Cluster, if it has one: formed once its nodes run, else waited for until its nodes agree. */
async function formRedisCluster(plan: StackPlan, log: (line: string) => void): Promise<void> {
  const nodes = plan.info.redisCluster?.nodes;
  if (nodes === undefined) return;
  await ensureRedisCluster(
    nodes.map((n, i) => ({ ...n, busPort: plan.redisClusterBusPorts?.[i] ?? 0 })),
    log,
  );
}

/** Ensure all services concurrently; a service with `dependsOn` waits for that one. */
async function ensureAll(services: readonly ServiceSpec[], ctx: ServiceContext): Promise<void> {
  const done = new Map<string, Promise<unknown>>();
  for (const svc of services) {
    const dependency = svc.dependsOn === undefined ? undefined : done.get(svc.dependsOn);
    const run = dependency
      ? dependency.then(
          () => ensureService(svc, ctx),
          () => {
            throw new StackError(`${svc.name}: not started because ${svc.dependsOn} failed`, { service: svc.name });
          },
        )
      : ensureService(svc, ctx);
    done.set(svc.name, run);
  }
  throwIfFailed(await Promise.allSettled(done.values()));
}

/** Stop every service cleanly (replicas first), keeping all data. Safe when nothing runs. */
export async function stackDown(dir: string): Promise<void> {
  const root = resolve(dir);
  if (!existsSync(root)) return;
  await withStackLock(root, async () => {
    const plan = readPlan(root);
    if (plan === null) return; // plan.json is written before anything starts: nothing ever ran
    const services = buildServices(root, plan);
    const phases = [...new Set(services.map((s) => s.stopPhase))].sort((a, b) => a - b);
    for (const phase of phases) {
      await forEachService(
        services.filter((s) => s.stopPhase === phase),
        (svc) => stopServiceProcess(svc, 'SIGTERM'),
      );
    }
  });
}

/** What is configured and what actually runs (a service counts as running only if it answers). */
export async function stackStatus(dir: string): Promise<StackStatus> {
  const root = resolve(dir);
  const info = readStackInfo(root);
  const plan = readPlan(root);
  if (plan === null) return { info, services: [] };
  const services = await Promise.all(
    buildServices(root, plan).map(async (svc) => {
      const { pid, ready } = await inspectService(svc);
      return { name: svc.name, pid, running: ready, address: svc.address };
    }),
  );
  const clusterNodes = plan.info.redisCluster?.nodes;
  if (clusterNodes === undefined) return { info, services };
  return { info, services, redisCluster: await redisClusterState(clusterNodes) };
}

/** The StackInfo written by the last successful `up`, or null. */
export function readStackInfo(dir: string): StackInfo | null {
  return readInfo(resolve(dir));
}

/**
 * Stop one service, e.g. stopService(dir, 'redis') or
 * stopService(dir, 'mysql001-primary', 'SIGKILL') to simulate a crash.
 * Waits until the process is gone (SIGKILL after a grace period).
 */
export async function stopService(dir: string, name: string, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  const root = resolve(dir);
  assertStackDir(root);
  await withStackLock(root, async () => {
    await stopServiceProcess(findService(root, requirePlan(root), name), signal);
  });
}

/** Start one stopped service again with the same ports and data (no-op if it runs). */
export async function startService(dir: string, name: string): Promise<void> {
  const root = resolve(dir);
  assertStackDir(root);
  await withStackLock(root, async () => {
    const plan = requirePlan(root);
    const svc = findService(root, plan, name);
    await ensureService(svc, { plan, bins: await ensureBinaries(noop), log: noop });
    // A cluster node rejoins from its nodes.conf: back once the nodes agree again.
    if (name.startsWith(REDIS_CLUSTER_SERVICE)) await formRedisCluster(plan, noop);
  });
}

function assertStackDir(root: string): void {
  if (!existsSync(root)) throw new StackError(`No stack in ${root}; run stackUp first`);
}

function requirePlan(root: string): StackPlan {
  const plan = readPlan(root);
  if (plan === null) throw new StackError(`No stack in ${root}; run stackUp first`);
  return plan;
}

function findService(root: string, plan: StackPlan, name: string): ServiceSpec {
  const services = buildServices(root, plan);
  const svc = services.find((s) => s.name === name);
  if (!svc) {
    throw new StackError(`Unknown service "${name}"; this stack has: ${services.map((s) => s.name).join(', ')}`);
  }
  return svc;
}
