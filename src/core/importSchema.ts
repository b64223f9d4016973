/**
 * What `shardql import` expects of an unsharded source database, and how a source row becomes the
 * blob the product stores. Pure: no I/O, so the mapping, the blobs and placement are unit-tested.
 *
 * The default source schema is derived from the served model (core/importSpec.ts; for Pinterest
 * the benchmark's flat database, src/bulk/flat.ts, plus comments and an optional email column); a
 * small JSON config file renames tables and columns for databases that differ (docs/operations.md
 * "Importing an unsharded database").
 */
import { createHash } from 'node:crypto';
import { fitToColumn, IMPORT_CHUNK_WIDTH, LOOKUP_NAMESPACE_WIDTH } from './columnWidths.ts';
import type { ImportSpec, TableRoles } from './importSpec.ts';
import { normalizeLookupKey } from './modShard.ts';
import { REF_FIELDS } from './objectRefs.ts';

/** One source table's columns: the table, a column per role (null: none in this source), blob fields mapped to columns. */
export interface SourceColumns {
  readonly table: string;
  /**
   * Role → column. Objects: `id`, each reference (`pinner`), each unique field (`username`), the
   * product's credentials (`email`), `data` (a JSON column whose fields go into the blob), `createdAt`,
   * `updatedAt` (null: rows never change). Relations: `from` (the side the table is read in order
   * of: the liker), `to`, `createdAt`.
   */
  readonly roles: Readonly<Record<string, string | null>>;
  /** Blob field → column, on top of (and overriding) `data`; relations: none. */
  readonly fields: Readonly<Record<string, string>>;
}

export interface SourceSchema {
  /** By the table's name in the config (ImportSpec `alias`: `pins`, `likes`); null: the source has no such table. */
  readonly tables: Readonly<Record<string, SourceColumns | null>>;
  /** Numeric time columns count milliseconds (`ms`, default) or seconds (`s`); DATETIME and TIMESTAMP are read as UTC. */
  readonly timeUnit: 'ms' | 's';
}

/** The columns of a table the schema has (an object's, a relation's). */
export function columnsOf(schema: SourceSchema, alias: string): SourceColumns | null {
  return schema.tables[alias] ?? null;
}

/** A role's column in a table the schema has, or null. */
export function roleOf(cols: SourceColumns, role: string): string | null {
  return cols.roles[role] ?? null;
}

/**
 * The default schema: every table and column as the spec derives them (core/importSpec.ts; for
 * Pinterest the benchmark's flat database and `comments`). Columns the spec marks optional are used
 * only when the source has them.
 */
export function defaultSchema(spec: ImportSpec): SourceSchema {
  const tables: Record<string, SourceColumns> = {};
  for (const [alias, r] of spec.roles) tables[alias] = { table: spec.defaultTables.get(alias)!, roles: { ...r.defaults }, fields: {} };
  return { tables, timeUnit: 'ms' };
}

export class ImportConfigError extends Error {
  override readonly name = 'ImportConfigError';
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_$]{0,63}$/;

export interface ParsedConfig {
  readonly spec: ImportSpec;
  readonly schema: SourceSchema;
  /** Table.role pairs the config named explicitly: those must exist in the source. */
  readonly explicit: ReadonlySet<string>;
}

/**
 * The config file's JSON over the defaults. Every name must be a plain SQL identifier; unknown keys
 * are refused (a typo must not silently fall back to a default).
 *
 *   { "tables": { "pins": { "table": "pin", "pinner": "user_id", "via": "repinned_from",
 *                           "fields": { "title": "title", "imageUrl": "image_url" } } },
 *     "timeUnit": "s" }
 */
