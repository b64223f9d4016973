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

/** Throws SqlIdentifierError (a bug, never a client's doing: masked at the edge) for a bad identifier. */
export function checkSqlIdentifiers(sql: string, known: KnownDatabases): void {
  // Literals are data, not identifiers (the catalogue query has a REGEXP literal); quoting is stripped.
  const text = sql.replace(/'(?:[^'\\]|\\.|'')*'/g, "''").replace(/`/g, '');
  const ddl = /^\s*(CREATE|DROP|ALTER)\s/i.test(text);
  const names = new Set<string>();
  // Qualified names (`db00014.pins`) and anything that looks like a shard database on its own.
  for (const m of text.matchAll(/(?<![\w$.@])([A-Za-z_][\w$]*)\s*\.\s*[A-Za-z_]/g)) names.add(m[1]!);
  for (const m of text.matchAll(/(?<![\w$])((?:ms)?db\d[\w$]*)/gi)) names.add(m[1]!);
  for (const name of names) {
    if (CATALOGUE.has(name.toLowerCase())) continue;
    const m = DATABASE_IDENTIFIER.exec(name);
    if (!m) throw new SqlIdentifierError(`Refused SQL naming database ${JSON.stringify(name.slice(0, 40))}: expected db or msdb and 5 digits`);
    if (ddl) continue;
    const n = Number(name.slice(m[1]!.length));
    if (!(m[1] === 'db' ? known.shard(n) : known.modShard(n))) {
      throw new SqlIdentifierError(`Refused SQL naming database ${name}: the topology has no such ${m[1] === 'db' ? 'shard' : 'mod shard'}`);
    }
  }
}
