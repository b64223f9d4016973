/**
 * The source side of `shardql import`: one unsharded MySQL/MariaDB database, read with the column
 * names the import config resolved (src/core/importSchema.ts). Reads only; keyset ranges in key
 * order, so any chunk is one indexed range scan however far into the table it is.
 */
import { readFileSync } from 'node:fs';
import mysql, { type Pool, type RowDataPacket } from 'mysql2/promise';
import { groupBy } from '../core/groupBy.ts';
import { mysqlSsl } from './shardRouter.ts';
import { cutRanges, oldIdOf, roleOf, timeOf, type KeyRange, type SourceColumns, type SourceSchema } from '../core/importSchema.ts';
import { objectSourceOf, type ImportSpec, type ObjectSource, type RelationSource, type SourceSpec } from '../core/importSpec.ts';

export interface SourceLocation {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
  /** TLS (`?tls=1`: Node's CA bundle; `?tls-ca=/path/ca.pem`: that CA, read by each process that opens the source). */
  readonly tls?: { readonly caPath?: string };
}

/**
 * `mysql://user@host:port/db[?tls=1 | ?tls-ca=/path/ca.pem]` → its parts. A password in the URL is
 * refused: it would travel in every job's payload. The CA's path travels instead (every worker
 * reads the file at that path), never its contents.
 */
export function parseSourceUrl(text: string): SourceLocation {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`expected a URL like mysql://user@host:3306/db, got ${JSON.stringify(text)}`);
  }
  if (url.protocol !== 'mysql:' && url.protocol !== 'mariadb:') throw new Error(`expected a mysql:// URL, got ${JSON.stringify(text)}`);
  if (url.password !== '') throw new Error('put the source password in SHARDQL_IMPORT_PASSWORD (every worker needs it too), not in the URL');
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_$]{1,64}$/.test(database)) throw new Error(`expected a database name after the host (mysql://user@host:port/db), got ${JSON.stringify(url.pathname)}`);
  const user = decodeURIComponent(url.username);
  if (user === '') throw new Error(`expected a user in the URL (mysql://user@host:port/db), got ${JSON.stringify(text)}`);
  for (const key of url.searchParams.keys()) {
    if (key !== 'tls' && key !== 'tls-ca') throw new Error(`expected only tls=1|0 or tls-ca=/path/ca.pem after "?" in the URL, got ${JSON.stringify(key)}`);
  }
  const flag = url.searchParams.get('tls');
  if (flag !== null && flag !== '1' && flag !== '0') throw new Error(`expected tls=1 or tls=0 in the URL, got tls=${JSON.stringify(flag)}`);
  const caPath = url.searchParams.get('tls-ca');
  if (caPath !== null && (caPath === '' || flag === '0')) throw new Error(`expected tls-ca=/path/ca.pem (with TLS on), got tls-ca=${JSON.stringify(caPath)}${flag === '0' ? ' with tls=0' : ''}`);
  const tls = caPath !== null ? { caPath } : flag === '1' ? {} : undefined;
  return { host: url.hostname, port: url.port === '' ? 3306 : Number(url.port), user, database, ...(tls ? { tls } : {}) };
}

/** The URL of a location (no password): what a plan records and job payloads carry. */
export function sourceUrl(loc: SourceLocation): string {
  const tls = loc.tls === undefined ? '' : loc.tls.caPath !== undefined ? `?tls-ca=${encodeURIComponent(loc.tls.caPath)}` : '?tls=1';
  return `mysql://${encodeURIComponent(loc.user)}@${loc.host}:${loc.port}/${loc.database}${tls}`;
}

