import { servedModel } from '../core/model/served.ts';
import type { ModelData } from '../core/model/model.ts';
import { IMPORT_CHUNK_WIDTH, INTENT_KIND_WIDTH, LOOKUP_NAMESPACE_WIDTH } from '../core/columnWidths.ts';
import { modShardDatabase, shardDatabase } from '../core/topology.ts';

/**
 * The tables of every shard database. Pure: builds SQL text from constants and checked numbers only.
 *
 * Object rows keep their fields in a JSON blob (new fields need no ALTER; defaults apply on read).
 * Times are epoch milliseconds in BIGINT, so no session time zone can shift them.
 */
export function objectTableDdl(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
  local_id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  data JSON NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
) ENGINE=InnoDB`;
}

/**
 * A mapping table: one direction of a relation. The primary key makes adding an edge idempotent;
 * `by_sequence` serves keyset pages in time order, `by_position` the owner's order where there is one.
 */
export function mappingTableDdl(table: string, ordered: boolean): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
  from_id BIGINT UNSIGNED NOT NULL,
  to_id BIGINT UNSIGNED NOT NULL,
  sequence BIGINT NOT NULL,
  position BIGINT NULL,
  PRIMARY KEY (from_id, to_id),
  KEY by_sequence (from_id, sequence, to_id)${ordered ? ',\n  KEY by_position (from_id, position, to_id)' : ''}
) ENGINE=InnoDB`;
}

/** Counts kept beside the rows they count, changed in the same local transaction. */
export const COUNTS_DDL = `CREATE TABLE IF NOT EXISTS counts (
  id BIGINT UNSIGNED NOT NULL,
  kind VARCHAR(64) NOT NULL,
  n BIGINT NOT NULL,
  PRIMARY KEY (id, kind)
) ENGINE=InnoDB`;

/**
 * The intent log of multi-shard writes: the first local transaction of such a write records the
 * steps that remain (JSON), in the same commit as its own changes; the row is deleted when every
 * step is done. A row left behind is a write interrupted midway, which the repair pass completes.
 * `kind` names the write for logs, fitted to its width (core/columnWidths.ts).
 */
export const INTENTS_DDL = `CREATE TABLE IF NOT EXISTS intents (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  kind VARCHAR(${INTENT_KIND_WIDTH}) NOT NULL,
  steps JSON NOT NULL,
  attempts INT NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  KEY by_age (created_at)
) ENGINE=InnoDB`;

/**
 * Idempotency keys of mutations, on the shard of the write's first step: written in that step's
 * transaction with the result, so a retry with the same key finds the first result.
 */
export const IDEMPOTENCY_DDL = `CREATE TABLE IF NOT EXISTS idempotency (
  scope VARCHAR(32) NOT NULL,
  idem_key VARCHAR(200) NOT NULL,
  fingerprint CHAR(64) NOT NULL,
  result JSON NOT NULL,
  intent_id BIGINT UNSIGNED NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (scope, idem_key),
  KEY by_age (created_at)
) ENGINE=InnoDB`;

/**
 * Per-user event sequences (the seeds' wide-column user sequences): row key `user_id`, column
 * `kind`, cells timestamped `ts` (ms), newest first. Append-only: a cell is never updated; the
 * primary key makes appending the same event again (a retried write) a no-op. `event_id` is the
 * happening's ID (core/events.ts), the same in every sequence it is in; ties on `ts` order by it.
 * `by_time` reads a user's sequence across kinds in time order; `by_expiry` serves the TTL sweep.
 */
export const EVENTS_DDL = `CREATE TABLE IF NOT EXISTS events (
  user_id BIGINT UNSIGNED NOT NULL,
  kind VARCHAR(32) NOT NULL,
  ts BIGINT NOT NULL,
  event_id BIGINT UNSIGNED NOT NULL,
  actor_id BIGINT UNSIGNED NOT NULL,
  object_id BIGINT UNSIGNED NOT NULL,
  detail_id BIGINT UNSIGNED NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (user_id, kind, ts, event_id),
  KEY by_time (user_id, ts, event_id),
  KEY by_expiry (kind, ts)
) ENGINE=InnoDB`;

/** Mod-shard lookups: a non-ID key (username, email) → an object ID; the primary key makes it unique. */
export const LOOKUPS_DDL = `CREATE TABLE IF NOT EXISTS lookups (
  namespace VARCHAR(${LOOKUP_NAMESPACE_WIDTH}) NOT NULL,
  lookup_key VARCHAR(255) NOT NULL,
  id BIGINT UNSIGNED NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (namespace, lookup_key)
) ENGINE=InnoDB`;

