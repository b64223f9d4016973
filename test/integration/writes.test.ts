/**
 * Writes that span shards: fault injection at every step boundary of every multi-shard mutation,
 * interrupted-and-retried mutations with idempotency keys, and read-modify-write under contention.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { ProductWrites } from '../../src/product/pinterest/writes.ts';
import type { FaultPoint } from '../../src/services/writeExecutor.ts';
import { allShards, reconcile, repairIntents } from '../../src/services/repair.ts';
import { shardOf } from '../../src/core/ids.ts';
import type { StoredObject } from '../../src/storage/objectStore.ts';
import type { MappingTable } from '../../src/core/mappings.ts';

let env: TestEnv;
let armed: { point: FaultPoint; kind?: string } | undefined;
let writes: ProductWrites;
let random = 0x2545f491;
const rand = (): number => (random = (random * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;

class InjectedCrash extends Error {}

/**
 * One attempt of one concurrent client's write, armed on its own: a fault the attempt arms crashes
 * only that attempt (never another client's write running at the same time), and says so.
 */
interface Attempt {
  readonly point: FaultPoint;
  crashed: boolean;
}
const attempts = new AsyncLocalStorage<Attempt>();
/** Intents whose completion after the answer failed and was left to the repair pass, as the executor reports them. */
const leftToRepair: string[] = [];

before(async () => {
  env = await freshEnv({ shards: 16 });
  writes = new ProductWrites({
    storage: env.storage,
    topology: () => env.topology,
    log: (event, fields) => {
      if (event === 'intent_completion_deferred_to_repair') for (const i of fields?.intents as string[]) leftToRepair.push(`${i} (${String(fields?.error)})`);
    },
    faults: (point, kind) => {
      const attempt = attempts.getStore();
      if (attempt) {
        if (attempt.point !== point || attempt.crashed) return undefined;
        attempt.crashed = true;
      } else if (!armed || armed.point !== point || (armed.kind !== undefined && !kind.startsWith(armed.kind))) {
        return undefined;
      }
      return () => {
        throw new InjectedCrash(`injected crash at ${point} of ${kind}`);
      };
    },
  });
});
after(async () => {
  await env?.close();
});

/** Users until one lives on another host than `other` (so the write spans hosts, not only shards). */
async function userOnOtherHost(name: string, other: bigint): Promise<StoredObject> {
  for (let i = 0; ; i++) {
    const u = await writes.createUser({ username: `${name}${i}` });
    if (env.storage.router.hostOfId(u.id) !== env.storage.router.hostOfId(other)) return u;
  }
}

async function invariantsHold(): Promise<{ fixes: string[]; pendingIntents: number }> {
  await writes.settled(); // the intents of relation writes are deleted shortly after the write answered
  const shards = allShards(env.topology);
  const report = await reconcile(env.storage, shards);
  const pending = await env.storage.intents.pending(shards, 0, 1000);
  return { fixes: report.fixes.map((f) => `${f.kind}: ${f.text}`), pendingIntents: pending.length };
}

