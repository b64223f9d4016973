/**
 * Reconcile, proven: every kind of corruption it knows is injected straight into MariaDB (bypassing
 * the writes), each on more than one shard; reconcile reports exactly those fixes — kind and shard —
 * and a second run finds nothing. Then the lists and counts a client reads agree again.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { ProductWrites } from '../../src/product/pinterest/writes.ts';
import { FIX_KINDS, allShards, reconcile, type FixKind } from '../../src/services/repair.ts';
import { decodeId, encodeId, shardOf } from '../../src/core/ids.ts';
import { typeNumberOf } from '../../src/core/objectTypes.ts';
import { shardDatabase } from '../../src/core/topology.ts';
import type { MappingTable } from '../../src/core/mappings.ts';
import type { StoredObject } from '../../src/storage/objectStore.ts';

let env: TestEnv;
let writes: ProductWrites;

before(async () => {
  env = await freshEnv({ shards: 16 });
  writes = new ProductWrites({ storage: env.storage, topology: () => env.topology });
});
after(async () => {
  await env?.close();
});

// Straight SQL on a shard's primary: what a bug, an operator or a half-applied restore could leave.
async function sql(shard: number, text: string, values: (string | number | bigint | null)[] = []): Promise<void> {
  await env.storage.router.query(env.storage.router.writableHostOfShard(shard), [shard], text.replaceAll('$db', shardDatabase(shard)), values);
}
/** An edge and its count, together: only the rule under test is broken, not the count. */
async function insertEdge(table: MappingTable, from: bigint, to: bigint): Promise<void> {
  const s = shardOf(from);
  await sql(s, `INSERT INTO $db.${table} (from_id, to_id, sequence, position) VALUES (?, ?, ?, NULL)`, [from, to, Date.now()]);
  await sql(s, 'INSERT INTO $db.counts (id, kind, n) VALUES (?, ?, 1) ON DUPLICATE KEY UPDATE n = n + 1', [from, table]);
}
async function deleteEdge(table: MappingTable, from: bigint, to: bigint): Promise<void> {
  const s = shardOf(from);
  await sql(s, `DELETE FROM $db.${table} WHERE from_id = ? AND to_id = ?`, [from, to]);
  await sql(s, 'UPDATE $db.counts SET n = n - 1 WHERE id = ? AND kind = ?', [from, table]);
}
async function softDeleteRow(o: StoredObject): Promise<void> {
  const { shard, local } = decodeId(o.id);
  const table = { pin: 'pins', board: 'boards', user: 'users', comment: 'comments' }[o.type];
  await sql(shard, `UPDATE $db.${table} SET data = JSON_SET(data, '$.active', false) WHERE local_id = ?`, [local]);
}

let serial = 0;
const user = (): Promise<StoredObject> => writes.createUser({ username: `rc${serial++}` });
/** A user on a shard none of `avoid` is on, so the cases of one kind land on different shards. */
async function userAwayFrom(avoid: readonly number[]): Promise<StoredObject> {
  for (;;) {
    const u = await user();
    if (!avoid.includes(shardOf(u.id))) return u;
  }
}
async function boardOf(u: StoredObject): Promise<StoredObject> {
  return writes.createBoard(u.id, { name: 'b' });
}
async function pinOf(u: StoredObject, b?: StoredObject): Promise<StoredObject> {
  return writes.createPin(u.id, (b ?? (await boardOf(u))).id, { title: 'p' });
}

