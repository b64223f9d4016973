import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { checkedFetch, startTestGateway, codes, TEST_JWT_SECRET, type TestGateway } from '../helpers/gateway.ts';
import { startDelayProxy, type DelayProxy } from '../helpers/delayProxy.ts';
import { evenLayout } from '../../src/core/topology.ts';
import { ProductWrites } from '../../src/product/pinterest/writes.ts';
import { startGateway, type RunningGateway } from '../../src/server.ts';
import { publishTopology } from '../../src/topology/etcdTopology.ts';
import { SqlIdentifierError } from '../../src/storage/sqlIdentifiers.ts';
import { mintToken } from '../../src/auth/tokens.ts';

let env: TestEnv;
let writes: ProductWrites;
let alice: { id: string };
let bob: { id: string };
/** Only the rate-limit cut test acts as carol: her shared bucket is untouched before it. */
let carol: { id: string };
let pin: string;

before(async () => {
  env = await freshEnv({ shards: 16 });
  writes = new ProductWrites({ storage: env.storage, topology: () => env.topology });
  const a = await writes.createUser({ username: 'alice' });
  let b = await writes.createUser({ username: 'bob0' });
  // Bob lives on the other host: the slow-host tests need one user per host.
  for (let i = 1; env.storage.router.hostOfId(b.id) === env.storage.router.hostOfId(a.id); i++) b = await writes.createUser({ username: `bob${i}` });
  alice = { id: String(a.id) };
  bob = { id: String(b.id) };
  carol = { id: String((await writes.createUser({ username: 'carol' })).id) };
  const board = await writes.createBoard(a.id, { name: 'Maps' });
  pin = String((await writes.createPin(a.id, board.id, { title: 'Sea charts' })).id);
});
after(async () => {
  await env?.close();
});

/** One counter of the Prometheus exposition of a gateway. */
/** Rate-limit decisions a gateway counted with this outcome, by this limiter. */
function decisions(url: string, outcome: 'allowed' | 'refused', limiter: 'redis' | 'local'): Promise<number> {
  return metric(url, new RegExp(`^shardql_rate_limit_total\\{outcome="${outcome}",limiter="${limiter}"\\} (\\d+)`, 'm'));
}

async function metric(url: string, line: RegExp): Promise<number> {
  const m = await checkedFetch(env, `${url}/metrics`);
  const found = line.exec(m.text);
  return found ? Number(found[1]) : 0;
}

