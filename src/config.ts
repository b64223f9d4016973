import type { StackInfo } from './stack/localStack.ts';

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
  readonly redis: { readonly host: string; readonly port: number };
  readonly memcached: { readonly servers: string };
  /** HMAC secret for viewer tokens (HS256). At least 32 bytes. */
  readonly jwtSecret: string;
  /** Path of a persisted-query manifest; when set, only its operations run (trusted documents). */
  readonly trustedDocuments?: string;
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
 *   SHARDQL_MEMCACHED (host:port[,host:port]), SHARDQL_JWT_SECRET, SHARDQL_TRUSTED_DOCUMENTS
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
  };
}
