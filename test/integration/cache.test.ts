import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import memjs from 'memjs';
import { Redis } from 'ioredis';
import { freshEnv, flushCaches, servedTestEvents, stackPid, type TestEnv } from '../helpers/env.ts';
import { checkedFetch, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { ProductWrites } from '../../src/product/pinterest/writes.ts';
import { MemcachedObjects } from '../../src/cache/memcachedObjects.ts';
import { RedisLists } from '../../src/cache/redisLists.ts';
import { createStorage, type Storage } from '../../src/storage/index.ts';
import { objectCacheKey } from '../../src/storage/objectStore.ts';
import { listCacheKey } from '../../src/storage/mappingStore.ts';
import { stopService, startService } from '../../src/stack/localStack.ts';

let env: TestEnv;
let gw: TestGateway;
let memcached: memjs.Client;
let redis: Redis;
let cached: Storage;

before(async () => {
  env = await freshEnv({ shards: 16 });
  // The shared layers (memcached, Redis) are what this gateway tests: no in-process layer above them.
  gw = await startTestGateway(env, 'cache', { nearCacheEntries: 0 });
  memcached = memjs.Client.create(`${env.stack.memcached.host}:${env.stack.memcached.port}`, { logger: { log: () => undefined } } as memjs.ClientOptions);
  redis = new Redis({ host: env.stack.redis.host, port: env.stack.redis.port });
  redis.on('error', () => undefined); // this test stops Redis on purpose
  cached = createStorage({
    topology: () => env.topology,
    credentials: env.stack.mysql,
    cache: { objects: new MemcachedObjects({ client: memcached }), lists: new RedisLists({ redis }) },
    events: servedTestEvents(),
  });
});
after(async () => {
  await gw?.stop();
  await cached?.close();
  memcached?.close();
  redis?.disconnect();
  await env?.close();
});

const PROFILE = `query($id: ID!) { user(id: $id) { username pinCount followerCount
  boards(first: 10) { edges { node { name pinCount
    pins(first: 10) { edges { node { title likeCount likers(first: 3) { edges { node { username } } } } } } } } } } }`;

describe('Cache: look-aside reads', () => {
  let owner: bigint;
  before(async () => {
    const writes = new ProductWrites({ storage: env.storage, topology: () => env.topology });
    const u = await writes.createUser({ username: 'cached_owner' });
    owner = u.id;
    const likers = [await writes.createUser({ username: 'liker_a' }), await writes.createUser({ username: 'liker_b' })];
    for (let b = 0; b < 3; b++) {
      const board = await writes.createBoard(owner, { name: `b${b}` });
      for (let p = 0; p < 4; p++) {
        const pin = await writes.createPin(owner, board.id, { title: `p${b}.${p}` });
        for (const l of likers) await writes.likePin(l.id, pin.id);
      }
    }
    await flushCaches(env.stack);
  });

  test('a cold profile fills both layers; the warm one costs 0 SQL and one cache round trip per layer per level', async () => {
    await flushCaches(env.stack);
    const cold = await gw.gql(PROFILE, { id: String(owner) });
    assert.equal(cold.body.errors, undefined);
    const c = cold.body.extensions.cost;
    assert.ok(c.sqlRoundTrips > 0);
    assert.ok((await memcached.get(objectCacheKey(owner))).value, 'the user object is in memcached');
    assert.ok((await redis.hlen(listCacheKey('user_has_boards', owner))) >= 2, 'the boards page is in Redis');
    assert.ok(await redis.hget(listCacheKey('user_has_pins', owner), 'n'), 'the pin count is in Redis');
    const warm = await gw.gql(PROFILE, { id: String(owner) });
    assert.deepEqual(warm.body.data, cold.body.data, 'the cache answers what MySQL answered');
    const w = warm.body.extensions.cost;
    console.log(
      `# profile: cold ${c.sqlRoundTrips} SQL, ${c.cache.memcached.roundTrips}+${c.cache.redis.roundTrips} cache round trips; warm ${w.sqlRoundTrips} SQL, memcached ${w.cache.memcached.roundTrips}, redis ${w.cache.redis.roundTrips}`,
    );
    assert.equal(w.sqlRoundTrips, 0);
    // Levels: user object; user's counts+boards page; boards; boards' counts+pins pages; pins; pins' counts+likers pages; likers.
    assert.ok(w.cache.memcached.roundTrips <= 4, `memcached: ${w.cache.memcached.roundTrips} round trips for 4 object levels`);
    assert.ok(w.cache.redis.roundTrips <= 3, `redis: ${w.cache.redis.roundTrips} round trips for 3 list levels`);
    assert.equal(w.cache.memcached.misses + w.cache.redis.misses, 0);
  });

  test('a backward page (last/before) is cached beside the forward one: warm, 0 SQL and one Redis round trip per list level; a write drops both', async () => {
    const BOTH = `query($id: ID!, $before: String) { user(id: $id) {
      newest: boards(first: 2) { edges { node { name } } pageInfo { hasNextPage endCursor } }
      oldest: boards(last: 2) { edges { node { name } } pageInfo { hasPreviousPage startCursor } }
      before: boards(last: 1, before: $before) { edges { node { name } } pageInfo { hasPreviousPage } } } }`;
    const read = async (before: string | null) => {
      const r = await gw.gql(BOTH, { id: String(owner), before });
      assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
      return r.body;
    };
    await flushCaches(env.stack);
    const first = await read(null);
    const oldest = first.data.user.oldest;
    assert.deepEqual(oldest.edges.map((e: any) => e.node.name), ['b1', 'b0']);
    assert.deepEqual(first.data.user.newest.edges.map((e: any) => e.node.name), ['b2', 'b1']);
    const cold = await read(oldest.pageInfo.startCursor);
    assert.deepEqual(cold.data.user.before.edges.map((e: any) => e.node.name), ['b2']);
    assert.equal(cold.data.user.before.pageInfo.hasPreviousPage, false);
    const fields = Object.keys(await redis.hgetall(listCacheKey('user_has_boards', owner))).sort();
    // Each page its own field: forward (t), backward (tb) from the end, and backward before a position
    // (the last field). The first read's `last: 1` with no `before` is one too.
    assert.match(fields.join(' '), /^_gen p:t:2::: p:tb:1::: p:tb:1::::\d+:\d+ p:tb:2:::$/);
    const warm = await read(oldest.pageInfo.startCursor);
    assert.deepEqual(warm.data, cold.data, 'the cache answers what MySQL answered');
    const w = warm.extensions.cost;
    assert.equal(w.sqlRoundTrips, 0);
    // Levels: the user; its three pages of boards (one Redis round trip); the boards.
    assert.equal(w.cache.redis.roundTrips, 1);
    assert.equal(w.cache.redis.misses, 0);
    // A new board: the list's hash goes, backward pages with it; the last page still ends with b0.
    const token = await gw.token(owner);
    const b3 = (await gw.ok('mutation { createBoard(input: { name: "b3" }) { id } }', {}, token)).createBoard.id;
    try {
      const after = await read(oldest.pageInfo.startCursor);
      assert.deepEqual(after.data.user.newest.edges.map((e: any) => e.node.name), ['b3', 'b2']);
      assert.deepEqual(after.data.user.oldest.edges.map((e: any) => e.node.name), ['b1', 'b0']);
      assert.deepEqual(after.data.user.before.edges.map((e: any) => e.node.name), ['b2']);
      assert.equal(after.data.user.before.pageInfo.hasPreviousPage, true, 'b3 now precedes it');
    } finally {
      await gw.ok('mutation($b: ID!) { deleteBoard(id: $b) { deleted } }', { b: b3 }, token);
    }
  });

  test('after each kind of write the next read shows it', async () => {
    const me = (await gw.gql('mutation { createUser(input: { username: "reader_writer" }) { user { id } token } }')).body.data.createUser;
    const t = me.token;
    const q = async (query: string, v: Record<string, unknown> = {}) => {
      const r = await gw.gql(query, v, { token: t });
      assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
      return r.body.data;
    };
    const board = (await q('mutation { createBoard(input: { name: "first" }) { id } }')).createBoard.id;
    const BOARD = 'query($b: ID!) { board(id: $b) { name pinCount followerCount pins(first: 5) { edges { node { id title likeCount } } } } }';
    await q(BOARD, { b: board }); // warm it
    await q('mutation($b: ID!) { updateBoard(id: $b, input: { name: "renamed" }) { id } }', { b: board });
    assert.equal((await q(BOARD, { b: board })).board.name, 'renamed');
    const pin = (await q('mutation($b: ID!) { createPin(input: { boardId: $b, title: "one" }) { id } }', { b: board })).createPin.id;
    let d = await q(BOARD, { b: board });
    assert.equal(d.board.pinCount, 1);
    assert.deepEqual(
      d.board.pins.edges.map((e: any) => e.node.id),
      [pin],
    );
    await q('mutation($p: ID!) { likePin(pinId: $p) { id } }', { p: pin });
    assert.equal((await q(BOARD, { b: board })).board.pins.edges[0].node.likeCount, 1);
    await q('mutation($p: ID!) { updatePin(id: $p, input: { title: "uno" }) { id } }', { p: pin });
    assert.equal((await q(BOARD, { b: board })).board.pins.edges[0].node.title, 'uno');
    await q('mutation($b: ID!) { followBoard(boardId: $b) { id } }', { b: board });
    assert.equal((await q(BOARD, { b: board })).board.followerCount, 1);
    const other = (await q('mutation($b: ID!) { createPin(input: { boardId: $b, title: "two" }) { id } }', { b: board })).createPin.id;
    await q(BOARD, { b: board });
    await q('mutation($b: ID!, $p: ID!) { movePin(boardId: $b, pinId: $p, afterPinId: null) { id } }', { b: board, p: pin });
    const owner = await q('query($b: ID!) { board(id: $b) { pins(first: 5, order: OWNER) { edges { node { id } } } } }', { b: board });
    assert.deepEqual(
      owner.board.pins.edges.map((e: any) => e.node.id),
      [pin, other],
    );
    await q('mutation($p: ID!) { deletePin(id: $p) { deleted } }', { p: pin });
    d = await q(BOARD, { b: board });
    assert.equal(d.board.pinCount, 1);
    assert.deepEqual(
      d.board.pins.edges.map((e: any) => e.node.id),
      [other],
    );
    await q('mutation($p: ID!) { unlikePin(pinId: $p) { id } }', { p: other });
    await q('mutation { updateViewer(input: { about: "changed" }) { id } }');
    assert.equal((await q('{ viewer { about } }')).viewer.about, 'changed');
  });
});

describe('Cache: races', () => {
  test('a reader that read MySQL before a write and fills after its invalidation leaves no stale object', async () => {
    const writes = new ProductWrites({ storage: cached, topology: () => env.topology });
    const board = await cached.objects.create('board', 1, { name: 'before', owner_id: '1' });
    const objects = new MemcachedObjects({ client: memcached });
    const key = objectCacheKey(board.id);
    // Reader: miss, then reads MySQL (old value)...
    const probe = await objects.probe([key]);
    assert.equal(probe.values.size, 0);
    const stale = await env.storage.objects.get(board.id);
    // ...a write commits and invalidates...
    await cached.objects.update(board.id, (c) => ({ ...c.data, name: 'after' }));
    // ...then the reader fills with what it read.
    await objects.fill([
      { key, value: Buffer.from(JSON.stringify({ d: stale!.data, c: stale!.createdAt, u: stale!.updatedAt })), token: probe.tokens.get(key)! },
    ]);
    const now = await cached.objects.get(board.id);
    assert.equal(now?.data.name, 'after', 'the stale fill was refused');
    // And the next reader fills the fresh value over the tombstone.
    const again = await cached.objects.get(board.id);
    assert.equal(again?.data.name, 'after');
    assert.match(String((await memcached.get(key)).value), /after/);
    void writes;
  });

  test('a reader that paged a list before an edge was added and fills after leaves no stale page', async () => {
    const lists = new RedisLists({ redis });
    const from = (await cached.objects.create('board', 2, { name: 'x' })).id;
    const field = { list: listCacheKey('board_has_pins', from), field: 'n' };
    const probe = await lists.probe([field]);
    const token = probe.tokens.get(0)!;
    const staleCount = (await env.storage.mappings.counts([{ id: from, kind: 'board_has_pins' }])).get(`${from}:board_has_pins`);
    await cached.mappings.apply([{ op: 'add', table: 'board_has_pins', from, to: 12345n }]);
    await lists.fill([{ field, value: String(staleCount), token }]);
    const fresh = await cached.mappings.counts([{ id: from, kind: 'board_has_pins' }]);
    assert.equal(fresh.get(`${from}:board_has_pins`), 1);
  });

  test('a write deletes a list Redis holds, and writes nothing for a list it does not hold', async () => {
    const board = async (): Promise<bigint> => (await cached.objects.create('board', 2, { name: 'y' })).id;
    // Never read: the write's invalidation leaves no key behind (before, it made one: a generation per list written).
    const unread = await board();
    const unreadKey = listCacheKey('board_has_pins', unread);
    await cached.mappings.apply([{ op: 'add', table: 'board_has_pins', from: unread, to: 777n }]);
    assert.equal(await redis.exists(unreadKey), 0);
    // Read (count cached under the generation the probe made), then written: the whole list goes.
    const read = await board();
    const key = listCacheKey('board_has_pins', read);
    assert.equal((await cached.mappings.counts([{ id: read, kind: 'board_has_pins' }])).get(`${read}:board_has_pins`), 0);
    const held = await redis.hgetall(key);
    assert.deepEqual(Object.keys(held).sort(), ['_gen', 'n']);
    assert.equal(held.n, '0');
    await cached.mappings.apply([{ op: 'add', table: 'board_has_pins', from: read, to: 778n }]);
    assert.equal(await redis.exists(key), 0);
    assert.equal((await cached.mappings.counts([{ id: read, kind: 'board_has_pins' }])).get(`${read}:board_has_pins`), 1);
    assert.equal((await redis.hgetall(key)).n, '1');
    assert.notEqual((await redis.hgetall(key))._gen, held._gen, 'a new generation, made by the reader');
  });
});

describe('Cache: visibility', () => {
  test('hits and misses per layer are Prometheus metrics', async () => {
    const { text } = await checkedFetch(env, `${gw.url}/metrics`);
    const value = (layer: string, kind: string): number =>
      Number(new RegExp(`shardql_cache_operations_total\\{layer="${layer}",kind="${kind}"\\} (\\d+)`).exec(text)?.[1] ?? NaN);
    for (const layer of ['memcached', 'redis']) {
      assert.ok(value(layer, 'hit') > 0, `${layer} hits counted`);
      assert.ok(value(layer, 'miss') > 0, `${layer} misses counted`);
    }
  });
});

describe('Cache: degraded mode', () => {
  test('a write while memcached hangs shows on every read after, before and after memcached is trusted again', async () => {
    const me = (await gw.gql('mutation { createUser(input: { username: "hang_writer" }) { user { id } token } }')).body.data.createUser;
    const board = (await gw.gql('mutation { createBoard(input: { name: "before" }) { id } }', {}, { token: me.token })).body.data.createBoard.id;
    const read = async () => (await gw.gql('query($b: ID!) { board(id: $b) { name } }', { b: board })).body;
    await read();
    assert.equal((await read()).extensions.cost.cache.memcached.hits, 1, 'the board is cached');
    const pid = await stackPid(env.stack, 'memcached');
    process.kill(pid, 'SIGSTOP');
    try {
      const r = await gw.gql('mutation($b: ID!) { updateBoard(id: $b, input: { name: "after" }) { name } }', { b: board }, { token: me.token });
      assert.equal(r.body.data.updateBoard.name, 'after');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // Until the layer is trusted again reads come from MySQL; once it is, the stale copy is gone.
    let body = await read();
    for (let i = 0; i < 100 && body.extensions.cost.cache.memcached.roundTrips === 0; i++) {
      assert.equal(body.data.board.name, 'after');
      await new Promise((r) => setTimeout(r, 25));
      body = await read();
    }
    assert.ok(body.extensions.cost.cache.memcached.roundTrips > 0, 'memcached is used again');
    assert.equal(body.data.board.name, 'after');
    assert.equal((await read()).data.board.name, 'after');
  });

  for (const service of ['redis', 'memcached'] as const) {
    test(`with ${service} hung (SIGSTOP) under traffic, requests succeed from MySQL within the cache timeout`, async () => {
      const user = (await gw.gql('{ user(username: "cached_owner") { id } }')).body.data.user.id;
      const pid = await stackPid(env.stack, service);
      process.kill(pid, 'SIGSTOP');
      let failures = 0;
      const started = Date.now();
      try {
        for (let i = 0; i < 10; i++) {
          const r = await gw.gql(PROFILE, { id: user });
          if (r.status !== 200 || r.body.errors) failures++;
          assert.ok(r.body.extensions.cost.cache[service].errors > 0 || r.body.extensions.cost.cache[service].hits === 0);
        }
      } finally {
        process.kill(pid, 'SIGCONT');
      }
      console.log(`# ${service} hung: 10 requests in ${Date.now() - started} ms, ${failures} failed`);
      assert.equal(failures, 0);
    });
  }

  for (const service of ['redis', 'memcached'] as const) {
    test(`with ${service} stopped and restarted under traffic, no request fails and caching resumes`, async () => {
      const user = (await gw.gql('{ user(username: "cached_owner") { id } }')).body.data.user.id;
      let failures = 0;
      let requests = 0;
      let running = true;
      const traffic = (async () => {
        while (running) {
          const r = await gw.gql(PROFILE, { id: user });
          requests++;
          if (r.status !== 200 || r.body.errors) failures++;
        }
      })();
      const waitFor = async (n: number) => {
        const target = requests + n;
        while (requests < target) await new Promise((r) => setImmediate(r));
      };
      await waitFor(5);
      await stopService(env.stack.dir, service);
      await waitFor(20);
      await startService(env.stack.dir, service);
      // Reconnection is the clients' own; wait (bounded) until a request shows cache hits again.
      let hits = 0;
      for (let i = 0; i < 200 && hits === 0; i++) {
        const r = await gw.gql(PROFILE, { id: user });
        hits = r.body.extensions.cost.cache[service].hits;
        if (hits === 0) await new Promise((res) => setTimeout(res, 25));
      }
      running = false;
      await traffic;
      console.log(`# ${service} down and back: ${requests} requests, ${failures} failed`);
      assert.equal(failures, 0);
      assert.ok(hits > 0, `${service} caching resumed`);
    });
  }
});
