/**
 * Writes racing the delete of their target. Every relation write (like, follow of a user or a
 * board, repin, comment, a pin added to a board) is paused between its steps by the test-fault
 * hook, its target deleted, then let go on: deterministic, no sleeps. A write whose target was
 * deleted before it took effect answers NOT_FOUND and leaves nothing half-done (no edge on either
 * side, no count, no repin, no comment), and a retry with its key answers the same; every count
 * equals its list (reconcile finds nothing) and no intent is left.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { ProductWrites } from '../../src/product/pinterest/writes.ts';
import type { FaultPoint } from '../../src/services/writeExecutor.ts';
import { allShards, reconcile, repairIntents } from '../../src/services/repair.ts';
import { isShardqlError } from '../../src/core/errors.ts';
import { isActive, type StoredObject } from '../../src/storage/objectStore.ts';
import type { MappingTable } from '../../src/core/mappings.ts';
import { shardOf } from '../../src/core/ids.ts';

let env: TestEnv;
let writes: ProductWrites;

/** A pause armed for one write: at `point` of a write of `kind`, `paused` resolves and the write waits for `go`. */
interface Pause {
  readonly kind: string;
  readonly point: FaultPoint;
  readonly reached: () => void;
  readonly go: Promise<'continue' | 'crash'>;
}
let armed: Pause | undefined;
class InjectedCrash extends Error {}

before(async () => {
  env = await freshEnv({ shards: 16 });
  writes = new ProductWrites({
    storage: env.storage,
    topology: () => env.topology,
    faults: async (point, kind) => {
      const p = armed;
      if (!p || p.point !== point || p.kind !== kind) return undefined;
      armed = undefined;
      p.reached();
      if ((await p.go) === 'continue') return undefined;
      return () => {
        throw new InjectedCrash(`crashed at ${point} of ${kind}`);
      };
    },
  });
});
after(async () => {
  await env?.close();
});

/**
 * Runs `write` until it reaches `point` of a write of `kind`, then `meanwhile` (the delete) to its
 * end, then lets the write go on (or crash there): what the write answered.
 */
async function race<T>(kind: string, point: FaultPoint, write: () => Promise<T>, meanwhile: () => Promise<unknown>, then: 'continue' | 'crash' = 'continue'): Promise<{ ok: T } | { err: unknown }> {
  let reached!: () => void;
  const paused = new Promise<void>((r) => (reached = r));
  let go!: (v: 'continue' | 'crash') => void;
  armed = { kind, point, reached, go: new Promise((r) => (go = r)) };
  const answer = write().then(
    (ok) => ({ ok }),
    (err: unknown) => ({ err }),
  );
  await Promise.race([paused, answer]);
  assert.equal(armed, undefined, `the ${kind} write reached ${point}`);
  await meanwhile();
  go(then);
  return answer;
}

function assertNotFound(r: { ok: unknown } | { err: unknown }, what: string): void {
  assert.ok('err' in r, `${what}: answered success ${JSON.stringify('ok' in r ? String((r.ok as StoredObject).id) : '')}`);
  assert.ok(isShardqlError(r.err, 'NOT_FOUND'), `${what}: ${String(r.err)}`);
}

let n = 0;
const user = (name: string): Promise<StoredObject> => writes.createUser({ username: `${name}_${n++}` });
/** A user on the other host than `near`'s, or with `sameHost` on another shard of the same host. */
async function userAway(name: string, near: bigint, sameHost = false): Promise<StoredObject> {
  const { router } = env.storage;
  for (;;) {
    const u = await user(name);
    if (sameHost ? router.hostOfId(u.id) === router.hostOfId(near) && shardOf(u.id) !== shardOf(near) : router.hostOfId(u.id) !== router.hostOfId(near)) return u;
  }
}
const edge = async (table: MappingTable, from: bigint, to: bigint): Promise<boolean> => (await env.storage.mappings.existing(table, [{ from, to }])).size === 1;
const count = async (table: MappingTable, id: bigint): Promise<number> => (await env.storage.mappings.counts([{ id, kind: table }])).get(`${id}:${table}`) ?? 0;