describe('Reconcile finds exactly the corruption injected, fixes it, and then finds nothing', () => {
  test('one case per kind, each kind on two shards', async () => {
    const expected: { kind: FixKind; shard: number; what: string }[] = [];
    const expect = (kind: FixKind, shard: number, what: string): void => void expected.push({ kind, shard, what });

    for (let round = 0; round < 2; round++) {
      const used = expected.map((e) => e.shard);
      // reverse: a like whose reverse edge is gone; a follower row with no follow behind it.
      {
        const fan = await userAwayFrom(used);
        const star = await user();
        const p = await pinOf(star);
        await writes.likePin(fan.id, p.id);
        await deleteEdge('pin_liked_by_users', p.id, fan.id);
        expect('reverse', shardOf(fan.id), 'reverse edge missing');
        const ghost = await userAwayFrom(used);
        const a = await user();
        await insertEdge('user_followed_by_users', ghost.id, a.id);
        expect('reverse', shardOf(ghost.id), 'reverse edge with no forward');
        const follower = await userAwayFrom(used);
        const followed = await user();
        await writes.followUser(follower.id, followed.id);
        await sql(shardOf(followed.id), 'UPDATE $db.user_followed_by_users SET sequence = sequence - 1000 WHERE from_id = ? AND to_id = ?', [followed.id, follower.id]);
        expect('reverse', shardOf(follower.id), 'reverse edge with another sequence (out of order in the list)');
      }
      // dangling: a follow of a deleted board; a like of a pin that never existed; a board list naming another board's pin.
      {
        const u = await userAwayFrom(used);
        const owner = await user();
        const b = await boardOf(owner);
        await writes.deleteBoard(owner.id, b.id);
        await insertEdge('user_follows_boards', u.id, b.id);
        expect('dangling', shardOf(u.id), 'edge to a deleted board');
        const v = await userAwayFrom(used);
        const nowhere = encodeId({ shard: shardOf(v.id), type: typeNumberOf('pin'), local: 999_999n });
        await insertEdge('user_likes_pins', v.id, nowhere);
        expect('dangling', shardOf(v.id), 'edge to a missing pin');
        const w = await userAwayFrom(used);
        const [b1, b2] = [await boardOf(w), await boardOf(w)];
        const p = await pinOf(w, b1);
        await insertEdge('board_has_pins', b2.id, p.id);
        expect('dangling', shardOf(w.id), 'a board listing a pin of another board');
      }
      // unlisted: an active pin missing from its board's list.
      {
        const u = await userAwayFrom(used);
        const b = await boardOf(u);
        const p = await pinOf(u, b);
        await deleteEdge('board_has_pins', b.id, p.id);
        expect('unlisted', shardOf(u.id), 'pin missing from its board');
      }
      // orphan: a board deleted behind the writes' back (off its owner's list, soft-deleted) with an active pin on it.
      {
        const u = await userAwayFrom(used);
        const b = await boardOf(u);
        const p = await pinOf(u, b);
        await deleteEdge('board_has_pins', b.id, p.id);
        await deleteEdge('user_has_boards', u.id, b.id);
        await softDeleteRow(b);
        expect('orphan', shardOf(u.id), 'active pin of a deleted board');
      }
      // cascade: a deleted pin whose likers list still has a row.
      {
        const u = await userAwayFrom(used);
        const fan = await user();
        const p = await pinOf(u);
        await writes.deletePin(u.id, p.id);
        await insertEdge('pin_liked_by_users', p.id, fan.id);
        expect('cascade', shardOf(p.id), 'deleted pin with a list row');
      }
      // repin: a repin whose edge on the original is gone; a repin edge for a pin that is no repin.
      {
        const a = await user();
        const b = await userAwayFrom(used);
        const original = await pinOf(a);
        const r = await writes.repin(b.id, original.id, (await boardOf(b)).id);
        await deleteEdge('pin_repinned_as_pins', original.id, r.id);
        expect('repin', shardOf(r.id), 'repin edge missing (found from the repin)');
        const c = await userAwayFrom(used);
        const o2 = await pinOf(c);
        const plain = await pinOf(await user());
        await insertEdge('pin_repinned_as_pins', o2.id, plain.id);
        expect('repin', shardOf(o2.id), 'repin edge for a pin that is no repin');
      }
      // count: a count off by three.
      {
        const u = await userAwayFrom(used);
        await boardOf(u);
        await sql(shardOf(u.id), 'UPDATE $db.counts SET n = n + 3 WHERE id = ? AND kind = ?', [u.id, 'user_has_boards']);
        expect('count', shardOf(u.id), 'count off by 3');
      }
      // intent: an old intent left by a writer that died, for a like whose reverse it never wrote.
      {
        const fan = await userAwayFrom(used);
        const p = await pinOf(await user());
        await writes.likePin(fan.id, p.id);
        await deleteEdge('pin_liked_by_users', p.id, fan.id);
        const steps = JSON.stringify([{ kind: 'syncReverse', table: 'user_likes_pins', from: `${fan.id}`, to: `${p.id}` }]);
        await sql(shardOf(fan.id), 'INSERT INTO $db.intents (kind, steps, created_at) VALUES (?, ?, ?)', ['add:user_likes_pins', steps, Date.now() - 3_600_000]);
        expect('intent', shardOf(fan.id), 'old intent');
      }
    }

    const shards = allShards(env.topology);
    await writes.settled(); // the relation writes' own intents, deleted shortly after each answered
    const first = await reconcile(env.storage, shards);
    const key = (f: { kind: string; shard: number }): string => `${f.kind}@${f.shard}`;
    assert.deepEqual(
      first.fixes.map(key).sort(),
      expected.map(key).sort(),
      `fixes:\n${first.fixes.map((f) => `${key(f)} ${f.text}`).join('\n')}\nexpected:\n${expected.map((e) => `${key(e)} ${e.what}`).join('\n')}`,
    );
    for (const kind of FIX_KINDS) assert.equal(first.byKind[kind], expected.filter((e) => e.kind === kind).length, kind);
    assert.ok(new Set(expected.map((e) => e.shard)).size >= 4, 'the cases are spread over several shards');
    for (const kind of FIX_KINDS) {
      assert.ok(new Set(expected.filter((e) => e.kind === kind).map((e) => e.shard)).size >= 2, `${kind} is tried on two shards`);
    }

    const second = await reconcile(env.storage, shards);
    assert.deepEqual(second.fixes.map((f) => `${key(f)} ${f.text}`), []);
    assert.equal((await env.storage.intents.pending(shards, 0, 100)).length, 0);
  });

  // Comments written before user_wrote_comments existed (or a row lost since) are in no author's
  // list, so deleting the author's account could not find them (issue 28). Reconcile reads the
  // lists from the model (Comment.author @ref(listedIn: "user_wrote_comments", onDelete: DELETE)).
  test('a comment missing from its author\'s list (on another shard) is put back, and the account\'s delete then takes it; one whose author is already deleted goes', async () => {
    const author = await user();
    const pin = await pinOf(await userAwayFrom([shardOf(author.id)]));
    const kept = await writes.createComment(author.id, pin.id, 'written before the list existed');
    const gone = await user();
    const orphan = await writes.createComment(gone.id, pin.id, 'its author was deleted before the fix');
    await writes.settled();
    assert.notEqual(shardOf(kept.id), shardOf(author.id), 'the comment lives on its pin\'s shard, the list on its author\'s');
    assert.deepEqual(await authored(author.id), { rows: [kept.id], count: 1 }, 'the create listed it');

    await deleteEdge('user_wrote_comments', author.id, kept.id);
    await deleteEdge('user_wrote_comments', gone.id, orphan.id);
    assert.deepEqual(await authored(author.id), { rows: [], count: 0 }, 'the row and its count are gone');
    assert.equal(await writes.deleteViewer(gone.id), true);
    await writes.settled();
    assert.equal(await isActiveRow(orphan.id), true, 'the account\'s delete could not find the comment its list lost');

    const shards = allShards(env.topology);
    const first = await reconcile(env.storage, shards);
    assert.deepEqual(
      first.fixes.map((f) => `${f.kind}@${f.shard}`).sort(),
      [`orphan@${shardOf(orphan.id)}`, `unlisted@${shardOf(kept.id)}`].sort(),
      first.fixes.map((f) => f.text).join('\n'),
    );
    assert.match(first.fixes.find((f) => f.kind === 'unlisted')!.text, new RegExp(`comment ${kept.id} was missing from user_wrote_comments of ${author.id}: put back`));
    assert.deepEqual(await authored(author.id), { rows: [kept.id], count: 1 }, 'back, with its count');
    assert.equal(await isActiveRow(orphan.id), false, 'the comment of the deleted account is deleted');
    assert.deepEqual(await commentsOf(pin.id), { rows: [kept.id], count: 1 }, 'its pin lists only the other one');
    assert.deepEqual((await reconcile(env.storage, shards)).fixes, [], 'nothing left to fix');

    // Now the account's delete finds the comment through its list and takes it.
    assert.equal(await writes.deleteViewer(author.id), true);
    await writes.settled();
    assert.equal(await isActiveRow(kept.id), false, 'the author\'s comment went with the account');
    assert.deepEqual(await commentsOf(pin.id), { rows: [], count: 0 });
    assert.deepEqual(await authored(author.id), { rows: [], count: 0 });
    assert.deepEqual((await reconcile(env.storage, shards)).fixes, []);
  });

  // Issue 42 item 4: a row deleted by SQL alone leaves its count one high. Reconcile of the other
  // side's shards puts the row back with the step the writes use, which adds 1 to that count; the
  // list's own shard is not among those checked, so its count pass never ran. Every list a fix
  // writes on a shard must end with its count equal to its rows, whatever the subset.
  test('a row put back by reconcile of the other side\'s shards only leaves its count equal to its list (a like, a comment in its author\'s list, a repin)', async () => {
    // The lists on two shards (the pin's, the author's); the sides naming their rows on others.
    const pin = await pinOf(await user());
    const author = await userAwayFrom([shardOf(pin.id)]);
    const lists = [shardOf(pin.id), shardOf(author.id)];
    const fan = await userAwayFrom(lists);
    await writes.likePin(fan.id, pin.id);
    const comment = await writes.createComment(author.id, (await pinOf(await userAwayFrom(lists))).id, 'listed, then its row lost');
    const repinner = await userAwayFrom(lists);
    const repin = await writes.repin(repinner.id, pin.id, (await boardOf(repinner)).id);
    await writes.settled();
    // The rows only, by SQL: each list's count still counts its lost row.
    const lost: [MappingTable, bigint, bigint][] = [
      ['pin_liked_by_users', pin.id, fan.id],
      ['user_wrote_comments', author.id, comment.id],
      ['pin_repinned_as_pins', pin.id, repin.id],
    ];
    for (const [table, from, to] of lost) {
      await sql(shardOf(from), `DELETE FROM $db.${table} WHERE from_id = ? AND to_id = ?`, [from, to]);
      assert.deepEqual(await listOf(table, from), { rows: [], count: 1 }, `${table}: the row is gone, its count is not`);
    }
    // Each side that names the lost row, reconciled alone: the lists' own shards are not checked.
    const subset = [...new Set([shardOf(fan.id), shardOf(comment.id), shardOf(repin.id)])];
    assert.ok(lists.every((s) => !subset.includes(s)), 'the lists live on shards outside the subset');
    const r = await reconcile(env.storage, subset);
    for (const [table, from, to] of lost) {
      assert.deepEqual(await listOf(table, from), { rows: [to], count: 1 }, `${table}: the row is back and counted once`);
      // What a client reads (through the caches): the count, and the list, agree.
      assert.equal((await env.storage.mappings.counts([{ id: from, kind: table }])).get(`${from}:${table}`), 1, `${table}: the count read`);
    }
    const key = (f: { kind: string; shard: number }): string => `${f.kind}@${f.shard}`;
    assert.deepEqual(
      r.fixes.map(key).sort(),
      [`reverse@${shardOf(fan.id)}`, `unlisted@${shardOf(comment.id)}`, `repin@${shardOf(repin.id)}`, `count@${shardOf(pin.id)}`, `count@${shardOf(author.id)}`, `count@${shardOf(pin.id)}`].sort(),
      r.fixes.map((f) => `${key(f)} ${f.text}`).join('\n'),
    );
    assert.deepEqual((await reconcile(env.storage, allShards(env.topology))).fixes.map((f) => `${key(f)} ${f.text}`), [], 'a full reconcile finds nothing left');
  });
});

