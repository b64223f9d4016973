/**
 * Servers that hang instead of dying: a process of the stack SIGSTOPped under concurrent writers
 * (its sockets stay open and silent, as in a partition, a GC or I/O stall, a full disk), then
 * SIGCONTed. Every request is answered within its deadline (SHARDQL_REQUEST_TIMEOUT_MS, 10 s) with
 * its result or a retryable code whatever hangs; what needs only other servers keeps working; and
 * nothing acknowledged is lost: what a committed write left to its intent is finished once the
 * server is back.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { freshEnv, stackPid, type TestEnv } from '../helpers/env.ts';
import { codes, startTestGateway, type GqlResult, type TestGateway } from '../helpers/gateway.ts';
import { eventually, TestWorkers } from '../helpers/workers.ts';
import { shardOf } from '../../src/core/ids.ts';
import { feedKey } from '../../src/cache/redisFeeds.ts';
import { allShards, reconcile } from '../../src/services/repair.ts';
import type { MappingTable } from '../../src/core/mappings.ts';

const NAME = 'hangs';
const PREFIX = 'shardql-test-hangs';
const TOPOLOGY_KEY = `/shardql-test/${NAME}/topology`;
/** The promise: every request answered within its deadline (the default, set explicitly). */
const DEADLINE_MS = 10_000;
/** Around the gateway's own clock: the HTTP round trip and JSON, on a busy 2-core machine. */
const MARGIN_MS = 2_000;
/** Longer than deadline + margin: a request the hang holds cannot pass. */
const HANG_MS = 15_000;
const WRITERS = 8;
const RETRYABLE = new Set(['SHARD_UNAVAILABLE', 'REQUEST_TIMEOUT']);

let env: TestEnv;
let gw: TestGateway;
let redis: Redis;
const workers = TestWorkers.feed(TOPOLOGY_KEY, PREFIX);

before(async () => {
  env = await freshEnv({ shards: 16 });
  // The gateway's own repair pass finishes what writes leave to their intents once the server is back.
  gw = await startTestGateway(env, NAME, { queuePrefix: PREFIX, requestTimeoutMs: DEADLINE_MS }, { repair: { intervalMs: 250, minAgeMs: 1000 } });
  redis = new Redis({ host: env.stack.redis.host, port: env.stack.redis.port, retryStrategy: () => 100 }).on('error', () => undefined);
});

after(async () => {
  await workers.stopAll();
  await gw?.stop();
  redis?.disconnect();
  await env?.close();
});

interface Who {
  readonly id: string;
  readonly token: string;
}

/** One request made while the server hung: what it was, how long its answer took, and the answer. */
interface Answered {
  readonly op: string;
  readonly ms: number;
  readonly r: GqlResult;
}

async function signUp(username: string): Promise<Who> {
  const d = await gw.ok('mutation($u: String!) { createUser(input: { username: $u }) { user { id } token } }', { u: username });
  return { id: d.createUser.user.id, token: d.createUser.token };
}
const ok = (query: string, variables: Record<string, unknown>, who: Who): Promise<any> => gw.ok(query, variables, who.token);
const newBoard = async (who: Who): Promise<string> => (await ok('mutation { createBoard(input: { name: "main" }) { id } }', {}, who)).createBoard.id;
const CREATE_PIN = 'mutation($b: ID!, $t: String) { createPin(input: { boardId: $b, title: $t }) { id } }';
const REPIN = 'mutation($p: ID!, $b: ID!) { repin(pinId: $p, boardId: $b) { id } }';
const LIKE = 'mutation($p: ID!) { likePin(pinId: $p) { id } }';
const FOLLOW = 'mutation($u: ID!) { followUser(userId: $u) { id } }';
const UNFOLLOW = 'mutation($u: ID!) { unfollowUser(userId: $u) { id } }';
const PROFILE = 'query($u: ID!) { user(id: $u) { id pinCount boards(first: 2) { edges { node { id pins(first: 5) { edges { node { id } } } } } } } }';


/**
 * Freezes `pid` for HANG_MS while `writers` loops run (each writer's next request as soon as its
 * last one is answered) and the requests of `burst` go at once, and returns every request started
 * during the hang with its answer. The process is resumed when the hang is over, and in any case
 * before this returns.
 */
async function duringHang(pid: number, writers: ((i: number) => Promise<Answered>)[], burst: (() => Promise<Answered>)[] = []): Promise<Answered[]> {
  const answered: Answered[] = [];
  process.kill(pid, 'SIGSTOP');
  let hung = true;
  const resume = (): void => {
    if (hung) process.kill(pid, 'SIGCONT');
    hung = false;
  };
  const timer = setTimeout(resume, HANG_MS);
  try {
    await Promise.all([
      ...writers.map(async (next) => {
        for (let i = 0; hung; i++) answered.push(await next(i));
      }),
      ...burst.map(async (run) => answered.push(await run())),
    ]);
  } finally {
    clearTimeout(timer);
    resume();
  }
  return answered;
}

