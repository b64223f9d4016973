import assert from 'node:assert/strict';
import { publishTopology } from '../../src/topology/etcdTopology.ts';
import { startGateway, type GatewayOptions, type RunningGateway } from '../../src/server.ts';
import { mintToken } from '../../src/auth/tokens.ts';
import type { GatewayConfig } from '../../src/config.ts';
import type { TestEnv } from './env.ts';
import { describeValue } from '../../src/core/errors.ts';

export const TEST_JWT_SECRET = 'test-secret-that-is-at-least-32-characters-long';

export interface GqlResult {
  readonly status: number;
  readonly body: { data?: any; errors?: { message: string; extensions?: Record<string, unknown>; path?: unknown[] }[]; extensions?: any };
  readonly text: string;
}

export interface TestGateway {
  readonly gateway: RunningGateway;
  readonly url: string;
  gql(query: string, variables?: Record<string, unknown>, opts?: { token?: string; headers?: Record<string, string>; body?: unknown }): Promise<GqlResult>;
  /** `gql` that fails the test on any error in the answer, and returns its data. */
  ok(query: string, variables?: Record<string, unknown>, token?: string): Promise<any>;
  token(userId: bigint | string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Fails if a response body shows anything internal: SQL, driver error codes, stack frames, or the
 * address of any service of the stack. `echoes`: strings the request itself sent (variables); a
 * response may quote those back (stored data, "got …" in error messages) — nothing else.
 */
export function assertNoLeak(text: string, env: TestEnv, echoes: readonly string[] = []): void {
  const ports = [
    ...env.stack.mysql.hosts.flatMap((h) => [h.primary.port, ...(h.replica ? [h.replica.port] : [])]),
    env.stack.redis.port, env.stack.memcached.port,
    ...env.stack.etcd.endpoints.map((e) => Number(new URL(e).port)),
  ];
  const patterns: [string, RegExp][] = [
    ['SQL text', /\b(SELECT\s.+\sFROM|INSERT\s+(IGNORE\s+)?INTO|UPDATE\s+\S+\s+SET|DELETE\s+FROM|UNION ALL)\b/i],
    ['a database name', /\b(db|msdb)\d{5}\./],
    ['a driver error', /\b(ER_[A-Z_]+|ECONNREFUSED|ETIMEDOUT|PROTOCOL_CONNECTION_LOST|mysql2?|mariadb|ioredis|memjs|etcd3)\b/i],
    ['a stack frame', /\bat\s+\S+\s+\(?[^)\s]+\.(ts|js|mjs):\d+/],
    ['a host address', /127\.0\.0\.1|localhost/],
    ...ports.map((p): [string, RegExp] => [`port ${p}`, new RegExp(`[:\\s]${p}\\b`)]),
  ];
  // Only inputs that look like a leak themselves are taken out, in every form a response can quote
  // them: as JSON data, trimmed, inside an error message (describeValue), or JSON-quoted in one.
  let checked = text;
  const forms = echoes
    .filter((e) => patterns.some(([, re]) => re.test(e)))
    .flatMap((e) => [e, e.trim(), describeValue(e), JSON.stringify(e), normalizedUrl(e)].map((f) => JSON.stringify(f).slice(1, -1)))
    .sort((a, b) => b.length - a.length);
  for (const f of forms) if (f.length > 0) checked = checked.split(f).join('<input>');
  for (const [what, re] of patterns) assert.doesNotMatch(checked, re, `response leaks ${what}: ${text.slice(0, 300)}`);
}

/** A URL as the gateway stores it (links are normalized), or '' when it is none. */
function normalizedUrl(text: string): string {
  try {
    return new URL(text).toString();
  } catch {
    return '';
  }
}

/** Every string in a request's variables (what the response may quote back). */
export function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringsOf);
  return [];
}

export interface CheckedResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The body as JSON, or undefined when it is not JSON. */
  readonly body: any;
}

/**
 * `fetch` for tests that talk to a gateway without `gql()`: the same leak check on every body.
 * Every test that fetches a gateway directly goes through this (or `gql`).
 */
export async function checkedFetch(env: TestEnv, url: string, init?: RequestInit): Promise<CheckedResponse> {
  const res = await fetch(url, init);
  const text = await res.text();
  assertNoLeak(text, env);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}

export async function startTestGateway(env: TestEnv, name: string, overrides: Partial<GatewayConfig> = {}, options: GatewayOptions = {}): Promise<TestGateway> {
  const topologyKey = `/shardql-test/${name}/topology`;
  await publishTopology(env.etcd, topologyKey, env.doc);
  const config: GatewayConfig = {
    env: 'development',
    port: 0,
    etcdEndpoints: env.stack.etcd.endpoints,
    topologyKey,
    mysql: { user: env.stack.mysql.user, password: env.stack.mysql.password },
    redis: env.stack.redis,
    memcached: { servers: `${env.stack.memcached.host}:${env.stack.memcached.port}` },
    jwtSecret: TEST_JWT_SECRET,
    ...overrides,
  };
  const gateway = await startGateway(config, { log: () => undefined, ...options });
  const gql = gqlClient(env, gateway.url);
  return {
    gateway,
    url: gateway.url,
    gql,
    async ok(query, variables = {}, token) {
      const r = await gql(query, variables, token ? { token } : {});
      assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
      return r.body.data;
    },
    token: (userId) => mintToken(TEST_JWT_SECRET, BigInt(userId), 3600),
    stop: () => gateway.stop(1000),
  };
}

/** `gql` of a gateway at `url` (in this process or another): every answer checked for leaks. */
export function gqlClient(env: TestEnv, url: string): TestGateway['gql'] {
  return async (query, variables = {}, opts = {}) => {
    const res = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}), ...opts.headers },
      body: JSON.stringify(opts.body ?? { query, variables }),
    });
    const text = await res.text();
    assertNoLeak(text, env, stringsOf(opts.body ?? variables));
    return { status: res.status, body: JSON.parse(text), text };
  };
}

/** The error codes of a result, in order. */
export function codes(r: GqlResult): unknown[] {
  return (r.body.errors ?? []).map((e) => e.extensions?.code);
}
