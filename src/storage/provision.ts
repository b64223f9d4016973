import type { Topology } from '../core/topology.ts';
import { modShardDatabasePlan, shardDatabasePlan, type DatabasePlan } from './ddl.ts';
import { assertModShardCountRecorded, modShardCountMismatches, recordModShardCount } from './modShardCountRecord.ts';
import type { ShardRouter } from './shardRouter.ts';

export interface ProvisionOptions {
  readonly router: ShardRouter;
  readonly topology: Topology;
  /** Parallel DDL sessions per host. Default 4. */
  readonly concurrencyPerHost?: number;
  /** Called after each database is complete: (done, total). */
  readonly onProgress?: (done: number, total: number) => void;
  /** Only these shards (default: every shard in a range). */
  readonly shards?: readonly number[];
}

export interface ProvisionReport {
  readonly databases: number;
  readonly created: number;
  readonly alreadyComplete: number;
  readonly ms: number;
}

/**
 * Creates every shard and mod-shard database of the topology on the host that owns it, with all
 * its tables. Idempotent: databases that already have every table are skipped after one catalogue
 * query per host, so a second run over 4096 shards costs seconds. Each mod-shard database records
 * the map's mod-shard count; a map with another count than one already recorded is refused
 * (INVALID_TOPOLOGY) before anything is created: its claims are hashed over that count.
 */
export async function provision(opts: ProvisionOptions): Promise<ProvisionReport> {
  const started = Date.now();
  const { router, topology } = opts;
  const only = opts.shards ? new Set(opts.shards) : undefined;
  if (!only) await assertModShardCountRecorded(router, topology);
  const work = new Map<string, DatabasePlan[]>();
  for (const [host, shards] of topology.shardsByHost()) {
    const list = work.get(host) ?? [];
    for (const s of shards) if (!only || only.has(s)) list.push(shardDatabasePlan(s));
    work.set(host, list);
  }
  if (!only) {
    for (const [host, modShards] of topology.modShardsByHost()) {
      const list = work.get(host) ?? [];
      for (const m of modShards) list.push(modShardDatabasePlan(m));
      work.set(host, list);
    }
  }
  const total = [...work.values()].reduce((n, l) => n + l.length, 0);
  let done = 0;
  let created = 0;
  await Promise.all(
    [...work.entries()].map(async ([host, plans]) => {
      const complete = await completeDatabases(router, host);
      const todo = plans.filter((p) => complete.get(p.database) !== p.tables.size);
      done += plans.length - todo.length;
      opts.onProgress?.(done, total);
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < todo.length) {
          const plan = todo[next++]!;
          await router.query(host, [], `CREATE DATABASE IF NOT EXISTS ${plan.database}`, []);
          for (const ddl of plan.tables.values()) {
            await router.query(host, [], ddl.replace('CREATE TABLE IF NOT EXISTS ', `CREATE TABLE IF NOT EXISTS ${plan.database}.`), []);
          }
          created++;
          done++;
          opts.onProgress?.(done, total);
        }
      };
      await Promise.all(Array.from({ length: opts.concurrencyPerHost ?? 4 }, worker));
    }),
  );
  if (!only) {
    const { unrecorded } = await modShardCountMismatches(router, topology);
    await Promise.all([...unrecorded].map(([host, databases]) => recordModShardCount(router, host, databases, topology.doc.modShard.count)));
    // A provision with another count running meanwhile recorded first in some database: say so.
    await assertModShardCountRecorded(router, topology);
  }
  return { databases: total, created, alreadyComplete: total - created, ms: Date.now() - started };
}

/** Table count per shard database on a host, from the catalogue. */
async function completeDatabases(router: ShardRouter, host: string): Promise<Map<string, number>> {
  const rows = await router.query(
    host,
    [],
    `SELECT table_schema AS db, COUNT(*) AS n FROM information_schema.tables
     WHERE table_schema REGEXP '^(db|msdb)[0-9]{5}$' GROUP BY table_schema`,
    [],
  );
  return new Map(rows.map((r) => [String(r.db), Number(r.n)]));
}

/** Drops every shard and mod-shard database on the topology's hosts. For tests and `stack reset`. */
export async function dropAllShards(router: ShardRouter, topology: Topology): Promise<void> {
  await Promise.all(
    Object.keys(topology.doc.hosts).map(async (host) => {
      const rows = await router.query(host, [], `SELECT schema_name AS db FROM information_schema.schemata WHERE schema_name REGEXP '^(db|msdb)[0-9]{5}$'`, []);
      for (const r of rows) {
        const db = String(r.db);
        if (/^(db|msdb)[0-9]{5}$/.test(db)) await router.query(host, [], `DROP DATABASE IF EXISTS ${db}`, []);
      }
    }),
  );
}