describe('Writes: a crash at every step boundary, then the repair pass', () => {
  const POINTS: FaultPoint[] = ['in-first-transaction', 'after-first-commit', 'after-step-0', 'before-complete'];

  test('leaves 0 hanging edges, 0 duplicates, counts equal to rows, for every multi-shard mutation', async () => {
    const alice = await writes.createUser({ username: 'fault_alice' });
    const bob = await userOnOtherHost('fault_bob', alice.id);
    const bobBoard = await writes.createBoard(bob.id, { name: 'bob board' });
    const aliceBoard = await writes.createBoard(alice.id, { name: 'alice board' });
    assert.notEqual(shardOf(alice.id), shardOf(bob.id));

    type Case = { kind: string; points?: FaultPoint[]; setup: () => Promise<unknown>; act: () => Promise<unknown>; effect: () => Promise<boolean> };
    let pin: StoredObject;
    let repinned: StoredObject | undefined;
    let doomed: StoredObject | undefined;
    let leaver: StoredObject | undefined;
    let leavers = 0;
    let commented: StoredObject | undefined;
    const edge = async (table: MappingTable, from: bigint, to: bigint) => (await env.storage.mappings.existing(table, [{ from, to }])).size === 1;
    const listOf = async (table: MappingTable, from: bigint) => (await env.storage.mappings.pages([{ table, from, first: 5 }]))[0]!.edges.length;
    const liked = async () => (await env.storage.mappings.existing('user_likes_pins', [{ from: alice.id, to: pin.id }])).size === 1;
    const follows = async () => (await env.storage.mappings.existing('user_follows_users', [{ from: alice.id, to: bob.id }])).size === 1;
    const followsBoard = async () => (await env.storage.mappings.existing('user_follows_boards', [{ from: alice.id, to: bobBoard.id }])).size === 1;
    const cases: Case[] = [
      {
        kind: 'add:user_likes_pins',
        setup: async () => (pin = await writes.createPin(bob.id, bobBoard.id, { title: 'likeable' })),
        act: () => writes.likePin(alice.id, pin.id),
        effect: liked,
      },
      {
        kind: 'remove:user_likes_pins',
        setup: async () => writes.likePin(alice.id, pin.id),
        act: () => writes.unlikePin(alice.id, pin.id),
        effect: async () => !(await liked()),
      },
      { kind: 'add:user_follows_users', setup: async () => undefined, act: () => writes.followUser(alice.id, bob.id), effect: follows },
      {
        kind: 'remove:user_follows_users',
        setup: async () => writes.followUser(alice.id, bob.id),
        act: () => writes.unfollowUser(alice.id, bob.id),
        effect: async () => !(await follows()),
      },
      { kind: 'add:user_follows_boards', setup: async () => undefined, act: () => writes.followBoard(alice.id, bobBoard.id), effect: followsBoard },
      {
        kind: 'remove:user_follows_boards',
        setup: async () => writes.followBoard(alice.id, bobBoard.id),
        act: () => writes.unfollowBoard(alice.id, bobBoard.id),
        effect: async () => !(await followsBoard()),
      },
      {
        kind: 'repin',
        setup: async () => (pin = await writes.createPin(bob.id, bobBoard.id, { title: 'repinnable' })),
        act: async () => (repinned = await writes.repin(alice.id, pin.id, aliceBoard.id)),
        effect: async () => (await env.storage.mappings.pages([{ table: 'pin_repinned_as_pins', from: pin.id, first: 5 }]))[0]!.edges.length === 1,
      },
      {
        kind: 'deletePin',
        setup: async () => {
          pin = await writes.createPin(bob.id, bobBoard.id, { title: 'original' });
          repinned = await writes.repin(alice.id, pin.id, aliceBoard.id);
        },
        act: () => writes.deletePin(alice.id, repinned!.id),
        effect: async () => (await env.storage.mappings.pages([{ table: 'pin_repinned_as_pins', from: pin.id, first: 5 }]))[0]!.edges.length === 0,
      },
      // Deletes that cascade: a pin with a like and a comment; a board with a liked pin and a
      // follower; an account with boards, pins, likes and follows both ways.
      {
        kind: 'deletePin',
        points: [...POINTS, 'after-step-1'],
        setup: async () => {
          pin = await writes.createPin(bob.id, bobBoard.id, { title: 'liked, commented' });
          repinned = await writes.repin(alice.id, pin.id, aliceBoard.id);
          await writes.likePin(bob.id, repinned.id);
          await writes.createComment(bob.id, repinned.id, 'nice');
        },
        act: () => writes.deletePin(alice.id, repinned!.id),
        effect: async () => !(await edge('user_likes_pins', bob.id, repinned!.id)) && (await listOf('pin_has_comments', repinned!.id)) === 0,
      },
      {
        kind: 'deleteBoard',
        setup: async () => {
          doomed = await writes.createBoard(bob.id, { name: 'doomed' });
          pin = await writes.createPin(bob.id, doomed.id, { title: 'on a doomed board' });
          await writes.likePin(alice.id, pin.id);
          await writes.followBoard(alice.id, doomed.id);
        },
        act: () => writes.deleteBoard(bob.id, doomed!.id),
        effect: async () => !(await edge('user_likes_pins', alice.id, pin.id)) && !(await edge('user_follows_boards', alice.id, doomed!.id)),
      },
      {
        kind: 'deleteViewer',
        setup: async () => {
          leaver = await userOnOtherHost(`fault_leaver${leavers++}_`, alice.id);
          const b = await writes.createBoard(leaver.id, { name: 'leaving' });
          pin = await writes.createPin(leaver.id, b.id, { title: 'leaving' });
          await writes.likePin(alice.id, pin.id);
          await writes.followUser(alice.id, leaver.id);
          await writes.followUser(leaver.id, alice.id);
          await writes.followBoard(leaver.id, bobBoard.id);
          // A comment on another user's pin (on that pin's shard): it goes with the account.
          commented = await writes.createPin(bob.id, bobBoard.id, { title: 'commented by a leaver' });
          await writes.createComment(leaver.id, commented.id, 'bye');
        },
        act: () => writes.deleteViewer(leaver!.id),
        effect: async () =>
          !(await edge('user_likes_pins', alice.id, pin.id)) &&
          !(await edge('user_follows_users', alice.id, leaver!.id)) &&
          !(await edge('user_followed_by_users', alice.id, leaver!.id)) &&
          !(await edge('board_followed_by_users', bobBoard.id, leaver!.id)) &&
          (await listOf('pin_has_comments', commented!.id)) === 0,
      },
    ];
    let runs = 0;
    for (const c of cases) {
      for (const point of c.points ?? POINTS) {
        await c.setup();
        armed = { point, kind: c.kind };
        await assert.rejects(c.act(), InjectedCrash, `${c.kind} at ${point}`);
        armed = undefined;
        const repaired = await repairIntents(env.storage, env.topology, { minAgeMs: 0 });
        assert.equal(repaired.failed, 0);
        const { fixes, pendingIntents } = await invariantsHold();
        assert.deepEqual(fixes, [], `${c.kind} crashed at ${point}: reconciliation found something to fix`);
        assert.equal(pendingIntents, 0);
        // A crash inside the first transaction undoes everything; after it, repair completes the write.
        const done = await c.effect();
        if (point === 'in-first-transaction') assert.equal(done, false, `${c.kind}: a crash inside the first transaction leaves nothing done`);
        else assert.equal(done, true, `${c.kind} at ${point}: completed by the repair pass`);
        runs++;
      }
    }
    console.log(
      `# fault injection: ${cases.length} mutations × their step boundaries = ${runs} crashes; after repair: 0 hanging edges, 0 duplicates, counts = rows`,
    );
  });
});