/**
 * The ID map of imported objects (`shardql import`), on the shard of each new object, written in
 * the same transaction as the object: a retried or re-run import finds what it already made here,
 * so it never makes an object twice. The mod shard indexes it (lookup namespace `import:<type>`).
 */
export const IMPORT_IDS_DDL = `CREATE TABLE IF NOT EXISTS import_ids (
  source VARCHAR(64) NOT NULL,
  type SMALLINT UNSIGNED NOT NULL,
  old_id BIGINT UNSIGNED NOT NULL,
  new_id BIGINT UNSIGNED NOT NULL,
  PRIMARY KEY (source, type, old_id)
) ENGINE=InnoDB`;

/**
 * The import ledger, in the mod shard of each source label: one row per pass (its plan, the source's
 * clock when it began: the next delta pass's high-water mark) and one per finished chunk.
 */
export const IMPORT_RUNS_DDL = `CREATE TABLE IF NOT EXISTS import_runs (
  source VARCHAR(64) NOT NULL,
  run INT UNSIGNED NOT NULL,
  since BIGINT NULL,
  source_clock BIGINT NOT NULL,
  plan LONGTEXT NOT NULL,
  started_at BIGINT NOT NULL,
  finished_at BIGINT NULL,
  PRIMARY KEY (source, run)
) ENGINE=InnoDB`;

export const IMPORT_CHUNKS_DDL = `CREATE TABLE IF NOT EXISTS import_chunks (
  source VARCHAR(64) NOT NULL,
  run INT UNSIGNED NOT NULL,
  chunk VARCHAR(${IMPORT_CHUNK_WIDTH}) NOT NULL,
  rows_read INT NOT NULL,
  rows_written INT NOT NULL,
  rejected INT NOT NULL,
  notes TEXT NOT NULL,
  worker VARCHAR(128) NOT NULL,
  started_at BIGINT NOT NULL,
  finished_at BIGINT NOT NULL,
  PRIMARY KEY (source, run, chunk)
) ENGINE=InnoDB`;

/**
/**
 * One row: the mod-shard count the database was provisioned for. Its claims are hashed over that
 * count (md5(key) mod count), so provision and start-up refuse a map with another one.
 */
export const MOD_SHARD_COUNT_TABLE = 'mod_shard_count';
export const MOD_SHARD_COUNT_DDL = `CREATE TABLE IF NOT EXISTS mod_shard_count (
  id TINYINT UNSIGNED NOT NULL PRIMARY KEY,
  count INT UNSIGNED NOT NULL,
  recorded_at BIGINT NOT NULL
) ENGINE=InnoDB`;

/**
 * The tables a model gives every shard: an object table per type, a mapping table per relation
 * (each direction its own), the owner-ordered ones with their `by_position` key.
 */
export function modelTables(model: Pick<ModelData, 'objects' | 'relations'>): Map<string, string> {
  const out = new Map<string, string>();
  for (const o of model.objects) out.set(o.table, objectTableDdl(o.table));
  for (const r of model.relations) out.set(r.table, mappingTableDdl(r.table, r.order === 'OWNER'));
  return out;
}

/** Every table a shard database holds, by name: the model's (this deployment's unless given), then shardql's own. */
export function shardTables(model: Pick<ModelData, 'objects' | 'relations'> = servedModel()): Map<string, string> {
  const out = modelTables(model);
  out.set('counts', COUNTS_DDL);
  out.set('intents', INTENTS_DDL);
  out.set('idempotency', IDEMPOTENCY_DDL);
  out.set('events', EVENTS_DDL);
  out.set('import_ids', IMPORT_IDS_DDL);
  return out;
}

export function modShardTables(): Map<string, string> {
  return new Map([
    ['lookups', LOOKUPS_DDL],
    ['import_runs', IMPORT_RUNS_DDL],
    ['import_chunks', IMPORT_CHUNKS_DDL],
    [MOD_SHARD_COUNT_TABLE, MOD_SHARD_COUNT_DDL],
  ]);
}

export interface DatabasePlan {
  readonly database: string;
  readonly tables: Map<string, string>;
}

export function shardDatabasePlan(shard: number): DatabasePlan {
  return { database: shardDatabase(shard), tables: shardTables() };
}

export function modShardDatabasePlan(modShard: number): DatabasePlan {
  return { database: modShardDatabase(modShard), tables: modShardTables() };
}
