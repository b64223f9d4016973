/**
 * Real crashes: for every multi-shard write kind and every step boundary it passes, a gateway
 * PROCESS serving concurrent clients kills itself with SIGKILL there (SHARDQL_TEST_FAULT), so its
 * connections drop mid-write and no error path runs. Then a fresh gateway process's repair pass
 * must complete everything: every acknowledged write present, none doubled, every count equal to
 * its list in both directions, no intent left; the write the process died in is absent if it died
 * inside the first transaction, complete otherwise. Every write that did not get its answer is then
 * sent again with its Idempotency-Key by three requests at once (two to one gateway, one to
 * another): one effect, equal answers.
 *
 * To add a write kind: one row in KINDS — its kind as the executor names it (the fault's kind), the
 * points it passes (`after-step-<i>` for each of its steps), and a `Job` builder: the objects one
 * write needs (made in this process before the gateways start), the mutation, and the lists it
 * changes (`Side`s), which must read all 'done' (or all 'undone') after the repair, never anything
 * else. `relation` and `repin` are such builders.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { TEST_JWT_SECRET, startTestGateway, type GqlResult, type TestGateway } from '../helpers/gateway.ts';
import { killGatewayProcesses, startGatewayProcess, type GatewayProcess } from '../helpers/gatewayProcess.ts';
import { placedUsers, sideStates, type Hosts, type Side } from '../helpers/relationSides.ts';
import { mintToken } from '../../src/auth/tokens.ts';
import { formatId, typeOf } from '../../src/core/ids.ts';
import { MAPPING_TABLES, reverseOf, type MappingTable, mappingSpec } from '../../src/core/mappings.ts';
import { listCacheKey } from '../../src/storage/mappingStore.ts';
import { Redis } from 'ioredis';
import { allShards, reconcile } from '../../src/services/repair.ts';
import { testFaultLine } from '../../src/services/testFaults.ts';
import type { FaultPoint } from '../../src/services/writeExecutor.ts';
import { ProductWrites } from '../../src/product/pinterest/writes.ts';
import type { StoredObject } from '../../src/storage/objectStore.ts';

const TOPOLOGY = 'crashes';
const TOPOLOGY_KEY = `/shardql-test/${TOPOLOGY}/topology`;
/**
 * Writes of one case, sent by CLIENTS clients at once (one request in flight each); the gateway
 * dies the NTH time one reaches the fault, so at least NTH - CLIENTS were acknowledged before.
 */
const JOBS = 6;
const CLIENTS = 3;
const NTH = 5;
/** Gateway processes alive at once (each its own case); then one fresh gateway repairs for all of them. */
const BATCH = 16;
/** Gateway processes starting at once: more only makes each start slower on a small machine (etcd's dial deadline is 2 s). */
const STARTING = 4;

let env: TestEnv;
let writes: ProductWrites;
/** A gateway in this process (no repair pass of its own): the second gateway each retry goes to. */
let second: TestGateway;
/** A fresh user; with `near`, on the other host than `near`'s, or on another shard of its host ('one host'). */
let user: (near?: bigint, hosts?: Hosts) => Promise<StoredObject>;

before(async () => {
  env = await freshEnv({ shards: 16 });
  writes = new ProductWrites({ storage: env.storage, topology: () => env.topology });
  user = placedUsers(writes, env.storage.router, 'crash');
  second = await startTestGateway(env, TOPOLOGY, {}, { repair: { intervalMs: 0 } }); // publishes TOPOLOGY_KEY
});
after(async () => {
  await killGatewayProcesses();
  await second?.stop();
  await env?.close();
});

interface Job {
  readonly viewer: bigint;
  readonly mutation: string;
  readonly variables: Record<string, string>;
  /** The lists the write changes; 'done' when each holds its member once and counts 1. */
  readonly sides: readonly Side[];
  /** Whether the write empties its lists (a remove) rather than filling them. */
  readonly removes: boolean;
}

interface KindRow {
  /** As the executor names it: the fault's kind. */
  readonly kind: string;
  /** Told apart from another row of the same kind, in the case's name. */
  readonly label?: string;
  readonly points: readonly FaultPoint[];
  readonly job: () => Promise<Job>;
}

