/**
 * Writes while Redis is down: the stack's redis-server killed with SIGKILL, then every mutation of
 * the schema. Each one either is acknowledged with its result (it committed) or fails with a
 * retryable code having committed nothing; what a committed write could not hand to Redis (a new
 * pin's fan-out job) waits in its intent. Redis back, the repair pass makes everything consistent:
 * no intent left, reconcile finds nothing to fix (every count equals its list), and the follower's
 * stored home feed gets the pin made during the outage (a real `shardql worker` runs the fan-out).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { startTestGateway, type GqlResult, type TestGateway } from '../helpers/gateway.ts';
import { eventually, TestWorkers } from '../helpers/workers.ts';
import { startService, stopService } from '../../src/stack/localStack.ts';
import { JobQueue } from '../../src/jobs/jobQueue.ts';
import { JOB_KINDS } from '../../src/jobs/registry.ts';
import { allShards, reconcile, repairIntents } from '../../src/services/repair.ts';
import { publishTopology } from '../../src/topology/etcdTopology.ts';
import { feedKey } from '../../src/cache/redisFeeds.ts';
import { createCacheLayers } from '../../src/cache/cacheLayers.ts';
import { createStorage } from '../../src/storage/index.ts';
import { isActive } from '../../src/storage/objectStore.ts';
import type { MappingTable } from '../../src/core/mappings.ts';
import { eventSettings } from '../../src/core/events.ts';
import { PINTEREST_EVENTS } from '../../src/product/pinterest/events.ts';

const NAME = 'redis-outage';
const PREFIX = 'shardql-test-redis-outage';
const TOPOLOGY_KEY = `/shardql-test/${NAME}/topology`;

let env: TestEnv;
let gw: TestGateway;
let redis: Redis;
let queue: JobQueue<typeof JOB_KINDS>;
const logged: { event: string; fields: Record<string, unknown> }[] = [];
const workers = TestWorkers.feed(TOPOLOGY_KEY, PREFIX);

before(async () => {
  env = await freshEnv({ shards: 16 });
  await publishTopology(env.etcd, TOPOLOGY_KEY, env.doc);
  // No background repair: the test runs the pass itself, once Redis is back.
  gw = await startTestGateway(env, NAME, { queuePrefix: PREFIX }, { repair: { intervalMs: 0 }, log: (event: string, fields?: Record<string, unknown>) => void logged.push({ event, fields: fields ?? {} }) });
  redis = new Redis({ host: env.stack.redis.host, port: env.stack.redis.port, retryStrategy: () => 100 }).on('error', () => undefined);
  queue = new JobQueue({ redis, prefix: PREFIX, registry: JOB_KINDS });
});

after(async () => {
  await workers.stopAll();
  await gw?.stop();
  await queue?.close();
  redis?.disconnect();
  await env?.close();
});

interface Who {
  readonly id: string;
  readonly token: string;
}

let keys = 0;
/** A mutation with an Idempotency-Key of its own (so a replay can be compared). */
function mutate(query: string, variables: Record<string, unknown>, who?: Who, key = `outage-${keys++}`): Promise<GqlResult> {
  return gw.gql(query, variables, { ...(who ? { token: who.token } : {}), headers: { 'idempotency-key': key } });
}

async function signUp(username: string): Promise<Who> {
  const d = await gw.ok('mutation($u: String!) { createUser(input: { username: $u }) { user { id } token } }', { u: username });
  return { id: d.createUser.user.id, token: d.createUser.token };
}
const ok = (query: string, variables: Record<string, unknown>, who: Who): Promise<any> => gw.ok(query, variables, who.token);

/** What MariaDB itself holds (the test's storage has no cache). */
const object = (id: string) => env.storage.objects.get(BigInt(id));
const edge = async (table: MappingTable, from: string, to: string): Promise<boolean> =>
  (await env.storage.mappings.existing(table, [{ from: BigInt(from), to: BigInt(to) }])).size === 1;
const count = async (table: MappingTable, id: string): Promise<number> =>
  (await env.storage.mappings.counts([{ id: BigInt(id), kind: table }])).get(`${id}:${table}`) ?? 0;