describe('Production posture', () => {
  let prod: TestGateway;
  let dev: TestGateway;
  before(async () => {
    prod = await startTestGateway(env, 'posture-prod', { env: 'production' });
    dev = await startTestGateway(env, 'posture-dev');
  });
  after(async () => {
    await prod?.stop();
    await dev?.stop();
  });

  test('introspection is off unless enabled; __typename still answers', async () => {
    for (const q of ['{ __schema { queryType { name } } }', '{ __type(name: "User") { name } }']) {
      const r = await prod.gql(q);
      assert.equal(r.status, 400);
      assert.deepEqual(codes(r), ['GRAPHQL_VALIDATION_FAILED']);
    }
    assert.equal((await prod.gql('{ __typename }')).body.data.__typename, 'Query');
    const enabled = await startTestGateway(env, 'posture-introspection', { env: 'production', introspection: true });
    try {
      assert.equal((await enabled.gql('{ __schema { queryType { name } } }')).body.data.__schema.queryType.name, 'Query');
    } finally {
      await enabled.stop();
    }
  });

  test('no field suggestions ("Did you mean") in production', async () => {
    const typos = [
      '{ viewer { usernam } }',
      '{ userr(username: "alice") { id } }',
      '{ user(username: "alice") { pins(frist: 1) { edges { cursor } } } }',
      '{ board(id: "1") { pins(order: NEWES) { edges { cursor } } } }',
      '{ node(id: "1") { ... on Usr { id } } }',
    ];
    let devSuggested = 0;
    for (const q of typos) {
      const r = await prod.gql(q);
      assert.equal(r.status, 400);
      assert.deepEqual(codes(r), ['GRAPHQL_VALIDATION_FAILED'], r.text);
      assert.doesNotMatch(r.text, /Did you mean/i);
      if (/Did you mean/.test((await dev.gql(q)).text)) devSuggested++;
    }
    // The check has teeth: development does suggest.
    assert.ok(devSuggested >= 3, `development suggested for ${devSuggested} typos`);
    console.log(`# posture: ${typos.length} typos → 0 suggestions in production (${devSuggested} in development)`);
  });

  test('errors are masked: a database failure is a bare INTERNAL_SERVER_ERROR', async () => {
    const broken = await startTestGateway(env, 'posture-masked', { env: 'production', mysql: { user: env.stack.mysql.user, password: 'not-the-password' } }, { caching: false });
    try {
      const r = await broken.gql('query($p: ID!) { pin(id: $p) { id title } }', { p: pin });
      assert.deepEqual(codes(r), ['INTERNAL_SERVER_ERROR']);
      assert.equal(r.body.errors![0]!.message, 'Internal server error');
      assert.doesNotMatch(r.text, /denied|password|access|\bER_|errno|sqlState|stack/i);
    } finally {
      await broken.stop();
    }
  });

  test('CSRF prevention: a simple GET is refused, a GET with a preflight header runs', async () => {
    const q = `?query=${encodeURIComponent('{ __typename }')}`;
    const simple = await checkedFetch(env, `${prod.url}/graphql${q}`);
    assert.equal(simple.status, 400);
    assert.equal(simple.body.errors[0].extensions.code, 'BAD_REQUEST');
    const preflighted = await checkedFetch(env, `${prod.url}/graphql${q}`, { headers: { 'apollo-require-preflight': '1' } });
    assert.equal(preflighted.body.data.__typename, 'Query');
  });

  test('batching is off unless enabled; when on, at most 10 operations', async () => {
    const batch = (n: number): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(Array.from({ length: n }, (_, i) => ({ query: `{ a${i}: __typename }` }))) });
    const off = await checkedFetch(env, `${prod.url}/graphql`, batch(2));
    assert.equal(off.status, 400);
    assert.equal(off.body.errors[0].extensions.code, 'INVALID_ARGUMENT');
    const on = await startTestGateway(env, 'posture-batching', { env: 'production', batchedRequests: true });
    try {
      const two = await checkedFetch(env, `${on.url}/graphql`, batch(2));
      assert.equal(two.status, 200);
      assert.deepEqual(two.body.map((r: any) => Object.values(r.data)[0]), ['Query', 'Query']);
      const eleven = await checkedFetch(env, `${on.url}/graphql`, batch(11));
      assert.equal(eleven.status, 400);
      assert.equal(eleven.body.errors[0].extensions.code, 'INVALID_ARGUMENT');
      // Each operation of a batch is costed on its own.
      const bomb = { query: '{ user(username: "alice") { boards(first: 100) { edges { node { pins(first: 100) { edges { node { likers(first: 100) { edges { cursor } } } } } } } } } }' };
      const mixed = await checkedFetch(env, `${on.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([{ query: '{ __typename }' }, bomb]) });
      assert.equal(mixed.body[1].errors[0].extensions.code, 'QUERY_TOO_COMPLEX');
    } finally {
      await on.stop();
    }
  });

  test('a page size is checked before the parent is read; cost refusals state cost and budget', async () => {
    const r = await prod.gql('{ user(username: "alice") { boards(first: 1) { edges { node { pins(first: 500) { edges { cursor } } } } } } }', {}, { headers: { 'x-shardql-cost': '1' } });
    assert.deepEqual(codes(r), ['INVALID_ARGUMENT']);
    assert.equal(r.body.errors![0]!.extensions!.argument, 'first');
    assert.equal(r.body.extensions.cost.sqlRoundTrips, 0, 'nothing was read');
    const bomb = await prod.gql('{ user(username: "alice") { boards(first: 100) { edges { node { pins(first: 100) { edges { node { likers(first: 10) { edges { cursor } } } } } } } } } }');
    assert.deepEqual(codes(bomb), ['QUERY_TOO_COMPLEX']);
    const ext = bomb.body.errors![0]!.extensions!;
    assert.equal(ext.budget, 50_000);
    assert.ok((ext.cost as number) > 50_000);
    console.log(`# cost: boards(100) → pins(100) → likers(10) refused before SQL: cost ${ext.cost} rows > budget ${ext.budget}, ${ext.sqlRoundTrips} round trips`);
  });

  test('page sizes sent as variables are costed by their values, every time', async () => {
    const q = 'query Wide($b: Int, $p: Int) { user(username: "alice") { boards(first: $b) { edges { node { pins(first: $p) { edges { node { likers(first: 10) { edges { cursor } } } } } } } } } }';
    const narrow = await prod.gql(q, { b: 2, p: 2 });
    assert.equal(narrow.body.errors, undefined);
    // The same document with wider pages: refused, though the narrow one's estimate is remembered.
    const wide = await prod.gql(q, { b: 100, p: 100 });
    assert.deepEqual(codes(wide), ['QUERY_TOO_COMPLEX']);
    assert.ok((wide.body.errors![0]!.extensions!.cost as number) > 50_000);
    assert.equal((await prod.gql(q, { b: 2, p: 2 })).body.errors, undefined);
    // A variable of the wrong type is the client's error, not a cost refusal or a crash.
    assert.deepEqual(codes(await prod.gql(q, { b: 'many', p: 2 })), ['BAD_USER_INPUT']);
  });

  test('the estimate bounds what a query really does', async () => {
    const q = '{ user(username: "alice") { username followerCount boards(first: 5) { edges { node { name pinCount pins(first: 5) { edges { node { title likeCount likers(first: 3) { edges { node { username } } } } } } } } } } }';
    const r = await dev.gql(q);
    assert.equal(r.body.errors, undefined);
    const { estimate, sqlRoundTrips, rows } = r.body.extensions.cost;
    assert.ok(estimate.rows >= rows, `estimated ${estimate.rows} rows ≥ ${rows} read`);
    assert.ok(estimate.sqlRoundTrips >= sqlRoundTrips, `estimated ${estimate.sqlRoundTrips} round trips ≥ ${sqlRoundTrips}`);
    console.log(`# cost: profile query estimated ${estimate.rows} rows / ${estimate.sqlRoundTrips} round trips; ran ${rows} rows / ${sqlRoundTrips} round trips`);
  });
});