describe('Writes: a mirror copies the sequence', () => {
  test('an unlike cut short before its mirror, then a like: the liker list row takes the new like time', async () => {
    const fan = await writes.createUser({ username: 'seq_fan' });
    const owner = await userOnOtherHost('seq_owner', fan.id);
    const pin = await writes.createPin(owner.id, (await writes.createBoard(owner.id, { name: 'b' })).id, { title: 'p' });
    // A clock of our own, so the second like has a later time than the first however fast it runs.
    let clock = Date.now();
    let crash = true;
    const clocked = new ProductWrites({
      storage: env.storage,
      topology: () => env.topology,
      now: () => ++clock,
      faults: (point, kind) => {
        if (crash && point === 'after-first-commit' && kind === 'remove:user_likes_pins') throw new InjectedCrash('unlike cut short');
      },
    });
    await clocked.likePin(fan.id, pin.id);
    await assert.rejects(clocked.unlikePin(fan.id, pin.id), InjectedCrash);
    crash = false;
    await clocked.likePin(fan.id, pin.id);
    await repairIntents(env.storage, env.topology, { minAgeMs: 0 });
    const forward = await env.storage.mappings.sequences('user_likes_pins', [{ from: fan.id, to: pin.id }]);
    const reverse = await env.storage.mappings.sequences('pin_liked_by_users', [{ from: pin.id, to: fan.id }]);
    assert.equal(forward.size, 1);
    assert.deepEqual([...reverse.values()], [...forward.values()]);
    assert.deepEqual((await invariantsHold()).fixes, []);
  });
});

