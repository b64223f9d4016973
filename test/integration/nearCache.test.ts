import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import memjs from 'memjs';
import { Redis } from 'ioredis';
import { freshEnv, flushCaches, servedTestEvents, type TestEnv } from '../helpers/env.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { InvalidationLog } from '../../src/cache/invalidationLog.ts';
import { MemcachedObjects } from '../../src/cache/memcachedObjects.ts';
import { RedisLists } from '../../src/cache/redisLists.ts';
import { createStorage, type Storage } from '../../src/storage/index.ts';
import { startService, stopService } from '../../src/stack/localStack.ts';
import { withStorage } from '../../src/cli/runtime.ts';
import { reconcile } from '../../src/services/repair.ts';
import { shardOf } from '../../src/core/ids.ts';
import { shardDatabase } from '../../src/core/topology.ts';
import { TEST_JWT_SECRET } from '../helpers/gateway.ts';

/**
 * The in-process layer (L1) of two gateways sharing one stack: what one gateway writes, the other
 * shows on its next request, although both serve warm reads from their own memory.
 */
let env: TestEnv;
let a: TestGateway;
let b: TestGateway;
let redis: Redis;
let memcached: memjs.Client;
/** Storage with the shared layers but no invalidation log: a writer L1 cannot hear. */
let deaf: Storage;
let token: string;
let board: string;
let pins: string[];

const BOARD = `query($b: ID!) { board(id: $b) { name pinCount followerCount owner { username }
  pins(first: 10) { edges { node { id title likeCount } } } } }`;

before(async () => {
  env = await freshEnv({ shards: 16 });
  a = await startTestGateway(env, 'near-a');
  b = await startTestGateway(env, 'near-b');
  redis = new Redis({ host: env.stack.redis.host, port: env.stack.redis.port });
  redis.on('error', () => undefined); // one test stops Redis on purpose
  memcached = memjs.Client.create(`${env.stack.memcached.host}:${env.stack.memcached.port}`, { logger: { log: () => undefined } } as memjs.ClientOptions);
  deaf = createStorage({
    topology: () => env.topology,
    credentials: env.stack.mysql,
    cache: { objects: new MemcachedObjects({ client: memcached }), lists: new RedisLists({ redis }) },
    events: servedTestEvents(),
  });
  const me = (await a.gql('mutation { createUser(input: { username: "near_owner" }) { user { id } token } }')).body.data.createUser;
  token = me.token;
  board = (await a.gql('mutation { createBoard(input: { name: "near" }) { id } }', {}, { token })).body.data.createBoard.id;
  pins = [];
  for (let i = 0; i < 3; i++) {
    pins.push(
      (await a.gql('mutation($b: ID!, $t: String) { createPin(input: { boardId: $b, title: $t }) { id } }', { b: board, t: `p${i}` }, { token })).body.data
        .createPin.id,
    );
  }
});
after(async () => {
  await a?.stop();
  await b?.stop();
  await deaf?.close();
  redis?.disconnect();
  memcached?.close();
  await env?.close();
});

async function read(gw: TestGateway, q = BOARD, v: Record<string, unknown> = { b: board }) {
  const r = await gw.gql(q, v, { token });
  assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
  return { data: r.body.data, cost: r.body.extensions.cost };
}