export function parseImportConfig(json: unknown, spec: ImportSpec): ParsedConfig {
  const explicit = new Set<string>();
  const defaults = defaultSchema(spec);
  if (json === undefined || json === null) return { spec, schema: defaults, explicit };
  if (typeof json !== 'object' || Array.isArray(json)) throw new ImportConfigError(`expected a JSON object, got ${JSON.stringify(json)}`);
  const top = json as Record<string, unknown>;
  for (const k of Object.keys(top)) if (k !== 'tables' && k !== 'timeUnit') throw new ImportConfigError(`unknown key ${JSON.stringify(k)} (expected tables, timeUnit)`);
  const timeUnit = top.timeUnit ?? 'ms';
  if (timeUnit !== 'ms' && timeUnit !== 's') throw new ImportConfigError(`timeUnit: expected "ms" or "s", got ${JSON.stringify(timeUnit)}`);
  const given = (top.tables ?? {}) as Record<string, unknown>;
  if (typeof given !== 'object' || Array.isArray(given)) throw new ImportConfigError('tables: expected an object');
  const tables: Record<string, SourceColumns | null> = { ...defaults.tables };
  for (const [name, value] of Object.entries(given)) {
    const tableRoles = spec.roles.get(name);
    if (!tableRoles) throw new ImportConfigError(`tables: unknown table ${JSON.stringify(name)} (expected ${[...spec.roles.keys()].join(', ')})`);
    const { roles, nullable } = tableRoles;
    if (value === null) {
      if (!spec.optionalTables.has(name)) throw new ImportConfigError(`tables.${name}: cannot be null (the import needs it)`);
      tables[name] = null;
      explicit.add(`${name}.table`);
      continue;
    }
    if (typeof value !== 'object' || Array.isArray(value)) throw new ImportConfigError(`tables.${name}: expected an object or null`);
    const base = defaults.tables[name]!;
    let table = base.table;
    let fields = base.fields;
    const cols: Record<string, string | null> = { ...base.roles };
    for (const [role, col] of Object.entries(value as Record<string, unknown>)) {
      if (!roles.includes(role)) throw new ImportConfigError(`tables.${name}.${role}: unknown role (expected ${roles.join(', ')})`);
      if (role === 'fields') {
        if (typeof col !== 'object' || col === null || Array.isArray(col)) throw new ImportConfigError(`tables.${name}.fields: expected an object of blob field → column`);
        for (const [field, c] of Object.entries(col as Record<string, unknown>)) {
          if (!IDENT.test(field) || typeof c !== 'string' || !IDENT.test(c)) throw new ImportConfigError(`tables.${name}.fields.${field}: expected a column name, got ${JSON.stringify(c)}`);
          explicit.add(`${name}.fields.${field}`);
        }
        fields = col as Record<string, string>;
        continue;
      }
      if (col === null && nullable.has(role)) {
        cols[role] = null;
        continue;
      }
      if (typeof col !== 'string' || !IDENT.test(col)) throw new ImportConfigError(`tables.${name}.${role}: expected a column name${nullable.has(role) ? ' or null' : ''}, got ${JSON.stringify(col)}`);
      if (role === 'table') table = col;
      else cols[role] = col;
      explicit.add(`${name}.${role}`);
    }
    tables[name] = { table, roles: cols, fields };
  }
  return { spec, schema: { tables, timeUnit }, explicit };
}

/**
 * The schema as it applies to one source: optional default columns and tables the source lacks are
 * dropped; anything else missing is an error naming it. `columnsOf(table)` lists a table's columns,
 * or undefined when the table does not exist.
 */