describe('Rate limits (Redis token buckets, shared by replicas)', () => {
  let gw: TestGateway;
  let replica: TestGateway;
  const limits = { rateLimit: { perViewer: { limit: 3, windowMs: 60_000 }, perAddress: { limit: 8, windowMs: 60_000 } } };
  before(async () => {
    const redis = new Redis({ host: env.stack.redis.host, port: env.stack.redis.port });
    try {
      const keys = await redis.keys('shardql:rl:*');
      if (keys.length > 0) await redis.del(...keys);
    } finally {
      redis.disconnect();
    }
    gw = await startTestGateway(env, 'ratelimit', limits);
    replica = await startTestGateway(env, 'ratelimit-replica', limits);
  });
  after(async () => {
    await gw?.stop();
    await replica?.stop();
  });

  const ask = async (g: TestGateway, token?: string) => g.gql('{ __typename }', {}, token ? { token } : {});

  test('per viewer, then per address; 429 with Retry-After; other replicas agree', async () => {
    const a = await gw.token(alice.id);
    const b = await gw.token(bob.id);
    for (let i = 0; i < 3; i++) assert.equal((await ask(gw, a)).status, 200);
    const refused = await ask(gw, a);
    assert.equal(refused.status, 429);
    assert.deepEqual(codes(refused), ['RATE_LIMITED']);
    const ext = refused.body.errors![0]!.extensions!;
    assert.equal(ext.scope, 'viewer');
    assert.equal(ext.retryable, true);
    // 3 per 60 s: the next token comes in 20 s.
    const res = await checkedFetch(env, `${gw.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${a}` }, body: JSON.stringify({ query: '{ __typename }' }) });
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), String(ext.retryAfterSeconds));
    assert.ok((ext.retryAfterSeconds as number) >= 19 && (ext.retryAfterSeconds as number) <= 20, `retry after ${ext.retryAfterSeconds}`);
    // The other replica shares the bucket.
    assert.equal((await ask(replica, a)).status, 429, 'a second replica refuses too');
    // Bob has his own viewer bucket; the address bucket (8) counts everyone's admitted requests.
    for (let i = 0; i < 3; i++) assert.equal((await ask(replica, b)).status, 200);
    for (let i = 0; i < 2; i++) assert.equal((await ask(gw)).status, 200);
    const byAddress = await ask(gw);
    assert.equal(byAddress.status, 429);
    assert.equal(byAddress.body.errors![0]!.extensions!.scope, 'address');
    const refusedCount = (await decisions(gw.url, 'refused', 'redis')) + (await decisions(replica.url, 'refused', 'redis'));
    console.log(`# rate limits: viewer 3/60s → 4th refused (429, Retry-After ${ext.retryAfterSeconds} s, on both replicas); address 8/60s → 9th refused; ${refusedCount} refusals counted`);
    // Refused: alice's 4th on gw, again there by Retry-After's fetch, once on the replica; the address's 9th.
    assert.equal(refusedCount, 4);
    assert.equal((await decisions(gw.url, 'refused', 'local')) + (await decisions(replica.url, 'refused', 'local')), 0, 'Redis decided every one');
  });

  test('Redis unreachable: each gateway keeps the limits with its own buckets, no request fails for it', async () => {
    const closed = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const port = (s.address() as AddressInfo).port;
        s.close(() => resolve(port));
      });
    });
    const open = await startTestGateway(env, 'ratelimit-redis-down', { redis: { host: '127.0.0.1', port: closed }, rateLimit: { perViewer: { limit: 3, windowMs: 60_000 }, perAddress: { limit: 8, windowMs: 60_000 } } });
    try {
      const token = await open.token(alice.id);
      for (let i = 0; i < 3; i++) {
        const r = await open.gql('query($p: ID!) { pin(id: $p) { id } }', { p: pin }, { token });
        assert.equal(r.status, 200);
        assert.equal(r.body.data.pin.id, pin);
      }
      const refused = await open.gql('query($p: ID!) { pin(id: $p) { id } }', { p: pin }, { token });
      assert.equal(refused.status, 429);
      assert.deepEqual(codes(refused), ['RATE_LIMITED']);
      assert.equal(refused.body.errors![0]!.extensions!.scope, 'viewer');
      assert.equal(refused.body.errors![0]!.extensions!.retryAfterSeconds, 20);
      assert.equal(await decisions(open.url, 'allowed', 'local'), 3);
      assert.equal(await decisions(open.url, 'refused', 'local'), 1);
      assert.equal((await decisions(open.url, 'allowed', 'redis')) + (await decisions(open.url, 'refused', 'redis')), 0);
      // Each request tries Redis until the breaker opens (2 failures in a row), then again after its 1 s cooldown.
      const errors = await metric(open.url, /^shardql_rate_limit_total\{outcome="error",limiter="redis"\} (\d+)/m);
      assert.ok(errors >= 2 && errors <= 4, `limiter errors: ${errors}`);
      console.log(`# rate limits: Redis unreachable → 3/3 served by the gateway's own buckets, the 4th refused (429 viewer); ${errors} limiter errors counted`);
    } finally {
      await open.stop();
    }
  });

  test('Redis cut, then back: the limit holds throughout, and the shared bucket resumes where it was', async () => {
    const proxy = await startDelayProxy(env.stack.redis);
    const g = await startTestGateway(env, 'ratelimit-redis-cut', { redis: { host: '127.0.0.1', port: proxy.port }, rateLimit: { perViewer: { limit: 3, windowMs: 60_000 }, perAddress: undefined } });
    try {
      const token = await g.token(carol.id);
      const ask = () => g.gql('{ __typename }', {}, { token });
      for (let i = 0; i < 2; i++) assert.equal((await ask()).status, 200);
      assert.equal(await decisions(g.url, 'allowed', 'redis'), 2, 'Redis decides while it answers');
      proxy.cut = true;
      // The gateway's own bucket starts full: 3 more, then refused.
      for (let i = 0; i < 3; i++) assert.equal((await ask()).status, 200);
      const cutRefusal = await ask();
      assert.equal(cutRefusal.status, 429);
      assert.equal(cutRefusal.body.errors![0]!.extensions!.scope, 'viewer');
      assert.equal(await decisions(g.url, 'allowed', 'local'), 3);
      assert.equal(await decisions(g.url, 'refused', 'local'), 1);
      proxy.cut = false;
      // Until the client reconnects and the breaker lets Redis try again, the local bucket (empty) refuses;
      // then Redis decides, and its bucket still has the 1 token left from before the cut.
      const deadline = Date.now() + 15_000;
      let status = 429;
      while ((await decisions(g.url, 'allowed', 'redis')) === 2 && Date.now() < deadline) {
        status = (await ask()).status;
        if ((await decisions(g.url, 'allowed', 'redis')) === 2) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(status, 200, 'the request Redis decided after the cut was admitted');
      assert.equal(await decisions(g.url, 'allowed', 'redis'), 3, 'Redis decides again once it answers');
      const after = await ask();
      assert.equal(after.status, 429, "the shared bucket's 3 are used: 2 before the cut, 1 after");
      assert.equal(await decisions(g.url, 'refused', 'redis'), 1);
      const local = await decisions(g.url, 'refused', 'local');
      console.log(`# rate limits: Redis cut → 3 more by the gateway's own bucket, then 429; back → Redis decides with its bucket as it was (${local - 1} local refusals while reconnecting)`);
    } finally {
      await g.stop();
      await proxy.close();
    }
  });
});