/** Times one request. */
async function timed(op: string, run: () => Promise<GqlResult>): Promise<Answered> {
  const started = Date.now();
  const r = await run();
  return { op, ms: Date.now() - started, r };
}

/** Every answer within the deadline (and the margin), one line per kind of request for the log. */
function assertInTime(what: string, answered: readonly Answered[]): void {
  const byOp = new Map<string, number[]>();
  for (const a of answered) byOp.set(a.op, [...(byOp.get(a.op) ?? []), a.ms]);
  for (const [op, times] of byOp) console.log(`# ${what}: ${op} ×${times.length}, slowest ${Math.max(...times)} ms`);
  const late = answered.filter((a) => a.ms > DEADLINE_MS + MARGIN_MS).map((a) => `${a.op} ${a.ms} ms ${JSON.stringify(codes(a.r))}`);
  assert.deepEqual(late, [], `answered within the ${DEADLINE_MS} ms deadline (+${MARGIN_MS} ms)`);
}

describe('Redis hung (SIGSTOP) under writers', () => {
  test('every write answers with its result within the deadline; what needed Redis (fan-outs) waits in its intent and reaches the stored feed once Redis is back', async () => {
    await workers.start();
    const star = await signUp('hang_star');
    const fan = await signUp('hang_fan');
    const starPin = (await ok(CREATE_PIN, { b: await newBoard(star), t: 'before' }, star)).createPin.id;
    const writers: { who: Who; board: string }[] = [];
    for (let i = 0; i < WRITERS; i++) {
      const who = await signUp(`hang_writer${i}`);
      writers.push({ who, board: await newBoard(who) });
      await ok(FOLLOW, { u: who.id }, fan);
    }
    // The fan's stored feed exists (a fan-out goes only to stored feeds).
    await ok('{ homeFeed(first: 5) { edges { node { id } } } }', {}, fan);
    assert.equal(await redis.exists(feedKey(BigInt(fan.id))), 1, "the fan's feed is stored");
    await gw.gateway.settled();

    // Each writer pins, repins, follows and unfollows the star, likes the star's pin, reads a profile, in turn.
    const answered = await duringHang(
      await stackPid(env.stack, 'redis'),
      writers.map(({ who, board }) => (i: number) => {
        const as = { token: who.token };
        switch (i % 6) {
          case 0:
            return timed('createPin', () => gw.gql(CREATE_PIN, { b: board, t: `during ${i}` }, as));
          case 1:
            return timed('repin', () => gw.gql(REPIN, { p: starPin, b: board }, as));
          case 2:
            return timed('followUser', () => gw.gql(FOLLOW, { u: star.id }, as));
          case 3:
            return timed('unfollowUser', () => gw.gql(UNFOLLOW, { u: star.id }, as));
          case 4:
            return timed('likePin', () => gw.gql(LIKE, { p: starPin }, as));
          default:
            return timed('read', () => gw.gql(PROFILE, { u: who.id }, as));
        }
      }),
    );
    assertInTime('Redis hung', answered);
    // Nothing here needs Redis to answer: every request has its result.
    assert.deepEqual(
      answered.filter((a) => a.r.body.errors !== undefined).map((a) => `${a.op}: ${JSON.stringify(codes(a.r))}`),
      [],
      'every request answered with its result',
    );
    const pinned = answered.filter((a) => a.op === 'createPin').map((a) => a.r.body.data.createPin.id as string);
    const repinned = answered.filter((a) => a.op === 'repin').map((a) => a.r.body.data.repin.id as string);
    assert.ok(pinned.length >= WRITERS && repinned.length >= WRITERS, `every writer pinned and repinned (${pinned.length}, ${repinned.length})`);

    // Redis back: the repair pass enqueues the fan-outs the writes left in their intents, and the worker
    // runs them. Every pin and repin made during the hang reaches the fan's stored feed, once.
    const shards = allShards(env.topology);
    await eventually('no intent left', async () => ((await env.storage.intents.pending(shards, 0, 1000)).length === 0 ? true : undefined), 30_000);
    const feed = await eventually(
      'every pin made during the hang is in the stored feed',
      async () => {
        const ids = (await redis.zrangebyscore(feedKey(BigInt(fan.id)), 0, '+inf')).map((m) => BigInt(m).toString());
        return [...pinned, ...repinned].every((p) => ids.includes(p)) ? ids : undefined;
      },
      30_000,
    );
    assert.deepEqual([...pinned, ...repinned].filter((p) => feed.filter((id) => id === p).length !== 1), [], 'each once');
    const report = await reconcile(env.storage, shards);
    assert.deepEqual(report.fixes.map((f) => `${f.kind}: ${f.text}`), [], 'every count equals its list');
  });
});