/** mysql2's `ssl` option for a location: its CA file read now (a clear error if it cannot be), certificates always checked. */
function sourceSsl(loc: SourceLocation): { ssl?: { ca?: string; rejectUnauthorized: true } } {
  if (!loc.tls) return {};
  if (loc.tls.caPath === undefined) return mysqlSsl({});
  try {
    return mysqlSsl({ ca: readFileSync(loc.tls.caPath, 'utf8') });
  } catch (err) {
    throw new Error(`cannot read the source's CA file ${JSON.stringify(loc.tls.caPath)} (tls-ca in the URL): ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

/**
 * A source row with its cells under their names: `id`, `created_at`, `updated_at`, `data`, `f0`… for
 * mapped fields, `r_<role>` for references, unique fields and credentials (`r_pinner`, `r_username`),
 * `parent_owner` (the owner of the object a row is placed with, where the spec checks it); a
 * relation's `f`, `t` and `created_at`.
 */
export type SourceRow = Record<string, unknown>;

const q = (ident: string): string => `\`${ident.replace(/`/g, '``')}\``;

export class ImportSource {
  readonly location: SourceLocation;
  readonly #pool: Pool;
  #types: Map<string, Map<string, string>> | undefined;

  constructor(location: SourceLocation, password: string, opts: { poolSize?: number } = {}) {
    this.location = location;
    this.#pool = mysql.createPool({
      host: location.host,
      port: location.port,
      user: location.user,
      password,
      database: location.database,
      ...sourceSsl(location),
      connectionLimit: opts.poolSize ?? 4,
      connectTimeout: 5000,
      supportBigNumbers: true,
      bigNumberStrings: true,
      timezone: 'Z',
      charset: 'utf8mb4',
    });
    // DATETIME and TIMESTAMP are read (and --since compared) as UTC.
    this.#pool.on('connection', (c) => void c.query("SET time_zone = '+00:00'"));
  }

  /** Every table's columns with their data types (lowercase), once. */
  async columnTypes(): Promise<Map<string, Map<string, string>>> {
    if (this.#types) return this.#types;
    const [rows] = await this.#pool.query<RowDataPacket[]>(
      'SELECT table_name AS t, column_name AS c, data_type AS d FROM information_schema.columns WHERE table_schema = ?',
      [this.location.database],
    );
    const out = new Map<string, Map<string, string>>();
    for (const r of rows) {
      const t = String(r.t);
      if (!out.has(t)) out.set(t, new Map());
      out.get(t)!.set(String(r.c), String(r.d).toLowerCase());
    }
    return (this.#types = out);
  }

  /** The source's own clock, epoch ms: a pass's high-water mark is taken from it, never from ours. */
  async clock(): Promise<number> {
    const [rows] = await this.#pool.query<RowDataPacket[]>('SELECT ROUND(UNIX_TIMESTAMP(NOW(3)) * 1000) AS now');
    return Number(rows[0]!.now);
  }

  /** A condition `column >= since` in the column's own terms (a DATETIME, or a number of ms or s). */
  async #sinceCondition(schema: SourceSchema, table: string, columns: readonly string[], since: number): Promise<{ sql: string; values: unknown[] }> {
    const types = (await this.columnTypes()).get(table) ?? new Map<string, string>();
    const parts: string[] = [];
    const values: unknown[] = [];
    for (const c of columns) {
      const t = types.get(c) ?? '';
      if (['datetime', 'timestamp', 'date'].includes(t)) {
        parts.push(`o.${q(c)} >= FROM_UNIXTIME(?)`);
        values.push(since / 1000);
      } else {
        parts.push(`o.${q(c)} >= ?`);
        values.push(schema.timeUnit === 's' ? Math.floor(since / 1000) : since);
      }
    }
    return { sql: `(${parts.join(' OR ')})`, values };
  }

  /** How a table is read: its FROM clause, the key it is ranged on, its time columns and its row filter. */
  #shape(schema: SourceSchema, source: SourceSpec): { from: string; key: string; keyTable: string; times: string[]; filter?: string } {
    switch (source.kind) {
      case 'object': {
        const s = tableOf(schema, source.alias);
        return { from: `${q(s.table)} o`, key: `o.${q(role(s, 'id'))}`, keyTable: s.table, times: timesOf(s) };
      }
      case 'selfRef': {
        // The object table again, its rows that name an object of their own type.
        const s = tableOf(schema, source.object);
        const ref = roleOf(s, source.field);
        return { from: `${q(s.table)} o`, key: `o.${q(role(s, 'id'))}`, keyTable: s.table, times: timesOf(s), filter: ref ? `o.${q(ref)} IS NOT NULL` : '1 = 0' };
      }
      case 'relation': {
        const s = tableOf(schema, source.alias);
        return { from: `${q(s.table)} o`, key: `o.${q(role(s, 'from'))}`, keyTable: s.table, times: [role(s, 'createdAt')] };
      }
    }
  }

  async #where(schema: SourceSchema, source: SourceSpec, range: KeyRange | null, since: number | null): Promise<{ sql: string; values: unknown[] }> {
    const shape = this.#shape(schema, source);
    const parts: string[] = [];
    const values: unknown[] = [];
    if (shape.filter) parts.push(shape.filter);
    if (range?.after != null) (parts.push(`${shape.key} > ?`), values.push(range.after));
    if (range?.upTo != null) (parts.push(`${shape.key} <= ?`), values.push(range.upTo));
    if (since !== null) {
      const c = await this.#sinceCondition(schema, shape.keyTable, shape.times, since);
      parts.push(c.sql);
      values.push(...c.values);
    }
    return { sql: parts.length > 0 ? `WHERE ${parts.join(' AND ')}` : '', values };
  }

  /**
   * Cuts a table into key ranges of about `target` rows (rows created or changed since `since`
   * only, when given): one pass over the key's index, keys streamed in order.
   */
  async plan(schema: SourceSchema, source: SourceSpec, since: number | null, target: number): Promise<{ range: KeyRange; rows: number }[]> {
    const shape = this.#shape(schema, source);
    const where = await this.#where(schema, source, null, since);
    const grouped = source.kind === 'relation';
    const sql = grouped
      ? `SELECT ${shape.key} AS k, COUNT(*) AS n FROM ${shape.from} ${where.sql} GROUP BY ${shape.key} ORDER BY ${shape.key}`
      : `SELECT ${shape.key} AS k FROM ${shape.from} ${where.sql} ORDER BY ${shape.key}`;
    const [rows] = await this.#pool.query<RowDataPacket[]>(sql, where.values);
    return cutRanges(
      rows.map((r) => [oldIdOf(r.k), grouped ? Number(r.n) : 1] as const),
      target,
    );
  }

  /** The rows of one chunk, cells under their names (SourceRow), in key order. */
  async rows(spec: ImportSpec, schema: SourceSchema, source: SourceSpec, range: KeyRange, since: number | null): Promise<SourceRow[]> {
    const where = await this.#where(schema, source, range, since);
    const shape = this.#shape(schema, source);
    const cols: string[] = [];
    let from = shape.from;
    if (source.kind === 'relation') {
      const s = tableOf(schema, source.alias);
      cols.push(`o.${q(role(s, 'from'))} AS f`, `o.${q(role(s, 'to'))} AS t`, `o.${q(role(s, 'createdAt'))} AS created_at`);
    } else {
      const object = source.kind === 'object' ? source : objectSourceOf(spec, source.type)!;
      const s = tableOf(schema, object.alias);
      cols.push(`o.${q(role(s, 'id'))} AS id`, `o.${q(role(s, 'createdAt'))} AS created_at`);
      const updatedAt = roleOf(s, 'updatedAt');
      const data = roleOf(s, 'data');
      if (updatedAt) cols.push(`o.${q(updatedAt)} AS updated_at`);
      if (data) cols.push(`o.${q(data)} AS data`);
      Object.values(s.fields).forEach((c, i) => cols.push(`o.${q(c)} AS f${i}`));
      for (const r of [...object.unique.map((u) => u.role), ...object.credentials.map((c) => c.role), ...object.refs.map((x) => x.field)]) {
        const c = roleOf(s, r);
        if (c) cols.push(`o.${q(c)} AS ${q(`r_${r}`)}`);
      }
      if (object.sameOwner) {
        // The owner of the object the row is placed with, to check it is the row's owner's (a pin on its pinner's board).
        const ref = object.refs.find((x) => x.field === object.placeWith)!;
        const p = tableOf(schema, objectSourceOf(spec, ref.to)!.alias);
        cols.push(`b.${q(role(p, object.sameOwner.parentOwner))} AS parent_owner`);
        from = `${from} LEFT JOIN ${q(p.table)} b ON b.${q(role(p, 'id'))} = o.${q(role(s, ref.field))}`;
      }
    }
    const [rows] = await this.#pool.query<RowDataPacket[]>(`SELECT ${cols.join(', ')} FROM ${from} ${where.sql} ORDER BY ${shape.key}`, where.values);
    return rows as SourceRow[];
  }

  /**
   * The keys of an object table in a key range, whatever their time (a pins range covers repins
   * too): what the source still has, for a deletes pass (`--deletes`) and `--verify`.
   */
  async keys(schema: SourceSchema, source: ObjectSource, range: KeyRange): Promise<Set<string>> {
    const where = await this.#where(schema, source, range, null);
    const shape = this.#shape(schema, source);
    const [rows] = await this.#pool.query<RowDataPacket[]>(`SELECT ${shape.key} AS k FROM ${shape.from} ${where.sql}`, where.values);
    return new Set(rows.map((r) => oldIdOf(r.k)));
  }

  /** A relation's rows per from-key in a range of from-keys (all times): what the source still has. */
  async relationCounts(schema: SourceSchema, source: RelationSource, range: KeyRange): Promise<Map<string, number>> {
    const where = await this.#where(schema, source, range, null);
    const shape = this.#shape(schema, source);
    const [rows] = await this.#pool.query<RowDataPacket[]>(`SELECT ${shape.key} AS k, COUNT(*) AS n FROM ${shape.from} ${where.sql} GROUP BY ${shape.key}`, where.values);
    return new Map(rows.map((r) => [oldIdOf(r.k), Number(r.n)] as const));
  }

  /** A relation's to-keys of the given from-keys (all times). */
  async relationTargets(schema: SourceSchema, source: RelationSource, froms: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (froms.length === 0) return out;
    const s = tableOf(schema, source.alias);
    const [f, t] = [q(role(s, 'from')), q(role(s, 'to'))];
    const [rows] = await this.#pool.query<RowDataPacket[]>(`SELECT ${f} AS f, ${t} AS t FROM ${q(s.table)} WHERE ${f} IN (${froms.map(() => '?').join(',')})`, [...froms]);
    for (const [f, list] of groupBy(rows, (r) => oldIdOf(r.f))) out.set(f, list.map((r) => oldIdOf(r.t)));
    return out;
  }

  /** Rows per key of `column` in `table`, for the given keys: the source's side of a count `--verify` compares. */
  async countsBy(table: string, column: string, keys: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (keys.length === 0) return out;
    const [rows] = await this.#pool.query<RowDataPacket[]>(
      `SELECT ${q(column)} AS k, COUNT(*) AS n FROM ${q(table)} WHERE ${q(column)} IN (${keys.map(() => '?').join(',')}) GROUP BY ${q(column)}`,
      [...keys],
    );
    for (const r of rows) out.set(oldIdOf(r.k), Number(r.n));
    return out;
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}