/** Nothing half-done anywhere: no intent left, and reconcile finds nothing to fix (every count equals its list). */
async function consistent(what: string): Promise<void> {
  await writes.settled();
  const shards = allShards(env.topology);
  assert.deepEqual(await env.storage.intents.pending(shards, 0, 100), [], `${what}: no intent left`);
  const report = await reconcile(env.storage, shards);
  assert.deepEqual(report.fixes.map((f) => `${f.kind}: ${f.text}`), [], `${what}: reconcile finds nothing to fix`);
}

describe('A write whose target is deleted before it takes effect answers NOT_FOUND, with nothing half-done', () => {
  const POINTS: FaultPoint[] = ['before-first-transaction', 'after-first-commit'];

  for (const point of POINTS) {
    test(`like, follow of a user, follow of a board: the target deleted at ${point}`, async () => {
      const owner = await user('race_owner');
      // On two hosts: between the viewer's commit and the target's side (on one host both commit at once, below).
      const fan = await userAway('race_fan', owner.id);
      const board = await writes.createBoard(owner.id, { name: 'b' });
      const pin = await writes.createPin(owner.id, board.id, { title: 'p' });
      const cases: { kind: string; table: MappingTable; reverse: MappingTable; target: bigint; write: (key: string) => Promise<StoredObject>; del: () => Promise<unknown> }[] = [
        {
          kind: 'add:user_likes_pins',
          table: 'user_likes_pins',
          reverse: 'pin_liked_by_users',
          target: pin.id,
          write: (key) => writes.likePin(fan.id, pin.id, {}, { idempotencyKey: key }),
          del: () => writes.deletePin(owner.id, pin.id),
        },
        {
          kind: 'add:user_follows_boards',
          table: 'user_follows_boards',
          reverse: 'board_followed_by_users',
          target: board.id,
          write: (key) => writes.followBoard(fan.id, board.id, {}, { idempotencyKey: key }),
          del: () => writes.deleteBoard(owner.id, board.id),
        },
        {
          kind: 'add:user_follows_users',
          table: 'user_follows_users',
          reverse: 'user_followed_by_users',
          target: owner.id,
          write: (key) => writes.followUser(fan.id, owner.id, {}, { idempotencyKey: key }),
          del: () => writes.deleteViewer(owner.id),
        },
      ];
      for (const c of cases) {
        const key = `race-${c.kind}-${point}`;
        const r = await race(c.kind, point, () => c.write(key), c.del);
        assertNotFound(r, `${c.kind} at ${point}`);
        assert.equal(await edge(c.table, fan.id, c.target), false, `${c.kind}: the viewer's side is undone`);
        assert.equal(await edge(c.reverse, c.target, fan.id), false, `${c.kind}: the target's side was never added`);
        assert.equal(await count(c.table, fan.id), 0, `${c.kind}: the viewer's count is 0`);
        assertNotFound(await c.write(key).then((ok) => ({ ok }), (err: unknown) => ({ err })), `${c.kind} retried with its key`);
        await consistent(`${c.kind} at ${point}`);
      }
    });

    test(`a like on one host: the pin deleted at ${point}`, async () => {
      const owner = await user('onehost_owner');
      const fan = await userAway('onehost_fan', owner.id, true);
      const board = await writes.createBoard(owner.id, { name: 'b' });
      const pin = await writes.createPin(owner.id, board.id, { title: 'p' });
      const r = await race('add:user_likes_pins', point, () => writes.likePin(fan.id, pin.id), () => writes.deletePin(owner.id, pin.id));
      if (point === 'before-first-transaction') assertNotFound(r, `like at ${point}`);
      // Both sides committed at once, before the delete: the like was made, and the delete's cascade undid it.
      else assert.ok('ok' in r && r.ok.id === pin.id, `like at ${point}: ${'err' in r ? String(r.err) : 'answered'}`);
      assert.equal(await edge('user_likes_pins', fan.id, pin.id), false, "the viewer's side: absent");
      assert.equal(await edge('pin_liked_by_users', pin.id, fan.id), false, "the pin's side: absent");
      assert.equal(await count('user_likes_pins', fan.id), 0, "the viewer's count is 0");
      await consistent(`one-host like at ${point}`);
    });

    test(`repin: the original deleted at ${point}; the repin is undone`, async () => {
      const owner = await user('repin_owner');
      const fan = await user('repin_fan');
      const ownerBoard = await writes.createBoard(owner.id, { name: 'o' });
      const fanBoard = await writes.createBoard(fan.id, { name: 'f' });
      const original = await writes.createPin(owner.id, ownerBoard.id, { title: 'original' });
      const key = `race-repin-${point}`;
      const r = await race('repin', point, () => writes.repin(fan.id, original.id, fanBoard.id, {}, { idempotencyKey: key }), () => writes.deletePin(owner.id, original.id));
      assertNotFound(r, `repin at ${point}`);
      assert.equal(await count('board_has_pins', fanBoard.id), 0, 'the repin left the board');
      assert.equal(await count('user_has_pins', fan.id), 0, "the repin left the repinner's pins");
      assert.equal(await count('pin_repinned_as_pins', original.id), 0, 'no repin edge');
      // The first transaction made the repin (it cannot lock the original, on another shard): it is deleted now.
      const made = (await env.storage.events.stored(fan.id)).filter((e) => e.kind === 'repinned_pin');
      assert.equal(made.length, 1);
      assert.equal(isActive((await env.storage.objects.get(made[0]!.detail!))!), false, 'the repin made is deleted');
      assertNotFound(await writes.repin(fan.id, original.id, fanBoard.id, {}, { idempotencyKey: key }).then((ok) => ({ ok }), (err: unknown) => ({ err })), 'repin retried with its key');
      await consistent(`repin at ${point}`);
    });
  }

  test('repin: the original deleted after its first commit, then the writer crashes: the repair pass undoes the repin', async () => {
    const owner = await user('crash_owner');
    const fan = await user('crash_fan');
    const ownerBoard = await writes.createBoard(owner.id, { name: 'o' });
    const fanBoard = await writes.createBoard(fan.id, { name: 'f' });
    const original = await writes.createPin(owner.id, ownerBoard.id, { title: 'original' });
    const r = await race('repin', 'after-first-commit', () => writes.repin(fan.id, original.id, fanBoard.id), () => writes.deletePin(owner.id, original.id), 'crash');
    assert.ok('err' in r && r.err instanceof InjectedCrash, String('err' in r ? r.err : 'answered'));
    assert.equal(await count('board_has_pins', fanBoard.id), 1, 'the repin committed before the crash');
    const repaired = await repairIntents(env.storage, env.topology, { minAgeMs: 0 });
    assert.equal(repaired.failed, 0);
    assert.equal(await count('board_has_pins', fanBoard.id), 0, 'the repair pass undid the repin');
    assert.equal(await count('user_has_pins', fan.id), 0);
    await consistent('repin crashed, then repaired');
  });

  test('a comment, and a pin added to a board (a new one or a repin): the pin or board deleted before the first transaction', async () => {
    const owner = await user('lock_owner');
    const fan = await user('lock_fan');
    const board = await writes.createBoard(owner.id, { name: 'b' });
    const pin = await writes.createPin(owner.id, board.id, { title: 'p' });
    const c = await race('createComment', 'before-first-transaction', () => writes.createComment(fan.id, pin.id, 'late'), () => writes.deletePin(owner.id, pin.id));
    assertNotFound(c, 'createComment');
    assert.equal(await count('pin_has_comments', pin.id), 0);
    assert.deepEqual((await env.storage.events.stored(fan.id)).map((e) => e.kind), [], 'no COMMENT in the author activity');

    const doomed = await writes.createBoard(owner.id, { name: 'doomed' });
    const pinsBefore = await count('user_has_pins', owner.id);
    const p = await race('createPin', 'before-first-transaction', () => writes.createPin(owner.id, doomed.id, { title: 'late' }), () => writes.deleteBoard(owner.id, doomed.id));
    assertNotFound(p, 'createPin');
    assert.equal(await count('user_has_pins', owner.id), pinsBefore, 'no pin was added');

    const fanBoard = await writes.createBoard(fan.id, { name: 'f' });
    const other = await writes.createPin(owner.id, board.id, { title: 'other' });
    const rp = await race('repin', 'before-first-transaction', () => writes.repin(fan.id, other.id, fanBoard.id), () => writes.deleteBoard(fan.id, fanBoard.id));
    assertNotFound(rp, 'repin onto a deleted board');
    assert.equal(await count('user_has_pins', fan.id), 0);
    assert.equal(await count('pin_repinned_as_pins', other.id), 0);
    await consistent('comment and pins');
  });
});
