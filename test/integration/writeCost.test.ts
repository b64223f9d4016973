/**
 * What a cross-shard write costs, exactly. Transaction batches: one round trip, all or nothing,
 * every statement guarded.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { ProductWrites } from '../../src/services/writes.ts';
import type { FaultHook, FaultPoint } from '../../src/services/writeExecutor.ts';
import { allShards, reconcile, repairIntents } from '../../src/services/repair.ts';
import { formatId, shardOf } from '../../src/core/ids.ts';
import { shardDatabase } from '../../src/core/topology.ts';
import { SqlStats } from '../../src/storage/sqlStats.ts';
import { SqlIdentifierError } from '../../src/storage/sqlIdentifiers.ts';
import type { StoredObject } from '../../src/storage/objectStore.ts';

let env: TestEnv;
let writes: ProductWrites;
/** The fault hook of `writes`, swapped per test; none by default. */
let hook: FaultHook | undefined;

before(async () => {
  env = await freshEnv({ shards: 16 });
  writes = new ProductWrites({ storage: env.storage, topology: () => env.topology, faults: (point, kind) => hook?.(point, kind) });
});
after(async () => {
  await env?.close();
});

let made = 0;
/** A new user on `host`. */
async function userOn(name: string, host: string): Promise<StoredObject> {
  for (;;) {
    const u = await writes.createUser({ username: `${name}${made++}` });
    if (env.storage.router.hostOfId(u.id) === host) return u;
  }
}

function hosts(): [string, string] {
  const names = [...env.topology.shardsByHost().keys()];
  assert.equal(names.length, 2);
  return [names[0]!, names[1]!];
}

/** Commits that reached the binlog of both primaries so far: each one a durable, fsynced commit. */
async function binlogCommits(): Promise<number> {
  let n = 0;
  for (const host of hosts()) n += Number((await env.storage.router.query(host, [], "SHOW GLOBAL STATUS LIKE 'Binlog_commits'", []))[0]!.Value);
  return n;
}

/** SQL round trips and commits of one call. */
async function cost(fn: (ctx: { stats: SqlStats }) => Promise<unknown>): Promise<{ roundTrips: number; commits: number }> {
  const stats = new SqlStats();
  const before = await binlogCommits();
  await fn({ stats });
  return { roundTrips: stats.roundTrips, commits: (await binlogCommits()) - before };
}

async function edge(table: 'user_likes_pins' | 'pin_liked_by_users', from: bigint, to: bigint): Promise<boolean> {
  return (await env.storage.mappings.existing(table, [{ from, to }])).size === 1;
}

async function consistent(): Promise<void> {
  const shards = allShards(env.topology);
  assert.deepEqual((await reconcile(env.storage, shards)).fixes, [], 'both sides of every relation agree, counts = rows');
  assert.equal((await env.storage.intents.pending(shards, 0, 1000)).length, 0, 'no intent left');
}

