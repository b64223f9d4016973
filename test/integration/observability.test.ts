/**
 * Running behind a load balancer, on the real gateway over HTTP: the one log line per request
 * (captured and parsed), credentials kept out of it, the client address behind trusted proxies
 * (and a spoofed X-Forwarded-For ignored without them) for logs and rate limits, and the trace of a
 * profile query (OpenTelemetry, an in-memory exporter) as one tree with the expected counts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanKind } from '@opentelemetry/api';
import { Redis } from 'ioredis';
import { flushCaches, freshEnv, type TestEnv } from '../helpers/env.ts';
import { checkedFetch, startTestGateway, type GqlResult, type TestGateway } from '../helpers/gateway.ts';
import { seedDemo } from '../../src/demo/seed.ts';
import type { GatewayConfig } from '../../src/config.ts';
import { SAMPLE_QUERY } from '../../src/server.ts';

let env: TestEnv;
let alice: string;
let token: string;

before(async () => {
  env = await freshEnv({ shards: 16 });
  const { users } = await seedDemo(env.storage, () => env.topology);
  alice = String(users.find((u) => u.username === 'alice')!.id);
});
after(async () => {
  await env?.close();
});

interface Logged {
  readonly gateway: TestGateway;
  readonly lines: string[];
  /** Every parsed line whose event is `event` (and whose requestId is `requestId`, if given). */
  events(event: string, requestId?: string): Record<string, any>[];
}

async function loggedGateway(name: string, config: Partial<GatewayConfig>, options: Parameters<typeof startTestGateway>[3] = {}): Promise<Logged> {
  const lines: string[] = [];
  const gateway = await startTestGateway(env, name, { env: 'production', logPretty: false, ...config }, { ...options, log: (line: string) => void lines.push(line) });
  return {
    gateway,
    lines,
    events: (event, requestId) =>
      lines
        .map((l) => JSON.parse(l) as Record<string, any>)
        .filter((o) => o.event === event && (requestId === undefined || o.requestId === requestId)),
  };
}

/** Sends `query` with the headers given, the cost asked for. */
function send(gw: TestGateway, query: string, headers: Record<string, string> = {}, variables: Record<string, unknown> = {}): Promise<GqlResult & { requestId?: string }> {
  return gw.gql(query, variables, { headers: { 'x-shardql-cost': '1', ...headers } });
}

