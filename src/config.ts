import type { StackInfo } from './stack/localStack.ts';
import { parseRate, type Rate } from './cache/rateLimits.ts';
import { QUEUE_NAMES, parseConcurrency, parseQueueList, type QueueName } from './jobs/queues.ts';

/**
 * Everything the gateway needs from its environment. Only entry points build this (from
 * `process.env`, or from a local stack's stack.json); nothing below them reads the environment.
 */
export interface GatewayConfig {
  /** `development` shows SQL cost in every response and opens GraphiQL with a token; `production` hides both. Default production. */
  readonly env: 'development' | 'production';
  readonly port: number;
  readonly etcdEndpoints: readonly string[];
  /** etcd key of the topology document. Default /shardql/topology. */
  readonly topologyKey: string;
  readonly mysql: { readonly user: string; readonly password: string };
  /**
   * The operator's account for topology operations (shard copies, promotion, fencing): it may write
   * through read_only, which the gateway's account must not. Unset: `mysql` is used.
   */
  readonly mysqlAdmin?: { readonly user: string; readonly password: string };
  /** How often the gateway re-reads the topology besides watching it, ms. Default 5000. */
  readonly topologyRefreshMs?: number;
  readonly redis: { readonly host: string; readonly port: number };
  readonly memcached: { readonly servers: string };
  /** HMAC secret for viewer tokens (HS256). At least 32 bytes. */
  readonly jwtSecret: string;
  /** Path of a persisted-query manifest; when set, only its operations run (trusted documents). */
  readonly trustedDocuments?: string;
  // Limits and abuse (README "Limits and abuse"): every field optional, defaults in the comments.
  /** Most rows one operation may touch, estimated before it runs. Default 50000. */
  readonly maxCost?: number;
  /** Most SQL round trips one operation may need, estimated before it runs. Default 500. */
  readonly maxRoundTrips?: number;
  /** Requests per viewer and per client address. Unset: no limit. */
  readonly rateLimit?: { readonly perViewer?: Rate | undefined; readonly perAddress?: Rate | undefined };
  /** Client-side timeout of one SQL statement, ms. Default 5000. */
  readonly queryTimeoutMs?: number;
  /** Deadline of one request, ms: SQL that would start after it is refused (REQUEST_TIMEOUT). Default 10000. */
  readonly requestTimeoutMs?: number;
  /** Schema introspection. Default: on in development only. */
  readonly introspection?: boolean;
  /** Several operations per HTTP request (a JSON array). Default false. */
  readonly batchedRequests?: boolean;
  /**
   * Most entries (objects and lists) in each gateway's in-process cache, kept true across gateways
   * by the invalidation log in Redis; 0 turns it off. Default 200000.
   */
  readonly nearCacheEntries?: number;
  /**
   * Base of the job queues' Redis keys; each queue's keys share a hash tag built from it
   * (`{shardql:jobs:feed}:…`), so they work on a Redis Cluster. Default `shardql:jobs`.
   */
  readonly queuePrefix?: string;
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Env = Readonly<Record<string, string | undefined>>;

function required(env: Env, name: string): string {
  const v = env[name];
  if (v === undefined || v === '') throw new ConfigError(`${name} is not set`);
  return v;
}

function hostPort(text: string, name: string): { host: string; port: number } {
  const m = /^([^:]+):(\d{1,5})$/.exec(text);
  if (!m) throw new ConfigError(`${name} must be host:port, got ${JSON.stringify(text)}`);
  return { host: m[1]!, port: Number(m[2]) };
}

/**
 * Reads the configuration. With a local stack (`stack`), addresses and credentials default to the
 * stack's; explicit variables still win.
 *
 *   SHARDQL_ENV, SHARDQL_PORT (default 4000), SHARDQL_ETCD (comma-separated URLs),
 *   SHARDQL_TOPOLOGY_KEY, SHARDQL_MYSQL_USER, SHARDQL_MYSQL_PASSWORD, SHARDQL_REDIS (host:port),
 *   SHARDQL_MEMCACHED (host:port[,host:port]), SHARDQL_JWT_SECRET, SHARDQL_TRUSTED_DOCUMENTS,
 *   SHARDQL_MYSQL_ADMIN_USER, SHARDQL_MYSQL_ADMIN_PASSWORD, SHARDQL_TOPOLOGY_REFRESH_MS,
 *   SHARDQL_QUEUE_PREFIX
 */
export function loadConfig(env: Env, stack?: StackInfo): GatewayConfig {
  const mode = env.SHARDQL_ENV ?? (stack ? 'development' : 'production');
  if (mode !== 'development' && mode !== 'production') throw new ConfigError(`SHARDQL_ENV must be development or production, got ${JSON.stringify(mode)}`);
  const port = Number(env.SHARDQL_PORT ?? '4000');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`SHARDQL_PORT must be a port number, got ${JSON.stringify(env.SHARDQL_PORT)}`);
  const jwtSecret = env.SHARDQL_JWT_SECRET ?? (stack ? `dev-only-secret-of-${stack.mysql.password}` : required(env, 'SHARDQL_JWT_SECRET'));
  if (jwtSecret.length < 32) throw new ConfigError('SHARDQL_JWT_SECRET must be at least 32 characters');
  const trusted = env.SHARDQL_TRUSTED_DOCUMENTS;
  return {
    env: mode,
    port,
    etcdEndpoints: env.SHARDQL_ETCD ? env.SHARDQL_ETCD.split(',') : stack ? stack.etcd.endpoints : [required(env, 'SHARDQL_ETCD')],
    topologyKey: env.SHARDQL_TOPOLOGY_KEY ?? '/shardql/topology',
    mysql: {
      user: env.SHARDQL_MYSQL_USER ?? stack?.mysql.user ?? required(env, 'SHARDQL_MYSQL_USER'),
      password: env.SHARDQL_MYSQL_PASSWORD ?? stack?.mysql.password ?? required(env, 'SHARDQL_MYSQL_PASSWORD'),
    },
    redis: env.SHARDQL_REDIS ? hostPort(env.SHARDQL_REDIS, 'SHARDQL_REDIS') : stack ? stack.redis : hostPort(required(env, 'SHARDQL_REDIS'), 'SHARDQL_REDIS'),
    memcached: { servers: env.SHARDQL_MEMCACHED ?? (stack ? `${stack.memcached.host}:${stack.memcached.port}` : required(env, 'SHARDQL_MEMCACHED')) },
    jwtSecret,
    ...(trusted ? { trustedDocuments: trusted } : {}),
    ...(env.SHARDQL_QUEUE_PREFIX ? { queuePrefix: queuePrefixOf(env.SHARDQL_QUEUE_PREFIX) } : {}),
    ...limits(env, mode),
    ...adminAndRefresh(env, stack),
  };
}