const EVERY_STEP: readonly FaultPoint[] = ['in-first-transaction', 'after-first-commit', 'after-step-0', 'before-complete'];

/** A relation between a fresh viewer and a fresh target on the other host (or another shard of its own); a remove starts from the relation made. */
function relation(op: 'add' | 'remove', target: 'pin' | 'user' | 'board', hosts: Hosts = 'two hosts'): () => Promise<Job> {
  const spec = {
    pin: { mutation: op === 'add' ? 'likePin(pinId: $t)' : 'unlikePin(pinId: $t)', mine: ['likedPins', 'likeCount'], theirs: ['likers', 'likeCount'] },
    user: { mutation: op === 'add' ? 'followUser(userId: $t)' : 'unfollowUser(userId: $t)', mine: ['following', 'followingCount'], theirs: ['followers', 'followerCount'] },
    board: {
      mutation: op === 'add' ? 'followBoard(boardId: $t)' : 'unfollowBoard(boardId: $t)',
      mine: ['followedBoards', 'followedBoardCount'],
      theirs: ['followers', 'followerCount'],
    },
  }[target];
  return async () => {
    const me = await user();
    const owner = await user(me.id, hosts);
    const board = target === 'user' ? undefined : await writes.createBoard(owner.id, { name: 'b' });
    const t = target === 'user' ? owner : target === 'board' ? board! : await writes.createPin(owner.id, board!.id, { title: 'p' });
    if (op === 'remove') {
      if (target === 'pin') await writes.likePin(me.id, t.id);
      else if (target === 'user') await writes.followUser(me.id, t.id);
      else await writes.followBoard(me.id, t.id);
    }
    return {
      viewer: me.id,
      mutation: `mutation($t: ID!) { w: ${spec.mutation} { id } }`,
      variables: { t: formatId(t.id) },
      sides: [
        { id: me.id, field: spec.mine[0]!, countField: spec.mine[1]!, member: t.id },
        { id: t.id, field: spec.theirs[0]!, countField: spec.theirs[1]!, member: me.id },
      ],
      removes: op === 'remove',
    };
  };
}

/** A repin of a fresh pin onto a fresh board of a viewer on the other host; `deleteIt`: the repin made, then deleted. */
function repin(deleteIt: boolean): () => Promise<Job> {
  return async (): Promise<Job> => {
    const owner = await user();
    const me = await user(owner.id);
    const original = await writes.createPin(owner.id, (await writes.createBoard(owner.id, { name: 'o' })).id, { title: 'original' });
    const mine = await writes.createBoard(me.id, { name: 'm' });
    const sides = (pin: bigint): Side[] => [
      { id: original.id, field: 'repins', countField: 'repinCount', member: pin },
      { id: mine.id, field: 'pins', countField: 'pinCount', member: pin },
    ];
    if (!deleteIt) {
      return {
        viewer: me.id,
        mutation: 'mutation($p: ID!, $b: ID!) { w: repin(pinId: $p, boardId: $b) { id } }',
        variables: { p: formatId(original.id), b: formatId(mine.id) },
        // The repin's ID is not known before: any pin in the lists counts, and more than one is a duplicate.
        sides: sides(0n),
        removes: false,
      };
    }
    const made = await writes.repin(me.id, original.id, mine.id);
    return {
      viewer: me.id,
      mutation: 'mutation($p: ID!) { w: deletePin(id: $p) { deleted } }',
      variables: { p: formatId(made.id) },
      sides: sides(made.id),
      removes: true,
    };
  };
}

