/**
 * The last guard before SQL leaves the gateway: database names are the only identifiers built
 * into SQL text (values always travel as `?` placeholders), and each must be a shard database
 * `db` + 5 digits or a mod-shard database `msdb` + 5 digits that the topology knows.
 *
 * Example: `SELECT … FROM db00014.pins WHERE local_id IN (?, ?)` passes when shard 14 is in a
 * range of the topology; `db14.pins`, `db00014x.pins`, `mysql.user` or shard 4000 of a 16-shard
 * topology are refused. DDL (provisioning, dropping) checks the shape only: it creates shards
 * before a topology opens them and drops ones it no longer has. String literals and system
 * variables (`@@global.read_only`) are not identifiers.
 */
export const DATABASE_IDENTIFIER = /^(db|msdb)\d{5}$/;

/** Schemas SQL may name besides shards: the catalogue provisioning reads. */
const CATALOGUE = new Set(['information_schema']);

export interface KnownDatabases {
  shard(shard: number): boolean;
  modShard(modShard: number): boolean;
}

export class SqlIdentifierError extends Error {
  override readonly name = 'SqlIdentifierError';
}

/** SQL with every single-quoted literal emptied (`'a;b'` → `''`): what is left is code. */
export function withoutStringLiterals(sql: string): string {
  return sql.replace(/'(?:[^'\\]|\\.|'')*'/g, "''");
}

interface NamedDatabases {
  readonly ddl: boolean;
  /** Each database the text names, as its kind and number. */
  readonly names: readonly { readonly name: string; readonly modShard: boolean; readonly n: number }[];
}

/**
 * What a statement's text names, by text: a gateway sends the same few statement shapes over and
 * over (a like is three), and scanning each with four regular expressions was 3% of a write's CPU.
 * Bounded; only well-formed texts are kept (a refused one throws before it is remembered).
 */
const parsed = new Map<string, NamedDatabases>();
const MAX_PARSED = 5000;
/** Longer texts are bulk statements (an import's multi-row INSERTs), each sent once: remembering them only held megabytes. */
const MAX_PARSED_LENGTH = 4096;

function namedDatabases(sql: string): NamedDatabases {
  const known = sql.length <= MAX_PARSED_LENGTH ? parsed.get(sql) : undefined;
  if (known) return known;
  // Literals are data, not identifiers (the catalogue query has a REGEXP literal); quoting is stripped.
  const text = withoutStringLiterals(sql).replace(/`/g, '');
  const ddl = /^\s*(CREATE|DROP|ALTER)\s/i.test(text);
  const found = new Set<string>();
  // Qualified names (`db00014.pins`) and anything that looks like a shard database on its own.
  for (const m of text.matchAll(/(?<![\w$.@])([A-Za-z_][\w$]*)\s*\.\s*[A-Za-z_]/g)) found.add(m[1]!);
  for (const m of text.matchAll(/(?<![\w$])((?:ms)?db\d[\w$]*)/gi)) found.add(m[1]!);
  const names: { name: string; modShard: boolean; n: number }[] = [];
  for (const name of found) {
    if (CATALOGUE.has(name.toLowerCase())) continue;
    const m = DATABASE_IDENTIFIER.exec(name);
    if (!m) throw new SqlIdentifierError(`Refused SQL naming database ${JSON.stringify(name.slice(0, 40))}: expected db or msdb and 5 digits`);
    names.push({ name, modShard: m[1] === 'msdb', n: Number(name.slice(m[1]!.length)) });
  }
  const out = { ddl, names };
  if (sql.length > MAX_PARSED_LENGTH) return out;
  if (parsed.size >= MAX_PARSED) parsed.clear();
  parsed.set(sql, out);
  return out;
}

/** Throws SqlIdentifierError (a bug, never a client's doing: masked at the edge) for a bad identifier. */
export function checkSqlIdentifiers(sql: string, known: KnownDatabases): void {
  const { ddl, names } = namedDatabases(sql);
  if (ddl) return;
  for (const { name, modShard, n } of names) {
    if (!(modShard ? known.modShard(n) : known.shard(n))) {
      throw new SqlIdentifierError(`Refused SQL naming database ${name}: the topology has no such ${modShard ? 'mod shard' : 'shard'}`);
    }
  }
}
