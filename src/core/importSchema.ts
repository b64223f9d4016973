/**
 * What `shardql import` expects of an unsharded source database, and how a source row becomes the
 * blob the product stores. Pure: no I/O, so the mapping, the blobs and placement are unit-tested.
 *
 * The default source schema is the benchmark's flat database (src/bulk/flat.ts) plus comments and
 * an optional email column; a small JSON config file renames tables and columns for databases that
 * differ (docs/operations.md "Importing an unsharded database"):
 *
 *   { "tables": { "pins": { "table": "pin", "pinner": "user_id", "via": "repinned_from",
 *                           "fields": { "title": "title", "imageUrl": "image_url" } } },
 *     "timeUnit": "s" }
 */
import { createHash } from 'node:crypto';
import { servedModel } from './model/served.ts';
import { normalizeLookupKey } from './modShard.ts';
import { REF_FIELDS } from './objectRefs.ts';
import type { ObjectType } from './objectTypes.ts';

/** The source tables, in the order their rows can be imported (a row's references come earlier). */
export const SOURCE_TABLES = ['users', 'boards', 'pins', 'repins', 'comments', 'likes', 'follows', 'boardFollows'] as const;
export type SourceTable = (typeof SOURCE_TABLES)[number];
/** The tables a deletes pass (`shardql import --deletes`) walks: every source table but `repins` (a repin is a pin). */
export type DeleteTable = Exclude<SourceTable, 'repins'>;

/**
 * Import phases: every chunk of a phase runs (on any worker) before the next phase starts, because
 * its rows point at objects the earlier phases create. `repins` re-reads the pins table once every
 * pin exists: a repin's original may be in any chunk.
 */
export const IMPORT_PHASES: readonly (readonly SourceTable[])[] = [['users'], ['boards'], ['pins'], ['repins', 'comments', 'likes', 'follows', 'boardFollows']];

/** Object tables of the source, and the product type each one's rows become. */
export const OBJECT_SOURCES = { users: 'user', boards: 'board', pins: 'pin', comments: 'comment' } as const satisfies Partial<Record<SourceTable, ObjectType>>;
export type ObjectSource = keyof typeof OBJECT_SOURCES;

/** Column roles of each table (a role is what the importer needs; the config names the column). */
export interface ObjectColumns {
  readonly table: string;
  readonly id: string;
  /** A JSON column whose fields go into the blob (references and `active` excepted); null: none. */
  readonly data: string | null;
  /** Blob field → column, on top of (and overriding) `data`. */
  readonly fields: Readonly<Record<string, string>>;
  readonly createdAt: string;
  /** null: rows never change (updated = created). */
  readonly updatedAt: string | null;
}

export interface UsersColumns extends ObjectColumns {
  readonly username: string;
  readonly email: string | null;
}
export interface BoardsColumns extends ObjectColumns {
  readonly owner: string;
}
export interface PinsColumns extends ObjectColumns {
  readonly board: string;
  readonly pinner: string;
  /** The pin this one repins (the repinned-from column); null: the source has no repins. */
  readonly via: string | null;
}
export interface CommentsColumns extends ObjectColumns {
  readonly pin: string;
  readonly author: string;
}
export interface RelationColumns {
  readonly table: string;
  /** The side the relation belongs to (the liker, the follower): the table is read in its order. */
  readonly from: string;
  readonly to: string;
  readonly createdAt: string;
}

export interface SourceSchema {
  readonly users: UsersColumns;
  readonly boards: BoardsColumns;
  readonly pins: PinsColumns;
  /** null: the source has no such table. */
  readonly comments: CommentsColumns | null;
  readonly likes: RelationColumns | null;
  readonly follows: RelationColumns | null;
  readonly boardFollows: RelationColumns | null;
  /** Numeric time columns count milliseconds (`ms`, default) or seconds (`s`); DATETIME and TIMESTAMP are read as UTC. */
  readonly timeUnit: 'ms' | 's';
}

/**
 * The default schema: the benchmark's flat database (`users`, `boards`, `pins` with `via_pin_id`,
 * `likes`, `follows`, `board_follows`), and `comments`. Columns marked optional in OPTIONAL_DEFAULTS
 * are used only when the source has them.
 */
export const DEFAULT_SCHEMA: SourceSchema = {
  users: { table: 'users', id: 'id', username: 'username', email: 'email', data: 'data', fields: {}, createdAt: 'created_at', updatedAt: 'updated_at' },
  boards: { table: 'boards', id: 'id', owner: 'owner_id', data: 'data', fields: {}, createdAt: 'created_at', updatedAt: 'updated_at' },
  pins: { table: 'pins', id: 'id', board: 'board_id', pinner: 'pinner_id', via: 'via_pin_id', data: 'data', fields: {}, createdAt: 'created_at', updatedAt: 'updated_at' },
  comments: { table: 'comments', id: 'id', pin: 'pin_id', author: 'author_id', data: 'data', fields: {}, createdAt: 'created_at', updatedAt: 'updated_at' },
  likes: { table: 'likes', from: 'user_id', to: 'pin_id', createdAt: 'created_at' },
  follows: { table: 'follows', from: 'follower_id', to: 'followee_id', createdAt: 'created_at' },
  boardFollows: { table: 'board_follows', from: 'user_id', to: 'board_id', createdAt: 'created_at' },
  timeUnit: 'ms',
};