describe('Redis killed (SIGKILL) under every mutation', () => {
  test('each is acknowledged with its result or fails retryable with nothing committed; once Redis is back, repair makes all consistent and the feed gets the pin', async () => {
    // A worker runs the fan-out once Redis is back; it is started now, while Redis answers.
    await workers.start();
    const a = await signUp('out_owner');
    const fan = await signUp('out_fan');
    const c = await signUp('out_other');
    const leaver = await signUp('out_leaver');
    const board = (await ok('mutation { createBoard(input: { name: "main" }) { id } }', {}, a)).createBoard.id;
    const spare = (await ok('mutation { createBoard(input: { name: "spare" }) { id } }', {}, a)).createBoard.id;
    const fanBoard = (await ok('mutation { createBoard(input: { name: "saved" }) { id } }', {}, fan)).createBoard.id;
    const newPin = async (who: Who, b: string, title: string): Promise<string> =>
      (await ok('mutation($b: ID!, $t: String) { createPin(input: { boardId: $b, title: $t }) { id } }', { b, t: title }, who)).createPin.id;
    const p1 = await newPin(a, board, 'one');
    const p2 = await newPin(a, board, 'two');
    const p3 = await newPin(a, board, 'three');
    const comment = (await ok('mutation($p: ID!) { createComment(pinId: $p, text: "before") { id } }', { p: p1 }, fan)).createComment.id;
    await ok('mutation($p: ID!) { likePin(pinId: $p) { id } }', { p: p2 }, fan);
    await ok('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: a.id }, fan);
    await ok('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: a.id }, leaver);
    await ok('mutation($b: ID!) { followBoard(boardId: $b) { id } }', { b: spare }, c);
    await ok('mutation($p: ID!) { likePin(pinId: $p) { id } }', { p: p1 }, leaver);
    // The fan's stored feed exists now (a fan-out goes only to stored feeds).
    const feedBefore = (await ok('{ homeFeed(first: 20) { edges { node { id } } } }', {}, fan)).homeFeed.edges.map((e: any) => e.node.id);
    assert.deepEqual(feedBefore, [p3, p2, p1]);
    assert.equal(await redis.exists(feedKey(BigInt(fan.id))), 1, "the fan's feed is stored");
    await gw.gateway.settled();
    const boardPins = await count('board_has_pins', board);
    const fanBoardPins = await count('board_has_pins', fanBoard);
    const boardsOfA = await count('user_has_boards', a.id);
    const commentsOfP1 = await count('pin_has_comments', p1);

    await stopService(env.stack.dir, 'redis', 'SIGKILL');
    const answers: { name: string; r: GqlResult; committed: boolean }[] = [];
    let createdPin: string | undefined;
    let createPinKey = '';
    let repinned: string | undefined;
    try {
      // Every mutation of schema/schema.graphql, each with what it commits as MariaDB holds it.
      type Case = { name: string; run: () => Promise<GqlResult>; committed: (r: GqlResult) => Promise<boolean> };
      const cases: Case[] = [
        {
          name: 'createUser',
          run: () => mutate('mutation { createUser(input: { username: "out_new" }) { user { id } token } }', {}),
          committed: async () => (await env.storage.lookups.lookup('username', ['out_new'])).size === 1,
        },
        {
          name: 'updateViewer',
          run: () => mutate('mutation { updateViewer(input: { about: "down" }) { about } }', {}, a),
          committed: async () => (await object(a.id))?.data.about === 'down',
        },
        {
          name: 'createBoard',
          run: () => mutate('mutation { createBoard(input: { name: "during" }) { id name } }', {}, a),
          committed: async () => (await count('user_has_boards', a.id)) === boardsOfA + 1,
        },
        {
          name: 'updateBoard',
          run: () => mutate('mutation($b: ID!) { updateBoard(id: $b, input: { name: "renamed" }) { name } }', { b: board }, a),
          committed: async () => (await object(board))?.data.name === 'renamed',
        },
        {
          name: 'createPin',
          run: () => {
            createPinKey = `outage-${keys}`;
            return mutate('mutation($b: ID!) { createPin(input: { boardId: $b, title: "during" }) { id title } }', { b: board }, a);
          },
          committed: async () => (await count('board_has_pins', board)) === boardPins + 1,
        },
        {
          name: 'updatePin',
          run: () => mutate('mutation($p: ID!) { updatePin(id: $p, input: { title: "retitled" }) { title } }', { p: p1 }, a),
          committed: async () => (await object(p1))?.data.title === 'retitled',
        },
        {
          name: 'repin',
          run: () => mutate('mutation($p: ID!, $b: ID!) { repin(pinId: $p, boardId: $b) { id via { id } } }', { p: p1, b: fanBoard }, fan),
          committed: async () => (await count('board_has_pins', fanBoard)) === fanBoardPins + 1,
        },
        {
          name: 'movePin',
          run: () => mutate('mutation($b: ID!, $p: ID!) { movePin(boardId: $b, pinId: $p, afterPinId: null) { id } }', { b: board, p: p1 }, a),
          committed: async () =>
            (await env.storage.mappings.pages([{ table: 'board_has_pins', from: BigInt(board), first: 1, order: 'owner' }]))[0]!.edges[0]?.to === BigInt(p1),
        },
        {
          name: 'createComment',
          run: () => mutate('mutation($p: ID!) { createComment(pinId: $p, text: "during") { id text } }', { p: p1 }, fan),
          committed: async () => (await count('pin_has_comments', p1)) === commentsOfP1 + 1,
        },
        {
          name: 'deleteComment',
          run: () => mutate('mutation($c: ID!) { deleteComment(id: $c) { deleted } }', { c: comment }, fan),
          committed: async () => !isActive((await object(comment))!),
        },
        { name: 'likePin', run: () => mutate('mutation($p: ID!) { likePin(pinId: $p) { id } }', { p: p3 }, fan), committed: () => edge('user_likes_pins', fan.id, p3) },
        {
          name: 'unlikePin',
          run: () => mutate('mutation($p: ID!) { unlikePin(pinId: $p) { id } }', { p: p2 }, fan),
          committed: async () => !(await edge('user_likes_pins', fan.id, p2)),
        },
        { name: 'followUser', run: () => mutate('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: a.id }, c), committed: () => edge('user_follows_users', c.id, a.id) },
        {
          name: 'unfollowUser',
          run: () => mutate('mutation($u: ID!) { unfollowUser(userId: $u) { id } }', { u: a.id }, leaver),
          committed: async () => !(await edge('user_follows_users', leaver.id, a.id)),
        },
        { name: 'followBoard', run: () => mutate('mutation($b: ID!) { followBoard(boardId: $b) { id } }', { b: board }, c), committed: () => edge('user_follows_boards', c.id, board) },
        {
          name: 'unfollowBoard',
          run: () => mutate('mutation($b: ID!) { unfollowBoard(boardId: $b) { id } }', { b: spare }, c),
          committed: async () => !(await edge('user_follows_boards', c.id, spare)),
        },
        {
          name: 'deletePin',
          run: () => mutate('mutation($p: ID!) { deletePin(id: $p) { deleted } }', { p: p2 }, a),
          committed: async () => !isActive((await object(p2))!),
        },
        {
          name: 'deleteBoard',
          run: () => mutate('mutation($b: ID!) { deleteBoard(id: $b) { deleted } }', { b: spare }, a),
          committed: async () => !isActive((await object(spare))!),
        },
        {
          name: 'deleteViewer',
          run: () => mutate('mutation { deleteViewer { deleted } }', {}, leaver),
          committed: async () => !isActive((await object(leaver.id))!),
        },
      ];
      for (const k of cases) {
        const r = await k.run();
        answers.push({ name: k.name, r, committed: await k.committed(r) });
        if (k.name === 'createPin') createdPin = r.body.data?.createPin?.id;
        if (k.name === 'repin') repinned = r.body.data?.repin?.id;
      }
    } finally {
      await startService(env.stack.dir, 'redis');
    }

    const outcomes = answers.map(({ name, r, committed }) => {
      const errors = r.body.errors ?? [];
      if (errors.length === 0) return `${name}: acknowledged${committed ? '' : ' BUT NOT COMMITTED'}`;
      const retryable = errors.every((e) => e.extensions?.retryable === true);
      return `${name}: ${errors.map((e) => e.extensions?.code).join(',')}${retryable ? ' (retryable)' : ' NOT RETRYABLE'}${committed ? ' BUT COMMITTED' : ''}`;
    });
    const bad = outcomes.filter((o) => / BUT |NOT RETRYABLE/.test(o));
    assert.deepEqual(bad, [], outcomes.join('\n'));
    assert.equal(answers.length, 19, 'every mutation of the schema was tried');
    // A write is refused for Redis only if it cannot commit without it: none of these needs Redis to commit.
    assert.deepEqual(
      answers.filter((x) => x.r.body.errors).map((x) => x.name),
      [],
      outcomes.join('\n'),
    );
    assert.equal(answers.find((x) => x.name === 'createPin')!.r.body.data.createPin.title, 'during');
    assert.equal(answers.find((x) => x.name === 'repin')!.r.body.data.repin.via.id, p1);
    assert.ok(createdPin && repinned);
    // The fan-out could not be enqueued: it waits in the write's intent (said in the log), for the repair pass.
    const left = logged.filter((l) => l.event === 'write_steps_left_to_repair').map((l) => l.fields.kind);
    assert.ok(left.includes('createPin') && left.includes('repin'), `steps left to repair: ${JSON.stringify(left)}`);

    // Redis back: the pass completes every intent left, the worker fans out, and all is consistent.
    await eventually('Redis answers again', async () => ((await redis.ping().catch(() => undefined)) === 'PONG' ? true : undefined), 20_000);
    await gw.gateway.settled();
    const shards = allShards(env.topology);
    // The pass as `shardql repair` runs it: with the caches (an invalidation the outage kept from Redis is replayed) and the queue.
    const layers = await createCacheLayers({ redis: env.stack.redis, memcached: { servers: `${env.stack.memcached.host}:${env.stack.memcached.port}` }, nearEntries: 0 });
    const cached = createStorage({
      topology: () => env.topology,
      credentials: { user: env.stack.mysql.user, password: env.stack.mysql.password },
      cache: { objects: layers.objects, lists: layers.lists, near: layers.near },
      // As `shardql repair` has them: the served product's event kinds (a repin's intent appends its owner's event).
      events: eventSettings(PINTEREST_EVENTS),
    });
    const failures: string[] = [];
    let repaired;
    try {
      repaired = await repairIntents(cached, env.topology, { minAgeMs: 0, jobs: queue, log: (l) => void (l.startsWith('could not') && failures.push(l)) });
    } finally {
      await cached.close();
      layers.close();
    }
    assert.deepEqual(failures, []);
    assert.equal(repaired.failed, 0);
    assert.ok(repaired.completed >= 2, `intents completed: ${repaired.completed}`);
    assert.deepEqual(await env.storage.intents.pending(shards, 0, 1000), [], 'no intent left');
    const report = await reconcile(env.storage, shards);
    assert.deepEqual(report.fixes.map((f) => `${f.kind}: ${f.text}`), [], 'every count equals its list');

    // The same key replayed answers that very pin.
    const replay = await gw.gql('mutation($b: ID!) { createPin(input: { boardId: $b, title: "during" }) { id title } }', { b: board }, {
      token: a.token,
      headers: { 'idempotency-key': createPinKey },
    });
    assert.equal(replay.body.errors, undefined, JSON.stringify(replay.body.errors));
    assert.equal(replay.body.data.createPin.id, createdPin);
    assert.equal(await count('board_has_pins', board), boardPins + 1 - 1, 'the replay made no second pin (p2 was deleted meanwhile)');

    // The fan's stored feed gets the pin made during the outage (p2 deleted, p1 moved in its board only).
    const feed = await eventually('the fan-out reached the stored feed', async () => {
      const ids = (await redis.zrangebyscore(feedKey(BigInt(fan.id)), 0, '+inf')).map((m) => BigInt(m).toString());
      return ids.includes(createdPin!) ? ids : undefined;
    });
    assert.equal(feed.filter((id) => id === createdPin).length, 1, 'the pin is in the stored feed once');
    const read = (await ok('{ homeFeed(first: 20) { edges { node { id } } } }', {}, fan)).homeFeed.edges.map((e: any) => e.node.id);
    assert.deepEqual(read, [createdPin, p3, p1]);
  });
});
