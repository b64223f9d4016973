import { eventSettings as storeEventSettings, parseDuration, parseRetentionSettings, type EventSettings, type EventSpec, type RetentionSetting } from './core/events.ts';
import type { StackInfo } from './stack/localStack.ts';
import type { IdentityProviderOptions } from './auth/identityProvider.ts';
import { compileTrustedProxies } from './http/clientAddress.ts';
import { parseRate, type Rate } from './cache/rateLimits.ts';
import { QUEUE_NAMES, parseConcurrency, parseQueueList, type QueueName } from './jobs/queues.ts';
import { parseTestFault, type TestFault } from './services/testFaults.ts';
import { readFileSync } from 'node:fs';
import type { MemcachedTarget } from './cache/cacheLayers.ts';
import type { RedisAccess, RedisEndpoint, RedisTarget } from './redis/redisClient.ts';
import type { MysqlCredentials } from './storage/shardRouter.ts';
import type { EtcdAccess } from './topology/etcdTopologySource.ts';
import type { TlsTrust } from './core/tlsTrust.ts';

/**
 * Everything the gateway needs from its environment. Only entry points build this (from
 * `process.env`, or from a local stack's stack.json); nothing below them reads the environment.
 */
export interface GatewayConfig {
  /** `development` shows SQL cost in every response and opens GraphiQL with a token; `production` hides both. Default production. */
  readonly env: 'development' | 'production';
  readonly port: number;
  readonly etcdEndpoints: readonly string[];
  /** A user and password for etcd's auth, and the CA its TLS certificates are checked against (SHARDQL_ETCD_USERNAME, _PASSWORD, _TLS_CA). */
  readonly etcdAccess?: EtcdAccess;
  /** etcd key of the topology document. Default /shardql/topology. */
  readonly topologyKey: string;
  /** The application's account on every shard host, and TLS for its connections (SHARDQL_MYSQL_TLS, _TLS_CA). */
  readonly mysql: MysqlCredentials;
  /**
   * The operator's account for topology operations (shard copies, promotion, fencing): it may write
   * through read_only, which the gateway's account must not. Unset: `mysql` is used.
   */
  readonly mysqlAdmin?: MysqlCredentials;
  /** How often the gateway re-reads the topology besides watching it, ms. Default 5000. */
  readonly topologyRefreshMs?: number;
  /**
   * Mapping pages and counts, the invalidation log, persisted queries, rate limits and the job
   * queues: one Redis (`{ host, port }`, SHARDQL_REDIS) or a Redis Cluster (`{ cluster: [...] }`,
   * SHARDQL_REDIS_CLUSTER).
   */
  readonly redis: RedisTarget;
  /** The memcached servers of the object cache, and the SASL login if they ask for one. */
  readonly memcached: MemcachedTarget;
  /** HMAC secret for viewer tokens (HS256). At least 32 bytes. */
  readonly jwtSecret: string;
  /**
   * The deployment's identity provider: tokens signed with its keys (RS256, ES256, EdDSA) are
   * accepted besides the gateway's own HS256 tokens. Unset: HS256 only.
   */
  readonly identityProvider?: IdentityProviderOptions;
  /**
   * Addresses and CIDRs of the proxies in front of the gateway (also `loopback`, `uniquelocal`,
   * `linklocal`). Only a request arriving from one of them has its X-Forwarded-For read, and then
   * the right-most address that is not a trusted proxy is the client. Unset: the socket's address.
   */
  readonly trustedProxies?: readonly string[];
  /** Log level: debug, info (default), warn, error or silent. */
  readonly logLevel?: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Human-readable coloured log lines instead of JSON. Default: in development, when stdout is a terminal. */
  readonly logPretty?: boolean;
  /** OpenTelemetry traces exported over OTLP/HTTP. Unset: no tracing at all (no spans are made). */
  readonly tracing?: { readonly otlpEndpoint: string; readonly sampleRatio?: number; readonly serviceName?: string };
  /**
   * What a browser opening /graphql gets (Accept: text/html): `on` — GraphiQL in development, a
   * short page saying where the API is in production; `off` — 404. Default on.
   */
  readonly landingPage?: boolean;
  /**
   * Validation errors name no type, field or argument of the schema: the client gets a stable
   * code and a generic message, the server log the full message under the request ID. Default: in
   * production only.
   */
  readonly schemaPrivacy?: boolean;
  /** Path of a persisted-query manifest; when set, only its operations run (trusted documents). */
  readonly trustedDocuments?: string;
  /**
   * Directory of the built web app (scripts/buildWeb.mjs: dist/web), served at /app; the operations
   * of its manifest run by ID beside free-form queries. Unset: no app.
   */
  readonly webApp?: string;
  /**
   * The web app's sign-in with the identity provider (needs identityProvider and webApp): a public
   * client (no secret) using the authorization code flow with PKCE S256. Unset: a pasted token.
   */
  readonly webSignIn?: { readonly name: string; readonly clientId: string; readonly authorizationUrl: string; readonly tokenUrl: string; readonly scope: string; readonly audience?: string };
  // Limits and abuse (docs/security.md "Limits and abuse"): every field optional, defaults in the comments.
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
  /** Operations seen before answered past Apollo's request pipeline, alike (graphql/fastLane.ts). Default true. */
  readonly fastLane?: boolean;
  /**
   * Most entries (objects and lists) in each gateway's in-process cache, kept true across gateways
   * by the invalidation log in Redis; 0 turns it off. Default 200000.
   */
  readonly nearCacheEntries?: number;
  /**
   * How long a relation write's intent waits, after the write answered, for others on its host to be
   * deleted with it in one transaction (or for a later write of its pair to delete it for free), ms.
   * SHARDQL_INTENT_COMPLETION_DELAY_MS, default 100; 0 sends each at once.
   */
  readonly intentCompletionDelayMs?: number;
  /**
   * The gateway's repair pass: how often it runs (SHARDQL_INTENT_REPAIR_EVERY_MS, default 5000; 0
   * turns it off) and how old an intent must be before it completes it in its writer's place
   * (SHARDQL_INTENT_REPAIR_AGE_MS, default 5000: the writer may still be running).
   */
  readonly intentRepairEveryMs?: number;
  readonly intentRepairAgeMs?: number;
  /**
   * Event sequences: what each kind keeps (SHARDQL_EVENT_RETENTION, e.g. `notifications=200/30d,liked_pin=50/7d`;
   * default 1,000 events per kind, 90 days for notifications, a year for activity) and the window
   * notifications are grouped in (SHARDQL_NOTIFICATION_WINDOW, default 1d). The kinds are the served
   * product's: these apply when one declares events (core/events.ts `eventSettings`).
   */
  readonly events?: { readonly retention?: readonly RetentionSetting[]; readonly windowMs?: number };
  /**
   * Base of the job queues' Redis keys; each queue's keys share a hash tag built from it
   * (`{shardql:jobs:feed}:…`), so they work on a Redis Cluster. Default `shardql:jobs`.
   */
  readonly queuePrefix?: string;
  /**
   * Tests only: the gateway kills itself (SIGKILL) when the fault's write reaches the fault's step
   * boundary for the n-th time. Never set in production (loadConfig refuses it there, and anywhere
   * without the explicit test switch).
   */
  readonly testFault?: TestFault;
  /**
   * Stored home feeds: most pins one keeps (SHARDQL_FEED_SIZE, default 1000) and the follower count
   * above which a pinner or board is merged at read time instead of fanned out
   * (SHARDQL_FEED_FANOUT_MAX_FOLLOWERS, default 10000).
   */
  readonly feed?: { readonly size?: number; readonly fanoutMaxFollowers?: number };
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
 *   SHARDQL_TOPOLOGY_KEY, SHARDQL_MYSQL_USER, SHARDQL_MYSQL_PASSWORD, SHARDQL_REDIS (host:port) or
 *   SHARDQL_REDIS_CLUSTER (host:port,host:port,… or redis://host:port,…: some nodes of a cluster),
 *   SHARDQL_MEMCACHED (host:port[,host:port]) with SHARDQL_MEMCACHED_USERNAME / _PASSWORD (SASL), SHARDQL_JWT_SECRET, SHARDQL_TRUSTED_DOCUMENTS,
 *   SHARDQL_WEB_APP (the built web app's directory, e.g. dist/web),
 *   SHARDQL_MYSQL_ADMIN_USER, SHARDQL_MYSQL_ADMIN_PASSWORD, SHARDQL_TOPOLOGY_REFRESH_MS,
 *   SHARDQL_QUEUE_PREFIX
 *
 * Tests only: SHARDQL_TEST_FAULT=<kind>@<point>[#n] (e.g. `repin@after-step-0#3`) makes the gateway
 * (or a worker, in the product writes of its import deletes jobs) SIGKILL itself at that step
 * boundary of that write, the n-th time (default 1) one reaches it. It
 * is refused (ConfigError, the gateway does not start) unless SHARDQL_ALLOW_TEST_FAULTS=1 is set
 * too, and always in production mode: a stray variable can never arm it.
 */
export function loadConfig(given: Env, stack?: StackInfo): GatewayConfig {
  const env = withSecretFiles(given);
  const mode = env.SHARDQL_ENV ?? (stack ? 'development' : 'production');
  if (mode !== 'development' && mode !== 'production') throw new ConfigError(`SHARDQL_ENV must be development or production, got ${JSON.stringify(mode)}`);
  const port = Number(env.SHARDQL_PORT ?? '4000');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`SHARDQL_PORT must be a port number, got ${JSON.stringify(env.SHARDQL_PORT)}`);
  const jwtSecret = env.SHARDQL_JWT_SECRET ?? (stack ? `dev-only-secret-of-${stack.mysql.password}` : required(env, 'SHARDQL_JWT_SECRET'));
  if (jwtSecret.length < 32) throw new ConfigError('SHARDQL_JWT_SECRET must be at least 32 characters');
  const trusted = env.SHARDQL_TRUSTED_DOCUMENTS;
  const mysqlTls = tlsOf(env, 'SHARDQL_MYSQL');
  return {
    env: mode,
    port,
    ...etcd(env, stack),
    topologyKey: env.SHARDQL_TOPOLOGY_KEY ?? '/shardql/topology',
    mysql: {
      user: env.SHARDQL_MYSQL_USER ?? stack?.mysql.user ?? required(env, 'SHARDQL_MYSQL_USER'),
      password: env.SHARDQL_MYSQL_PASSWORD ?? stack?.mysql.password ?? required(env, 'SHARDQL_MYSQL_PASSWORD'),
      ...(mysqlTls ? { tls: mysqlTls } : {}),
    },
    redis: redisTarget(env, stack),
    memcached: memcachedTarget(env, stack),
    jwtSecret,
    ...(trusted ? { trustedDocuments: trusted } : {}),
    ...(env.SHARDQL_WEB_APP ? { webApp: env.SHARDQL_WEB_APP } : {}),
    ...(env.SHARDQL_QUEUE_PREFIX ? { queuePrefix: queuePrefixOf(env.SHARDQL_QUEUE_PREFIX) } : {}),
    ...limits(env, mode),
    ...adminAndRefresh(env, stack, mysqlTls),
    ...testFault(env, mode),
    ...eventSettings(env),
    ...production(env),
  };
}

/** SHARDQL_TEST_FAULT, honoured only with SHARDQL_ALLOW_TEST_FAULTS=1 and never in production. */
function testFault(env: Env, mode: 'development' | 'production'): Pick<GatewayConfig, 'testFault'> {
  const text = env.SHARDQL_TEST_FAULT;
  if (text === undefined || text === '') return {};
  if (env.SHARDQL_ALLOW_TEST_FAULTS !== '1') {
    throw new ConfigError('SHARDQL_TEST_FAULT makes the gateway kill itself and is for tests only: it is refused unless SHARDQL_ALLOW_TEST_FAULTS=1');
  }
  if (mode === 'production') throw new ConfigError('SHARDQL_TEST_FAULT is for tests only: it is refused when SHARDQL_ENV is production');
  try {
    return { testFault: parseTestFault(text) };
  } catch (err) {
    throw new ConfigError(`SHARDQL_TEST_FAULT: ${(err as Error).message}`);
  }
}

/** SHARDQL_EVENT_RETENTION and SHARDQL_NOTIFICATION_WINDOW, decoded once here. */
function eventSettings(env: Env): Pick<GatewayConfig, 'events'> {
  const retention = env.SHARDQL_EVENT_RETENTION;
  const window = env.SHARDQL_NOTIFICATION_WINDOW;
  if (!retention && !window) return {};
  try {
    return {
      events: {
        ...(retention ? { retention: parseRetentionSettings(retention) } : {}),
        ...(window ? { windowMs: parseDuration(window, 'SHARDQL_NOTIFICATION_WINDOW') } : {}),
      },
    };
  } catch (err) {
    throw new ConfigError(`SHARDQL_EVENT_RETENTION / SHARDQL_NOTIFICATION_WINDOW: ${(err as Error).message}`);
  }
}

/**
 * The event store's settings for the served product's kinds: SHARDQL_EVENT_RETENTION's kinds are
 * the spec's, so they are checked here, at start, once the spec is known (ConfigError otherwise).
 */
export function servedEventSettings(config: Pick<GatewayConfig, 'events'>, spec: EventSpec): EventSettings {
  try {
    return storeEventSettings(spec, config.events);
  } catch (err) {
    throw new ConfigError(`SHARDQL_EVENT_RETENTION: ${(err as Error).message}`);
  }
}

/**
 * SHARDQL_REDIS=host:port (one Redis) or SHARDQL_REDIS_CLUSTER=host:port,host:port (a Redis
 * Cluster, named by any of its nodes; `redis://host:port` items too). Setting both is refused: a
 * gateway must not guess which Redis its writes invalidate. Empty counts as unset. Neither: the
 * local stack's single Redis.
 */
function redisTarget(env: Env, stack: StackInfo | undefined): RedisTarget {
  const single = env.SHARDQL_REDIS || undefined;
  const cluster = env.SHARDQL_REDIS_CLUSTER || undefined;
  if (single !== undefined && cluster !== undefined) throw new ConfigError('SHARDQL_REDIS and SHARDQL_REDIS_CLUSTER are both set; set one (the other empty)');
  const access = redisAccess(env);
  const withAccess = <T extends object>(where: T): T & { access?: RedisAccess } => (access ? { ...where, access } : where);
  if (cluster !== undefined) return withAccess({ cluster: clusterNodes(cluster) });
  if (single !== undefined) return withAccess(hostPort(single, 'SHARDQL_REDIS'));
  if (stack) return withAccess(stack.redis);
  throw new ConfigError('SHARDQL_REDIS (or SHARDQL_REDIS_CLUSTER) is not set');
}

/**
 * SHARDQL_REDIS_USERNAME (an ACL user) and SHARDQL_REDIS_PASSWORD; SHARDQL_REDIS_TLS=1 (TLS,
 * certificates checked against Node's CA bundle) or SHARDQL_REDIS_TLS_CA=/path/ca.pem (TLS, checked
 * against that CA). For every Redis client: caches, the log, rate limits, queues, workers, CLI.
 */
function redisAccess(env: Env): RedisAccess | undefined {
  const username = env.SHARDQL_REDIS_USERNAME || undefined;
  const password = env.SHARDQL_REDIS_PASSWORD || undefined;
  if (username !== undefined && password === undefined) throw new ConfigError('SHARDQL_REDIS_USERNAME is set without SHARDQL_REDIS_PASSWORD');
  const tls = tlsOf(env, 'SHARDQL_REDIS');
  if (username === undefined && password === undefined && tls === undefined) return undefined;
  return { ...(username !== undefined ? { username } : {}), ...(password !== undefined ? { password } : {}), ...(tls ? { tls } : {}) };
}

/**
 * SHARDQL_MEMCACHED (`host:port[,host:port]`), and SHARDQL_MEMCACHED_USERNAME with
 * SHARDQL_MEMCACHED_PASSWORD for servers that require SASL (memcached -S; the PLAIN mechanism, as
 * managed memcached services take it). Credentials come from these two variables only: a
 * `user:password@` inside SHARDQL_MEMCACHED is refused, not read.
 */
function memcachedTarget(env: Env, stack: StackInfo | undefined): MemcachedTarget {
  const servers = env.SHARDQL_MEMCACHED ?? (stack ? `${stack.memcached.host}:${stack.memcached.port}` : required(env, 'SHARDQL_MEMCACHED'));
  for (const server of servers.split(',')) {
    if (server.includes('@')) throw new ConfigError('SHARDQL_MEMCACHED must list host:port only; put the login in SHARDQL_MEMCACHED_USERNAME and SHARDQL_MEMCACHED_PASSWORD');
    if (!/^[^:\s]+(:\d{1,5})?$/.test(server)) throw new ConfigError(`SHARDQL_MEMCACHED must be host:port[,host:port], got ${JSON.stringify(servers)}`);
  }
  const sasl = loginOf(env, 'SHARDQL_MEMCACHED');
  return sasl ? { servers, sasl } : { servers };
}

/** `<prefix>_USERNAME` with `<prefix>_PASSWORD`: both (a login) or neither; one alone is a ConfigError. */
function loginOf(env: Env, prefix: 'SHARDQL_MEMCACHED' | 'SHARDQL_ETCD'): { username: string; password: string } | undefined {
  const username = env[`${prefix}_USERNAME`] || undefined;
  const password = env[`${prefix}_PASSWORD`] || undefined;
  if ((username === undefined) !== (password === undefined)) throw new ConfigError(`${prefix}_USERNAME and ${prefix}_PASSWORD must be set together`);
  return username !== undefined && password !== undefined ? { username, password } : undefined;
}

/**
 * `<prefix>_TLS=1` (TLS, certificates checked against Node's CA bundle) or `<prefix>_TLS_CA=/path`
 * (TLS, checked against the CAs in that PEM file, read once here); `<prefix>_TLS=0` or neither: none.
 */
function tlsOf(env: Env, prefix: 'SHARDQL_REDIS' | 'SHARDQL_MYSQL'): TlsTrust | undefined {
  const flag = env[`${prefix}_TLS`] || undefined;
  if (flag !== undefined && flag !== '1' && flag !== '0') throw new ConfigError(`${prefix}_TLS must be 1 or 0, got ${JSON.stringify(flag)}`);
  const caPath = env[`${prefix}_TLS_CA`] || undefined;
  if (caPath !== undefined && flag === '0') throw new ConfigError(`${prefix}_TLS_CA is set but ${prefix}_TLS=0`);
  if (caPath !== undefined) return { ca: readPem(caPath, `${prefix}_TLS_CA`) };
  return flag === '1' ? {} : undefined;
}

/**
 * SHARDQL_ETCD (comma-separated URLs; `https://` for TLS), SHARDQL_ETCD_USERNAME with
 * SHARDQL_ETCD_PASSWORD (etcd's auth), SHARDQL_ETCD_TLS_CA (the CA TLS is checked against, else the
 * system's roots; every endpoint must then be https://).
 */
function etcd(env: Env, stack: StackInfo | undefined): Pick<GatewayConfig, 'etcdEndpoints' | 'etcdAccess'> {
  const endpoints = env.SHARDQL_ETCD ? env.SHARDQL_ETCD.split(',').map((e) => e.trim()) : stack ? stack.etcd.endpoints : [required(env, 'SHARDQL_ETCD')];
  const login = loginOf(env, 'SHARDQL_ETCD');
  const caPath = env.SHARDQL_ETCD_TLS_CA || undefined;
  const secure = endpoints.filter((e) => e.startsWith('https://')).length;
  if (secure > 0 && secure < endpoints.length) throw new ConfigError(`SHARDQL_ETCD mixes https:// and plain endpoints (${endpoints.join(',')}): use one or the other`);
  if (caPath !== undefined && secure === 0) throw new ConfigError(`SHARDQL_ETCD_TLS_CA is set, so SHARDQL_ETCD must list https:// endpoints, got ${endpoints.join(',')}`);
  const access: EtcdAccess = {
    ...login,
    ...(caPath !== undefined ? { ca: readPem(caPath, 'SHARDQL_ETCD_TLS_CA') } : {}),
  };
  return { etcdEndpoints: endpoints, ...(Object.keys(access).length > 0 ? { etcdAccess: access } : {}) };
}

/** A file named by variable `name`, read once at start: a ConfigError naming the variable and the path if it cannot be. */
function readNamedFile(path: string, name: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`${name} names a file that cannot be read: ${JSON.stringify(path)} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

/** A PEM file named by a variable, read once at start: a clear error if it is missing or is not PEM. */
function readPem(path: string, name: string): string {
  const text = readNamedFile(path, name);
  if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError(`${name} must name a PEM file of certificates, got ${JSON.stringify(path)}, which holds none`);
  return text;
}

function clusterNodes(text: string): RedisEndpoint[] {
  return text.split(',').map((item) => {
    const m = /^(?:redis:\/\/)?([^:/@\s]+):(\d{1,5})\/?$/.exec(item.trim());
    const port = Number(m?.[2]);
    if (!m || port < 1 || port > 65535) {
      throw new ConfigError(`SHARDQL_REDIS_CLUSTER must be host:port,host:port,… (or redis://host:port,…), got ${JSON.stringify(item)} in ${JSON.stringify(text)}`);
    }
    return { host: m[1]!, port };
  });
}

/**
 * Identity provider, proxies, logs, traces, landing page and schema privacy (docs/configuration.md): SHARDQL_JWKS_URL with SHARDQL_JWT_ISSUER and SHARDQL_JWT_AUDIENCE (and
 * optionally SHARDQL_JWT_USER_CLAIM, SHARDQL_JWT_CLOCK_SKEW_S), the web app's sign-in with it (SHARDQL_OIDC_CLIENT_ID,
 * SHARDQL_OIDC_AUTHORIZATION_URL, SHARDQL_OIDC_TOKEN_URL, SHARDQL_OIDC_NAME, SHARDQL_OIDC_SCOPE, SHARDQL_OIDC_AUDIENCE), SHARDQL_TRUSTED_PROXIES,
 * SHARDQL_LOG_LEVEL, SHARDQL_LOG_PRETTY, SHARDQL_OTLP_ENDPOINT (with SHARDQL_TRACE_SAMPLE_RATIO,
 * SHARDQL_SERVICE_NAME), SHARDQL_LANDING_PAGE, SHARDQL_SCHEMA_PRIVACY.
 */
function production(env: Env): Partial<GatewayConfig> {
  const out: { -readonly [K in keyof GatewayConfig]?: GatewayConfig[K] } = {};
  const flag = (name: string): boolean | undefined => {
    const text = env[name];
    if (text === undefined || text === '') return undefined;
    if (text !== '0' && text !== '1') throw new ConfigError(`${name} must be 1 or 0, got ${JSON.stringify(text)}`);
    return text === '1';
  };
  const url = (name: string): string | undefined => {
    const text = env[name];
    if (text === undefined || text === '') return undefined;
    let u: URL;
    try {
      u = new URL(text);
    } catch {
      throw new ConfigError(`${name} must be an http(s) URL, got ${JSON.stringify(text)}`);
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new ConfigError(`${name} must be an http(s) URL, got ${JSON.stringify(text)}`);
    return text;
  };

  const jwksUrl = url('SHARDQL_JWKS_URL');
  if (jwksUrl !== undefined) {
    const skew = env.SHARDQL_JWT_CLOCK_SKEW_S;
    const skewSeconds = skew === undefined || skew === '' ? undefined : Number(skew);
    if (skewSeconds !== undefined && (!Number.isInteger(skewSeconds) || skewSeconds < 0 || skewSeconds > 300)) {
      throw new ConfigError(`SHARDQL_JWT_CLOCK_SKEW_S must be an integer number of seconds from 0 to 300, got ${JSON.stringify(skew)}`);
    }
    const claim = env.SHARDQL_JWT_USER_CLAIM || undefined;
    if (claim !== undefined && !/^[A-Za-z0-9_.:\/-]{1,100}$/.test(claim)) throw new ConfigError(`SHARDQL_JWT_USER_CLAIM must be a claim name, got ${JSON.stringify(claim)}`);
    out.identityProvider = {
      jwksUrl,
      issuer: required(env, 'SHARDQL_JWT_ISSUER'),
      audience: required(env, 'SHARDQL_JWT_AUDIENCE'),
      ...(claim ? { userClaim: claim } : {}),
      ...(skewSeconds !== undefined ? { clockSkewSeconds: skewSeconds } : {}),
    };
    if (out.identityProvider.issuer === 'shardql') throw new ConfigError('SHARDQL_JWT_ISSUER must not be "shardql": that is the issuer of the gateway\'s own tokens');
  } else if (env.SHARDQL_JWT_ISSUER || env.SHARDQL_JWT_AUDIENCE) {
    throw new ConfigError('SHARDQL_JWT_ISSUER and SHARDQL_JWT_AUDIENCE need SHARDQL_JWKS_URL');
  }

  // The web app's sign-in with that provider: all four together, and only with the provider.
  const signInNames = ['SHARDQL_OIDC_CLIENT_ID', 'SHARDQL_OIDC_AUTHORIZATION_URL', 'SHARDQL_OIDC_TOKEN_URL', 'SHARDQL_OIDC_NAME'] as const;
  const signInSet = signInNames.filter((n) => env[n]);
  if (signInSet.length > 0 || env.SHARDQL_OIDC_SCOPE || env.SHARDQL_OIDC_AUDIENCE) {
    if (jwksUrl === undefined) throw new ConfigError(`${signInSet[0] ?? (env.SHARDQL_OIDC_SCOPE ? 'SHARDQL_OIDC_SCOPE' : 'SHARDQL_OIDC_AUDIENCE')} needs SHARDQL_JWKS_URL, SHARDQL_JWT_ISSUER and SHARDQL_JWT_AUDIENCE: the app signs in with that identity provider`);
    const missing = signInNames.filter((n) => !env[n]);
    if (missing.length > 0) throw new ConfigError(`The web app's sign-in needs ${signInNames.join(', ')} together; missing ${missing.join(', ')}`);
    const scope = env.SHARDQL_OIDC_SCOPE || 'openid';
    if (!/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/.test(scope)) throw new ConfigError(`SHARDQL_OIDC_SCOPE must be space-separated scope names, got ${JSON.stringify(scope)}`);
    const name = env.SHARDQL_OIDC_NAME!;
    if (name.length > 60) throw new ConfigError(`SHARDQL_OIDC_NAME must be at most 60 characters, got ${name.length}`);
    // Providers that issue a JWT access token only for a named API (Auth0's `audience`) are told which.
    const audience = env.SHARDQL_OIDC_AUDIENCE || undefined;
    if (audience !== undefined && (audience.length > 500 || /[\s\x00-\x1f]/.test(audience))) throw new ConfigError(`SHARDQL_OIDC_AUDIENCE must be one identifier without spaces, got ${JSON.stringify(audience.slice(0, 80))}`);
    out.webSignIn = { name, clientId: env.SHARDQL_OIDC_CLIENT_ID!, authorizationUrl: url('SHARDQL_OIDC_AUTHORIZATION_URL')!, tokenUrl: url('SHARDQL_OIDC_TOKEN_URL')!, scope, ...(audience !== undefined ? { audience } : {}) };
  }

  const proxies = env.SHARDQL_TRUSTED_PROXIES;
  if (proxies !== undefined && proxies.trim() !== '') {
    const list = proxies.split(',').map((p) => p.trim()).filter((p) => p !== '');
    try {
      compileTrustedProxies(list);
    } catch (err) {
      throw new ConfigError(`SHARDQL_TRUSTED_PROXIES: ${(err as Error).message}`);
    }
    out.trustedProxies = list;
  }

  const level = env.SHARDQL_LOG_LEVEL;
  if (level !== undefined && level !== '') {
    if (level !== 'debug' && level !== 'info' && level !== 'warn' && level !== 'error' && level !== 'silent') {
      throw new ConfigError(`SHARDQL_LOG_LEVEL must be debug, info, warn, error or silent, got ${JSON.stringify(level)}`);
    }
    out.logLevel = level;
  }
  const pretty = flag('SHARDQL_LOG_PRETTY');
  if (pretty !== undefined) out.logPretty = pretty;

  const otlp = url('SHARDQL_OTLP_ENDPOINT');
  if (otlp !== undefined) {
    const ratioText = env.SHARDQL_TRACE_SAMPLE_RATIO;
    const ratio = ratioText === undefined || ratioText === '' ? undefined : Number(ratioText);
    if (ratio !== undefined && !(ratio >= 0 && ratio <= 1)) throw new ConfigError(`SHARDQL_TRACE_SAMPLE_RATIO must be a number from 0 to 1, got ${JSON.stringify(ratioText)}`);
    out.tracing = {
      otlpEndpoint: otlp,
      ...(ratio !== undefined ? { sampleRatio: ratio } : {}),
      ...(env.SHARDQL_SERVICE_NAME ? { serviceName: env.SHARDQL_SERVICE_NAME } : {}),
    };
  }

  const landing = env.SHARDQL_LANDING_PAGE;
  if (landing !== undefined && landing !== '') {
    if (landing !== 'on' && landing !== 'off') throw new ConfigError(`SHARDQL_LANDING_PAGE must be on or off, got ${JSON.stringify(landing)}`);
    out.landingPage = landing === 'on';
  }
  const privacy = flag('SHARDQL_SCHEMA_PRIVACY');
  if (privacy !== undefined) out.schemaPrivacy = privacy;
  return out;
}

/**
 * SHARDQL_MYSQL_ADMIN_USER/PASSWORD (default: the stack's admin account), with the TLS both accounts
 * share (SHARDQL_MYSQL_TLS / _TLS_CA, read once by loadConfig), and SHARDQL_TOPOLOGY_REFRESH_MS.
 */
function adminAndRefresh(env: Env, stack: StackInfo | undefined, tls: TlsTrust | undefined): Pick<GatewayConfig, 'mysqlAdmin' | 'topologyRefreshMs'> {
  const user = env.SHARDQL_MYSQL_ADMIN_USER ?? stack?.mysql.admin?.user;
  const password = env.SHARDQL_MYSQL_ADMIN_PASSWORD ?? stack?.mysql.admin?.password;
  if ((user === undefined) !== (password === undefined)) throw new ConfigError('SHARDQL_MYSQL_ADMIN_USER and SHARDQL_MYSQL_ADMIN_PASSWORD must be set together');
  const refresh = env.SHARDQL_TOPOLOGY_REFRESH_MS;
  const refreshMs = refresh === undefined ? undefined : Number(refresh);
  if (refreshMs !== undefined && (!Number.isInteger(refreshMs) || refreshMs < 100)) {
    throw new ConfigError(`SHARDQL_TOPOLOGY_REFRESH_MS must be an integer number of milliseconds >= 100, got ${JSON.stringify(refresh)}`);
  }
  return {
    ...(user !== undefined && password !== undefined ? { mysqlAdmin: { user, password, ...(tls ? { tls } : {}) } } : {}),
    ...(refreshMs !== undefined ? { topologyRefreshMs: refreshMs } : {}),
  };
}

/**
 * SHARDQL_MAX_COST, SHARDQL_MAX_ROUND_TRIPS, SHARDQL_RATE_LIMIT ("600/60s" per viewer; also per
 * address unless SHARDQL_RATE_LIMIT_IP says otherwise; "off"; default 600/60s in production, off in
 * development), SHARDQL_QUERY_TIMEOUT_MS, SHARDQL_REQUEST_TIMEOUT_MS, SHARDQL_INTROSPECTION=1|0,
 * SHARDQL_BATCHING=1, SHARDQL_FAST_LANE=0, SHARDQL_NEAR_CACHE_ENTRIES (0 = no in-process cache), SHARDQL_FEED_SIZE,
 * SHARDQL_FEED_FANOUT_MAX_FOLLOWERS, SHARDQL_INTENT_COMPLETION_DELAY_MS (0 = at once),
 * SHARDQL_INTENT_REPAIR_EVERY_MS (0 = no repair pass), SHARDQL_INTENT_REPAIR_AGE_MS.
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
    fastLane: flag('SHARDQL_FAST_LANE'),
    nearCacheEntries: int('SHARDQL_NEAR_CACHE_ENTRIES', 0),
    intentCompletionDelayMs: int('SHARDQL_INTENT_COMPLETION_DELAY_MS', 0),
    intentRepairEveryMs: int('SHARDQL_INTENT_REPAIR_EVERY_MS', 0),
    intentRepairAgeMs: int('SHARDQL_INTENT_REPAIR_AGE_MS', 100),
  };
  const size = int('SHARDQL_FEED_SIZE', 1);
  const fanoutMaxFollowers = int('SHARDQL_FEED_FANOUT_MAX_FOLLOWERS', 0);
  if (size !== undefined || fanoutMaxFollowers !== undefined) {
    out.feed = { ...(size !== undefined ? { size } : {}), ...(fanoutMaxFollowers !== undefined ? { fanoutMaxFollowers } : {}) };
  }
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as Partial<GatewayConfig>;
}

function queuePrefixOf(text: string): string {
  if (!/^[A-Za-z0-9:._-]{1,100}$/.test(text)) throw new ConfigError(`SHARDQL_QUEUE_PREFIX must be 1-100 of A-Z a-z 0-9 : . _ - (it becomes a Redis hash tag), got ${JSON.stringify(text)}`);
  return text;
}

/** What `shardql worker` needs besides the gateway's configuration (docs/configuration.md). */
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
  /** The event TTL sweep's schedule, ms (SHARDQL_EVENT_SWEEP_EVERY_MS, default 3600000 = 1 h; 0 turns it off). */
  readonly eventSweepEveryMs: number;
  /** SHARDQL_WORKER_TEST_JOBS=1 registers the probe jobs the queue's tests use. Never in production. */
  readonly testJobs: boolean;
  /** Followers a fan-out reads (and feeds it appends to) per page. SHARDQL_FEED_FANOUT_PAGE, default 1000. */
  readonly fanoutPage: number;
  /** SHARDQL_IMPORT_PASSWORD: the password of import sources (`shardql import --from`); unset: see `importPassword`. */
  readonly importPassword: string | null;
}

/** The secrets that may also come from a file, `<name>_FILE` (Docker and Kubernetes secrets mount them as files). */
export const SECRET_VARIABLES = [
  'SHARDQL_MYSQL_PASSWORD',
  'SHARDQL_MYSQL_ADMIN_PASSWORD',
  'SHARDQL_JWT_SECRET',
  'SHARDQL_REDIS_PASSWORD',
  'SHARDQL_MEMCACHED_PASSWORD',
  'SHARDQL_ETCD_PASSWORD',
  'SHARDQL_IMPORT_PASSWORD',
] as const;

/**
 * `env` with each secret whose `<name>_FILE` is set read from that file (one trailing newline
 * dropped, as `echo` and editors leave one). Setting both the variable and its `_FILE`, an
 * unreadable file or an empty one is a ConfigError naming the variable and the path, never the value.
 */
export function withSecretFiles(env: Env): Env {
  let out: Record<string, string | undefined> | undefined;
  for (const name of SECRET_VARIABLES) {
    const path = env[`${name}_FILE`] || undefined;
    if (path === undefined) continue;
    if (env[name] !== undefined && env[name] !== '') throw new ConfigError(`${name} and ${name}_FILE are both set; set one`);
    const value = readNamedFile(path, `${name}_FILE`).replace(/\r?\n$/, '');
    if (value === '') throw new ConfigError(`${name}_FILE names an empty file: ${JSON.stringify(path)}`);
    (out ??= { ...env })[name] = value;
  }
  return out ?? env;
}

/**
 * The password for an import source's user: SHARDQL_IMPORT_PASSWORD, else (a source on the shards'
 * own servers, as in the local stack) the shards' password when the source user is the shards' user.
 */
export function importPassword(configured: string | null, sourceUser: string, shards: { readonly user: string; readonly password: string }): string {
  if (configured !== null) return configured;
  return sourceUser === shards.user ? shards.password : '';
}

export function loadWorkerConfig(given: Env): WorkerConfig {
  const env = withSecretFiles(given);
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
    eventSweepEveryMs: int('SHARDQL_EVENT_SWEEP_EVERY_MS', 3600_000, 0),
    testJobs: env.SHARDQL_WORKER_TEST_JOBS === '1',
    fanoutPage: int('SHARDQL_FEED_FANOUT_PAGE', 1000, 1),
    importPassword: env.SHARDQL_IMPORT_PASSWORD ?? null,
  };
}