describe('Cache: the in-process layer (L1)', () => {
  test('a warm read costs 0 SQL, 0 memcached round trips and 1 Redis round trip (the read barrier), every key from memory', async () => {
    await flushCaches(env.stack);
    const cold = await read(b);
    assert.ok(cold.cost.sqlRoundTrips > 0);
    assert.equal(cold.cost.cache.local.hits, 0);
    const warm = await read(b);
    assert.deepEqual(warm.data, cold.data);
    assert.equal(warm.cost.sqlRoundTrips, 0);
    assert.equal(warm.cost.cache.memcached.roundTrips, 0);
    assert.equal(warm.cost.cache.redis.roundTrips, 1);
    assert.equal(warm.cost.cache.local.misses, 0);
    // Every object, page and count the cold read looked up is now a hit in memory.
    assert.equal(warm.cost.cache.local.hits, cold.cost.cache.local.misses);
  });

  test("another gateway's writes show on the next read, while the rest stays in memory", async () => {
    const q = async (query: string, v: Record<string, unknown>) => {
      const r = await a.gql(query, v, { token });
      assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
    };
    await read(b);
    const steps: [string, () => Promise<void>, (d: any) => void][] = [
      [
        'rename the board',
        () => q('mutation($b: ID!) { updateBoard(id: $b, input: { name: "renamed" }) { id } }', { b: board }),
        (d) => assert.equal(d.board.name, 'renamed'),
      ],
      [
        'like a pin',
        () => q('mutation($p: ID!) { likePin(pinId: $p) { id } }', { p: pins[0] }),
        (d) => assert.equal(d.board.pins.edges.find((e: any) => e.node.id === pins[0]).node.likeCount, 1),
      ],
      [
        'retitle a pin',
        () => q('mutation($p: ID!) { updatePin(id: $p, input: { title: "retitled" }) { id } }', { p: pins[1] }),
        (d) => assert.equal(d.board.pins.edges.find((e: any) => e.node.id === pins[1]).node.title, 'retitled'),
      ],
      ['follow the board', () => q('mutation($b: ID!) { followBoard(boardId: $b) { id } }', { b: board }), (d) => assert.equal(d.board.followerCount, 1)],
      [
        'delete a pin',
        () => q('mutation($p: ID!) { deletePin(id: $p) { deleted } }', { p: pins[2] }),
        (d) => {
          assert.equal(d.board.pinCount, 2);
          assert.deepEqual(d.board.pins.edges.map((e: any) => e.node.id).sort(), [pins[0], pins[1]].sort());
        },
      ],
      [
        'unlike the pin',
        () => q('mutation($p: ID!) { unlikePin(pinId: $p) { id } }', { p: pins[0] }),
        (d) => assert.equal(d.board.pins.edges.find((e: any) => e.node.id === pins[0]).node.likeCount, 0),
      ],
    ];
    for (const [name, write, check] of steps) {
      await read(b); // warm on B
      await write(); // acknowledged by A
      const after = await read(b);
      check(after.data);
      // Not a cold read in disguise: what the write did not touch still came from B's memory.
      assert.ok(after.cost.cache.local.hits > 0, `${name}: B still reads from memory`);
    }
  });

  test('a writer that bypasses the log leaves L1 stale; a gateway that fell behind the kept log forgets everything', async () => {
    const USER = 'query($u: String!) { user(username: $u) { displayName } }';
    await read(b, USER, { u: 'near_owner' });
    const owner = BigInt((await read(b, '{ user(username: "near_owner") { id } }', {})).data.user.id);
    // Shared layers invalidated, the log told nothing: B's memory still answers the old value.
    await deaf.objects.update(owner, (c) => ({ ...c.data, displayName: 'unheard' }));
    assert.equal((await read(b, USER, { u: 'near_owner' })).data.user.displayName, null);
    // More entries than the log keeps: B's next barrier finds a gap and empties its memory.
    const small = new InvalidationLog({ redis, maxEntries: 5 });
    for (let i = 0; i < 8; i++) await small.append([`o:${1000 + i}`]);
    assert.equal((await read(b, USER, { u: 'near_owner' })).data.user.displayName, 'unheard');
  });

  test('a flushed Redis (a new log) empties every L1', async () => {
    const USER = 'query($u: String!) { user(username: $u) { about } }';
    const owner = BigInt((await read(b, '{ user(username: "near_owner") { id } }', {})).data.user.id);
    await read(b, USER, { u: 'near_owner' });
    await deaf.objects.update(owner, (c) => ({ ...c.data, about: 'after the flush' }));
    assert.equal((await read(b, USER, { u: 'near_owner' })).data.user.about, null, 'stale in memory before the flush');
    await flushCaches(env.stack);
    assert.equal((await read(b, USER, { u: 'near_owner' })).data.user.about, 'after the flush');
  });

  test('with Redis down no read uses L1 (no barrier, no view) and none fails', async () => {
    await read(b);
    await stopService(env.stack.dir, 'redis');
    try {
      for (let i = 0; i < 3; i++) {
        const r = await read(b);
        assert.equal(r.cost.cache.local.hits, 0);
        assert.equal(r.data.board.name, 'renamed');
      }
    } finally {
      await startService(env.stack.dir, 'redis');
    }
    let hits = 0;
    for (let i = 0; i < 200 && hits === 0; i++) {
      hits = (await read(b)).cost.cache.local.hits;
      if (hits === 0) await new Promise((r) => setTimeout(r, 25));
    }
    assert.ok(hits > 0, 'L1 serves again once Redis is back');
  });

  test('a Redis killed and restarted with its data (append-only file) starts a new epoch: what was written while it was down shows on every gateway', async () => {
    const NAME = 'query($b: ID!) { board(id: $b) { name } }';
    const before = (await read(b, NAME)).data.board.name;
    assert.ok((await read(b, NAME)).cost.cache.local.hits > 0, "B's memory holds the board");
    const seqBefore = Number(await redis.get('shardql:{inv}:seq'));
    await stopService(env.stack.dir, 'redis', 'SIGKILL');
    try {
      // Acknowledged while the log cannot be written: memcached is invalidated, the keys go to the outbox.
      const w = await a.gql('mutation($b: ID!) { updateBoard(id: $b, input: { name: "while redis was down" }) { name } }', { b: board }, { token });
      assert.equal(w.body.errors, undefined, JSON.stringify(w.body.errors));
      assert.notEqual(before, 'while redis was down');
    } finally {
      await startService(env.stack.dir, 'redis');
    }
    // The log came back as it was (nothing appended for that write), so only the restart tells B.
    assert.equal(Number(await redis.get('shardql:{inv}:seq')), seqBefore, 'the log survived the restart unchanged');
    assert.equal((await read(b, NAME)).data.board.name, 'while redis was down');
  });

  test('a reconcile run outside any gateway (the CLI) shows on the next read of every gateway', async () => {
    const COUNT = 'query($b: ID!) { board(id: $b) { pinCount } }';
    const truth = (await read(b, COUNT)).data.board.pinCount;
    const id = BigInt(board);
    // A count made wrong on purpose, straight in MariaDB, and seen by B (the flush empties every layer).
    await env.storage.router.query(
      env.storage.router.hostOfShard(shardOf(id)),
      [shardOf(id)],
      `UPDATE ${shardDatabase(shardOf(id))}.counts SET n = ? WHERE id = ? AND kind = ?`,
      [99, id, 'board_has_pins'],
    );
    await flushCaches(env.stack);
    assert.equal((await read(b, COUNT)).data.board.pinCount, 99);
    assert.equal((await read(b, COUNT)).data.board.pinCount, 99, 'and kept in its memory');
    // `shardql reconcile`'s storage: the CLI's own, with the caches.
    const config = {
      env: 'production' as const,
      port: 0,
      etcdEndpoints: env.stack.etcd.endpoints,
      topologyKey: '/unused',
      jwtSecret: TEST_JWT_SECRET,
      mysql: { user: env.stack.mysql.user, password: env.stack.mysql.password },
      redis: env.stack.redis,
      memcached: { servers: `${env.stack.memcached.host}:${env.stack.memcached.port}` },
    };
    const report = await withStorage(config, env.topology, (s) => reconcile(s, [shardOf(id)]), 2, { caches: true });
    assert.equal(report.byKind.count, 1);
    assert.equal((await read(b, COUNT)).data.board.pinCount, truth);
    assert.equal((await read(a, COUNT)).data.board.pinCount, truth);
  });
});