/** SHARDQL_MYSQL_ADMIN_USER/PASSWORD (default: the stack's admin account) and SHARDQL_TOPOLOGY_REFRESH_MS. */
function adminAndRefresh(env: Env, stack: StackInfo | undefined): Pick<GatewayConfig, 'mysqlAdmin' | 'topologyRefreshMs'> {
  const user = env.SHARDQL_MYSQL_ADMIN_USER ?? stack?.mysql.admin?.user;
  const password = env.SHARDQL_MYSQL_ADMIN_PASSWORD ?? stack?.mysql.admin?.password;
  if ((user === undefined) !== (password === undefined)) throw new ConfigError('SHARDQL_MYSQL_ADMIN_USER and SHARDQL_MYSQL_ADMIN_PASSWORD must be set together');
  const refresh = env.SHARDQL_TOPOLOGY_REFRESH_MS;
  const refreshMs = refresh === undefined ? undefined : Number(refresh);
  if (refreshMs !== undefined && (!Number.isInteger(refreshMs) || refreshMs < 100)) {
    throw new ConfigError(`SHARDQL_TOPOLOGY_REFRESH_MS must be an integer number of milliseconds >= 100, got ${JSON.stringify(refresh)}`);
  }
  return {
    ...(user !== undefined && password !== undefined ? { mysqlAdmin: { user, password } } : {}),
    ...(refreshMs !== undefined ? { topologyRefreshMs: refreshMs } : {}),
  };
}

/**
 * SHARDQL_MAX_COST, SHARDQL_MAX_ROUND_TRIPS, SHARDQL_RATE_LIMIT ("600/60s" per viewer; also per
 * address unless SHARDQL_RATE_LIMIT_IP says otherwise; "off"; default 600/60s in production, off in
 * development), SHARDQL_QUERY_TIMEOUT_MS, SHARDQL_REQUEST_TIMEOUT_MS, SHARDQL_INTROSPECTION=1|0,
 * SHARDQL_BATCHING=1, SHARDQL_NEAR_CACHE_ENTRIES (0 = no in-process cache).
 */
