/**
 * Stored home feeds on the real stack: a gateway, real `shardql worker` processes running the
 * fan-out jobs, Redis and MariaDB. Small settings make every path reachable with little data: a
 * feed keeps 10 pins, and a source with more than 3 followers is merged at read time (from 2 on).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { freshEnv, servedTestEvents, type TestEnv } from '../helpers/env.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { eventually, TestWorkers, type WorkerProcess } from '../helpers/workers.ts';
import { createCacheLayers, type CacheLayers } from '../../src/cache/cacheLayers.ts';
import { feedKey, feedMember, RedisFeeds, type FeedEntry, type FeedRead } from '../../src/cache/redisFeeds.ts';
import { JobQueue } from '../../src/jobs/jobQueue.ts';
import { JOB_KINDS } from '../../src/jobs/registry.ts';
import { ProductWrites } from '../../src/product/pinterest/writes.ts';
import { createStorage, type Storage } from '../../src/storage/index.ts';
import { publishTopology } from '../../src/topology/etcdTopology.ts';
import { allShards, repairIntents } from '../../src/services/repair.ts';

const PREFIX = 'shardql-test-feeds';
const NAME = 'feeds';
const TOPOLOGY_KEY = `/shardql-test/${NAME}/topology`;
const SIZE = 10;
const MAX_FOLLOWERS = 3;

let env: TestEnv;
let gw: TestGateway;
let redis: Redis;
let queue: JobQueue<typeof JOB_KINDS>;
let layers: CacheLayers;
let cached: Storage;

function workerEnv(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  return {
    SHARDQL_STACK_DIR: process.env.SHARDQL_STACK_DIR ?? '',
    SHARDQL_TOPOLOGY_KEY: TOPOLOGY_KEY,
    SHARDQL_QUEUE_PREFIX: PREFIX,
    SHARDQL_FEED_SIZE: String(SIZE),
    SHARDQL_FEED_FANOUT_MAX_FOLLOWERS: String(MAX_FOLLOWERS),
    SHARDQL_WORKER_QUEUES: 'feed',
    SHARDQL_WORKER_LOCK_MS: '1000',
    SHARDQL_WORKER_STALLED_CHECK_MS: '300',
    ...extra,
  };
}

const workers = new TestWorkers(workerEnv);
const worker = (extra: Readonly<Record<string, string>> = {}): Promise<WorkerProcess> => workers.start(extra);

before(async () => {
  env = await freshEnv({ shards: 16 });
  await publishTopology(env.etcd, TOPOLOGY_KEY, env.doc);
  gw = await startTestGateway(env, NAME, { queuePrefix: PREFIX, feed: { size: SIZE, fanoutMaxFollowers: MAX_FOLLOWERS } }, { repair: { intervalMs: 0 } });
  redis = new Redis({ host: env.stack.redis.host, port: env.stack.redis.port });
  queue = new JobQueue({ redis, prefix: PREFIX, registry: JOB_KINDS });
  // Writes made outside the gateway invalidate every layer (and its L1) like the gateway's own.
  layers = await createCacheLayers({ redis: env.stack.redis, memcached: { servers: `${env.stack.memcached.host}:${env.stack.memcached.port}` }, nearEntries: 0, feedSize: SIZE });
  cached = createStorage({
    topology: () => env.topology,
    credentials: { user: env.stack.mysql.user, password: env.stack.mysql.password },
    cache: { objects: layers.objects, lists: layers.lists, near: layers.near },
    events: servedTestEvents(),
  });
  // The fan-out worker every test but the SIGKILL one uses (that one runs its own).
  await worker();
});

after(async () => {
  await workers.stopAll();
  await gw?.stop();
  await queue?.close();
  redis?.disconnect();
  await cached?.close();
  layers?.close();
  await env?.close();
});

interface User {
  readonly id: string;
  readonly token: string;
  readonly board: string;
}

const ok: TestGateway['ok'] = (query, variables, token) => gw.ok(query, variables, token);

let users = 0;
async function user(name: string): Promise<User> {
  const u = (await ok('mutation($u: String!) { createUser(input: { username: $u }) { user { id } token } }', { u: `${name}_${users++}` })).createUser;
  const board = (await ok('mutation { createBoard(input: { name: "b" }) { id } }', {}, u.token)).createBoard.id;
  return { id: u.user.id, token: u.token, board };
}

const follow = (who: User, whom: User) => ok('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: whom.id }, who.token);
const unfollow = (who: User, whom: User) => ok('mutation($u: ID!) { unfollowUser(userId: $u) { id } }', { u: whom.id }, who.token);
const followBoard = (who: User, board: string) => ok('mutation($b: ID!) { followBoard(boardId: $b) { id } }', { b: board }, who.token);

async function pin(by: User, title: string): Promise<string> {
  return (await ok('mutation($b: ID!, $t: String) { createPin(input: { boardId: $b, title: $t }) { id } }', { b: by.board, t: title }, by.token)).createPin.id;
}

const FEED = 'query($first: Int, $a: String) { homeFeed(first: $first, after: $a) { edges { cursor node { id title } } pageInfo { hasNextPage endCursor } } }';

async function feedPage(viewer: User, first = 20, after: string | null = null): Promise<{ ids: string[]; titles: string[]; next: string | null; cost: any }> {
  const r = await gw.gql(FEED, { first, a: after }, { token: viewer.token });
  assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
  const f = r.body.data.homeFeed;
  return { ids: f.edges.map((e: any) => e.node.id), titles: f.edges.map((e: any) => e.node.title), next: f.pageInfo.hasNextPage ? f.pageInfo.endCursor : null, cost: r.body.extensions.cost };
}

/** The whole feed, page by page. */
async function wholeFeed(viewer: User, first = 4): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 100; i++) {
    const p = await feedPage(viewer, first, cursor);
    out.push(...p.ids);
    if (!p.next) return out;
    cursor = p.next;
  }
  throw new Error('feed never ended');
}