export function resolveSchema(parsed: ParsedConfig, columnsOf: (table: string) => ReadonlySet<string> | undefined): { schema: SourceSchema; notes: string[] } {
  const { spec } = parsed;
  const notes: string[] = [];
  const problems: string[] = [];
  const tables: Record<string, SourceColumns | null> = {};
  for (const [name, r] of spec.roles as ReadonlyMap<string, TableRoles>) {
    const given = parsed.schema.tables[name] ?? null;
    if (given === null) {
      tables[name] = null;
      continue;
    }
    const cols = columnsOf(given.table);
    if (!cols) {
      if (spec.optionalTables.has(name) && !parsed.explicit.has(`${name}.table`)) {
        notes.push(`the source has no table ${given.table}: no ${name} to import`);
        tables[name] = null;
        continue;
      }
      problems.push(`table ${given.table} (${name}) does not exist`);
      continue;
    }
    const roles: Record<string, string | null> = { ...given.roles };
    for (const role of r.roles) {
      if (role === 'table') continue;
      if (role === 'fields') {
        for (const [field, col] of Object.entries(given.fields)) {
          if (!cols.has(col)) problems.push(`${given.table}.${col} (${name} field ${field}) does not exist`);
        }
        continue;
      }
      const col = given.roles[role];
      if (col === null || col === undefined) continue;
      if (cols.has(col)) continue;
      if (r.optional.has(role) && !parsed.explicit.has(`${name}.${role}`)) {
        roles[role] = null;
        continue;
      }
      problems.push(`${given.table}.${col} (${name} ${role}) does not exist`);
    }
    tables[name] = { table: given.table, roles, fields: given.fields };
  }
  if (problems.length > 0) throw new ImportConfigError(`the source does not match the expected schema: ${problems.join('; ')} (see docs/operations.md "Importing an unsharded database"; rename columns with --config)`);
  return { schema: { tables, timeUnit: parsed.schema.timeUnit }, notes };
}

/** A source label: names one source in the shards' ID map, the mod-shard lookups and the run ledger. */
export const SOURCE_LABEL = /^[a-z0-9][a-z0-9_.-]{0,47}$/;

/**
 * The mod-shard lookup namespace of imported objects of one type: `import:pin`; a type key too long
 * for the column is fitted to it (core/columnWidths.ts), so every type the model allows imports.
 */
export function importNamespace(type: string): string {
  return fitToColumn(`import:${type}`, LOOKUP_NAMESPACE_WIDTH);
}

/** The mod-shard lookup key of one source object: `<label>:<old id>` (`shop:42`). */
export function importKey(label: string, oldId: string): string {
  return `${label}:${oldId}`;
}

/**
 * The open shard a source object placed with nothing (a user) lands on: uniform over the open
 * shards, like the gateway's random placement, but a function of the source and the object's old
 * ID, so a re-run (or a retried job) places every such object where the first run did.
 *
 *   placeOnOpenShard('shop', '42', 16)  // the same index in 0..15 every time
 */
export function placeOnOpenShard(label: string, oldId: string, openShardCount: number): number {
  const digest = createHash('md5').update(`${label}\u0000${oldId}`, 'utf8').digest();
  return Number(digest.readBigUInt64BE(0) % BigInt(openShardCount));
}

/**
 * Blob fields the importer sets itself in every type, never copied from the source's data: `active`
 * and every reference's key (`@ref(key:)`: owner_id, board_id …). An import passes its type's
 * `reserved` (core/importSpec.ts), which adds the type's unique fields and credentials (username, email).
 */
const ALWAYS_RESERVED: ReadonlySet<string> = new Set(['active', ...Object.values(REF_FIELDS)]);

/** A source row's cell as the product stores it: JSON-able, strings as they are. */
function cell(v: unknown): unknown {
  if (v === null || v === undefined) return undefined;
  if (v instanceof Date) return v.toISOString();
  if (Buffer.isBuffer(v)) return v.toString('utf8');
  if (typeof v === 'bigint') return v.toString();
  return v;
}

/** A JSON column's value: MariaDB sends JSON as text, MySQL as parsed JSON. Anything else: no fields. */
export function jsonObject(raw: unknown): Record<string, unknown> {
  let v = raw;
  if (typeof v === 'string' || Buffer.isBuffer(v)) {
    try {
      v = JSON.parse(v.toString());
    } catch {
      return {};
    }
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/**
 * The blob of an imported object, keys sorted (so an unchanged row gives the same text on a re-run):
 * the data column's fields, then the mapped columns, then the references the importer resolved.
 * Empty strings and nulls are left out, as the product leaves out fields never set.
 */
export function buildBlob(
  data: Record<string, unknown>,
  fields: Readonly<Record<string, unknown>>,
  refs: Readonly<Record<string, string | undefined>>,
  reserved: ReadonlySet<string> = ALWAYS_RESERVED,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) if (!reserved.has(k) && v !== null && v !== undefined && v !== '') out[k] = v;
  for (const [k, v] of Object.entries(fields)) {
    const c = cell(v);
    if (c === undefined || c === '') delete out[k];
    else out[k] = c;
  }
  for (const [k, v] of Object.entries(refs)) if (v !== undefined && v !== '') out[k] = v;
  return sortKeys(out);
}

/**
 * The unique value (a username) an imported object keeps: the data column's spelling under the
 * field's key when it is the same name, else the column's.
 *
 *   importedUnique('username', 'alice_1', { username: 'Alice_1' })  // 'Alice_1'
 */
export function importedUnique(key: string, column: string, data: Record<string, unknown>): string {
  const typed = data[key];
  return typeof typed === 'string' && normalizeLookupKey(typed) === normalizeLookupKey(column) ? typed : column;
}

/** Keys sorted at every level: one object has one JSON text. */
export function sortKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortKeys) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) out[k] = sortKeys((value as Record<string, unknown>)[k]);
  return out as T;
}

