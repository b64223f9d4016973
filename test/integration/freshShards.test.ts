/**
 * freshEnv's databases are as fresh as a drop and a first provision would leave them, though it
 * keeps the databases earlier files left (test/helpers/freshShards.ts): whatever a file wrote, moved,
 * grew or created, the next file finds exactly the map's databases, every table empty, every
 * auto-increment at its start and the mod-shard count recorded.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { modShardDatabase, shardDatabase, type Topology } from '../../src/core/topology.ts';
import { modShardDatabasePlan, shardDatabasePlan } from '../../src/storage/ddl.ts';
import { createStorage, type Storage } from '../../src/storage/index.ts';
import type { ShardRouter } from '../../src/storage/shardRouter.ts';
import { adminCredentials, freshEnv, type TestEnv } from '../helpers/env.ts';
import { freshShards } from '../helpers/freshShards.ts';

let env: TestEnv;
let admin: Storage;

before(async () => {
  env = await freshEnv({ shards: 16, modShards: 8 });
  admin = createStorage({ topology: () => env.topology, credentials: adminCredentials(env.stack), events: null });
});
after(async () => {
  await admin?.close();
  await env?.close();
});

const hostOf = (shard: number): string => env.topology.hostOfShard(shard)!;
const otherHost = (host: string): string => Object.keys(env.doc.hosts).find((h) => h !== host)!;

/**
 * What a host holds that is not fresh: each problem as a line, none when every database of the map
 * is there with exactly its plan's tables, empty, auto-increments at 1, the count recorded, and no
 * other shard database is.
 */
async function staleness(router: ShardRouter, topology: Topology): Promise<string[]> {
  const problems: string[] = [];
  const wanted = new Map<string, Map<string, ReturnType<typeof shardDatabasePlan>>>();
  for (const [host, shards] of topology.shardsByHost()) wanted.set(host, new Map(shards.map((s) => [shardDatabase(s), shardDatabasePlan(s)])));
  for (const [host, mods] of topology.modShardsByHost()) for (const m of mods) wanted.get(host)!.set(modShardDatabase(m), modShardDatabasePlan(m));
  for (const host of Object.keys(topology.doc.hosts)) {
    const plans = wanted.get(host) ?? new Map();
    const rows = await router.query(
      host,
      [],
      `SELECT table_schema AS db, table_name AS t, auto_increment AS ai FROM information_schema.tables WHERE table_schema REGEXP '^(db|msdb)[0-9]{5}$'`,
      [],
    );
    const dbs = await router.query(host, [], `SELECT schema_name AS db FROM information_schema.schemata WHERE schema_name REGEXP '^(db|msdb)[0-9]{5}$'`, []);
    const present = new Set(dbs.map((r) => String(r.db)));
    for (const db of present) if (!plans.has(db)) problems.push(`${host}: ${db} is not in the map here`);
    for (const [db, plan] of plans) {
      if (!present.has(db)) problems.push(`${host}: ${db} missing`);
      const tables = rows.filter((r) => String(r.db) === db);
      const names = tables.map((r) => String(r.t)).sort();
      if (names.join() !== [...plan.tables.keys()].sort().join()) problems.push(`${host}: ${db} has tables ${names.join()}`);
      for (const r of tables) if (r.ai !== null && Number(r.ai) !== 1) problems.push(`${host}: ${db}.${String(r.t)} auto-increment ${String(r.ai)}`);
      const counted = tables.map((r) => `SELECT '${db}.${String(r.t)}' AS t, COUNT(*) AS n FROM ${db}.${String(r.t)}`);
      if (counted.length === 0) continue;
      for (const r of await router.query(host, [], counted.join(' UNION ALL '), [])) {
        const n = Number(r.n);
        if (String(r.t).endsWith('.mod_shard_count')) {
          if (n !== 1) problems.push(`${host}: ${String(r.t)} has ${n} rows`);
        } else if (n !== 0) problems.push(`${host}: ${String(r.t)} has ${n} rows`);
      }
    }
  }
  const counts = await Promise.all(
    [...topology.modShardsByHost()].map(async ([host, mods]) =>
      router.query(host, [], mods.map((m) => `SELECT '${modShardDatabase(m)}' AS db, count FROM ${modShardDatabase(m)}.mod_shard_count`).join(' UNION ALL '), []),
    ),
  );
  for (const r of counts.flat()) if (Number(r.count) !== topology.doc.modShard.count) problems.push(`${String(r.db)} records ${String(r.count)} mod shards`);
  return problems.sort();
}

