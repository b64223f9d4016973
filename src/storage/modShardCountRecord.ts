import { ShardqlError } from '../core/errors.ts';
import { recordedCountProblem, type RecordedCountMismatch } from '../core/modShardCount.ts';
import { modShardDatabase, type Topology } from '../core/topology.ts';
import { MOD_SHARD_COUNT_TABLE } from './ddl.ts';
import type { ShardRouter } from './shardRouter.ts';

/** Databases read per query: a UNION of one-row reads. */
const READ_CHUNK = 500;

/** The map's mod-shard databases on each host, e.g. mysql001 → [msdb00000, msdb00001, …]. */
function modShardDatabasesByHost(topology: Topology): Map<string, string[]> {
  return new Map([...topology.modShardsByHost()].map(([host, mods]) => [host, mods.map(modShardDatabase)]));
}

/**
 * The count each of `databases` on `host` records, for those that record one (a database not yet
 * provisioned, or provisioned before counts were recorded, is absent). One catalogue query, then
 * one query per READ_CHUNK databases.
 */
export async function recordedModShardCounts(router: ShardRouter, host: string, databases: readonly string[]): Promise<Map<string, number>> {
  const wanted = new Set(databases);
  const withTable = await router.query(
    host,
    [],
    `SELECT table_schema AS db FROM information_schema.tables WHERE table_name = ? AND table_schema REGEXP '^msdb[0-9]{5}$'`,
    [MOD_SHARD_COUNT_TABLE],
  );
  // Names come from the catalogue and match the pattern; they are checked again before entering SQL.
  const present = withTable.map((r) => String(r.db)).filter((db) => wanted.has(db) && /^msdb[0-9]{5}$/.test(db));
  const out = new Map<string, number>();
  for (let i = 0; i < present.length; i += READ_CHUNK) {
    const chunk = present.slice(i, i + READ_CHUNK);
    const sql = chunk.map((db) => `SELECT '${db}' AS db, count FROM ${db}.${MOD_SHARD_COUNT_TABLE} WHERE id = 1`).join('\nUNION ALL\n');
    for (const r of await router.query(host, [], sql, [])) out.set(String(r.db), Number(r.count));
  }
  return out;
}

export interface CountCheckOptions {
  /**
   * A host that cannot be read is passed to this and skipped (a gateway starts while a host is down
   * and serves the others); without it the error is thrown.
   */
  readonly onUnreadable?: (host: string, err: unknown) => void;
}

/** The map's mod-shard databases recording another count than the map's, and those recording none. */
export async function modShardCountMismatches(
  router: ShardRouter,
  topology: Topology,
  opts: CountCheckOptions = {},
): Promise<{ mismatches: RecordedCountMismatch[]; unrecorded: Map<string, string[]> }> {
  const count = topology.doc.modShard.count;
  const mismatches: RecordedCountMismatch[] = [];
  const unrecorded = new Map<string, string[]>();
  await Promise.all(
    [...modShardDatabasesByHost(topology)].map(async ([host, databases]) => {
      let recorded: Map<string, number>;
      try {
        recorded = await recordedModShardCounts(router, host, databases);
      } catch (err) {
        if (!opts.onUnreadable) throw err;
        opts.onUnreadable(host, err);
        return;
      }
      for (const db of databases) {
        const n = recorded.get(db);
        if (n === undefined) unrecorded.set(host, [...(unrecorded.get(host) ?? []), db]);
        else if (n !== count) mismatches.push({ database: db, host, recorded: n });
      }
    }),
  );
  mismatches.sort((a, b) => a.database.localeCompare(b.database));
  return { mismatches, unrecorded };
}

/**
 * Refuses (INVALID_TOPOLOGY, details { database, host, recorded, mapCount }) a map whose mod-shard count differs from the one its mod-shard
 * databases recorded when they were provisioned, naming the first such database. Read once at a
 * gateway's or worker's start and by provision; databases recording nothing pass.
 */
export async function assertModShardCountRecorded(router: ShardRouter, topology: Topology, opts: CountCheckOptions = {}): Promise<void> {
  const { mismatches } = await modShardCountMismatches(router, topology, opts);
  const first = mismatches[0];
  if (first === undefined) return;
  const count = topology.doc.modShard.count;
  throw new ShardqlError('INVALID_TOPOLOGY', recordedCountProblem(first, count, mismatches.length - 1), { ...first, mapCount: count });
}

/**
 * The check a gateway and a worker make once at start: claims are hashed over the mod-shard count, so
 * a map whose count the mod-shard databases do not record is refused; a host that does not answer is
 * skipped and logged (`mod_shard_count_unchecked`).
 */
export function checkModShardCountAtStart(
  router: ShardRouter,
  topology: Topology,
  log: (event: string, fields: Record<string, unknown>, level: 'warn') => void,
): Promise<void> {
  return assertModShardCountRecorded(router, topology, {
    onUnreadable: (host, err) => log('mod_shard_count_unchecked', { host, error: err instanceof Error ? err.message : String(err) }, 'warn'),
  });
}

/** Records the map's count in mod-shard databases that record none yet (they must have the table). */
export async function recordModShardCount(router: ShardRouter, host: string, databases: readonly string[], count: number, now = Date.now()): Promise<void> {
  for (const db of databases) {
    if (!/^msdb[0-9]{5}$/.test(db)) throw new RangeError(`not a mod shard database: ${db}`);
    await router.query(host, [], `INSERT IGNORE INTO ${db}.${MOD_SHARD_COUNT_TABLE} (id, count, recorded_at) VALUES (1, ?, ?)`, [count, now]);
  }
}