/** Rows on a shard's primary. */
async function select(shard: number, text: string, values: (string | number | bigint)[]): Promise<Record<string, unknown>[]> {
  return env.storage.router.query(env.storage.router.writableHostOfShard(shard), [shard], text.replaceAll('$db', shardDatabase(shard)), values);
}
/** A list's rows and its count, as the primary holds them. */
async function listOf(table: MappingTable, from: bigint): Promise<{ rows: bigint[]; count: number }> {
  const s = shardOf(from);
  const rows = await select(s, `SELECT to_id FROM $db.${table} WHERE from_id = ? ORDER BY to_id`, [from]);
  const [c] = await select(s, 'SELECT n FROM $db.counts WHERE id = ? AND kind = ?', [from, table]);
  return { rows: rows.map((r) => BigInt(String(r.to_id))), count: Number(c?.n ?? 0) };
}
const authored = (u: bigint): Promise<{ rows: bigint[]; count: number }> => listOf('user_wrote_comments', u);
const commentsOf = (p: bigint): Promise<{ rows: bigint[]; count: number }> => listOf('pin_has_comments', p);
async function isActiveRow(id: bigint): Promise<boolean> {
  const { shard, local } = decodeId(id);
  const [r] = await select(shard, "SELECT COALESCE(JSON_EXTRACT(data, '$.active'), 'true') <> 'false' AS active FROM $db.comments WHERE local_id = ?", [local]);
  assert.ok(r, `comment ${id} has a row`);
  return Number(r.active) === 1;
}