describe('Write cost: transaction batches', () => {
  const db = (s: number): string => shardDatabase(s);
  const count = async (shard: number, id: number, kind: string): Promise<number | undefined> => {
    const rows = await env.storage.router.query(env.storage.router.hostOfShard(shard), [shard], `SELECT n FROM ${db(shard)}.counts WHERE id = ? AND kind = ?`, [id, kind]);
    return rows[0] === undefined ? undefined : Number(rows[0].n);
  };
  const insert = (shard: number, id: number, kind: string) => ({ sql: `INSERT INTO ${db(shard)}.counts (id, kind, n) VALUES (?, ?, 1)`, values: [id, kind] });

  test('BEGIN, statements and COMMIT travel as ONE round trip; results come back per statement', async () => {
    const stats = new SqlStats();
    const results = await env.storage.router.transaction(
      2,
      (tx) => tx.commitWith([insert(2, 1, 'a'), insert(2, 2, 'a'), { sql: `SELECT n FROM ${db(2)}.counts WHERE id = ? AND kind = ?`, values: [2, 'a'] }]),
      { stats },
    );
    assert.equal(stats.roundTrips, 1);
    assert.equal(results.length, 3, 'BEGIN and COMMIT are not among the results');
    assert.deepEqual(results[2], [{ n: '1' }]);
    assert.equal(await count(2, 1, 'a'), 1);
    assert.equal(await count(2, 2, 'a'), 1);
  });

  test('a statement failing midway: the rest never runs, the transaction rolls back whole, the error is the same as today', async () => {
    const stats = new SqlStats();
    await assert.rejects(
      env.storage.router.transaction(2, (tx) => tx.commitWith([insert(2, 10, 'b'), insert(2, 10, 'b'), insert(2, 11, 'b')]), { stats }),
      (e: unknown) => (e as { code?: string }).code === 'ER_DUP_ENTRY',
    );
    assert.equal(stats.roundTrips, 1, 'one round trip was sent');
    assert.equal(await count(2, 10, 'b'), undefined, 'the statement before the failing one was rolled back');
    assert.equal(await count(2, 11, 'b'), undefined, 'the statement after it never ran');
    // The connection went back to the pool clean (the pool hands it out next): the transactions
    // after it commit only their own rows. Had it kept the failed transaction open, the next BEGIN
    // would have committed the first row.
    for (let i = 0; i < 3; i++) await env.storage.router.transaction(2, (tx) => tx.commitWith([insert(2, 100 + i, 'b')]));
    assert.equal(await count(2, 102, 'b'), 1);
    assert.equal(await count(2, 10, 'b'), undefined);
  });

  test('a failed batch carrying COMMIT rolls back even when the caller swallows its error', async () => {
    await assert.rejects(
      env.storage.router.transaction(2, async (tx) => {
        await tx.commitWith([insert(2, 40, 'f'), insert(2, 40, 'f')]).catch(() => undefined);
        return 'swallowed';
      }),
      (e: unknown) => (e as { code?: string }).code === 'ER_DUP_ENTRY',
    );
    await env.storage.router.transaction(2, (tx) => tx.commitWith([insert(2, 41, 'f')]));
    assert.equal(await count(2, 40, 'f'), undefined);
  });

  test('a deadlock inside a batch is retried: the victim runs again, both commit', async () => {
    await env.storage.router.transaction(3, (tx) => tx.commitWith([insert(3, 1, 'd'), insert(3, 2, 'd')]));
    const bump = (id: number) => ({ sql: `UPDATE ${db(3)}.counts SET n = n + 1 WHERE id = ? AND kind = 'd'`, values: [id] });
    let arrived = 0;
    let release!: () => void;
    const bothHoldOne = new Promise<void>((r) => (release = r));
    let runs = 0;
    const crossed = (first: number, second: number) =>
      env.storage.router.transaction(3, async (tx) => {
        runs++;
        await tx.batch([bump(first)]);
        if (++arrived === 2) release();
        await bothHoldOne;
        await tx.commitWith([bump(second)]);
      });
    await Promise.all([crossed(1, 2), crossed(2, 1)]);
    assert.equal(runs, 3, 'one of the two was a deadlock victim and ran again');
    assert.equal(await count(3, 1, 'd'), 3);
    assert.equal(await count(3, 2, 'd'), 3);
  });

  test('every statement of a batch passes the SQL identifier guard; none is sent if one fails', async () => {
    const stats = new SqlStats();
    await assert.rejects(
      env.storage.router.transaction(2, (tx) => tx.commitWith([insert(2, 20, 'c'), { sql: 'SELECT user FROM mysql.user' }]), { stats }),
      SqlIdentifierError,
    );
    await assert.rejects(
      env.storage.router.transaction(2, (tx) => tx.commitWith([insert(2, 20, 'c'), { sql: 'SELECT local_id FROM db04000.pins' }]), { stats }),
      SqlIdentifierError,
    );
    assert.equal(stats.roundTrips, 0);
    assert.equal(await count(2, 20, 'c'), undefined);
  });

  test('a batch statement must be one statement, and values stay values', async () => {
    await assert.rejects(
      env.storage.router.transaction(2, (tx) => tx.batch([{ sql: `DELETE FROM ${db(2)}.counts; DELETE FROM ${db(2)}.intents` }, insert(2, 30, 'e')])),
      /expected one statement/,
    );
    const evil = `x'); DELETE FROM ${db(2)}.counts; -- ;`;
    await env.storage.router.transaction(2, (tx) => tx.commitWith([insert(2, 31, evil), insert(2, 32, 'e')]));
    assert.equal(await count(2, 31, evil), 1, 'the value was stored as it was sent');
    assert.equal(await count(2, 1, 'a'), 1, 'nothing else ran');
  });
});
