/**
 * The one place Redis clients are made. Every process (gateway, worker, CLI) and every test gets
 * its clients here, for one Redis or for a Redis Cluster alike; code that uses a client takes a
 * `RedisClient` and works on both, as long as it keeps to the cluster's rules:
 *
 * - a Lua script or a MULTI touches only keys that share a hash tag (`hashTag` in
 *   src/core/redisKeySlot.ts): `shardql:{inv}:seq` and `shardql:{inv}:log` may go in one script,
 *   `l:…:1` and `l:…:2` may not;
 * - a batch of commands over keys of many slots goes through `pipelinePerNode` (one pipeline per
 *   primary, in parallel), never through one `client.pipeline()`;
 * - nothing enumerates or empties the keyspace (KEYS, SCAN, FLUSHALL, DBSIZE): on a cluster each
 *   answers for one node only.
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { TlsTrust } from '../core/tlsTrust.ts';

export interface RedisEndpoint {
  readonly host: string;
  readonly port: number;
}

/**
 * How to get in: a password (`requirepass`, or an ACL user's with `username`) and TLS. For a
 * cluster, every node is reached the same way.
 */
export interface RedisAccess {
  /** An ACL user (Redis 6+); with only a password, the `default` user. */
  readonly username?: string;
  readonly password?: string;
  /** Connect over TLS, checking the server's certificate against `ca` (PEM), else Node's CA bundle. */
  readonly tls?: TlsTrust;
}

/**
 * Where Redis is: one server (`{ host, port }`), or a Redis Cluster named by some of its nodes
 * (`{ cluster: [...] }`; the client asks them for the rest of the cluster and its slot map); and
 * how to get in (`access`; none: no password, no TLS).
 */
export type RedisTarget = (RedisEndpoint | { readonly cluster: readonly RedisEndpoint[] }) & { readonly access?: RedisAccess };

/** A client of either kind: every command, script (`defineCommand`) and `pipeline` works on both. */
export type RedisClient = Redis | Cluster;

/**
 * How a client behaves while Redis is away:
 * - `cache`: fails fast, for look-aside caches, the invalidation log, persisted queries and rate
 *   limits. Not connected until `connect()` (which says whether Redis answered); no offline queue,
 *   no retried command; a command fails after 2 × `timeoutMs`. A miss is cheaper than a wait.
 * - `producer`: the job queue of a gateway or a CLI command: a command fails after one retry, and
 *   after `timeoutMs` unanswered. A request enqueues after its write committed (a new pin's
 *   fan-out): a hung Redis (its socket open and silent) must not hold the answer, and a job that
 *   could not be enqueued waits in the write's intent for the repair pass.
 * - `worker`: BullMQ workers: commands wait out a Redis restart (BullMQ requires this of the
 *   clients its blocking fetches use).
 * All reconnect by themselves.
 */
export type RedisRole = 'cache' | 'producer' | 'worker';

export interface RedisClientOptions {
  readonly role: RedisRole;
  /** Shown by CLIENT LIST on every node, e.g. `shardql-cache`. Default `shardql-<role>`. */
  readonly name?: string;
  /**
   * `cache`: the caller's own bound on one call, ms (commands time out at twice it). Default 500.
   * `producer`: a command's bound, ms. Default 1000. Not for `worker` (its blocking fetches wait).
   */
  readonly timeoutMs?: number;
}

export function isClusterTarget(target: RedisTarget): target is { readonly cluster: readonly RedisEndpoint[] } {
  return 'cluster' in target;
}

/** For operators' messages: `Redis at 10.0.0.5:6379`, `the Redis Cluster at a:7000,b:7001`. */
export function describeRedisTarget(target: RedisTarget): string {
  return isClusterTarget(target) ? `the Redis Cluster at ${target.cluster.map(endpointText).join(',')}` : `Redis at ${endpointText(target)}`;
}

const endpointText = (e: RedisEndpoint): string => `${e.host}:${e.port}`;

/** Options of one connection (for a cluster: of each node's), by role, with the target's access. */
function connectionOptions(opts: RedisClientOptions, access: RedisAccess | undefined): RedisOptions {
  const connectionName = opts.name ?? `shardql-${opts.role}`;
  const credentials: RedisOptions = {
    ...(access?.username !== undefined ? { username: access.username } : {}),
    ...(access?.password !== undefined ? { password: access.password } : {}),
    ...(access?.tls ? { tls: access.tls.ca !== undefined ? { ca: access.tls.ca } : {} } : {}),
  };
  switch (opts.role) {
    case 'cache':
      return { connectionName, maxRetriesPerRequest: 0, connectTimeout: 1000, commandTimeout: (opts.timeoutMs ?? 500) * 2, ...credentials };
    case 'producer':
      return { connectionName, maxRetriesPerRequest: 1, connectTimeout: 2000, commandTimeout: opts.timeoutMs ?? 1000, ...credentials };
    case 'worker':
      return { connectionName, maxRetriesPerRequest: null, connectTimeout: 2000, ...credentials };
  }
}

const reconnectDelay = (role: RedisRole) => (times: number): number => (role === 'cache' ? Math.min(50 * times, 1000) : Math.min(100 * times, 2000));

/**
 * A client for `target` behaving as `role` says. A `cache` client is not connected yet: call
 * `connect()` (it rejects when Redis does not answer, and the client keeps trying). Errors
 * surface on the commands that fail; the client's own `error` events are silenced.
 */
export function createRedisClient(target: RedisTarget, opts: RedisClientOptions): RedisClient {
  const lazyConnect = opts.role === 'cache';
  const enableOfflineQueue = opts.role !== 'cache';
  const client: RedisClient = isClusterTarget(target)
    ? new Cluster(
        target.cluster.map((e) => ({ host: e.host, port: e.port })),
        {
          lazyConnect,
          enableOfflineQueue,
          clusterRetryStrategy: reconnectDelay(opts.role),
          redisOptions: connectionOptions(opts, target.access),
        } satisfies ClusterOptions,
      )
    : new Redis({
        host: target.host,
        port: target.port,
        lazyConnect,
        enableOfflineQueue,
        retryStrategy: reconnectDelay(opts.role),
        ...connectionOptions(opts, target.access),
      });
  // Without a listener ioredis prints every connection error.
  client.on('error', () => undefined);
  return client;
}

/** Whether a client talks to a Redis Cluster (keys spread over nodes) rather than one Redis. */
export function isClusterClient(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}