/** Deletes that cascade: a liked pin; a board with a liked pin and a follower; an account that follows and is followed, with a liked pin. */
function cascade(what: 'pin' | 'board' | 'account'): () => Promise<Job> {
  return async (): Promise<Job> => {
    const owner = await user();
    const fan = await user(owner.id);
    const board = await writes.createBoard(owner.id, { name: 'doomed' });
    const pin = await writes.createPin(owner.id, board.id, { title: 'liked' });
    await writes.likePin(fan.id, pin.id);
    const liked: Side = { id: fan.id, field: 'likedPins', countField: 'likeCount', member: pin.id };
    if (what === 'pin') {
      return {
        viewer: owner.id,
        mutation: 'mutation($p: ID!) { w: deletePin(id: $p) { deleted } }',
        variables: { p: formatId(pin.id) },
        sides: [liked, { id: board.id, field: 'pins', countField: 'pinCount', member: pin.id }],
        removes: true,
      };
    }
    if (what === 'board') {
      await writes.followBoard(fan.id, board.id);
      return {
        viewer: owner.id,
        mutation: 'mutation($b: ID!) { w: deleteBoard(id: $b) { deleted } }',
        variables: { b: formatId(board.id) },
        sides: [liked, { id: fan.id, field: 'followedBoards', countField: 'followedBoardCount', member: board.id }, { id: owner.id, field: 'boards', countField: 'boardCount', member: board.id }],
        removes: true,
      };
    }
    await writes.followUser(fan.id, owner.id);
    await writes.followUser(owner.id, fan.id);
    return {
      viewer: owner.id,
      mutation: 'mutation { w: deleteViewer { deleted } }',
      variables: {},
      sides: [liked, { id: fan.id, field: 'following', countField: 'followingCount', member: owner.id }, { id: fan.id, field: 'followers', countField: 'followerCount', member: owner.id }],
      removes: true,
    };
  };
}

/** Every multi-shard write: one row each. */
const KINDS: readonly KindRow[] = [
  { kind: 'add:user_likes_pins', points: EVERY_STEP, job: relation('add', 'pin') },
  { kind: 'remove:user_likes_pins', points: EVERY_STEP, job: relation('remove', 'pin') },
  // Both sides on one host: one transaction, its forward batch sent before the fault 'in-first-transaction'.
  { kind: 'add:user_likes_pins', label: 'one host', points: EVERY_STEP, job: relation('add', 'pin', 'one host') },
  { kind: 'remove:user_likes_pins', label: 'one host', points: EVERY_STEP, job: relation('remove', 'pin', 'one host') },
  { kind: 'add:user_follows_users', points: EVERY_STEP, job: relation('add', 'user') },
  { kind: 'remove:user_follows_users', points: EVERY_STEP, job: relation('remove', 'user') },
  { kind: 'add:user_follows_boards', points: EVERY_STEP, job: relation('add', 'board') },
  { kind: 'remove:user_follows_boards', points: EVERY_STEP, job: relation('remove', 'board') },
  { kind: 'repin', points: EVERY_STEP, job: repin(false) },
  // Deleting a repin: its repin edge (step 0), then the purge of its lists (step 1).
  { kind: 'deletePin', points: [...EVERY_STEP, 'after-step-1'], job: repin(true) },
  { kind: 'deletePin', points: EVERY_STEP, job: cascade('pin') },
  { kind: 'deleteBoard', points: EVERY_STEP, job: cascade('board') },
  { kind: 'deleteViewer', points: EVERY_STEP, job: cascade('account') },
];

/**
 * What MariaDB itself holds for a job's lists (rows and count, no cache) and what Redis caches for
 * them: said when a job reads as neither done nor undone, so a failure tells a wrong write from a
 * stale cache.
 */
const TABLE_OF_FIELD: Record<string, MappingTable> = {
  'user.likedPins': 'user_likes_pins',
  'pin.likers': 'pin_liked_by_users',
  'user.following': 'user_follows_users',
  'user.followers': 'user_followed_by_users',
  'user.followedBoards': 'user_follows_boards',
  'board.followers': 'board_followed_by_users',
  'pin.repins': 'pin_repinned_as_pins',
  'board.pins': 'board_has_pins',
  'user.boards': 'user_has_boards',
};
async function diagnoseLists(job: Job): Promise<string> {
  const redis = new Redis({ host: env.stack.redis.host, port: env.stack.redis.port });
  try {
    const out: string[] = [];
    for (const s of job.sides) {
      const table = TABLE_OF_FIELD[`${typeOf(s.id)}.${s.field}`]!;
      const [page] = await env.storage.mappings.pages([{ table, from: s.id, first: 10 }]);
      const n = (await env.storage.mappings.counts([{ id: s.id, kind: table }])).get(`${s.id}:${table}`) ?? 0;
      const cached = await redis.hgetall(listCacheKey(table, s.id));
      out.push(`${table} of ${s.id}: MariaDB ${page!.edges.length} rows, count ${n}; Redis ${JSON.stringify(cached)}`);
    }
    return out.join('; ');
  } finally {
    redis.disconnect();
  }
}