function tableOf(schema: SourceSchema, alias: string): SourceColumns {
  const s = schema.tables[alias];
  if (!s) throw new Error(`the import's schema has no table ${alias}`);
  return s;
}

function role(s: SourceColumns, name: string): string {
  const c = roleOf(s, name);
  if (c === null) throw new Error(`the import's schema has no column for ${s.table} ${name}`);
  return c;
}

function timesOf(s: SourceColumns): string[] {
  const updatedAt = roleOf(s, 'updatedAt');
  return [role(s, 'createdAt'), ...(updatedAt ? [updatedAt] : [])];
}

/** A row's time cell, epoch ms. */
export function rowTime(schema: SourceSchema, v: unknown): number {
  return timeOf(v, schema.timeUnit);
}

/** Opens import sources by URL (a worker keeps one pool per source for its whole life). */
export interface ImportSources {
  open(url: string): ImportSource;
  close(): Promise<void>;
}

/** Sources opened with the password `passwordFor` gives each location (see config.ts `importPassword`). */
export function importSources(passwordFor: (loc: SourceLocation) => string): ImportSources {
  const open = new Map<string, ImportSource>();
  return {
    open(url) {
      let s = open.get(url);
      if (!s) {
        const loc = parseSourceUrl(url);
        s = new ImportSource(loc, passwordFor(loc));
        open.set(url, s);
      }
      return s;
    },
    async close() {
      await Promise.all([...open.values()].map((s) => s.close()));
      open.clear();
    },
  };
}