describe('A MariaDB primary hung (SIGSTOP) under writers', () => {
  test('requests that need it answer within the deadline, with a retryable code or their result; those that do not are served; nothing committed is lost', async () => {
    const hung = 'mysql001';
    const onHung = (id: string): boolean => env.topology.hostOfShard(shardOf(BigInt(id))) === hung;
    // Users until both hosts have enough: an owner of pins on the hung host, likers on the other one, likers on it.
    const here: Who[] = [];
    const there: Who[] = [];
    for (let i = 0; here.length < WRITERS / 2 + 1 || there.length < WRITERS / 2; i++) {
      assert.ok(i < 200, 'users land on both hosts');
      const who = await signUp(`hang_db${i}`);
      (onHung(who.id) ? here : there).push(who);
    }
    const owner = here.pop()!;
    const ownerBoard = await newBoard(owner);
    const pins: string[] = [];
    for (let i = 0; i < 40; i++) pins.push((await ok(CREATE_PIN, { b: ownerBoard, t: `pin ${i}` }, owner)).createPin.id);
    const boards = new Map<string, string>();
    for (const who of there) boards.set(who.id, await newBoard(who));
    // Acknowledged before the hang, on both hosts: must hold after it.
    const before = { liker: there[0]!, pin: pins[0]! };
    await ok(LIKE, { p: before.pin }, before.liker);
    await gw.gateway.settled();

    // Likers on the healthy host like the hung host's pins (two hosts: the second commit needs it),
    // likers on the hung host like them too (the first needs it); and on the healthy host alone,
    // its users pin to their boards and read their profiles.
    let nextPin = 1;
    const liked: { who: Who; pin: string; a: Answered }[] = [];
    const likeOf = async (who: Who, pin: string): Promise<Answered> => {
      const a = await timed(onHung(who.id) ? 'like (both on the hung host)' : 'like (pin on the hung host)', () => gw.gql(LIKE, { p: pin }, { token: who.token }));
      liked.push({ who, pin, a });
      return a;
    };
    const like = (who: Who): Promise<Answered> => likeOf(who, pins[nextPin++ % pins.length]!);
    // And a burst of likes at once, six times the hung host's pool (10 connections): a request
    // queued for a connection is bounded by the deadline too, not by the requests ahead of it.
    const burst = Array.from({ length: 60 }, (_, i) => () => likeOf(here[i % here.length]!, pins[Math.floor(i / here.length) % pins.length]!));
    const healthy = (who: Who) => (i: number) =>
      i % 3 === 0
        ? like(who)
        : i % 3 === 1
          ? timed('createPin (healthy host)', () => gw.gql(CREATE_PIN, { b: boards.get(who.id), t: `during ${i}` }, { token: who.token }))
          : timed('read (healthy host)', () => gw.gql(PROFILE, { u: who.id }, { token: who.token }));
    const answered = await duringHang(await stackPid(env.stack, `${hung}-primary`), [...there.map(healthy), ...here.map((who) => () => like(who))], burst);

    assertInTime('MariaDB primary hung', answered);
    const failed = answered.filter((a) => a.r.body.errors !== undefined);
    assert.deepEqual(
      failed.filter((a) => !a.op.startsWith('like') || !codes(a.r).every((c) => RETRYABLE.has(String(c)))).map((a) => `${a.op}: ${JSON.stringify(codes(a.r))}`),
      [],
      'what needs only the healthy host is served; a like that needs the hung one answers or fails retryable',
    );
    assert.ok(answered.filter((a) => a.op.endsWith('(healthy host)')).length >= there.length, 'the healthy host served every writer');

    // The primary back: the repair pass finishes every like whose first commit stood; each
    // acknowledged like (and the one before the hang) holds on both sides, every count equals its list.
    const shards = allShards(env.topology);
    await eventually('no intent left', async () => ((await env.storage.intents.pending(shards, 0, 1000)).length === 0 ? true : undefined), 30_000);
    const edge = async (table: MappingTable, from: string, to: string): Promise<boolean> =>
      (await env.storage.mappings.existing(table, [{ from: BigInt(from), to: BigInt(to) }])).size === 1;
    for (const { who, pin, a } of [...liked, { who: before.liker, pin: before.pin, a: undefined }]) {
      const forward = await edge('user_likes_pins', who.id, pin);
      assert.equal(await edge('pin_liked_by_users', pin, who.id), forward, `both sides of ${who.id} → ${pin} agree`);
      if (a === undefined || a.r.body.errors === undefined) assert.equal(forward, true, `the acknowledged like ${who.id} → ${pin} holds`);
    }
    const report = await reconcile(env.storage, shards);
    assert.deepEqual(report.fixes.map((f) => `${f.kind}: ${f.text}`), [], 'every count equals its list');
  });
});