/** The text of a blob as compared and stored: keys sorted, `active` left out. */
export function blobText(data: Readonly<Record<string, unknown>>): string {
  const { active: _active, ...rest } = data;
  return JSON.stringify(sortKeys(rest));
}

/** A time cell → epoch ms: DATETIME/TIMESTAMP (a Date), or a number of `unit`. */
export function timeOf(v: unknown, unit: 'ms' | 's'): number {
  if (v instanceof Date) return v.getTime();
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?[0-9]+(\.[0-9]+)?$/.test(v) ? Number(v) : NaN;
  if (!Number.isFinite(n)) throw new ImportConfigError(`expected a time (a DATETIME, or a number of ${unit}), got ${JSON.stringify(v)}`);
  return Math.round(unit === 's' ? n * 1000 : n);
}

/** An old ID as its decimal text (IDs may exceed 2^53: the flat database keeps 64-bit IDs). */
export function oldIdOf(v: unknown): string {
  const s = typeof v === 'bigint' ? v.toString() : typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : typeof v === 'string' ? v : '';
  if (!/^(0|[1-9][0-9]{0,19})$/.test(s)) throw new ImportConfigError(`expected an integer key, got ${JSON.stringify(v)}`);
  return s;
}

/**
 * A range of the key a table is read in order of (old IDs; for relations, the `from` column):
 * keys above `after` up to `upTo` included; null = unbounded. A table's ranges cover every key, so
 * a row added between planning and reading is in exactly one chunk.
 */
export interface KeyRange {
  readonly after: string | null;
  readonly upTo: string | null;
}

/** One unit of work: a range of one table, with how many rows it held when planned. */
export interface PlannedChunk {
  readonly table: string;
  readonly index: number;
  readonly range: KeyRange;
  readonly rows: number;
}

/** A chunk's name in the ledger and in job IDs: `likes.17`. */
export function chunkName(table: string, index: number): string {
  return fitToColumn(`${table}.${index}`, IMPORT_CHUNK_WIDTH);
}

/**
 * Cuts keys in order, with their row counts (a relation's `from` with its degree), into ranges of
 * about `target` rows that together cover every key. A key is never split, so a user with 10,000
 * likes is one chunk of 10,000.
 *
 *   cutRanges([['1', 3], ['2', 3], ['5', 3]], 5)
 *   // [{ after: null, upTo: '2', rows: 6 }, { after: '2', upTo: null, rows: 3 }]
 */
export function cutRanges(keys: Iterable<readonly [string, number]>, target: number): { range: KeyRange; rows: number }[] {
  const out: { range: KeyRange; rows: number }[] = [];
  let after: string | null = null;
  let rows = 0;
  for (const [key, n] of keys) {
    rows += n;
    if (rows >= target) {
      out.push({ range: { after, upTo: key }, rows });
      after = key;
      rows = 0;
    }
  }
  if (rows > 0 || out.length === 0) out.push({ range: { after, upTo: null }, rows });
  else out[out.length - 1] = { range: { after: out[out.length - 1]!.range.after, upTo: null }, rows: out[out.length - 1]!.rows };
  return out;
}
