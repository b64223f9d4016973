/**
 * No stale object across replicas: a gateway that cannot reach memcached (and maybe Redis) while it
 * writes leaves the old copy in memcached. Its failed invalidation is recorded durably — in Redis
 * (the log entry says "not invalidated in the shared layer", and a set keeps the key until swept),
 * or in MySQL (an `invalidate` intent) when Redis fails too — and no gateway serves the old value
 * after the write is acknowledged (beyond the repair period in the Redis-too case, see docs/caching.md).
 */
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import memjs from 'memjs';
import { Redis } from 'ioredis';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { startTestGateway, TEST_JWT_SECRET, assertNoLeak, type TestGateway } from '../helpers/gateway.ts';
import { startDelayProxy, type DelayProxy } from '../helpers/delayProxy.ts';
import { publishTopology } from '../../src/topology/etcdTopology.ts';
import { shardOf } from '../../src/core/ids.ts';
import { shardDatabase } from '../../src/core/topology.ts';

const UNSHARED = 'shardql:{inv}:unshared';
const ROOT = resolve(import.meta.dirname, '../..');

let env: TestEnv;
let memcachedProxy: DelayProxy;
let redisProxy: DelayProxy;
/** Reaches memcached and Redis through proxies the tests cut. */
let a: TestGateway;
/** Reaches both directly; no background sweep or repair (so only the log can tell it). */
let b: TestGateway;
let redis: Redis;
let memcached: memjs.Client;
let token: string;
let board: string;
/** Gateways a test starts (a fresh one, a sweeper): each test stops its own before the next begins. */
let extra: TestGateway[] = [];

before(async () => {
  env = await freshEnv({ shards: 16 });
  memcachedProxy = await startDelayProxy(env.stack.memcached);
  redisProxy = await startDelayProxy(env.stack.redis);
  a = await startTestGateway(
    env,
    'unshared-a',
    { memcached: { servers: `127.0.0.1:${memcachedProxy.port}` }, redis: { host: '127.0.0.1', port: redisProxy.port } },
    { repair: { intervalMs: 0 } },
  );
  b = await startTestGateway(env, 'unshared-b', {}, { repair: { intervalMs: 0 } });
  redis = new Redis({ host: env.stack.redis.host, port: env.stack.redis.port });
  memcached = memjs.Client.create(`${env.stack.memcached.host}:${env.stack.memcached.port}`, { logger: { log: () => undefined } } as memjs.ClientOptions);
  const me = (await b.gql('mutation { createUser(input: { username: "unshared_owner" }) { user { id } token } }')).body.data.createUser;
  token = me.token;
  board = (await b.gql('mutation { createBoard(input: { name: "unshared" }) { id } }', {}, { token })).body.data.createBoard.id;
});
after(async () => {
  memcachedProxy.cut = false;
  redisProxy.cut = false;
  for (const g of [a, b, ...extra]) await g?.stop();
  redis?.disconnect();
  memcached?.close();
  await memcachedProxy?.close();
  await redisProxy?.close();
  await env?.close();
});

/** What one gateway answers as a pin's title (asserting no error), and the request's memcached round trips. */
async function titleOn(url: string, pin: string): Promise<{ title: string; memcachedRoundTrips: number }> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-shardql-cost': '1' },
    body: JSON.stringify({ query: 'query($p: ID!) { pin(id: $p) { title } }', variables: { p: pin } }),
  });
  const text = await res.text();
  assertNoLeak(text, env);
  const body = JSON.parse(text);
  assert.equal(body.errors, undefined, text);
  return { title: body.data.pin.title, memcachedRoundTrips: body.extensions.cost.cache.memcached.roundTrips };
}
const title = async (gw: TestGateway, pin: string): Promise<string> => (await titleOn(gw.url, pin)).title;

async function createPin(t: string): Promise<string> {
  const r = await b.gql('mutation($b: ID!, $t: String) { createPin(input: { boardId: $b, title: $t }) { id } }', { b: board, t }, { token });
  assert.equal(r.body.errors, undefined, r.text);
  return r.body.data.createPin.id;
}

/** Retitles a pin through a gateway's URL; returns the acknowledged title. */
async function retitle(url: string, pin: string, t: string): Promise<string> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ query: 'mutation($p: ID!, $t: String) { updatePin(id: $p, input: { title: $t }) { title } }', variables: { p: pin, t } }),
  });
  const text = await res.text();
  assertNoLeak(text, env);
  const body = JSON.parse(text);
  assert.equal(body.errors, undefined, text);
  return body.data.updatePin.title;
}

/** What memcached holds for a pin: its cached title, 'tombstone', or 'absent'. */
async function inMemcached(pin: string): Promise<string> {
  const { value } = await memcached.get(`o:${pin}`);
  if (value === null) return 'absent';
  if (value.length === 1 && value[0] === 0) return 'tombstone';
  return (JSON.parse(value.toString()) as { d: { title: string } }).d.title;
}