describe('Timeouts: a slow host fails only the fields that need it', () => {
  let proxy: DelayProxy;
  let key: string;
  const gateways: RunningGateway[] = [];
  /** What the gateways logged as internal errors: shown if a check fails. */
  const internalErrors: string[] = [];
  before(async () => {
    const slowHost = env.storage.router.hostOfId(BigInt(bob.id));
    const target = env.stack.mysql.hosts.find((h) => h.name === slowHost)!.primary;
    proxy = await startDelayProxy(target);
    const hosts = Object.fromEntries(env.stack.mysql.hosts.map((h) => [h.name, { primary: h.name === slowHost ? { host: '127.0.0.1', port: proxy.port } : h.primary }]));
    key = '/shardql-test/slow-host/topology';
    await publishTopology(env.etcd, key, evenLayout({ hosts, shards: 16, modShards: 8 }));
  });
  after(async () => {
    for (const g of gateways) await g.stop(500);
    await proxy?.close();
  });

  async function gateway(limits: { queryTimeoutMs: number; requestTimeoutMs: number }, caching = false): Promise<RunningGateway> {
    const g = await startGateway({
      env: 'development', port: 0, etcdEndpoints: env.stack.etcd.endpoints, topologyKey: key, mysql: env.stack.mysql,
      redis: env.stack.redis, memcached: { servers: `${env.stack.memcached.host}:${env.stack.memcached.port}` }, jwtSecret: TEST_JWT_SECRET, ...limits,
    }, { log: (event: string, fields?: Record<string, unknown>) => void (event === 'internal_error' && internalErrors.push(JSON.stringify(fields).slice(0, 300))), caching });
    gateways.push(g);
    return g;
  }

  async function both(g: RunningGateway, query = 'query($a: ID!, $b: ID!) { a: user(id: $a) { username } b: user(id: $b) { username } }') {
    const started = Date.now();
    const r = await checkedFetch(env, `${g.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables: { a: alice.id, b: bob.id, p: pin } }) });
    assert.doesNotMatch(r.text, new RegExp(`\\b${proxy.port}\\b`), 'the proxy address does not leak');
    return { ...r, ms: Date.now() - started };
  }

  test('per SQL statement (queryTimeoutMs) and per request (deadline); the process lives on', async () => {
    const perQuery = await gateway({ queryTimeoutMs: 300, requestTimeoutMs: 10_000 });
    const perRequest = await gateway({ queryTimeoutMs: 5000, requestTimeoutMs: 600 });
    proxy.delayMs = 0;
    for (const g of [perQuery, perRequest]) assert.deepEqual((await both(g)).body.errors, undefined, `warm: both hosts answer ${internalErrors.join('\n')}`);

    proxy.delayMs = 1500;
    const q = await both(perQuery);

    assert.equal(q.status, 200);
    assert.equal(q.body.data.a.username, 'alice', 'the healthy host still answers');
    assert.equal(q.body.data.b, null);
    assert.deepEqual(q.body.errors.map((e: any) => [e.extensions.code, e.path, e.extensions.retryable]), [['SHARD_UNAVAILABLE', ['b'], true]]);
    assert.ok(q.ms < 1200, `bounded by the statement timeout: ${q.ms} ms`);

    // The deadline: the slow read is cut at 600 ms, and the pin's board — asked only after the level
    // that waited for the slow host — is refused without being sent.
    const d = await both(perRequest, 'query($a: ID!, $b: ID!, $p: ID!) { a: user(id: $a) { username } b: user(id: $b) { username } p: pin(id: $p) { title board { name } } }');
    assert.equal(d.body.data.a?.username, 'alice', d.text);
    assert.equal(d.body.data.p.title, 'Sea charts');
    assert.equal(d.body.data.b, null);
    assert.equal(d.body.data.p.board, null);
    const byPath = Object.fromEntries(d.body.errors.map((e: any) => [e.path.join('.'), e.extensions.code]));
    assert.deepEqual(byPath, { b: 'REQUEST_TIMEOUT', 'p.board': 'REQUEST_TIMEOUT' });
    assert.ok(d.body.errors.every((e: any) => e.extensions.retryable === true));
    assert.equal(d.body.extensions.cost.sqlRoundTrips, 2, 'one read per host; the boards page was never sent');
    assert.ok(d.ms < 1200, `bounded by the deadline: ${d.ms} ms`);

    // Never the whole process: health answers at once, and the host comes back when it is fast again.
    assert.equal((await checkedFetch(env, `${perQuery.url}/healthz`)).status, 200);
    proxy.delayMs = 0;
    let recovered = false;
    for (let i = 0; i < 20 && !recovered; i++) {
      recovered = (await both(perQuery)).body.errors === undefined;
      if (!recovered) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(recovered, 'the slow host answers again');
    console.log(`# timeouts: host +1500 ms → healthy field answered and slow field SHARD_UNAVAILABLE in ${q.ms} ms (statement timeout 300 ms); REQUEST_TIMEOUT in ${d.ms} ms (deadline 600 ms), SQL after the deadline not sent`);
  });

  test('a write to the slow host is bounded by the deadline too: REQUEST_TIMEOUT by it, not its statements\' 5 s each', async () => {
    // With caching, the write's read of its viewer is a cache hit: its only SQL is its transaction.
    const perRequest = await gateway({ queryTimeoutMs: 5000, requestTimeoutMs: 600 }, true);
    const token = await mintToken(TEST_JWT_SECRET, BigInt(bob.id), 3600);
    const post = async (query: string, variables: Record<string, unknown> = {}) => {
      const started = Date.now();
      const r = await checkedFetch(env, `${perRequest.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query, variables }),
      });
      return { ...r, ms: Date.now() - started };
    };
    const write = (about: string) => post('mutation($a: String) { updateViewer(input: { about: $a }) { about } }', { a: about });
    proxy.delayMs = 0;
    // Also opens the slow host's transaction connections: the slow write below waits on a statement, not on a connect.
    assert.equal((await write('fast')).body.data?.updateViewer.about, 'fast', internalErrors.join('\n'));
    const viewer = 'query($b: ID!) { user(id: $b) { about } }';
    assert.equal((await post(viewer, { b: bob.id })).body.data.user.about, 'fast');
    assert.equal((await post(viewer, { b: bob.id })).body.extensions.cost.sqlRoundTrips, 0, 'bob is cached');
    proxy.delayMs = 1500;
    try {
      const w = await write('slow');
      assert.deepEqual(codes(w), ['REQUEST_TIMEOUT'], w.text);
      assert.equal(w.body.errors[0].extensions.retryable, true);
      assert.equal(w.body.extensions.cost.sqlRoundTrips, 1, 'the transaction was sent, and cut');
      assert.ok(w.ms < 1200, `bounded by the deadline: ${w.ms} ms`);
      console.log(`# timeouts: a write to the host +1500 ms answered REQUEST_TIMEOUT in ${w.ms} ms (deadline 600 ms, statement timeout 5 s)`);
    } finally {
      proxy.delayMs = 0;
    }
  });
});

describe('SQL identifiers: the router refuses what is not a known shard', () => {
  test('a foreign database or an unknown shard never reaches MySQL', async () => {
    const host = Object.keys(env.topology.doc.hosts)[0]!;
    await assert.rejects(env.storage.router.query(host, [], 'SELECT user FROM mysql.user', []), SqlIdentifierError);
    await assert.rejects(env.storage.router.query(host, [4000], 'SELECT local_id FROM db04000.pins', []), SqlIdentifierError);
    await assert.rejects(env.storage.router.query(host, [1], 'SELECT local_id FROM db1.pins', []), SqlIdentifierError);
    assert.equal((await env.storage.router.query(host, [0], 'SELECT COUNT(*) AS n FROM db00000.pins', [])).length, 1);
  });
});