/** The pin IDs a stored feed holds, newest first; undefined when there is none. */
async function stored(viewer: User | string): Promise<string[] | undefined> {
  const key = feedKey(BigInt(typeof viewer === 'string' ? viewer : viewer.id));
  if ((await redis.exists(key)) === 0) return undefined;
  return (await redis.zrevrangebyscore(key, '+inf', 0)).map((m) => BigInt(m).toString());
}

/** Waits for a job of the feed queue to complete and returns what it reported. */
async function completed(id: string): Promise<Record<string, unknown>> {
  return eventually(`job ${id} completed`, async () => {
    const state = await queue.queue('feed').getJobState(id);
    if (state === 'failed') assert.fail(`job ${id} failed: ${(await queue.queue('feed').getJob(id))?.failedReason}`);
    return state === 'completed' ? ((await queue.queue('feed').getJob(id))!.returnvalue as Record<string, unknown>) : undefined;
  });
}

/** Every pin a user made, newest first (time, then ID), as the feed must order them. */
async function newestFirst(ids: readonly string[]): Promise<string[]> {
  const pins = await Promise.all(ids.map(async (id) => ({ id, at: (await cached.objects.get(BigInt(id)))!.createdAt })));
  return pins.sort((a, b) => b.at - a.at || (BigInt(b.id) > BigInt(a.id) ? 1 : -1)).map((p) => p.id);
}