/** Both gateways read the pin twice: memcached and both in-process caches hold it. */
async function warm(pin: string, gateways: readonly TestGateway[] = [a, b]): Promise<void> {
  for (const gw of gateways) for (let i = 0; i < 2; i++) assert.equal(await title(gw, pin), 'old');
  assert.equal(await inMemcached(pin), 'old');
}

async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The `invalidate` intents on a pin's shard that name its key. */
async function invalidateIntents(pin: string): Promise<number> {
  const shard = shardOf(BigInt(pin));
  const rows = await env.storage.router.query(
    env.storage.router.hostOfShard(shard),
    [shard],
    `SELECT steps FROM ${shardDatabase(shard)}.intents WHERE kind = 'invalidate'`,
    [],
  );
  return rows.filter((r) => String(r.steps).includes(`"o:${pin}"`)).length;
}

describe('Cache: an invalidation that failed is durable, and no replica serves the old object', () => {
  afterEach(async () => {
    for (const g of extra) await g.stop();
    extra = [];
  });

  test('memcached cut from A while it writes: B never serves the old value, before or after A reaches memcached again', async () => {
    const pin = await createPin('old');
    await warm(pin);
    memcachedProxy.cut = true;
    try {
      assert.equal(await retitle(a.url, pin, 'new'), 'new');
      // The write's invalidation did fail: memcached still holds the old copy, and Redis records it.
      assert.equal(await inMemcached(pin), 'old');
      assert.notEqual(await redis.zscore(UNSHARED, `o:${pin}`), null, 'the failure is recorded in Redis');
      for (let i = 0; i < 3; i++) assert.equal(await title(b, pin), 'new', 'B, while A is cut off');
      // B tombstoned the key itself before reading it (the log told it to).
      assert.notEqual(await inMemcached(pin), 'old');
    } finally {
      memcachedProxy.cut = false;
    }
    for (let i = 0; i < 3; i++) assert.equal(await title(b, pin), 'new', 'B, after A is back');
    assert.equal(await title(a, pin), 'new', 'A, after it is back');
  });

  test('A, once memcached is reachable again, replays its failed invalidation before it reads memcached', async () => {
    const pin = await createPin('old');
    await warm(pin, [b, a]);
    const fillers = await Promise.all(Array.from({ length: 60 }, (_, i) => createPin(`filler ${i}`)));
    memcachedProxy.cut = true;
    try {
      assert.equal(await retitle(a.url, pin, 'new'), 'new');
      assert.equal(await inMemcached(pin), 'old');
    } finally {
      memcachedProxy.cut = false;
    }
    // Nobody else touched memcached: the old copy is there when A reconnects. Read objects A never
    // read (so not in its memory) until a read of A uses memcached again (its breaker's cooldown is over).
    let used = false;
    for (const f of fillers) {
      const r = await titleOn(a.url, f);
      assert.match(r.title, /^filler /);
      if ((used = r.memcachedRoundTrips > 0)) break;
      await new Promise((res) => setTimeout(res, 50));
    }
    assert.ok(used, 'A reads memcached again');
    assert.notEqual(await inMemcached(pin), 'old', 'A tombstoned the key before its first memcached read');
    assert.equal(await title(a, pin), 'new');
  });

  test('a gateway started after the write (its first barrier is a gap) invalidates the recorded keys before reading', async () => {
    const pin = await createPin('old');
    await warm(pin);
    memcachedProxy.cut = true;
    try {
      assert.equal(await retitle(a.url, pin, 'new'), 'new');
    } finally {
      memcachedProxy.cut = false;
    }
    assert.equal(await inMemcached(pin), 'old');
    const fresh = await startTestGateway(env, 'unshared-fresh', {}, { repair: { intervalMs: 0 } });
    extra.push(fresh);
    assert.equal(await title(fresh, pin), 'new');
    assert.equal(await title(fresh, pin), 'new');
  });

  test("a gateway's sweep invalidates recorded keys it never read, then forgets the records", async () => {
    const pin = await createPin('old');
    await warm(pin);
    memcachedProxy.cut = true;
    try {
      assert.equal(await retitle(a.url, pin, 'new'), 'new');
    } finally {
      memcachedProxy.cut = false;
    }
    assert.equal(await inMemcached(pin), 'old');
    assert.notEqual(await redis.zscore(UNSHARED, `o:${pin}`), null);
    const sweeper = await startTestGateway(env, 'unshared-sweeper', {}, { repair: { intervalMs: 100 } });
    extra.push(sweeper);
    await until('the sweep forgot the record', async () => (await redis.zscore(UNSHARED, `o:${pin}`)) === null);
    assert.notEqual(await inMemcached(pin), 'old', 'the sweep invalidated memcached before forgetting');
    assert.equal(await title(b, pin), 'new');
  });

  test('Redis cut from A too: the failure is recorded on the shard in MySQL and the repair pass of any gateway replays it', async () => {
    const pin = await createPin('old');
    await warm(pin);
    memcachedProxy.cut = true;
    redisProxy.cut = true;
    try {
      assert.equal(await retitle(a.url, pin, 'new'), 'new');
      assert.equal(await inMemcached(pin), 'old');
      assert.equal(await redis.zscore(UNSHARED, `o:${pin}`), null, 'not in Redis: A could not reach it');
      assert.equal(await invalidateIntents(pin), 1, 'an invalidate intent on the pin’s shard');
      const repairer = await startTestGateway(env, 'unshared-repairer', {}, { repair: { intervalMs: 100, minAgeMs: 0 } });
      extra.push(repairer);
      await until('the repair pass replayed the intent', async () => (await invalidateIntents(pin)) === 0);
      assert.notEqual(await inMemcached(pin), 'old');
      // The replay also appended to the log: B's memory dropped the old value.
      for (let i = 0; i < 2; i++) assert.equal(await title(b, pin), 'new');
      assert.equal(await title(repairer, pin), 'new');
    } finally {
      memcachedProxy.cut = false;
      redisProxy.cut = false;
    }
    assert.equal(await title(a, pin), 'new', 'A, after both are back');
  });

  for (const cut of ['memcached', 'memcached and Redis'] as const) {
    test(`a real gateway process killed with SIGKILL right after its acknowledged write (${cut} cut): the record survives it`, async () => {
      const pin = await createPin('old');
      const child = await spawnGateway(`unshared-child-${cut.length}`, cut === 'memcached and Redis');
      try {
        for (let i = 0; i < 2; i++) assert.equal((await titleOn(child.url, pin)).title, 'old');
        await warm(pin, [b]);
        memcachedProxy.cut = true;
        if (cut !== 'memcached') redisProxy.cut = true;
        assert.equal(await retitle(child.url, pin, 'new'), 'new');
        child.process.kill('SIGKILL');
        await child.exited;
      } finally {
        memcachedProxy.cut = false;
        redisProxy.cut = false;
        if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
      }
      assert.equal(await inMemcached(pin), 'old', 'the killed process did not invalidate memcached');
      if (cut === 'memcached') {
        assert.notEqual(await redis.zscore(UNSHARED, `o:${pin}`), null, 'recorded in Redis');
        for (let i = 0; i < 2; i++) assert.equal(await title(b, pin), 'new');
        const sweeper = await startTestGateway(env, `unshared-after-kill-${cut.length}`, {}, { repair: { intervalMs: 100 } });
        extra.push(sweeper);
        await until('the sweep forgot the record', async () => (await redis.zscore(UNSHARED, `o:${pin}`)) === null);
        assert.equal(await title(sweeper, pin), 'new');
      } else {
        assert.equal(await invalidateIntents(pin), 1, 'recorded in MySQL');
        const repairer = await startTestGateway(env, `unshared-after-kill-${cut.length}`, {}, { repair: { intervalMs: 100, minAgeMs: 0 } });
        extra.push(repairer);
        await until('the repair pass replayed the intent', async () => (await invalidateIntents(pin)) === 0);
        assert.notEqual(await inMemcached(pin), 'old');
        for (let i = 0; i < 2; i++) assert.equal(await title(b, pin), 'new');
        assert.equal(await title(repairer, pin), 'new');
      }
    });
  }
});