/** One job's state: 'done', 'undone', or what its lists show (a partial or doubled write). */
async function jobState(gw: { gql: TestGateway['gql'] }, job: Job): Promise<string> {
  const states = await sideStates(gw, job.sides);
  const filled = states.every((s) => s === '1/1/1');
  const empty = states.every((s) => s === '0/0/0');
  if (filled || empty) return filled !== job.removes ? 'done' : 'undone';
  return states.join(' ');
}

/**
 * Every list of `ids` (each mapping table from their types) has as many rows as its count says,
 * and each edge of a two-sided relation has its reverse: read from MariaDB, not through caches.
 */
async function countsEqualLists(ids: readonly bigint[]): Promise<string[]> {
  const wrong: string[] = [];
  for (const table of MAPPING_TABLES) {
    const from = ids.filter((id) => typeOf(id) === mappingSpec(table).from);
    if (from.length === 0) continue;
    const pages = await env.storage.mappings.pages(from.map((id) => ({ table, from: id, first: 1000 })));
    const counts = await env.storage.mappings.counts(from.map((id) => ({ id, kind: table })));
    const reverse = reverseOf(table);
    for (const [i, id] of from.entries()) {
      const edges = pages[i]!.edges;
      const n = counts.get(`${id}:${table}`) ?? 0;
      if (n !== edges.length) wrong.push(`${table} of ${id}: count ${n}, ${edges.length} rows`);
      if (!reverse || edges.length === 0) continue;
      const found = await env.storage.mappings.existing(reverse, edges.map((e) => ({ from: e.to, to: id })));
      for (const e of edges) if (!found.has(`${e.to}:${id}`)) wrong.push(`${table} ${id} → ${e.to} has no ${reverse} edge back`);
    }
  }
  return wrong;
}

interface Case {
  readonly row: KindRow;
  readonly point: FaultPoint;
  readonly name: string;
}

/** The Idempotency-Key of job `i` of a case: the same for its first request and its retries. */
function keyOf(c: Case, i: number): string {
  return `${c.row.kind}.${c.point}.${i}`;
}

/** What happened to one job's first request. */
type Outcome = { kind: 'acknowledged'; data: unknown } | { kind: 'cut' } | { kind: 'unsent' };

interface Tally {
  cases: number;
  acknowledged: number;
  cut: number;
  unsent: number;
  doneBeforeRetry: number;
  retried: number;
}