describe('Feeds: stored in Redis, written by fan-out jobs in worker processes', () => {
  test('fan-out reaches only feeds that exist; a missing feed stays absent until read, then is built whole', async () => {
    const p = await user('pinner');
    const a = await user('reader_a');
    const b = await user('reader_b');
    await follow(a, p);
    await follow(b, p);
    const old = await pin(p, 'old');
    assert.deepEqual((await feedPage(a)).ids, [old], 'A’s first read builds it');
    assert.deepEqual(await stored(a), [old]);
    assert.equal(await stored(b), undefined, 'B has not read: no feed');

    const x = await pin(p, 'x');
    const report = await completed(`fanout-${x}`);
    assert.deepEqual({ followers: report.followers, added: report.added, missing: report.missing, bigSources: report.bigSources }, { followers: 2, added: 1, missing: 1, bigSources: 0 });
    assert.deepEqual(await stored(a), [x, old], 'appended to A’s feed');
    assert.equal(await stored(b), undefined, 'B’s feed is still absent: never half-filled');
    assert.deepEqual((await feedPage(b)).ids, [x, old], 'B’s first read builds it from MySQL');
    assert.deepEqual(await stored(b), [x, old]);
  });

  test('a warm feed read: 0 SQL, 0 memcached and exactly 2 Redis round trips (read barrier + stored page)', async () => {
    const p = await user('warm_pinner');
    const a = await user('warm_reader');
    await follow(a, p);
    for (let i = 0; i < 3; i++) await pin(p, `w${i}`);
    const cold = await feedPage(a);
    assert.equal(cold.ids.length, 3);
    const warm = await feedPage(a);
    assert.deepEqual(warm.ids, cold.ids);
    console.log(`# feed read cold: ${JSON.stringify({ sql: cold.cost.sqlRoundTrips, redis: cold.cost.cache.redis.roundTrips, memcached: cold.cost.cache.memcached.roundTrips })}`);
    assert.deepEqual(
      { sql: warm.cost.sqlRoundTrips, memcached: warm.cost.cache.memcached.roundTrips, redis: warm.cost.cache.redis.roundTrips },
      { sql: 0, memcached: 0, redis: 2 },
    );
  });

  test('a big source (more than the threshold of followers) is not fanned out; its pins are merged in at read time', async () => {
    const big = await user('big');
    const readers = await Promise.all([0, 1, 2, 3].map((i) => user(`big_fan${i}`)));
    for (const r of readers) await follow(r, big);
    const [a] = readers as [User];
    assert.deepEqual((await feedPage(a)).ids, []);
    // Built now: the follow is no longer recent only once the feed is older than the follow by the
    // skew margin, so age the build mark to make the read-time merge come from the big-source rule alone.
    await redis.zremrangebyscore(feedKey(BigInt(a.id)), -1, -1);
    await redis.zadd(feedKey(BigInt(a.id)), -1, `b:${Date.now() + 3600_000}`);
    const y = await pin(big, 'y');
    const report = await completed(`fanout-${y}`);
    assert.deepEqual({ followers: report.followers, bigSources: report.bigSources }, { followers: 0, bigSources: 1 });
    assert.deepEqual(await stored(a), [], 'not stored in A’s feed');
    assert.deepEqual((await feedPage(a)).ids, [y], 'merged at read time');
  });

  test('a follow shows on the next read (the new source is merged in), an unfollow too (filtered, then cleaned by a job)', async () => {
    const p = await user('f_pinner');
    const q = await user('f_other');
    const a = await user('f_reader');
    await follow(a, p);
    const mine = await pin(p, 'p1');
    const theirs = [await pin(q, 'q1'), await pin(q, 'q2')];
    assert.deepEqual((await feedPage(a)).ids, [mine]);
    await follow(a, q);
    assert.deepEqual((await feedPage(a)).ids, await newestFirst([mine, ...theirs]), 'a follow shows on the next read');
    const fanned = await pin(q, 'q3');
    await completed(`fanout-${fanned}`);
    theirs.push(fanned);
    assert.ok((await stored(a))!.includes(fanned), 'fanned out to A once followed');
    await unfollow(a, q);
    // The unfollow's clean job races this read: the read must hide them either way.
    assert.deepEqual((await feedPage(a)).ids, [mine], 'an unfollow shows on the next read');
    await eventually('the unfollowed pins gone from the stored feed', async () => {
      const s = await stored(a);
      return s && !s.some((id) => theirs.includes(id)) ? true : undefined;
    });
  });

  test('a deleted pin, and the pin of a deleted user, never show; jobs take them out of stored feeds', async () => {
    const p = await user('d_pinner');
    const gone = await user('d_leaver');
    const a = await user('d_reader');
    await follow(a, p);
    await follow(a, gone);
    const keep = await pin(p, 'keep');
    const x = await pin(p, 'x');
    const z = await pin(gone, 'z');
    assert.deepEqual((await feedPage(a)).ids, await newestFirst([keep, x, z]));
    assert.deepEqual(await stored(a), await newestFirst([keep, x, z]));

    await ok('mutation($p: ID!) { deletePin(id: $p) { deleted } }', { p: x }, p.token);
    assert.deepEqual((await feedPage(a)).ids, await newestFirst([keep, z]), 'a deleted pin never shows');
    const retract = await completed(`retract-${x}`);
    assert.equal(retract.removed, 1);
    assert.ok(!(await stored(a))!.includes(x));

    // The account deleted, its cascade cut short after the first transaction: the user is gone,
    // its pins are not yet. The read still hides them (their pinner is inactive).
    const crashing = new ProductWrites({
      storage: cached,
      topology: () => env.topology,
      faults: (point) => {
        if (point === 'after-first-commit') throw new Error('injected crash');
      },
    });
    await assert.rejects(crashing.deleteViewer(BigInt(gone.id)), /injected crash/);
    assert.ok((await cached.objects.get(BigInt(z)))!.data.active !== false, 'z itself is still active');
    assert.deepEqual((await feedPage(a)).ids, [keep], 'a deleted user’s pin never shows');
    await eventually('z cleaned out of the stored feed (the read handed it to a job)', async () => ((await stored(a))!.includes(z) ? undefined : true));
    await gw.gateway.settled(); // the follows' intents, deleted shortly after each answered
    await repairIntents(cached, env.topology, { minAgeMs: 0 });
    assert.equal((await env.storage.intents.pending(allShards(env.topology), 0, 10)).length, 0);
  });

  test('no duplicates: a pin of a followed pinner on a followed board shows once; a repin is its own pin', async () => {
    const p = await user('dup_pinner');
    const s = await user('dup_repinner');
    const a = await user('dup_reader');
    await follow(a, p);
    await followBoard(a, p.board);
    await follow(a, s);
    assert.deepEqual((await feedPage(a)).ids, []);
    const x = await pin(p, 'x');
    await completed(`fanout-${x}`);
    const repin = (await ok('mutation($p: ID!, $b: ID!) { repin(pinId: $p, boardId: $b) { id } }', { p: x, b: s.board }, s.token)).repin.id;
    await completed(`fanout-${repin}`);
    assert.deepEqual(await stored(a), await newestFirst([x, repin]));
    assert.deepEqual((await feedPage(a)).ids, await newestFirst([x, repin]));
  });

  test('order: newest first, ties (the same millisecond) on the higher pin ID, the same in a stored feed and in a build', async () => {
    const p = await user('tie_pinner');
    const a = await user('tie_reader');
    await follow(a, p);
    assert.deepEqual((await feedPage(a)).ids, []);
    // Three pins in one millisecond, written through storage whose clock stands still, fanned out by the worker.
    const still = Date.now();
    const frozen = createStorage({
      topology: () => env.topology,
      credentials: { user: env.stack.mysql.user, password: env.stack.mysql.password },
      now: () => still,
      cache: { objects: layers.objects, lists: layers.lists, near: layers.near },
      events: servedTestEvents(),
    });
    try {
      const writes = new ProductWrites({ storage: frozen, topology: () => env.topology, jobs: queue });
      const tied: string[] = [];
      for (let i = 0; i < 3; i++) tied.push(`${(await writes.createPin(BigInt(p.id), BigInt(p.board), { title: `t${i}` })).id}`);
      for (const id of tied) await completed(`fanout-${id}`);
      const expected = [...tied].sort((x, y) => (BigInt(y) > BigInt(x) ? 1 : -1));
      assert.deepEqual(await stored(a), expected, 'stored: higher ID first');
      assert.deepEqual(await wholeFeed(a, 1), expected, 'read a pin at a time through cursors');
      await redis.del(feedKey(BigInt(a.id)));
      assert.deepEqual(await wholeFeed(a, 2), expected, 'built again from MySQL: the same order');
    } finally {
      await frozen.close();
    }
  });

  test('paging: no gap and no repeat while new pins are fanned out between pages, across the stored window and beyond it', async () => {
    const p = await user('page_pinner');
    const q = await user('page_board_owner');
    const a = await user('page_reader');
    await follow(a, p);
    await followBoard(a, q.board);
    const made: string[] = [];
    for (let i = 0; i < 2 * SIZE + 5; i++) made.push(await pin(i % 2 ? p : q, `m${i}`));
    const expected = await newestFirst(made);
    const seen: string[] = [];
    let cursor: string | null = null;
    const late: string[] = [];
    for (let page = 0; page < 20; page++) {
      const r = await feedPage(a, 4, cursor);
      seen.push(...r.ids);
      // A new pin fanned out between pages lands above the cursor: later pages never show it.
      const n = await pin(page % 2 ? p : q, `late${page}`);
      await completed(`fanout-${n}`);
      late.push(n);
      if (!r.next) break;
      cursor = r.next;
    }
    assert.deepEqual(seen, expected, `every pin once, newest first, past the ${SIZE} stored`);
    const s = (await stored(a))!;
    assert.equal(s.length, SIZE, `the stored feed keeps ${SIZE}`);
    assert.deepEqual(s, (await newestFirst([...made, ...late])).slice(0, SIZE), 'the newest ones');
    assert.deepEqual(await wholeFeed(a, 7), await newestFirst([...made, ...late]));
  });

  test('a worker SIGKILLed midway through a fan-out: the job runs again elsewhere; every feed gets the pin, once', async () => {
    await workers.stopAll();
    const p = await user('kill_pinner');
    const readers: User[] = [];
    for (let i = 0; i < 12; i++) readers.push(await user(`kill_reader${i}`));
    for (const r of readers) await followBoard(r, p.board);
    await Promise.all(readers.map((r) => feedPage(r)));
    const hold = `${PREFIX}:probe:hold-fanout`;
    await redis.set(hold, '1');
    // MAX_FOLLOWERS is 3: a board with 12 followers would be merged at read time; raise it for this worker.
    const tuning = { SHARDQL_WORKER_TEST_JOBS: '1', SHARDQL_FEED_FANOUT_PAGE: '4', SHARDQL_FEED_FANOUT_MAX_FOLLOWERS: '100' };
    const first = await worker(tuning);
    const x = await pin(p, 'x');
    // Feeds that hold a pin (they were empty before it).
    const have = async (): Promise<number> => (await Promise.all(readers.map((r) => redis.zcount(feedKey(BigInt(r.id)), 0, '+inf')))).filter((n) => n > 0).length;
    await eventually('the first page of 4 feeds written', async () => ((await have()) === 4 ? true : undefined));
    assert.equal(await queue.queue('feed').getJobState(`fanout-${x}`), 'active', 'held before its second page');
    assert.equal(await have(), 4);
    first.child.kill('SIGKILL');
    assert.deepEqual(await first.exited, { code: null, signal: 'SIGKILL' });
    await redis.del(hold);
    const second = await worker(tuning);
    const report = await completed(`fanout-${x}`);
    assert.deepEqual({ followers: report.followers, added: report.added, present: report.present }, { followers: 12, added: 8, present: 4 }, 'ran again from the start: 4 already there, 8 added');
    assert.ok(second.logs.some((l) => l.event === 'job_stalled' && l.id === `fanout-${x}`), 'found stalled by the second worker');
    for (const r of readers) {
      const members = await redis.zrangebyscore(feedKey(BigInt(r.id)), 0, '+inf');
      assert.deepEqual(members.map((m) => BigInt(m).toString()), [x], `reader ${r.id}: the pin once`);
    }
  });

  test('the writer dies after the pin committed, before enqueueing its fan-out: the repair pass enqueues it from the intent', async () => {
    const star = await user('dur_star');
    const fan = await user('dur_fan');
    await follow(fan, star);
    await feedPage(fan); // the fan's feed exists from here on
    // A writer that crashes right after the first commit, as a process killed there would stop.
    class Crash extends Error {}
    const writes = new ProductWrites({
      storage: cached,
      topology: () => env.topology,
      jobs: queue,
      faults: (point, kind) => (point === 'after-first-commit' && kind === 'createPin' ? () => { throw new Crash('killed after the commit'); } : undefined),
    });
    await assert.rejects(writes.createPin(BigInt(star.id), BigInt(star.board), { title: 'acknowledged?' }), Crash);
    await gw.gateway.settled(); // the follows' own intents, deleted shortly after each answered
    const pending = await cached.intents.pending(allShards(env.topology), 0, 100);
    assert.deepEqual(pending.map((i) => [i.kind, i.steps.map((st) => st.kind)]), [['createPin', ['enqueue']]], 'the fan-out waits in the intent log');
    const pinId = String((pending[0]!.steps[0] as unknown as { data: { pin: string } }).data.pin);
    assert.equal((await stored(fan))?.includes(pinId), false, 'no fan-out ran: nothing enqueued it yet');
    const repaired = await repairIntents(cached, env.topology, { minAgeMs: 0, jobs: queue });
    assert.deepEqual([repaired.completed, repaired.failed], [1, 0]);
    await eventually('the fan-out the repair pass enqueued reached the fan’s stored feed', async () => ((await stored(fan))?.includes(pinId) ? true : undefined));
    assert.equal((await feedPage(fan)).ids[0], pinId);
    // Without a queue in the process that repairs, the intent stays for one that has it.
    await assert.rejects(writes.createPin(BigInt(star.id), BigInt(star.board), { title: 'second' }), Crash);
    const noQueue = await repairIntents(cached, env.topology, { minAgeMs: 0 });
    assert.deepEqual([noQueue.completed, noQueue.failed], [0, 1]);
    assert.equal((await repairIntents(cached, env.topology, { minAgeMs: 0, jobs: queue })).completed, 1);
  });

  test('Redis flushed: feeds are rebuilt on read, and nothing wrong is served', async () => {
    const p = await user('flush_pinner');
    const a = await user('flush_reader');
    await follow(a, p);
    const made = [await pin(p, 'f1'), await pin(p, 'f2'), await pin(p, 'f3')];
    const before = await wholeFeed(a);
    assert.deepEqual(before, await newestFirst(made));
    await redis.flushall();
    assert.equal(await stored(a), undefined);
    assert.deepEqual(await wholeFeed(a), before);
    assert.deepEqual(await stored(a), before);
  });
});