function limits(env: Env, mode: 'development' | 'production'): Partial<GatewayConfig> {
  const int = (name: string, min: number): number | undefined => {
    const text = env[name];
    if (text === undefined || text === '') return undefined;
    const n = Number(text);
    if (!Number.isInteger(n) || n < min) throw new ConfigError(`${name} must be an integer >= ${min}, got ${JSON.stringify(text)}`);
    return n;
  };
  const rate = (name: string, fallback: string | undefined): Rate | undefined => {
    const text = env[name] ?? fallback;
    if (text === undefined) return undefined;
    try {
      return parseRate(text);
    } catch (err) {
      throw new ConfigError(`${name}: ${(err as Error).message}`);
    }
  };
  const flag = (name: string): boolean | undefined => {
    const text = env[name];
    if (text === undefined || text === '') return undefined;
    if (text !== '0' && text !== '1') throw new ConfigError(`${name} must be 1 or 0, got ${JSON.stringify(text)}`);
    return text === '1';
  };
  const perViewer = rate('SHARDQL_RATE_LIMIT', mode === 'production' ? '600/60s' : undefined);
  const perAddress = rate('SHARDQL_RATE_LIMIT_IP', env.SHARDQL_RATE_LIMIT ?? (mode === 'production' ? '600/60s' : undefined));
  const out: Record<string, unknown> = {
    maxCost: int('SHARDQL_MAX_COST', 1),
    maxRoundTrips: int('SHARDQL_MAX_ROUND_TRIPS', 1),
    rateLimit: perViewer || perAddress ? { perViewer, perAddress } : undefined,
    queryTimeoutMs: int('SHARDQL_QUERY_TIMEOUT_MS', 1),
    requestTimeoutMs: int('SHARDQL_REQUEST_TIMEOUT_MS', 1),
    introspection: flag('SHARDQL_INTROSPECTION'),
    batchedRequests: flag('SHARDQL_BATCHING'),
    nearCacheEntries: int('SHARDQL_NEAR_CACHE_ENTRIES', 0),
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as Partial<GatewayConfig>;
}

function queuePrefixOf(text: string): string {
  if (!/^[A-Za-z0-9:._-]{1,100}$/.test(text)) throw new ConfigError(`SHARDQL_QUEUE_PREFIX must be 1-100 of A-Z a-z 0-9 : . _ - (it becomes a Redis hash tag), got ${JSON.stringify(text)}`);
  return text;
}

/** What `shardql worker` needs besides the gateway's configuration (README "Configuration"). */
export interface WorkerConfig {
  /** Queues this process serves. SHARDQL_WORKER_QUEUES, default every queue. */
  readonly queues: readonly QueueName[];
  /** Jobs at once per queue. SHARDQL_WORKER_CONCURRENCY: `16` (fan-out) or `feed=16,sweeps=1`; unset: each queue's default. */
  readonly concurrency: Partial<Record<QueueName, number>>;
  /** A job's lock lifetime without renewal, ms: how soon a killed worker's job runs again (plus one stalled check). Default 15000. */
  readonly lockMs: number;
  /** How often any worker looks for stalled jobs, ms. Default 5000. */
  readonly stalledCheckMs: number;
  /** SIGTERM: how long running jobs may take to finish or return, ms. Default 10000. */
  readonly stopGraceMs: number;
  /** Sweep schedules, ms between runs; 0 turns one off. Defaults 10000 (repair) and 21600000 (reconcile, 6 h). */
  readonly repairEveryMs: number;
  readonly reconcileEveryMs: number;
  /** SHARDQL_WORKER_TEST_JOBS=1 registers the probe jobs the queue's tests use. Never in production. */
  readonly testJobs: boolean;
  /** SHARDQL_IMPORT_PASSWORD: the password of import sources (`shardql import --from`); unset: see `importPassword`. */
  readonly importPassword: string | null;
}

/**
 * The password for an import source's user: SHARDQL_IMPORT_PASSWORD, else (a source on the shards'
 * own servers, as in the local stack) the shards' password when the source user is the shards' user.
 */
export function importPassword(configured: string | null, sourceUser: string, shards: { readonly user: string; readonly password: string }): string {
  if (configured !== null) return configured;
  return sourceUser === shards.user ? shards.password : '';
}

export function loadWorkerConfig(env: Env): WorkerConfig {
  const int = (name: string, fallback: number, min: number): number => {
    const text = env[name];
    if (text === undefined || text === '') return fallback;
    const n = Number(text);
    if (!Number.isInteger(n) || n < min) throw new ConfigError(`${name} must be an integer >= ${min}, got ${JSON.stringify(text)}`);
    return n;
  };
  const parsed = <T>(name: string, parse: (text: string) => T, fallback: T): T => {
    const text = env[name];
    if (text === undefined || text === '') return fallback;
    try {
      return parse(text);
    } catch (err) {
      throw new ConfigError(`${name}: ${(err as Error).message}`);
    }
  };
  const lockMs = int('SHARDQL_WORKER_LOCK_MS', 15_000, 200);
  return {
    queues: parsed('SHARDQL_WORKER_QUEUES', parseQueueList, [...QUEUE_NAMES]),
    concurrency: parsed('SHARDQL_WORKER_CONCURRENCY', parseConcurrency, {}),
    lockMs,
    stalledCheckMs: int('SHARDQL_WORKER_STALLED_CHECK_MS', Math.min(5000, lockMs), 100),
    stopGraceMs: int('SHARDQL_WORKER_STOP_GRACE_MS', 10_000, 0),
    repairEveryMs: int('SHARDQL_REPAIR_EVERY_MS', 10_000, 0),
    reconcileEveryMs: int('SHARDQL_RECONCILE_EVERY_MS', 6 * 3600_000, 0),
    testJobs: env.SHARDQL_WORKER_TEST_JOBS === '1',
    importPassword: env.SHARDQL_IMPORT_PASSWORD ?? null,
  };
}