/** Sends each job's mutation once, with its own key, from CLIENTS clients, until the gateway is gone. */
async function sendAll(gw: GatewayProcess, jobs: readonly Job[], keyFor: (i: number) => string): Promise<Outcome[]> {
  const outcomes: Outcome[] = jobs.map(() => ({ kind: 'unsent' }));
  let next = 0;
  const client = async (): Promise<void> => {
    while (next < jobs.length && !gw.ended()) {
      const i = next++;
      const job = jobs[i]!;
      const token = await mintToken(TEST_JWT_SECRET, job.viewer, 600);
      let r: GqlResult;
      try {
        r = await gw.gql(job.mutation, job.variables, { token, headers: { 'idempotency-key': keyFor(i) } });
      } catch {
        // The connection dropped: no answer. The gateway is going down; this client sends no more
        // (its exit may not be seen yet, and a refused request would be no crash of a write).
        outcomes[i] = { kind: 'cut' };
        return;
      }
      assert.equal(r.body.errors, undefined, `job ${i}: ${r.text}`);
      outcomes[i] = { kind: 'acknowledged', data: r.body.data };
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  return outcomes;
}

/** `fn` over `items`, at most `width` at a time; results in order. */
async function inPool<T, R>(width: number, items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return out;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function pendingIntents(): Promise<number> {
  return (await env.storage.intents.pending(allShards(env.topology), 0, 1000)).length;
}

/**
 * One batch of cases: each its own gateway process with its fault, its clients, its death; then
 * one fresh gateway process whose repair pass completes what they left, and the checks.
 */
async function runBatch(cases: readonly Case[], tally: Tally): Promise<void> {
  const jobs = await Promise.all(cases.map(async (c) => Promise.all(Array.from({ length: JOBS }, () => c.row.job()))));
  const doomed = await inPool(STARTING, cases, (c) =>
    startGatewayProcess(env, {
      topologyKey: TOPOLOGY_KEY,
      vars: { SHARDQL_ALLOW_TEST_FAULTS: '1', SHARDQL_TEST_FAULT: `${c.row.kind}@${c.point}#${NTH}` },
    }),
  );
  // Lists read (and cached in Redis and memcached) before the writes: a write that crashes before
  // invalidating must not leave them stale.
  for (const [ci, c] of cases.entries()) {
    for (const job of jobs[ci]!) assert.equal(await jobState(doomed[ci]!, job), 'undone', `${c.name}: before the write`);
  }
  const outcomes = await Promise.all(cases.map((c, ci) => sendAll(doomed[ci]!, jobs[ci]!, (i) => keyOf(c, i))));
  // Which job each gateway was serving when it killed itself (the fault names the write's key).
  const killers: number[] = [];
  for (const [ci, c] of cases.entries()) {
    const gw = doomed[ci]!;
    const exit = await Promise.race([gw.exited, new Promise<'alive'>((r) => setTimeout(() => r('alive'), 10_000))]);
    assert.deepEqual(exit, { code: null, signal: 'SIGKILL' }, `${c.name}: the gateway process was killed by SIGKILL`);
    const killer = jobs[ci]!.findIndex((_, i) => gw.stderr().includes(testFaultLine({ kind: c.row.kind, point: c.point, nth: NTH }, keyOf(c, i))));
    assert.ok(killer >= 0, `${c.name}: it died at its fault, in one of its jobs: ${gw.stderr()}`);
    assert.equal(outcomes[ci]![killer]!.kind, 'cut', `${c.name}: the write it died in got no answer`);
    killers.push(killer);
    const count = (kind: Outcome['kind']) => outcomes[ci]!.filter((o) => o.kind === kind).length;
    assert.ok(count('cut') >= 1 && count('cut') <= CLIENTS, `${c.name}: the request that reached the fault got no answer, and at most one per client`);
    assert.ok(count('acknowledged') >= NTH - CLIENTS, `${c.name}: the writes that passed the fault before were answered`);
  }

  // A fresh gateway: its own repair pass completes every intent. Its writers are dead, so it need
  // not wait the default 5 s for an intent to age, nor 5 s between passes.
  const fresh = await startGatewayProcess(env, {
    topologyKey: TOPOLOGY_KEY,
    vars: { SHARDQL_INTENT_REPAIR_EVERY_MS: '500', SHARDQL_INTENT_REPAIR_AGE_MS: '1000' },
  });
  try {
    const left = await pendingIntents();
    // Its pass logs its summary once the pass is over, a little after the last intent is gone.
    const passLogged = (): boolean => (left > 0 ? /"event":"repair_pass"/ : /listening/).test(fresh.stdout());
    await until('the fresh gateway to complete every intent and log its pass', async () => (await pendingIntents()) === 0 && passLogged(), 30_000);

    // What the processes said about caches and intents: part of any failure message below.
    const said = (): string =>
      [...doomed, fresh]
        .flatMap((gw, i) => gw.stdout().split('\n').filter((l) => /cache_invalidation_failed|intent_completion|redis_unavailable|"event":"repair_pass"/.test(l)).map((l) => `${i < doomed.length ? cases[i]!.name : 'fresh'}: ${l}`))
        .join('\n')
        .slice(-4000);
    const diagnose = async (job: Job): Promise<string> => `${await diagnoseLists(job)}\nwhat the gateways logged:\n${said()}`;
    // Acknowledged: done. Not acknowledged: done or undone, never partial or doubled.
    for (const [ci, c] of cases.entries()) {
      for (const [i, job] of jobs[ci]!.entries()) {
        const state = await jobState(fresh, job);
        const o = outcomes[ci]![i]!;
        tally[o.kind]++;
        if (o.kind === 'acknowledged') {
          if (state !== 'done') assert.fail(`${c.name} job ${i}: acknowledged, so done, got ${state}: ${await diagnose(job)}`);
        }
        else if (i === killers[ci]) {
          // The write the process died in: nothing of it inside its first transaction; after it, completed by the repair.
          const expected = c.point === 'in-first-transaction' ? 'undone' : 'done';
          if (state !== expected) assert.fail(`${c.name} job ${i}: the write the gateway died in: ${state}, not ${expected}: ${await diagnose(job)}`);
          if (state === 'done') tally.doneBeforeRetry++;
        } else {
          if (state !== 'done' && state !== 'undone') assert.fail(`${c.name} job ${i} (${o.kind}): done or not, got ${state}: ${await diagnose(job)}`);
          if (state === 'done') tally.doneBeforeRetry++;
        }
      }
    }
    const touched = jobs.flat().flatMap((j) => [j.viewer, ...j.sides.map((s) => s.id)]);
    assert.deepEqual(await countsEqualLists(touched), [], 'after the repair: counts equal lists, both directions');

    // Each write without an answer, again with its key: three requests at once, to two gateways.
    const token = (job: Job) => mintToken(TEST_JWT_SECRET, job.viewer, 600);
    await Promise.all(
      cases.flatMap((c, ci) =>
        jobs[ci]!.map(async (job, i) => {
          const o = outcomes[ci]![i]!;
          if (o.kind === 'acknowledged') return;
          const headers = { 'idempotency-key': keyOf(c, i) };
          const auth = { token: await token(job), headers };
          // Two at once to one gateway (their first transactions race) and one to another gateway.
          const answers = await Promise.all([fresh, fresh, second].map((gw) => gw.gql(job.mutation, job.variables, auth)));
          for (const r of answers) {
            assert.equal(r.body.errors, undefined, r.text);
            assert.deepEqual(r.body.data, answers[0]!.body.data, `${c.name} job ${i}: retries at once with one key, one answer`);
          }
          tally.retried++;
        }),
      ),
    );
    for (const [ci, c] of cases.entries()) {
      for (const [i, job] of jobs[ci]!.entries()) assert.equal(await jobState(fresh, job), 'done', `${c.name} job ${i}: done exactly once`);
    }
    assert.deepEqual(await countsEqualLists(touched), [], 'after the retries: counts equal lists, both directions');
    // The gateway process deletes the intents of the relation writes it answered shortly after each answer.
    await until('the retries\' intents to be completed', async () => (await pendingIntents()) === 0, 10_000);
    const report = await reconcile(env.storage, allShards(env.topology));
    assert.deepEqual(report.fixes, [], 'reconcile finds nothing to fix');
  } finally {
    const stopped = await fresh.stop();
    assert.equal(stopped.code, 0, `the fresh gateway stopped cleanly: ${fresh.stderr()}`);
  }
  tally.cases += cases.length;
}

describe('Crashes: a gateway process killed (SIGKILL) at every step boundary of every multi-shard write', () => {
  test(`${KINDS.length} kinds, ${CLIENTS} clients each: a fresh gateway's repair loses no acknowledged write, doubles none, keeps counts true`, async () => {
    const cases: Case[] = KINDS.flatMap((row) => row.points.map((point) => ({ row, point, name: `${row.kind}${row.label ? ` (${row.label})` : ''}@${point}` })));
    const tally: Tally = { cases: 0, acknowledged: 0, cut: 0, unsent: 0, doneBeforeRetry: 0, retried: 0 };
    const started = Date.now();
    for (let i = 0; i < cases.length; i += BATCH) await runBatch(cases.slice(i, i + BATCH), tally);
    assert.equal(tally.cases, cases.length);
    assert.ok(tally.acknowledged > 0, 'some writes were acknowledged before the kills');
    assert.ok(tally.cut >= cases.length, 'every kill cut at least one request');
    assert.equal(tally.retried, tally.cut + tally.unsent);
    console.log(
      `# crashes: ${tally.cases} gateway processes SIGKILLed (${KINDS.length} kinds × their step boundaries) in ${((Date.now() - started) / 1000).toFixed(0)} s; ` +
        `${tally.acknowledged} writes acknowledged (all present after repair), ${tally.cut} cut (${tally.doneBeforeRetry} of cut and unsent already done by repair), ` +
        `${tally.unsent} unsent; ${tally.retried} retried by 3 requests at once with their key (2 to one gateway, 1 to another): each done once; counts = lists, 0 intents, reconcile clean`,
    );
  });
});