/** Default columns a source may lack (then: no emails, no JSON data, updated = created, no repins). */
export const OPTIONAL_DEFAULTS: ReadonlySet<string> = new Set(['email', 'data', 'updated_at', 'via_pin_id']);
/** Tables a source may lack when the config does not name them. */
export const OPTIONAL_TABLES: ReadonlySet<SourceTable> = new Set(['comments', 'likes', 'follows', 'boardFollows']);

export class ImportConfigError extends Error {
  override readonly name = 'ImportConfigError';
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_$]{0,63}$/;
const ROLE_KEYS: Record<Exclude<SourceTable, 'repins'>, readonly string[]> = {
  users: ['table', 'id', 'username', 'email', 'data', 'fields', 'createdAt', 'updatedAt'],
  boards: ['table', 'id', 'owner', 'data', 'fields', 'createdAt', 'updatedAt'],
  pins: ['table', 'id', 'board', 'pinner', 'via', 'data', 'fields', 'createdAt', 'updatedAt'],
  comments: ['table', 'id', 'pin', 'author', 'data', 'fields', 'createdAt', 'updatedAt'],
  likes: ['table', 'from', 'to', 'createdAt'],
  follows: ['table', 'from', 'to', 'createdAt'],
  boardFollows: ['table', 'from', 'to', 'createdAt'],
};
const NULLABLE_ROLES = new Set(['email', 'data', 'updatedAt', 'via']);

export interface ParsedConfig {
  readonly schema: SourceSchema;
  /** Table.role pairs the config named explicitly: those must exist in the source. */
  readonly explicit: ReadonlySet<string>;
}

/**
 * The config file's JSON over the defaults. Every name must be a plain SQL identifier; unknown keys
 * are refused (a typo must not silently fall back to a default).
 */
export function parseImportConfig(json: unknown): ParsedConfig {
  const explicit = new Set<string>();
  if (json === undefined || json === null) return { schema: DEFAULT_SCHEMA, explicit };
  if (typeof json !== 'object' || Array.isArray(json)) throw new ImportConfigError(`expected a JSON object, got ${JSON.stringify(json)}`);
  const top = json as Record<string, unknown>;
  for (const k of Object.keys(top)) if (k !== 'tables' && k !== 'timeUnit') throw new ImportConfigError(`unknown key ${JSON.stringify(k)} (expected tables, timeUnit)`);
  const timeUnit = top.timeUnit ?? 'ms';
  if (timeUnit !== 'ms' && timeUnit !== 's') throw new ImportConfigError(`timeUnit: expected "ms" or "s", got ${JSON.stringify(timeUnit)}`);
  const tables = (top.tables ?? {}) as Record<string, unknown>;
  if (typeof tables !== 'object' || Array.isArray(tables)) throw new ImportConfigError('tables: expected an object');
  const out: Record<string, unknown> = { ...DEFAULT_SCHEMA, timeUnit };
  for (const [name, value] of Object.entries(tables)) {
    const roles = ROLE_KEYS[name as Exclude<SourceTable, 'repins'>];
    if (!roles) throw new ImportConfigError(`tables: unknown table ${JSON.stringify(name)} (expected ${Object.keys(ROLE_KEYS).join(', ')})`);
    if (value === null) {
      if (!OPTIONAL_TABLES.has(name as SourceTable)) throw new ImportConfigError(`tables.${name}: cannot be null (the import needs it)`);
      out[name] = null;
      explicit.add(`${name}.table`);
      continue;
    }
    if (typeof value !== 'object' || Array.isArray(value)) throw new ImportConfigError(`tables.${name}: expected an object or null`);
    const merged: Record<string, unknown> = { ...(DEFAULT_SCHEMA[name as keyof SourceSchema] as object) };
    for (const [role, col] of Object.entries(value as Record<string, unknown>)) {
      if (!roles.includes(role)) throw new ImportConfigError(`tables.${name}.${role}: unknown role (expected ${roles.join(', ')})`);
      if (role === 'fields') {
        if (typeof col !== 'object' || col === null || Array.isArray(col)) throw new ImportConfigError(`tables.${name}.fields: expected an object of blob field → column`);
        for (const [field, c] of Object.entries(col as Record<string, unknown>)) {
          if (!IDENT.test(field) || typeof c !== 'string' || !IDENT.test(c)) throw new ImportConfigError(`tables.${name}.fields.${field}: expected a column name, got ${JSON.stringify(c)}`);
          explicit.add(`${name}.fields.${field}`);
        }
        merged.fields = col;
        continue;
      }
      if (col === null && NULLABLE_ROLES.has(role)) {
        merged[role] = null;
        continue;
      }
      if (typeof col !== 'string' || !IDENT.test(col)) throw new ImportConfigError(`tables.${name}.${role}: expected a column name${NULLABLE_ROLES.has(role) ? ' or null' : ''}, got ${JSON.stringify(col)}`);
      merged[role] = col;
      explicit.add(`${name}.${role}`);
    }
    out[name] = merged;
  }
  return { schema: out as unknown as SourceSchema, explicit };
}

