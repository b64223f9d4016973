/**
 * What several commands share: configuration (from the environment, with the local stack's
 * stack.json as defaults), an etcd client, the published topology, storage over it, and a y/N prompt.
 */
import { createInterface } from 'node:readline/promises';
import { Etcd3 } from 'etcd3';
import type { HostSpec, Topology } from '../core/topology.ts';
import { ConfigError, loadConfig, servedEventSettings, type GatewayConfig } from '../config.ts';
import { servedEvents } from '../product/served.ts';
import { readStackInfo, type StackInfo } from '../stack/localStack.ts';
import { createStorage, type Storage } from '../storage/index.ts';
import { createCacheLayers } from '../cache/cacheLayers.ts';
import { loadTopology, type LoadedTopology } from '../topology/etcdTopology.ts';
import { etcdAccessOptions } from '../topology/etcdTopologySource.ts';
import { CliError, type CliContext, type Env } from './command.ts';
import { jobsRedis } from '../jobs/connection.ts';
import { JobQueue } from '../jobs/jobQueue.ts';
import { DEFAULT_QUEUE_PREFIX } from '../jobs/queues.ts';
import { JOB_KINDS } from '../jobs/registry.ts';

export function stackInfo(ctx: CliContext): StackInfo | null {
  return readStackInfo(ctx.stackDir);
}

/** loadConfig with the local stack (if any) as defaults; `extra` overrides variables. */
export function configFor(ctx: CliContext, extra: Env = {}): GatewayConfig {
  const info = stackInfo(ctx);
  try {
    return loadConfig({ ...ctx.env, ...extra }, info ?? undefined);
  } catch (err) {
    if (err instanceof ConfigError && info === null) {
      throw new CliError(
        `${err.message}, and there is no local stack in ${ctx.stackDir} to take defaults from: run \`shardql stack up\` or set the SHARDQL_* variables`,
      );
    }
    throw err;
  }
}

/** The stack's MariaDB hosts as a topology's `hosts`: primary and replica endpoints. */
export function stackHosts(info: StackInfo): Record<string, HostSpec> {
  return Object.fromEntries(
    info.mysql.hosts.map((h) => [
      h.name,
      h.replica
        ? { primary: { host: h.primary.host, port: h.primary.port }, replica: { host: h.replica.host, port: h.replica.port } }
        : { primary: { host: h.primary.host, port: h.primary.port } },
    ]),
  );
}

export async function withEtcd<T>(config: GatewayConfig, fn: (etcd: Etcd3) => Promise<T>): Promise<T> {
  const etcd = new Etcd3({
    ...etcdAccessOptions(config.etcdAccess),
    hosts: [...config.etcdEndpoints],
    dialTimeout: 3000,
    // A CLI should fail in seconds when etcd is down, not hang.
    defaultCallOptions: (c) => (c.isStream ? {} : { deadline: Date.now() + 10_000 }),
  });
  try {
    return await fn(etcd);
  } finally {
    etcd.close();
  }
}

/** The published, validated topology; a clear message when none is published or etcd is down. */
export async function publishedTopology(config: GatewayConfig): Promise<LoadedTopology> {
  return withEtcd(config, (etcd) => loadTopology(etcd, config.topologyKey));
}

/**
 * Storage for a command. `caches: true` for commands that change rows gateways may have cached
 * (repair, reconcile, demo data): their writes then invalidate memcached, Redis and, through the
 * invalidation log, every gateway's in-process cache, like a gateway's own writes. `admin: true`
 * connects with the admin account (DDL: the application's account may only read and write rows).
 */
export async function withStorage<T>(
  config: GatewayConfig,
  topology: Topology,
  fn: (storage: Storage) => Promise<T>,
  poolSize?: number,
  opts: { readonly caches?: boolean; readonly admin?: boolean } = {},
): Promise<T> {
  const layers = opts.caches ? await createCacheLayers({ redis: config.redis, memcached: config.memcached, nearEntries: 0 }) : undefined;
  const credentials = opts.admin ? (config.mysqlAdmin ?? config.mysql) : config.mysql;
  // The served product's events, as a gateway's: repair replays their appends, demo data writes them.
  const eventSpec = servedEvents();
  const storage = createStorage({
    topology: () => topology,
    credentials,
    events: eventSpec ? servedEventSettings(config, eventSpec) : null,
    ...(poolSize !== undefined ? { poolSize } : {}),
    ...(layers ? { cache: { objects: layers.objects, lists: layers.lists, near: layers.near } } : {}),
  });
  try {
    return await fn(storage);
  } finally {
    await storage.close();
    layers?.close();
  }
}

/** Asks a yes/no question on the terminal; anything but y/yes is no. */
export async function confirm(ctx: CliContext, question: string): Promise<boolean> {
  const rl = createInterface({ input: ctx.stdin, output: ctx.stderr });
  try {
    // End of input (Ctrl-D) and Ctrl-C both answer no.
    const answer = await new Promise<string>((resolve) => {
      rl.once('close', () => resolve(''));
      rl.once('SIGINT', () => {
        ctx.stderr.write('\n');
        resolve('');
      });
      rl.question(`${question} [y/N] `).then(resolve, () => resolve(''));
    });
    return /^\s*y(es)?\s*$/i.test(answer);
  } finally {
    rl.close();
  }
}

export function println(stream: NodeJS.WritableStream, line = ''): void {
  stream.write(`${line}\n`);
}

/**
 * The job queue on the configured Redis (one Redis or a cluster) for the length of `fn`: a producer
 * connection, closed after. Used by every command that enqueues or reads the queues.
 */
export async function withJobQueue<T>(config: GatewayConfig, fn: (queue: JobQueue<typeof JOB_KINDS>) => Promise<T>): Promise<T> {
  const redis = jobsRedis(config.redis, 'producer');
  const queue = new JobQueue({ redis, prefix: config.queuePrefix ?? DEFAULT_QUEUE_PREFIX, registry: JOB_KINDS });
  try {
    return await fn(queue);
  } finally {
    await queue.close().catch(() => undefined);
    redis.disconnect();
  }
}
