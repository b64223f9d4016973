/**
 * The shard databases of a map, as empty as a first provision leaves them, on a stack earlier test
 * files used: what freshEnv needs before every file. Dropping and provisioning every database again
 * is ~400 DDL statements a file (16 shards × 21 tables, 8 mod shards × 4) and took ~4 s; most files
 * write to a few dozen tables, so this empties only those and keeps the rest.
 *
 * A database is kept when it is on the host the map places it on, holds exactly the tables of its
 * plan, and carries the mark of the DDL it was made with (a database comment, set here after
 * provision created it). Anything else matching a shard database name is dropped: a database of a
 * map with other hosts or shard counts, one a test or the CLI created (no mark), one with a table
 * added (a grown model) or missing, one made by older DDL. Kept databases lose every row, and every
 * auto-increment restarts (TRUNCATE), so IDs begin again as after a drop. Then provision creates
 * what is missing and records the mod-shard count where it is not recorded.
 *
 *   await freshShards(admin.router, parseTopology(evenLayout({ hosts, shards: 16, modShards: 8 })))
 *   // → { kept: 24, emptiedTables: 37, dropped: 0, created: 0 }   (after a file of GraphQL writes)
 */
import { createHash } from 'node:crypto';
import type { Topology } from '../../src/core/topology.ts';
import { MOD_SHARD_COUNT_TABLE, modShardDatabasePlan, shardDatabasePlan, type DatabasePlan } from '../../src/storage/ddl.ts';
import { provision } from '../../src/storage/provision.ts';
import type { ShardRouter } from '../../src/storage/shardRouter.ts';

/** Shard and mod-shard database names, as provision names them: the only names put into SQL here. */
const SHARD_DATABASE = /^(db|msdb)[0-9]{5}$/;
const TABLE_NAME = /^[a-z0-9_]+$/;
/** Statements in flight per host (provision's default). */
const CONCURRENCY_PER_HOST = 4;

export interface FreshShardsReport {
  /** Databases kept (emptied where a test had written). */
  readonly kept: number;
  readonly emptiedTables: number;
  readonly dropped: number;
  readonly created: number;
}

/** The comment of a database made from `plan`'s DDL, e.g. `shardql-test ddl 3f2a…` (16 hex digits). */
export function ddlMark(plan: DatabasePlan): string {
  const hash = createHash('sha256');
  for (const [table, ddl] of [...plan.tables].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) hash.update(`${table}\n${ddl}\n`);
  return `shardql-test ddl ${hash.digest('hex').slice(0, 16)}`;
}

/** The databases `topology` places on each of its hosts, with their plans; hosts with none map to an empty map. */
function plansByHost(topology: Topology): Map<string, Map<string, DatabasePlan>> {
  const out = new Map<string, Map<string, DatabasePlan>>(Object.keys(topology.doc.hosts).map((h) => [h, new Map()]));
  const add = (host: string, plan: DatabasePlan): void => {
    const plans = out.get(host) ?? new Map<string, DatabasePlan>();
    plans.set(plan.database, plan);
    out.set(host, plans);
  };
  for (const [host, shards] of topology.shardsByHost()) for (const s of shards) add(host, shardDatabasePlan(s));
  for (const [host, mods] of topology.modShardsByHost()) for (const m of mods) add(host, modShardDatabasePlan(m));
  return out;
}

async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

interface HostReset {
  readonly kept: number;
  readonly emptiedTables: number;
  readonly dropped: number;
  /** Databases this host must have that it does not keep: provision creates them, then they get their mark. */
  readonly toMark: { readonly database: string; readonly mark: string }[];
}