describe('Feeds: the Redis scripts (one viewer’s key)', () => {
  const feeds = (): RedisFeeds => new RedisFeeds({ redis, cap: 3 });
  const v = 987654321n;
  const e = (id: number, time: number) => ({ id: BigInt(id), time });

  test('a fan-out that lands while a feed is being built is kept: the build adds to what was appended', async () => {
    const f = feeds();
    await f.drop(v);
    assert.deepEqual(await f.append([v], e(9, 900)), { missing: 1, added: 0, 'below-horizon': 0, present: 0 }, 'no feed: nothing');
    const token = await f.mark(v, 1000);
    assert.ok(token);
    assert.equal(await f.mark(v, 1001), undefined, 'one build at a time');
    assert.equal((await f.read(v, undefined, 10)).state, 'building');
    assert.deepEqual(await f.append([v], e(9, 900)), { missing: 0, added: 1, 'below-horizon': 0, present: 0 }, 'appended to the building feed');
    // The build read MySQL before pin 9 committed: it does not have it.
    assert.equal(await f.commit(v, token!, [e(5, 500), e(4, 400)], undefined), true);
    const r = await f.read(v, undefined, 10);
    assert.equal(r.state, 'stored');
    assert.deepEqual(r.state === 'stored' && r.entries, [e(9, 900), e(5, 500), e(4, 400)]);
  });

  test('capped: the oldest pins are trimmed and the horizon rises to the newest trimmed; nothing at or below it is stored', async () => {
    const f = feeds();
    await f.drop(v);
    const token = await f.mark(v, 1000);
    await f.commit(v, token!, [e(1, 100), e(2, 200), e(3, 300)], undefined);
    await f.append([v], e(4, 400));
    const r = await f.read(v, undefined, 10);
    assert.deepEqual(r.state === 'stored' && { entries: r.entries, horizon: r.horizon }, { entries: [e(4, 400), e(3, 300), e(2, 200)], horizon: e(1, 100) });
    assert.deepEqual(await f.append([v], e(0, 50)), { missing: 0, added: 0, 'below-horizon': 1, present: 0 });
    assert.deepEqual(await f.append([v], e(4, 400)), { missing: 0, added: 0, 'below-horizon': 0, present: 1 }, 'twice is once');
    // Keyset reads after a position, ties on the ID.
    await f.append([v], e(7, 300));
    const after = await f.read(v, { time: 300, id: 7n }, 10);
    assert.deepEqual(after.state === 'stored' && after.entries, [e(3, 300)]);
  });

  test('a page kept in the process answers only while its feed is unchanged: every change, from any process, raises the version', async () => {
    let clock = 5_000_000;
    const keeping = (): RedisFeeds => new RedisFeeds({ redis, cap: 3, now: () => clock });
    const a = keeping(); // the reader, keeping pages
    const b = keeping(); // another gateway or a worker, writing
    const entries = (r: FeedRead): FeedEntry[] => {
      assert.equal(r.state, 'stored');
      return r.state === 'stored' ? r.entries : [];
    };
    const page = async (): Promise<FeedEntry[]> => entries(await a.read(v, undefined, 10));
    await a.drop(v);
    const token = await b.mark(v, 1000);
    await b.commit(v, token!, [e(1, 100), e(2, 200)], undefined);
    const first = await page();
    assert.equal(await page(), first, 'unchanged: the kept page itself answers');
    await b.append([v], e(3, 300));
    assert.deepEqual(await page(), [e(3, 300), e(2, 200), e(1, 100)], 'an append elsewhere: read again');
    await b.remove(v, [2n]);
    assert.deepEqual(await page(), [e(3, 300), e(1, 100)], 'a removal (feed.clean)');
    await b.removeFromMany([v], 1n);
    assert.deepEqual(await page(), [e(3, 300)], 'a removal from many feeds (a retraction)');
    const kept = await page();
    assert.deepEqual(await b.append([v], e(3, 300)), { missing: 0, added: 0, 'below-horizon': 0, present: 1 });
    assert.equal(await b.remove(v, [77n]), 0);
    assert.equal(await page(), kept, 'changes that changed nothing keep the version');
    // A page after a cursor is kept apart from the first page.
    await b.append([v], e(4, 250));
    const later = entries(await a.read(v, { time: 300, id: 3n }, 10));
    assert.deepEqual(later, [e(4, 250)]);
    assert.equal(entries(await a.read(v, { time: 300, id: 3n }, 10)), later);
    assert.deepEqual(await page(), [e(3, 300), e(4, 250)]);
    // A rebuild replaces the feed: its version starts again, under a new build time.
    const rebuild = await b.mark(v, 2000, { replace: true });
    assert.equal((await a.read(v, undefined, 10)).state, 'building');
    await b.commit(v, rebuild!, [e(8, 800)], undefined);
    assert.deepEqual(await page(), [e(8, 800)], 'after a rebuild');
    // Kept pages age out: one older than the max age (10 s) is read again, whatever its version.
    const young = await page();
    clock += 10_001;
    const aged = await page();
    assert.notEqual(aged, young);
    assert.deepEqual(aged, young);
    assert.equal(await page(), aged);
    // Only a client's page is kept (a worker's read of a whole feed, 1,000 items, is not).
    const whole = entries(await a.read(v, undefined, 1000));
    assert.deepEqual(whole, aged);
    assert.notEqual(entries(await a.read(v, undefined, 1000)), whole);
    // A feed without a version (written by a build before versions) is never kept.
    await redis.del(feedKey(v));
    await redis.zadd(feedKey(v), -1, 'b:3000', 100, feedMember(1n));
    const unversioned = await page();
    assert.deepEqual(unversioned, [e(1, 100)]);
    assert.notEqual(await page(), unversioned);
    // A feed gone (expired, evicted, flushed) is gone for the reader too, whatever it kept.
    await b.drop(v);
    assert.equal((await a.read(v, undefined, 10)).state, 'missing');
  });
});