interface ChildGateway {
  readonly url: string;
  readonly process: ChildProcess;
  readonly exited: Promise<void>;
}

/** `shardql serve` as its own process, reaching memcached (and Redis, if `redisThroughProxy`) through the proxies. */
async function spawnGateway(name: string, redisThroughProxy: boolean): Promise<ChildGateway> {
  const topologyKey = `/shardql-test/${name}/topology`;
  await publishTopology(env.etcd, topologyKey, env.doc);
  const child = spawn(resolve(ROOT, 'bin/shardql'), ['serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      SHARDQL_ENV: 'development',
      SHARDQL_PORT: '0',
      SHARDQL_TOPOLOGY_KEY: topologyKey,
      SHARDQL_MEMCACHED: `127.0.0.1:${memcachedProxy.port}`,
      SHARDQL_REDIS: redisThroughProxy ? `127.0.0.1:${redisProxy.port}` : `${env.stack.redis.host}:${env.stack.redis.port}`,
      SHARDQL_JWT_SECRET: TEST_JWT_SECRET,
      SHARDQL_RATE_LIMIT: 'off',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error('the gateway process did not start within 30 s')), 30_000);
    child.once('exit', (code) => rej(new Error(`the gateway process exited (${code}) before listening`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const event = JSON.parse(line) as { event: string; url?: string };
      if (event.event === 'listening' && event.url) {
        clearTimeout(timer);
        res(event.url);
      }
    });
  });
  return { url, process: child, exited };
}