/** The response's request ID (gql() does not return headers). */
async function requestIdOf(gw: TestGateway, headers: Record<string, string>): Promise<string | null> {
  const res = await checkedFetch(env, `${gw.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query: '{ __typename }' }) });
  return res.headers.get('x-request-id');
}

describe('The request log line', () => {
  let logged: Logged;
  before(async () => {
    logged = await loggedGateway('log-lines', {});
    token = await logged.gateway.token(alice);
  });
  after(async () => {
    await logged?.gateway.stop();
  });

  test('one line per request: operation, status, duration, viewer, SQL and cache round trips equal to the response cost', async () => {
    const r = await send(logged.gateway, SAMPLE_QUERY, { authorization: `Bearer ${token}`, 'x-request-id': 'profile-req-1' });
    assert.equal(r.status, 200);
    assert.equal(r.body.data.viewer.username, 'alice');
    const cost = r.body.extensions.cost;
    assert.ok(cost.sqlRoundTrips > 0);
    const lines = logged.events('request', 'profile-req-1');
    assert.equal(lines.length, 1, logged.lines.join('\n'));
    const line = lines[0]!;
    assert.equal(line.level, 'info');
    assert.equal(line.operation, 'Profile');
    assert.equal(line.status, 200);
    assert.equal(line.method, 'POST');
    assert.equal(line.viewer, alice);
    assert.ok(typeof line.durationMs === 'number' && line.durationMs > 0);
    assert.match(line.time, /^\d{4}-\d\d-\d\dT/);
    assert.equal(line.sqlRoundTrips, cost.sqlRoundTrips);
    assert.equal(line.sqlRows, cost.rows);
    assert.deepEqual(line.cacheRoundTrips, { memcached: cost.cache.memcached.roundTrips, redis: cost.cache.redis.roundTrips });
    assert.equal(line.errors, undefined);
    assert.equal(line.traceId, undefined, 'no tracing configured: no trace');
    assert.equal(line.client, '127.0.0.1');
  });

  test('the request ID: a plausible x-request-id is kept and sent back, anything else replaced by a UUID', async () => {
    assert.equal(await requestIdOf(logged.gateway, { 'x-request-id': 'lb-7f3a:42' }), 'lb-7f3a:42');
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    for (const bad of ['has spaces in it', 'x'.repeat(129), 'semi;colon', '"quoted"']) {
      const id = await requestIdOf(logged.gateway, { 'x-request-id': bad });
      assert.match(id ?? '', uuid, `for ${JSON.stringify(bad)}`);
      assert.equal(logged.events('request', id!).length, 1);
    }
    const made = await requestIdOf(logged.gateway, {});
    assert.match(made ?? '', uuid);
    assert.equal(logged.events('request', made!).length, 1);
  });

  test('a complete answer carries its length, not chunked (its head and body go out in one write)', async () => {
    const res = await fetch(`${logged.gateway.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }) });
    const body = Buffer.from(await res.arrayBuffer());
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('transfer-encoding'), null);
    assert.equal(res.headers.get('content-length'), String(body.length));
    assert.deepEqual(JSON.parse(body.toString('utf8')).data, { __typename: 'Query' });
  });

  test('errors by code: field errors, refusals before GraphQL, validation; 4xx are info, a server error would be error', async () => {
    const cases: [string, () => Promise<unknown>, number, Record<string, number>][] = [
      ['err-field', () => send(logged.gateway, '{ a: pin(id: "abc") { id } b: pin(id: "-1") { id } }', { 'x-request-id': 'err-field' }), 200, { INVALID_ID: 2 }],
      ['err-token', () => send(logged.gateway, '{ viewer { id } }', { 'x-request-id': 'err-token', authorization: 'Bearer not.a.token' }), 401, { UNAUTHENTICATED: 1 }],
      ['err-invalid', () => send(logged.gateway, '{ viewer { nope } }', { 'x-request-id': 'err-invalid' }), 400, { GRAPHQL_VALIDATION_FAILED: 1 }],
      ['err-json', () => checkedFetch(env, `${logged.gateway.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'err-json' }, body: '{' }), 400, { INVALID_ARGUMENT: 1 }],
    ];
    for (const [id, run, status, errors] of cases) {
      await run();
      const [line, ...more] = logged.events('request', id);
      assert.equal(more.length, 0);
      assert.equal(line?.status, status, id);
      assert.deepEqual(line?.errors, errors, id);
      assert.equal(line?.level, 'info', id);
    }
  });

  test('credentials never reach the log: Authorization headers, tokens wherever a client puts them', async () => {
    const secretToken = await logged.gateway.token(alice);
    const signature = secretToken.split('.')[2]!;
    const before = logged.lines.length;
    await send(logged.gateway, '{ viewer { id } }', { authorization: `Bearer ${secretToken}` });
    await send(logged.gateway, '{ viewer { id } }', { authorization: `Bearer ${secretToken}x` });
    await send(logged.gateway, '{ viewer { id } }', { authorization: `Token ${secretToken}` });
    // A token sent as the request ID is too long to be one: replaced, never echoed or logged.
    assert.notEqual(await requestIdOf(logged.gateway, { 'x-request-id': secretToken }), secretToken);
    const written = logged.lines.slice(before);
    assert.equal(written.filter((l) => JSON.parse(l).event === 'request').length, 4);
    for (const l of written) {
      assert.ok(!l.includes(signature), `a token in the log: ${l}`);
      assert.ok(!/Bearer/i.test(l), `an Authorization header in the log: ${l}`);
    }
  });
});

describe('Trusted proxies', () => {
  let behind: Logged;
  let exposed: Logged;
  before(async () => {
    // Loopback plays the load balancer; 10.0.0.0/8 the proxies behind it.
    behind = await loggedGateway('proxies-trusted', { trustedProxies: ['loopback', '10.0.0.0/8'], rateLimit: { perAddress: { limit: 2, windowMs: 60_000 } } });
    exposed = await loggedGateway('proxies-none', { rateLimit: { perAddress: { limit: 2, windowMs: 60_000 } } });
  });
  after(async () => {
    await behind?.gateway.stop();
    await exposed?.gateway.stop();
  });

  const clientOf = async (gw: Logged, xff: string | undefined): Promise<string> => {
    const id = `xff-${randomBytes(6).toString('hex')}`;
    await send(gw.gateway, '{ __typename }', { 'x-request-id': id, ...(xff !== undefined ? { 'x-forwarded-for': xff } : {}) });
    return gw.events('request', id)[0]!.client;
  };

  test('behind trusted proxies the client is the right-most untrusted X-Forwarded-For hop', async () => {
    assert.equal(await clientOf(behind, '198.51.100.7'), '198.51.100.7');
    assert.equal(await clientOf(behind, '1.1.1.1, 203.0.113.9, 10.0.0.7'), '203.0.113.9');
    assert.equal(await clientOf(behind, '2001:db8::5, 10.1.2.3'), '2001:db8::5');
    assert.equal(await clientOf(behind, undefined), '127.0.0.1');
  });

  test('without trusted proxies X-Forwarded-For is never read', async () => {
    assert.equal(await clientOf(exposed, '198.51.100.7'), '127.0.0.1');
    assert.equal(await clientOf(exposed, '1.1.1.1, 203.0.113.9'), '127.0.0.1');
  });

  test('rate limits count the client behind the proxy, and a forged left-most hop changes nothing', async () => {
    const a = '203.0.113.21';
    const statuses = async (gw: Logged, xffs: string[]): Promise<number[]> => {
      const out: number[] = [];
      for (const x of xffs) out.push((await send(gw.gateway, '{ __typename }', { 'x-forwarded-for': x })).status);
      return out;
    };
    assert.deepEqual(await statuses(behind, [a, `192.0.2.1, ${a}`, `192.0.2.2, ${a}, 10.0.0.9`]), [200, 200, 429]);
    assert.deepEqual(await statuses(behind, ['203.0.113.22', '203.0.113.22']), [200, 200], 'another client has its own bucket');
    // Exposed directly, a client cannot mint addresses by writing the header: all three are one
    // client, 127.0.0.1 (whose bucket the tests above drew from: emptied first).
    const redis = new Redis(env.stack.redis);
    try {
      await redis.del('shardql:rl:a:127.0.0.1');
    } finally {
      redis.disconnect();
    }
    assert.deepEqual(await statuses(exposed, ['198.51.100.1', '198.51.100.2', '198.51.100.3']), [200, 200, 429]);
  });
});

describe('Traces (OpenTelemetry, in-memory exporter)', () => {
  let traced: Logged;
  const exporter = new InMemorySpanExporter();
  before(async () => {
    // Cold: nothing in memcached, Redis or this gateway's L1, so every level goes to MySQL.
    await flushCaches(env.stack);
    traced = await loggedGateway('traces', {}, { traceExporter: exporter });
  });
  after(async () => {
    await traced?.gateway.stop();
  });

  /** The finished spans of a trace, once its root (the HTTP span, ended last) has been exported. */
  async function spansOf(traceId: string): Promise<ReadableSpan[]> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
      if (spans.some((s) => s.kind === SpanKind.SERVER) || Date.now() > deadline) return spans;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  const idOf = (s: ReadableSpan): string => s.spanContext().spanId;
  const parentOf = (s: ReadableSpan): string | undefined => s.parentSpanContext?.spanId;

  /** Checks the tree and returns its parts: one root (the request), one operation under it, everything else below. */
  function tree(spans: ReadableSpan[], callerSpan?: string) {
    const ids = new Set(spans.map(idOf));
    const roots = spans.filter((s) => !ids.has(parentOf(s) ?? ''));
    assert.equal(roots.length, 1, `one root, got ${roots.map((s) => s.name).join(', ')}`);
    const root = roots[0]!;
    assert.equal(root.kind, SpanKind.SERVER);
    assert.equal(root.name, 'POST /graphql');
    assert.equal(parentOf(root), callerSpan);
    const children = (s: ReadableSpan): ReadableSpan[] => spans.filter((c) => parentOf(c) === idOf(s));
    const [operation, ...others] = children(root);
    assert.equal(others.length, 0, 'the request span has one child: the operation');
    const loaders = children(operation!);
    const sql = spans.filter((s) => s.name === 'sql');
    const cache = spans.filter((s) => s.name.startsWith('cache '));
    assert.equal(spans.length, 2 + loaders.length + sql.length + cache.length, `every span is the request, the operation, a loader level, SQL or cache: ${spans.map((s) => s.name).join(', ')}`);
    const loaderIds = new Set(loaders.map(idOf));
    for (const s of sql) assert.ok(loaderIds.has(parentOf(s)!), 'every SQL round trip is under a loader level');
    for (const s of cache) assert.ok(loaderIds.has(parentOf(s)!), 'every cache call is under a loader level');
    return { root, operation: operation!, loaders, sql, cache };
  }

  test('a profile query is one tree: request → operation → loader levels → SQL round trips and cache calls', async () => {
    const traceId = randomBytes(16).toString('hex');
    const caller = randomBytes(8).toString('hex');
    const token = await traced.gateway.token(alice);
    const r = await send(traced.gateway, SAMPLE_QUERY, { authorization: `Bearer ${token}`, traceparent: `00-${traceId}-${caller}-01`, 'x-request-id': 'traced-1' });
    assert.equal(r.status, 200);
    const cost = r.body.extensions.cost;
    const t = tree(await spansOf(traceId), caller);
    assert.equal(t.operation.name, 'query Profile');
    // viewer → boards page + follower count → boards → their pins pages + counts → pins → likers pages + counts → likers.
    const levels = t.loaders.map((s) => s.name).sort();
    assert.deepEqual(levels, [...Array(3).fill('loader lists'), ...Array(4).fill('loader objects')]);
    assert.equal(t.sql.length, cost.sqlRoundTrips, 'a span per SQL round trip');
    assert.ok(t.sql.length >= 7, `cold: every level reads MySQL (${t.sql.length} round trips)`);
    assert.equal(t.sql.reduce((n, s) => n + Number(s.attributes['db.response.returned_rows']), 0), cost.rows);
    const hosts = new Set(Object.keys(env.doc.hosts));
    for (const s of t.sql) {
      assert.equal(s.kind, SpanKind.CLIENT);
      assert.ok(hosts.has(String(s.attributes['server.address'])), `host ${s.attributes['server.address']}`);
      assert.ok(Number(s.attributes['shardql.shard_count']) >= 1);
    }
    assert.equal(new Set(t.sql.map((s) => s.attributes['server.address'])).size, cost.hosts);
    assert.equal(t.cache.length, cost.cache.memcached.roundTrips + cost.cache.redis.roundTrips, 'a span per cache call');
    assert.ok(t.cache.some((s) => s.name === 'cache memcached get') && t.cache.some((s) => s.name === 'cache redis fill'));
    assert.equal(traced.events('request', 'traced-1')[0]!.traceId, traceId, 'the log line leads to the trace');
    // For the README: the log line and the tree, as an operator would see them.
    console.log(`# log: ${traced.lines.find((l) => l.includes('"traced-1"') && l.includes('"request"'))}`);
    const show = (s: ReadableSpan, depth: number): void => {
      const a = s.attributes;
      const detail = s.name === 'sql' ? ` ${a['server.address']} shards=${a['shardql.shard_count']} rows=${a['db.response.returned_rows']}` : a['shardql.keys'] !== undefined ? ` keys=${a['shardql.keys']}` : '';
      console.log(`# ${'  '.repeat(depth)}${s.name}${detail}`);
      for (const c of [...t.loaders, ...t.sql, ...t.cache, t.operation].filter((c) => parentOf(c) === idOf(s)).sort((x, y) => x.startTime[0] - y.startTime[0] || x.startTime[1] - y.startTime[1])) show(c, depth + 1);
    };
    show(t.root, 0);
  });

  test('warm, the same query: fewer round trips, and the spans still match the cost; no traceparent starts a new trace', async () => {
    const token = await traced.gateway.token(alice);
    const r = await send(traced.gateway, SAMPLE_QUERY, { authorization: `Bearer ${token}`, 'x-request-id': 'traced-2' });
    const cost = r.body.extensions.cost;
    const traceId = traced.events('request', 'traced-2')[0]!.traceId as string;
    assert.match(traceId, /^[0-9a-f]{32}$/);
    const t = tree(await spansOf(traceId), undefined);
    assert.equal(t.sql.length, cost.sqlRoundTrips);
    assert.equal(t.cache.length, cost.cache.memcached.roundTrips + cost.cache.redis.roundTrips);
    assert.ok(cost.sqlRoundTrips < 7, `warm reads less MySQL (${cost.sqlRoundTrips})`);
  });
});