/**
 * The schema as it applies to one source: optional default columns and tables the source lacks are
 * dropped; anything else missing is an error naming it. `columnsOf(table)` lists a table's columns,
 * or undefined when the table does not exist.
 */
export function resolveSchema(parsed: ParsedConfig, columnsOf: (table: string) => ReadonlySet<string> | undefined): { schema: SourceSchema; notes: string[] } {
  const notes: string[] = [];
  const problems: string[] = [];
  const out: Record<string, unknown> = { timeUnit: parsed.schema.timeUnit };
  for (const name of Object.keys(ROLE_KEYS) as Exclude<SourceTable, 'repins'>[]) {
    const spec = parsed.schema[name] as unknown as Record<string, unknown> | null;
    if (spec === null) {
      out[name] = null;
      continue;
    }
    const table = String(spec.table);
    const cols = columnsOf(table);
    if (!cols) {
      if (OPTIONAL_TABLES.has(name) && !parsed.explicit.has(`${name}.table`)) {
        notes.push(`the source has no table ${table}: no ${name} to import`);
        out[name] = null;
        continue;
      }
      problems.push(`table ${table} (${name}) does not exist`);
      continue;
    }
    const resolved: Record<string, unknown> = { ...spec };
    for (const role of ROLE_KEYS[name]) {
      if (role === 'table') continue;
      if (role === 'fields') {
        for (const [field, col] of Object.entries(spec.fields as Record<string, string>)) {
          if (!cols.has(col)) problems.push(`${table}.${col} (${name} field ${field}) does not exist`);
        }
        continue;
      }
      const col = spec[role];
      if (col === null || col === undefined) continue;
      if (cols.has(String(col))) continue;
      if (OPTIONAL_DEFAULTS.has(String(col)) && !parsed.explicit.has(`${name}.${role}`)) {
        resolved[role] = null;
        continue;
      }
      problems.push(`${table}.${String(col)} (${name} ${role}) does not exist`);
    }
    out[name] = resolved;
  }
  if (problems.length > 0) throw new ImportConfigError(`the source does not match the expected schema: ${problems.join('; ')} (see docs/operations.md "Importing an unsharded database"; rename columns with --config)`);
  return { schema: out as unknown as SourceSchema, notes };
}

/** A source label: names one source in the shards' ID map, the mod-shard lookups and the run ledger. */
export const SOURCE_LABEL = /^[a-z0-9][a-z0-9_.-]{0,47}$/;

/** The mod-shard lookup namespace of imported objects of one type: `import:pin`. */
export function importNamespace(type: ObjectType): string {
  return `import:${type}`;
}

/** The mod-shard lookup key of one source object: `<label>:<old id>` (`shop:42`). */
export function importKey(label: string, oldId: string): string {
  return `${label}:${oldId}`;
}

/**
 * The open shard a source user lands on: uniform over the open shards, like the gateway's random
 * placement, but a function of the source and the user's old ID, so a re-run (or a retried job)
 * places every user where the first run did.
 *
 *   placeUser('shop', '42', 16)  // the same index in 0..15 every time
 */
export function placeUser(label: string, oldId: string, openShardCount: number): number {
  const digest = createHash('md5').update(`${label}\u0000${oldId}`, 'utf8').digest();
  return Number(digest.readBigUInt64BE(0) % BigInt(openShardCount));
}

/**
 * Blob fields the importer sets itself, never copied from the source's data: `active`, every
 * reference's key (`@ref(key:)`: owner_id, board_id …), every unique field (username) and the
 * email (kept in the blob and claimed in the mod shard, though the API shows no such field).
 */
const RESERVED_FIELDS = new Set([
  'active',
  'email',
  ...Object.values(REF_FIELDS),
  ...servedModel().objects.flatMap((o) => o.stored.filter((f) => f.uniqueIn !== null).map((f) => f.key)),
]);

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
export function buildBlob(data: Record<string, unknown>, fields: Readonly<Record<string, unknown>>, refs: Readonly<Record<string, string | undefined>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) if (!RESERVED_FIELDS.has(k) && v !== null && v !== undefined && v !== '') out[k] = v;
  for (const [k, v] of Object.entries(fields)) {
    const c = cell(v);
    if (c === undefined || c === '') delete out[k];
    else out[k] = c;
  }
  for (const [k, v] of Object.entries(refs)) if (v !== undefined && v !== '') out[k] = v;
  return sortKeys(out);
}

/** The username an imported user keeps: the data column's spelling when it is the same name, else the column's. */
export function importedUsername(column: string, data: Record<string, unknown>): string {
  const typed = data.username;
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
  readonly table: SourceTable;
  readonly index: number;
  readonly range: KeyRange;
  readonly rows: number;
}

/** A chunk's name in the ledger and in job IDs: `likes.17`. */
export function chunkName(table: SourceTable, index: number): string {
  return `${table}.${index}`;
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