describe('Writes: idempotency keys', () => {
  test('2,000 mutations from 4 clients, a quarter interrupted and each retried twice at once with its key: every effect exactly once', async () => {
    const owners: StoredObject[] = [];
    for (let i = 0; i < 6; i++) owners.push(await writes.createUser({ username: `idem_owner${i}` }));
    const boards = await Promise.all(owners.map((o) => writes.createBoard(o.id, { name: 'idem' })));
    const seedPins = await Promise.all(owners.map((o, i) => writes.createPin(o.id, boards[i]!.id, { title: 'seed' })));
    // What each operation must leave: the list (and edge) its result belongs in.
    type Effect =
      | { kind: 'pin'; board: bigint; via?: bigint }
      | { kind: 'comment'; pin: bigint }
      | { kind: 'like'; user: bigint; pin: bigint }
      | { kind: 'follow'; user: bigint; other: bigint };
    type Op = { key: string; run: (key: string) => Promise<StoredObject>; effect: Effect };
    const ops: Op[] = [];
    for (let n = 0; n < 2000; n++) {
      const i = n % owners.length;
      const me = owners[i]!;
      const other = owners[(i + 1 + (n % (owners.length - 1))) % owners.length]!;
      const otherPin = seedPins[owners.indexOf(other)]!;
      const board = boards[i]!.id;
      const key = `op-${n}`;
      const op = (run: Op['run'], effect: Effect): number => ops.push({ key, run, effect });
      switch (n % 5) {
        case 0:
          op((k) => writes.createPin(me.id, board, { title: `p${n}` }, {}, { idempotencyKey: k }), { kind: 'pin', board });
          break;
        case 1:
          op((k) => writes.createComment(me.id, otherPin.id, `c${n}`, {}, { idempotencyKey: k }), { kind: 'comment', pin: otherPin.id });
          break;
        case 2:
          op((k) => writes.likePin(me.id, otherPin.id, {}, { idempotencyKey: k }), { kind: 'like', user: me.id, pin: otherPin.id });
          break;
        case 3:
          op((k) => writes.followUser(me.id, other.id, {}, { idempotencyKey: k }), { kind: 'follow', user: me.id, other: other.id });
          break;
        default:
          op((k) => writes.repin(me.id, otherPin.id, board, {}, { idempotencyKey: k }), { kind: 'pin', board, via: otherPin.id });
      }
    }
    const POINTS: FaultPoint[] = ['in-first-transaction', 'after-first-commit', 'after-step-0', 'before-complete'];
    const interrupted = new Map<FaultPoint, number>(POINTS.map((p) => [p, 0]));
    const results: { op: Op; result: StoredObject }[] = [];
    let unreached = 0;
    const started = Date.now();
    // Four clients at once. A quarter of the first attempts is armed to crash at a random step
    // boundary; a crashed one is retried by two requests at once with its key, which must agree.
    let next = 0;
    const client = async (): Promise<void> => {
      while (next < ops.length) {
        const op = ops[next++]!;
        const attempt: Attempt | undefined = rand() < 0.25 ? { point: POINTS[Math.floor(rand() * POINTS.length)]!, crashed: false } : undefined;
        if (!attempt) {
          results.push({ op, result: await op.run(op.key) });
          continue;
        }
        let first: StoredObject | undefined;
        try {
          first = await attempts.run(attempt, () => op.run(op.key));
        } catch (err) {
          if (!(err instanceof InjectedCrash)) throw err;
        }
        if (first) {
          // Only writes without remaining steps (a pin, a comment) never reach after-step-0.
          assert.equal(attempt.crashed, false);
          assert.equal(attempt.point, 'after-step-0', `${op.key} was armed at ${attempt.point} and not interrupted`);
          assert.ok(op.effect.kind === 'comment' || (op.effect.kind === 'pin' && op.effect.via === undefined), `${op.key} has steps but never reached after-step-0`);
          unreached++;
          results.push({ op, result: first });
          continue;
        }
        assert.equal(attempt.crashed, true, `${op.key} failed without its crash`);
        interrupted.set(attempt.point, interrupted.get(attempt.point)! + 1);
        const [a, b] = await Promise.all([op.run(op.key), op.run(op.key)]);
        assert.equal(a.id, b.id, `${op.key}: two retries at once with one key answer the same object`);
        assert.deepEqual(a.data, b.data, `${op.key}: two retries at once with one key answer the same`);
        results.push({ op, result: a });
      }
    };
    await Promise.all([client(), client(), client(), client()]);
    const seconds = (Date.now() - started) / 1000;
    assert.equal(results.length, ops.length);
    for (const p of POINTS) assert.ok(interrupted.get(p)! > 20, `writes were really interrupted at ${p}: ${interrupted.get(p)}`);

    // Each list holds exactly what its operations made: every created result once (their IDs are
    // all different, each is in its list, and the list has nothing else), every edge both ways.
    const list = async (table: MappingTable, from: bigint): Promise<string[]> => {
      const [page] = await env.storage.mappings.pages([{ table, from, first: 5000 }]);
      assert.equal(page!.hasNextPage, false);
      const ids = page!.edges.map((e) => `${e.to}`).sort();
      const count = (await env.storage.mappings.counts([{ id: from, kind: table }])).get(`${from}:${table}`) ?? 0;
      assert.equal(count, ids.length, `${table} of ${from}: its count equals its list`);
      return ids;
    };
    const want = new Map<string, Set<string>>(); // `${table}:${from}` → the IDs it must hold
    const expect = (table: MappingTable, from: bigint, to: bigint): void => {
      const k = `${table}:${from}`;
      if (!want.has(k)) want.set(k, new Set());
      want.get(k)!.add(`${to}`);
    };
    for (const [i, o] of owners.entries()) {
      expect('board_has_pins', boards[i]!.id, seedPins[i]!.id);
      for (const t of ['user_likes_pins', 'user_follows_users', 'user_followed_by_users'] as const) want.set(`${t}:${o.id}`, new Set());
      for (const t of ['pin_liked_by_users', 'pin_has_comments', 'pin_repinned_as_pins'] as const) want.set(`${t}:${seedPins[i]!.id}`, new Set());
    }
    const created = new Set<string>();
    for (const { op, result } of results) {
      const e = op.effect;
      if (e.kind === 'pin' || e.kind === 'comment') {
        assert.equal(created.has(`${result.id}`), false, `${op.key}: its own object, not another operation's`);
        created.add(`${result.id}`);
      }
      if (e.kind === 'pin') {
        expect('board_has_pins', e.board, result.id);
        if (e.via !== undefined) expect('pin_repinned_as_pins', e.via, result.id);
      } else if (e.kind === 'comment') {
        expect('pin_has_comments', e.pin, result.id);
      } else if (e.kind === 'like') {
        assert.equal(result.id, e.pin);
        expect('user_likes_pins', e.user, e.pin);
        expect('pin_liked_by_users', e.pin, e.user);
      } else {
        assert.equal(result.id, e.other);
        expect('user_follows_users', e.user, e.other);
        expect('user_followed_by_users', e.other, e.user);
      }
    }
    assert.equal(created.size, ops.filter((o) => o.effect.kind === 'pin' || o.effect.kind === 'comment').length);
    for (const [k, ids] of want) {
      const [table, from] = k.split(':') as [MappingTable, string];
      assert.deepEqual(await list(table, BigInt(from)), [...ids].sort(), `${table} of ${from}`);
    }
    const { fixes, pendingIntents } = await invariantsHold();
    assert.deepEqual(fixes, []);
    assert.equal(pendingIntents, 0);
    const total = [...interrupted.values()].reduce((a, b) => a + b, 0);
    console.log(
      `# idempotency: ${ops.length} mutations in ${seconds.toFixed(1)} s; ${total} interrupted (${POINTS.map((p) => `${interrupted.get(p)} ${p}`).join(', ')}), ` +
        `each retried by 2 requests at once with its key; ${unreached} armed at a step they do not have; every effect exactly once`,
    );
  });

  test('a key reused for another operation is refused', async () => {
    const me = await writes.createUser({ username: 'idem_reuse' });
    const board = await writes.createBoard(me.id, { name: 'x' });
    await writes.createPin(me.id, board.id, { title: 'a' }, {}, { idempotencyKey: 'same' });
    await assert.rejects(
      writes.createPin(me.id, board.id, { title: 'b' }, {}, { idempotencyKey: 'same' }),
      (e: unknown) => (e as { code?: string }).code === 'INVALID_ARGUMENT',
    );
  });
});