describe('Fresh shard databases on a used stack', () => {
  test('freshEnv leaves the map fresh, and a second pass over fresh databases changes nothing', async () => {
    assert.deepEqual(await staleness(admin.router, env.topology), []);
    assert.deepEqual(await freshShards(admin.router, env.topology), { kept: 24, emptiedTables: 0, dropped: 0, created: 0 });
  });

  test('rows on every shard, a claim, an auto-increment moved without rows: emptied, and IDs begin again', async () => {
    const first = await env.storage.objects.create('pin', 3, { title: 'first' });
    for (let s = 0; s < 16; s++) await env.storage.objects.create('board', s, { name: `board ${s}` });
    assert.equal(await env.storage.lookups.claim('username', 'fresh-shards', first.id), true);
    await admin.router.query(hostOf(5), [5], `ALTER TABLE ${shardDatabase(5)}.comments AUTO_INCREMENT = 1000`, []);
    assert.notDeepEqual(await staleness(admin.router, env.topology), []);

    const report = await freshShards(admin.router, env.topology);
    // boards on 16 shards, pins on shard 3, comments on shard 5, lookups in one mod shard.
    assert.deepEqual(report, { kept: 24, emptiedTables: 16 + 1 + 1 + 1, dropped: 0, created: 0 });
    assert.deepEqual(await staleness(admin.router, env.topology), []);
    const again = await env.storage.objects.create('pin', 3, { title: 'again' });
    assert.equal(again.id, first.id, 'the first pin on shard 3 has the first ID again');
  });

  test('a database on the wrong host, unmarked, grown, of another map, or recording another count: dropped or repaired', async () => {
    await freshShards(admin.router, env.topology);
    const h3 = hostOf(3);
    const h12 = hostOf(12);
    assert.notEqual(h3, h12);
    // A copy of shard 12 where the map does not place it (a move's leftover), shard 20 of a bigger map.
    await admin.router.query(h3, [], `CREATE DATABASE ${shardDatabase(12)}`, []);
    await admin.router.query(otherHost(h3), [], `CREATE DATABASE ${shardDatabase(20)}`, []);
    // Shard 3 without the mark (made by the CLI or a test), shard 4 grown by a model with one more table.
    await admin.router.query(h3, [], `ALTER DATABASE ${shardDatabase(3)} COMMENT ''`, []);
    await admin.router.query(hostOf(4), [], `CREATE TABLE ${shardDatabase(4)}.collections (local_id BIGINT PRIMARY KEY)`, []);
    // Mod shard 0 records 16 mod shards.
    const m0 = env.topology.hostOfModShard(0)!;
    await admin.router.query(m0, [], `UPDATE ${modShardDatabase(0)}.mod_shard_count SET count = 16`, []);
    assert.deepEqual(await staleness(admin.router, env.topology), [
      'msdb00000 records 16 mod shards',
      `${hostOf(4)}: ${shardDatabase(4)} has tables ${[...shardDatabasePlan(4).tables.keys(), 'collections'].sort().join()}`,
      `${h3}: ${shardDatabase(12)} is not in the map here`,
      `${otherHost(h3)}: ${shardDatabase(20)} is not in the map here`,
    ]);

    const report = await freshShards(admin.router, env.topology);
    assert.deepEqual(report, { kept: 22, emptiedTables: 1, dropped: 4, created: 2 });
    assert.deepEqual(await staleness(admin.router, env.topology), []);
    // Marked again: the next pass keeps them.
    assert.deepEqual(await freshShards(admin.router, env.topology), { kept: 24, emptiedTables: 0, dropped: 0, created: 0 });
  });
});