/** A process that reads settings from its environment. `bin/shardql` is the launcher script, before Node starts. */
export type SettingReader = 'gateway' | 'worker' | 'cli' | 'bin/shardql';

export interface Setting {
  readonly name: string;
  readonly readBy: readonly SettingReader[];
}

/**
 * Every `SHARDQL_*` setting the code reads, and which processes it affects: the one list that
 * docs/configuration.md is checked against (test/unit/docs/settings.test.ts), so a setting added
 * here and not documented fails the tests. `gateway` is `shardql serve` and `dev`, `worker` is
 * `shardql worker`, `cli` every other command. Defaults live where each is read, above.
 */
const READ_SETTINGS: readonly Setting[] = [
  { name: 'SHARDQL_ENV', readBy: ['gateway', 'worker'] },
  { name: 'SHARDQL_PORT', readBy: ['gateway'] },
  { name: 'SHARDQL_HOST', readBy: ['gateway'] },
  { name: 'SHARDQL_ETCD', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_ETCD_USERNAME', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_ETCD_PASSWORD', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_ETCD_TLS_CA', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_MODEL', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_TOPOLOGY_KEY', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_TOPOLOGY_REFRESH_MS', readBy: ['gateway', 'worker'] },
  { name: 'SHARDQL_MYSQL_USER', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_MYSQL_PASSWORD', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_MYSQL_ADMIN_USER', readBy: ['worker', 'cli'] },
  { name: 'SHARDQL_MYSQL_ADMIN_PASSWORD', readBy: ['worker', 'cli'] },
  { name: 'SHARDQL_MYSQL_TLS', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_MYSQL_TLS_CA', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_REDIS', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_REDIS_CLUSTER', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_REDIS_USERNAME', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_REDIS_PASSWORD', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_REDIS_TLS', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_REDIS_TLS_CA', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_MEMCACHED', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_MEMCACHED_USERNAME', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_MEMCACHED_PASSWORD', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_JWT_SECRET', readBy: ['gateway', 'cli'] },
  { name: 'SHARDQL_JWKS_URL', readBy: ['gateway'] },
  { name: 'SHARDQL_JWT_ISSUER', readBy: ['gateway'] },
  { name: 'SHARDQL_JWT_AUDIENCE', readBy: ['gateway'] },
  { name: 'SHARDQL_JWT_USER_CLAIM', readBy: ['gateway'] },
  { name: 'SHARDQL_JWT_CLOCK_SKEW_S', readBy: ['gateway'] },
  { name: 'SHARDQL_OIDC_CLIENT_ID', readBy: ['gateway'] },
  { name: 'SHARDQL_OIDC_AUTHORIZATION_URL', readBy: ['gateway'] },
  { name: 'SHARDQL_OIDC_TOKEN_URL', readBy: ['gateway'] },
  { name: 'SHARDQL_OIDC_NAME', readBy: ['gateway'] },
  { name: 'SHARDQL_OIDC_SCOPE', readBy: ['gateway'] },
  { name: 'SHARDQL_OIDC_AUDIENCE', readBy: ['gateway'] },
  { name: 'SHARDQL_TRUSTED_PROXIES', readBy: ['gateway'] },
  { name: 'SHARDQL_LOG_LEVEL', readBy: ['gateway', 'worker'] },
  { name: 'SHARDQL_LOG_PRETTY', readBy: ['gateway', 'worker'] },
  { name: 'SHARDQL_OTLP_ENDPOINT', readBy: ['gateway'] },
  { name: 'SHARDQL_TRACE_SAMPLE_RATIO', readBy: ['gateway'] },
  { name: 'SHARDQL_SERVICE_NAME', readBy: ['gateway'] },
  { name: 'SHARDQL_LANDING_PAGE', readBy: ['gateway'] },
  { name: 'SHARDQL_SCHEMA_PRIVACY', readBy: ['gateway'] },
  { name: 'SHARDQL_TRUSTED_DOCUMENTS', readBy: ['gateway'] },
  { name: 'SHARDQL_WEB_APP', readBy: ['gateway'] },
  { name: 'SHARDQL_MAX_COST', readBy: ['gateway'] },
  { name: 'SHARDQL_MAX_ROUND_TRIPS', readBy: ['gateway'] },
  { name: 'SHARDQL_RATE_LIMIT', readBy: ['gateway'] },
  { name: 'SHARDQL_RATE_LIMIT_IP', readBy: ['gateway'] },
  { name: 'SHARDQL_QUERY_TIMEOUT_MS', readBy: ['gateway'] },
  { name: 'SHARDQL_REQUEST_TIMEOUT_MS', readBy: ['gateway'] },
  { name: 'SHARDQL_INTROSPECTION', readBy: ['gateway'] },
  { name: 'SHARDQL_BATCHING', readBy: ['gateway'] },
  { name: 'SHARDQL_FAST_LANE', readBy: ['gateway'] },
  { name: 'SHARDQL_NEAR_CACHE_ENTRIES', readBy: ['gateway'] },
  { name: 'SHARDQL_INTENT_COMPLETION_DELAY_MS', readBy: ['gateway'] },
  { name: 'SHARDQL_INTENT_REPAIR_EVERY_MS', readBy: ['gateway'] },
  { name: 'SHARDQL_INTENT_REPAIR_AGE_MS', readBy: ['gateway'] },
  { name: 'SHARDQL_EVENT_RETENTION', readBy: ['gateway', 'worker'] },
  { name: 'SHARDQL_NOTIFICATION_WINDOW', readBy: ['gateway'] },
  { name: 'SHARDQL_QUEUE_PREFIX', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_FEED_SIZE', readBy: ['gateway', 'worker'] },
  { name: 'SHARDQL_FEED_FANOUT_MAX_FOLLOWERS', readBy: ['gateway', 'worker'] },
  { name: 'SHARDQL_FEED_FANOUT_PAGE', readBy: ['worker'] },
  { name: 'SHARDQL_IMPORT_PASSWORD', readBy: ['worker', 'cli'] },
  { name: 'SHARDQL_WORKER_QUEUES', readBy: ['worker'] },
  { name: 'SHARDQL_WORKER_CONCURRENCY', readBy: ['worker'] },
  { name: 'SHARDQL_WORKER_LOCK_MS', readBy: ['worker'] },
  { name: 'SHARDQL_WORKER_STALLED_CHECK_MS', readBy: ['worker'] },
  { name: 'SHARDQL_WORKER_STOP_GRACE_MS', readBy: ['worker'] },
  { name: 'SHARDQL_REPAIR_EVERY_MS', readBy: ['worker'] },
  { name: 'SHARDQL_RECONCILE_EVERY_MS', readBy: ['worker'] },
  { name: 'SHARDQL_EVENT_SWEEP_EVERY_MS', readBy: ['worker'] },
  { name: 'SHARDQL_WORKER_TEST_JOBS', readBy: ['worker'] },
  { name: 'SHARDQL_TEST_FAULT', readBy: ['gateway', 'worker'] },
  { name: 'SHARDQL_ALLOW_TEST_FAULTS', readBy: ['gateway', 'worker'] },
  { name: 'SHARDQL_STACK_DIR', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_DEBUG', readBy: ['gateway', 'worker', 'cli'] },
  { name: 'SHARDQL_SEMI_SPACE_MB', readBy: ['bin/shardql'] },
  { name: 'SHARDQL_FROM_SOURCE', readBy: ['bin/shardql'] },
];

export const SETTINGS: readonly Setting[] = [
  ...READ_SETTINGS,
  // `<secret>_FILE` is read wherever its secret is (withSecretFiles).
  ...SECRET_VARIABLES.map((name) => ({ name: `${name}_FILE`, readBy: READ_SETTINGS.find((s) => s.name === name)?.readBy ?? [] })),
];