describe('Writes: idempotency over HTTP', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(env, 'writes');
  });
  after(async () => {
    await gw?.stop();
  });

  test('the same Idempotency-Key returns the first result and writes once', async () => {
    const me = (await gw.gql('mutation { createUser(input: { username: "http_idem" }) { user { id } token } }')).body.data.createUser;
    const board = (await gw.gql('mutation { createBoard(input: { name: "b" }) { id } }', {}, { token: me.token })).body.data.createBoard.id;
    const send = () =>
      gw.gql(
        'mutation($b: ID!) { createPin(input: { boardId: $b, title: "once" }) { id } }',
        { b: board },
        { token: me.token, headers: { 'idempotency-key': 'abc-123' } },
      );
    const [a, b] = [await send(), await send()];
    assert.equal(a.body.data.createPin.id, b.body.data.createPin.id);
    const count = (await gw.gql('query($b: ID!) { board(id: $b) { pinCount } }', { b: board })).body.data.board.pinCount;
    assert.equal(count, 1);
    const bad = await gw.gql('{ viewer { id } }', {}, { token: me.token, headers: { 'idempotency-key': 'has spaces!' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errors?.[0]?.extensions?.code, 'INVALID_ARGUMENT');
  });
});

describe('Writes: contention', () => {
  test('likes and unlikes of one pin racing from 16 clients never fail, and both sides agree', async () => {
    const owner = await writes.createUser({ username: 'race_owner' });
    const board = await writes.createBoard(owner.id, { name: 'race' });
    const pin = await writes.createPin(owner.id, board.id, { title: 'contended' });
    const fans: StoredObject[] = [];
    for (let i = 0; i < 8; i++)
      fans.push(i % 2 === 0 ? await userOnOtherHost(`race_fan${i}_`, owner.id) : await writes.createUser({ username: `race_near${i}` }));
    let failures = 0;
    let done = 0;
    leftToRepair.length = 0;
    await Promise.all(
      Array.from({ length: 16 }, async (_, c) => {
        const fan = fans[c % fans.length]!;
        for (let i = 0; i < 40; i++) {
          try {
            await (i % 2 === c % 2 ? writes.likePin(fan.id, pin.id) : writes.unlikePin(fan.id, pin.id));
            done++;
          } catch {
            failures++;
          }
        }
      }),
    );
    assert.equal(failures, 0, 'deadlock victims are retried, not surfaced');
    const { fixes, pendingIntents } = await invariantsHold();
    console.log(`# contention: ${done} likes/unlikes of one pin from 16 clients, ${failures} failed; completions left to the repair pass: ${leftToRepair.length ? leftToRepair.join('; ') : 'none'}`);
    assert.deepEqual(fixes, []);
    // A completion after the answer that fails (e.g. deadlocked 4 times by the 16 clients) leaves its
    // intent to the repair pass, and says so; any other intent left is a bug.
    assert.equal(pendingIntents, leftToRepair.length, `intents left ${pendingIntents}, reported as left to repair: ${leftToRepair.join('; ')}`);
    if (pendingIntents > 0) {
      await repairIntents(env.storage, env.topology, { minAgeMs: 0 });
      const after = await invariantsHold();
      assert.deepEqual(after, { fixes: [], pendingIntents: 0 }, 'the repair pass completes what was left to it');
    }
  });
});