/** Drops what `host` must not keep and empties the tables written in what it keeps. */
async function resetHost(router: ShardRouter, host: string, plans: Map<string, DatabasePlan>, modShardCount: number): Promise<HostReset> {
  const schemata = await router.query(
    host,
    [],
    `SELECT schema_name AS db, schema_comment AS mark FROM information_schema.schemata WHERE schema_name REGEXP '^(db|msdb)[0-9]{5}$'`,
    [],
  );
  const tableRows = await router.query(
    host,
    [],
    `SELECT table_schema AS db, table_name AS t, auto_increment AS ai FROM information_schema.tables
     WHERE table_schema REGEXP '^(db|msdb)[0-9]{5}$' AND table_type = 'BASE TABLE'`,
    [],
  );
  const tables = new Map<string, { name: string; ai: number | null }[]>();
  for (const r of tableRows) {
    const db = String(r.db);
    tables.set(db, [...(tables.get(db) ?? []), { name: String(r.t), ai: r.ai === null || r.ai === undefined ? null : Number(r.ai) }]);
  }
  const kept: string[] = [];
  const drop: string[] = [];
  for (const r of schemata) {
    const db = String(r.db);
    if (!SHARD_DATABASE.test(db)) continue;
    const plan = plans.get(db);
    const present = (tables.get(db) ?? []).map((t) => t.name);
    const same = plan !== undefined && String(r.mark ?? '') === ddlMark(plan) && present.length === plan.tables.size && present.every((t) => plan.tables.has(t));
    (same ? kept : drop).push(db);
  }
  // A table is written when it holds a row or its auto-increment moved (rows inserted then deleted
  // or rolled back, or a test's ALTER): one UNION of one-row reads finds the first kind. The
  // mod-shard count is kept when it records this map's count (provision records it otherwise).
  const written = new Set<string>();
  const probes: string[] = [];
  for (const db of kept) {
    for (const t of tables.get(db) ?? []) {
      if (!TABLE_NAME.test(t.name)) throw new Error(`unexpected table name ${JSON.stringify(t.name)} in ${db}`);
      const key = `${db}.${t.name}`;
      if (t.ai !== null && t.ai > 1) written.add(key);
      else if (t.name === MOD_SHARD_COUNT_TABLE) probes.push(`(SELECT '${key}' AS t FROM ${key} WHERE count <> ${Math.trunc(modShardCount)} LIMIT 1)`);
      else probes.push(`(SELECT '${key}' AS t FROM ${key} LIMIT 1)`);
    }
  }
  if (probes.length > 0) for (const r of await router.query(host, [], probes.join('\nUNION ALL\n'), [])) written.add(String(r.t));
  const statements = [...drop.map((db) => `DROP DATABASE IF EXISTS ${db}`), ...[...written].sort().map((t) => `TRUNCATE TABLE ${t}`)];
  await eachLimited(statements, CONCURRENCY_PER_HOST, async (sql) => {
    await router.query(host, [], sql, []);
  });
  const keptSet = new Set(kept);
  const toMark = [...plans.values()].filter((p) => !keptSet.has(p.database)).map((p) => ({ database: p.database, mark: ddlMark(p) }));
  return { kept: kept.length, emptiedTables: written.size, dropped: drop.length, toMark };
}

/**
 * Leaves on every host of `topology` exactly its shard and mod-shard databases, empty, as a first
 * provision would (the mod-shard count recorded); `router` must use an account that may run DDL.
 */
export async function freshShards(router: ShardRouter, topology: Topology): Promise<FreshShardsReport> {
  const modShardCount = topology.doc.modShard.count;
  const hosts = await Promise.all([...plansByHost(topology)].map(async ([host, plans]) => ({ host, ...(await resetHost(router, host, plans, modShardCount)) })));
  const report = await provision({ router, topology });
  await Promise.all(
    hosts.map(({ host, toMark }) =>
      eachLimited(toMark, CONCURRENCY_PER_HOST, async ({ database, mark }) => {
        // The mark is hex from ddlMark; the name comes from the plan.
        await router.query(host, [], `ALTER DATABASE ${database} COMMENT '${mark}'`, []);
      }),
    ),
  );
  return {
    kept: hosts.reduce((n, h) => n + h.kept, 0),
    emptiedTables: hosts.reduce((n, h) => n + h.emptiedTables, 0),
    dropped: hosts.reduce((n, h) => n + h.dropped, 0),
    created: report.created,
  };
}
