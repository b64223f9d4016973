/**
 * Writes that span shards: fault injection at every step boundary of every multi-shard mutation,
 * interrupted-and-retried mutations with idempotency keys, and read-modify-write under contention.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { ProductWrites } from '../../src/services/writes.ts';
import type { FaultPoint } from '../../src/services/writeExecutor.ts';
import { allShards, reconcile, repairIntents } from '../../src/services/repair.ts';
import { shardOf } from '../../src/core/ids.ts';
import type { StoredObject } from '../../src/storage/objectStore.ts';
import type { MappingTable } from '../../src/core/mappings.ts';

let env: TestEnv;
let armed: { point: FaultPoint; kind?: string; chance?: number } | undefined;
let injected = 0;
let writes: ProductWrites;
let random = 0x2545f491;
const rand = (): number => (random = (random * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;

class InjectedCrash extends Error {}

before(async () => {
  env = await freshEnv({ shards: 16 });
  writes = new ProductWrites({
    storage: env.storage,
    topology: () => env.topology,
    faults: (point, kind) => {
      if (!armed || armed.point !== point || (armed.kind !== undefined && !kind.startsWith(armed.kind))) return;
      if (armed.chance !== undefined && rand() >= armed.chance) return;
      injected++;
      throw new InjectedCrash(`injected crash at ${point} of ${kind}`);
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
        },
        act: () => writes.deleteViewer(leaver!.id),
        effect: async () =>
          !(await edge('user_likes_pins', alice.id, pin.id)) &&
          !(await edge('user_follows_users', alice.id, leaver!.id)) &&
          !(await edge('user_followed_by_users', alice.id, leaver!.id)) &&
          !(await edge('board_followed_by_users', bobBoard.id, leaver!.id)),
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
  test('thousands of mutations, a quarter interrupted and retried with the same key: 0 duplicates, 0 lost', async () => {
    const owners: StoredObject[] = [];
    for (let i = 0; i < 6; i++) owners.push(await writes.createUser({ username: `idem_owner${i}` }));
    const boards = await Promise.all(owners.map((o) => writes.createBoard(o.id, { name: 'idem' })));
    const seedPins = await Promise.all(owners.map((o, i) => writes.createPin(o.id, boards[i]!.id, { title: 'seed' })));
    const expected = { pins: new Map<string, number>(), comments: 0, likes: new Set<string>(), follows: new Set<string>() };
    type Op = { key: string; viewer: StoredObject; run: (key: string) => Promise<unknown>; note: () => void };
    const ops: Op[] = [];
    for (let n = 0; n < 2000; n++) {
      const i = n % owners.length;
      const me = owners[i]!;
      const other = owners[(i + 1 + (n % (owners.length - 1))) % owners.length]!;
      const otherPin = seedPins[owners.indexOf(other)]!;
      const key = `op-${n}`;
      switch (n % 5) {
        case 0:
          ops.push({
            key,
            viewer: me,
            run: (k) => writes.createPin(me.id, boards[i]!.id, { title: `p${n}` }, {}, { idempotencyKey: k }),
            note: () => expected.pins.set(`${boards[i]!.id}`, (expected.pins.get(`${boards[i]!.id}`) ?? 0) + 1),
          });
          break;
        case 1:
          ops.push({
            key,
            viewer: me,
            run: (k) => writes.createComment(me.id, otherPin.id, `c${n}`, {}, { idempotencyKey: k }),
            note: () => expected.comments++,
          });
          break;
        case 2:
          ops.push({
            key,
            viewer: me,
            run: (k) => writes.likePin(me.id, otherPin.id, {}, { idempotencyKey: k }),
            note: () => expected.likes.add(`${me.id}:${otherPin.id}`),
          });
          break;
        case 3:
          ops.push({
            key,
            viewer: me,
            run: (k) => writes.followUser(me.id, other.id, {}, { idempotencyKey: k }),
            note: () => expected.follows.add(`${me.id}:${other.id}`),
          });
          break;
        default:
          ops.push({
            key,
            viewer: me,
            run: (k) => writes.repin(me.id, otherPin.id, boards[i]!.id, {}, { idempotencyKey: k }),
            note: () => expected.pins.set(`${boards[i]!.id}`, (expected.pins.get(`${boards[i]!.id}`) ?? 0) + 1),
          });
      }
    }
    const points: FaultPoint[] = ['in-first-transaction', 'after-first-commit', 'after-step-0', 'before-complete'];
    let interrupted = 0;
    let retries = 0;
    const started = Date.now();
    // Four clients at once, each op retried with its own key until it succeeds.
    let next = 0;
    const client = async (): Promise<void> => {
      while (next < ops.length) {
        const op = ops[next++]!;
        for (let attempt = 0; ; attempt++) {
          armed = attempt === 0 ? { point: points[Math.floor(rand() * points.length)]!, chance: 0.25 } : undefined;
          const before = injected;
          try {
            await op.run(op.key);
            op.note();
            break;
          } catch (err) {
            if (!(err instanceof InjectedCrash) || attempt > 3) throw err;
            if (injected > before) interrupted++;
            retries++;
          }
        }
      }
    };
    await Promise.all([client(), client(), client(), client()]);
    armed = undefined;
    const seconds = (Date.now() - started) / 1000;
    // Every board holds exactly its pins; counts match; nothing left to repair or reconcile.
    for (const [board, n] of expected.pins) {
      const count = (await env.storage.mappings.counts([{ id: BigInt(board), kind: 'board_has_pins' }])).get(`${board}:board_has_pins`);
      assert.equal(count, n + 1, `board ${board}: ${n} pins made, plus its seed pin`);
    }
    const commentCount = [...(await env.storage.mappings.counts(seedPins.map((p) => ({ id: p.id, kind: 'pin_has_comments' })))).values()].reduce(
      (a, b) => a + b,
      0,
    );
    assert.equal(commentCount, expected.comments);
    let likes = 0;
    for (const o of owners) likes += (await env.storage.mappings.counts([{ id: o.id, kind: 'user_likes_pins' }])).get(`${o.id}:user_likes_pins`)!;
    assert.equal(likes, expected.likes.size);
    const { fixes, pendingIntents } = await invariantsHold();
    assert.deepEqual(fixes, []);
    assert.equal(pendingIntents, 0);
    console.log(`# idempotency: ${ops.length} mutations in ${seconds.toFixed(1)} s, ${interrupted} interrupted, ${retries} retries; 0 duplicates, 0 lost`);
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
    console.log(`# contention: ${done} likes/unlikes of one pin from 16 clients, ${failures} failed`);
    assert.equal(failures, 0, 'deadlock victims are retried, not surfaced');
    const { fixes, pendingIntents } = await invariantsHold();
    assert.deepEqual(fixes, []);
    assert.equal(pendingIntents, 0);
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