describe('Writes: the gateway repairs by itself', () => {
  test('an intent left by a crash is completed by the background repair pass', async () => {
    const a = await writes.createUser({ username: 'bg_a' });
    const b = await userOnOtherHost('bg_b', a.id);
    armed = { point: 'after-first-commit', kind: 'add:user_follows_users' };
    await assert.rejects(writes.followUser(a.id, b.id), InjectedCrash);
    armed = undefined;
    const shards = allShards(env.topology);
    assert.equal((await env.storage.intents.pending(shards, 0, 10)).length, 1, 'the crash left one intent');
    const gw = await startTestGateway(env, 'repair-worker', {}, { repair: { intervalMs: 50, minAgeMs: 0 } });
    try {
      let left = 1;
      for (let i = 0; i < 200 && left > 0; i++) {
        left = (await env.storage.intents.pending(shards, 0, 10)).length;
        if (left > 0) await new Promise((r) => setTimeout(r, 25));
      }
      assert.equal(left, 0);
      const followed = await env.storage.mappings.existing('user_followed_by_users', [{ from: b.id, to: a.id }]);
      assert.equal(followed.size, 1, 'the reverse edge was written by the repair pass');
    } finally {
      await gw.stop();
    }
  });
});

describe('Writes: read-modify-write', () => {
  test('20 concurrent clients × 200 increments of one field: exactly 4,000', async () => {
    const o = await env.storage.objects.create('board', 3, { n: 0 });
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        for (let i = 0; i < 200; i++) await env.storage.objects.update(o.id, (cur) => ({ ...cur.data, n: Number(cur.data.n) + 1 }));
      }),
    );
    const n = (await env.storage.objects.get(o.id))?.data.n;
    console.log(`# read-modify-write: 20 × 200 increments → ${n} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    assert.equal(n, 4000);
  });
});
