/**
 * Intents recorded by a previous version, whose listing steps named their list by its two objects
 * (`syncAuthored`: a comment under its author; `syncRepin`: a repin under its original), are run by
 * today's repair pass as the generic `syncListing` (storage/intentLog.ts `decodeSteps`): each is
 * written straight into the intents table, as that version's writer left it when it died.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { ProductWrites } from '../../src/product/pinterest/writes.ts';
import { repairIntents, allShards } from '../../src/services/repair.ts';
import { decodeId, shardOf } from '../../src/core/ids.ts';
import { shardDatabase } from '../../src/core/topology.ts';
import type { MappingTable } from '../../src/core/mappings.ts';
import { isActive, type StoredObject } from '../../src/storage/objectStore.ts';

let env: TestEnv;
let writes: ProductWrites;

before(async () => {
  env = await freshEnv({ shards: 16 });
  writes = new ProductWrites({ storage: env.storage, topology: () => env.topology });
});
after(async () => {
  await env?.close();
});

async function sql(shard: number, text: string, values: (string | number | bigint | null)[] = []): Promise<Record<string, unknown>[]> {
  return (await env.storage.router.query(env.storage.router.writableHostOfShard(shard), [shard], text.replaceAll('$db', shardDatabase(shard)), values)) as Record<string, unknown>[];
}
async function edge(table: MappingTable, from: bigint, to: bigint): Promise<boolean> {
  return (await sql(shardOf(from), `SELECT 1 AS x FROM $db.${table} WHERE from_id = ? AND to_id = ?`, [from, to])).length === 1;
}
async function count(table: MappingTable, from: bigint): Promise<number> {
  return Number((await sql(shardOf(from), 'SELECT n FROM $db.counts WHERE id = ? AND kind = ?', [from, table]))[0]?.n ?? 0);
}
/** The edge and its count, as a writer that died before its step left them. */
async function deleteEdge(table: MappingTable, from: bigint, to: bigint): Promise<void> {
  await sql(shardOf(from), `DELETE FROM $db.${table} WHERE from_id = ? AND to_id = ?`, [from, to]);
  await sql(shardOf(from), 'UPDATE $db.counts SET n = n - 1 WHERE id = ? AND kind = ?', [from, table]);
}
async function oldIntent(shard: number, kind: string, steps: unknown[]): Promise<void> {
  await sql(shard, 'INSERT INTO $db.intents (kind, steps, created_at) VALUES (?, ?, ?)', [kind, JSON.stringify(steps), Date.now() - 3_600_000]);
}
async function repair(): Promise<void> {
  const lines: string[] = [];
  const report = await repairIntents(env.storage, env.topology, { minAgeMs: 60_000, log: (l) => lines.push(l) });
  assert.deepEqual(report, { completed: 1, failed: 0 }, lines.join('\n'));
  assert.equal((await env.storage.intents.pending(allShards(env.topology), 0, 100)).length, 0);
}
async function fresh(id: bigint): Promise<StoredObject | undefined> {
  await env.storage.objects.invalidate([id]);
  return (await env.storage.objects.getMany([id])).get(id);
}

let serial = 0;
const user = (): Promise<StoredObject> => writes.createUser({ username: `li${serial++}` });
async function userAwayFrom(shard: number): Promise<StoredObject> {
  for (;;) {
    const u = await user();
    if (shardOf(u.id) !== shard) return u;
  }
}
async function pinOf(u: StoredObject): Promise<StoredObject> {
  const b = await writes.createBoard(u.id, { name: 'b' });
  return writes.createPin(u.id, b.id, { title: 't' });
}
/** An object's row soft-deleted by SQL, as the first step of its delete leaves it (its cascade never ran). */
async function softDeletedBySql(o: StoredObject, table: 'users' | 'pins'): Promise<void> {
  const { local } = decodeId(o.id);
  await sql(shardOf(o.id), `UPDATE $db.${table} SET data = JSON_SET(data, '$.active', false) WHERE local_id = ?`, [local]);
  await env.storage.objects.invalidate([o.id]);
}
/** A repin on another shard than its original's, unlisted from the original as a writer that died before its step left it. */
async function unlistedRepin(): Promise<{ original: StoredObject; board: StoredObject; repin: StoredObject }> {
  const original = await pinOf(await user());
  const repinner = await userAwayFrom(shardOf(original.id));
  const board = await writes.createBoard(repinner.id, { name: 'r' });
  const repin = await writes.repin(repinner.id, original.id, board.id);
  await writes.settled();
  await deleteEdge('pin_repinned_as_pins', original.id, repin.id);
  return { original, board, repin };
}

describe('Intents of a previous version (syncAuthored, syncRepin) are completed by the repair pass', () => {
  test('syncAuthored lists a comment under its author again', async () => {
    const pin = await pinOf(await user());
    const author = await userAwayFrom(shardOf(pin.id));
    const c = await writes.createComment(author.id, pin.id, 'hello');
    await writes.settled();
    await deleteEdge('user_wrote_comments', author.id, c.id);
    assert.equal(await edge('user_wrote_comments', author.id, c.id), false);
    await oldIntent(shardOf(c.id), 'createComment', [{ kind: 'syncAuthored', author: `${author.id}`, comment: `${c.id}` }]);
    await repair();
    assert.equal(await edge('user_wrote_comments', author.id, c.id), true);
    assert.equal(await count('user_wrote_comments', author.id), 1);
    assert.equal(isActive((await fresh(c.id))!), true);
  });

  test('syncAuthored of an author deleted meanwhile deletes the comment (a containment)', async () => {
    const pin = await pinOf(await user());
    const author = await userAwayFrom(shardOf(pin.id));
    const c = await writes.createComment(author.id, pin.id, 'bye');
    await writes.settled();
    await deleteEdge('user_wrote_comments', author.id, c.id);
    // The author's row deleted as their account's delete does first (their cascade never finds the comment).
    await softDeletedBySql(author, 'users');
    await oldIntent(shardOf(c.id), 'createComment', [{ kind: 'syncAuthored', author: `${author.id}`, comment: `${c.id}` }]);
    await repair();
    assert.equal(await edge('user_wrote_comments', author.id, c.id), false);
    assert.equal(isActive((await fresh(c.id))!), false);
    assert.equal(await edge('pin_has_comments', pin.id, c.id), false);
  });

  test('syncRepin lists a repin under its original again', async () => {
    const { original, repin: r } = await unlistedRepin();
    await oldIntent(shardOf(r.id), 'repin', [{ kind: 'syncRepin', original: `${original.id}`, pin: `${r.id}` }]);
    await repair();
    assert.equal(await edge('pin_repinned_as_pins', original.id, r.id), true);
    assert.equal(await count('pin_repinned_as_pins', original.id), 1);
    assert.equal(isActive((await fresh(r.id))!), true);
  });

  test('syncRepin of an original deleted meanwhile leaves the repin, unlisted (a link)', async () => {
    const { original, board: b, repin: r } = await unlistedRepin();
    await softDeletedBySql(original, 'pins');
    await oldIntent(shardOf(r.id), 'repin', [{ kind: 'syncRepin', original: `${original.id}`, pin: `${r.id}` }]);
    await repair();
    assert.equal(await edge('pin_repinned_as_pins', original.id, r.id), false);
    assert.equal(isActive((await fresh(r.id))!), true);
    assert.equal(await edge('board_has_pins', b.id, r.id), true);
  });
});
