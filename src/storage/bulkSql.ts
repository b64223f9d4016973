/**
 * Multi-row INSERT statements from row generators. A "part" is one table's rows on one database
 * with its row count known in advance (so progress has a total before anything is sent). Shared by
 * the benchmark's bulk loader (src/bulk/) and the importer's batches (importStore.ts).
 */
import mysql from 'mysql2';

export interface Statement {
  readonly sql: string;
  readonly rows: number;
}

export interface Part {
  /** `db00012.pins`: where the rows go. */
  readonly table: string;
  readonly columns: readonly string[];
  readonly rows: number;
  /** One `(…)` tuple per row, SQL literals already escaped. */
  values(): Iterable<string>;
  /** `INSERT IGNORE`: rows whose key exists are skipped. Default: plain INSERT (a duplicate is an error). */
  readonly ignore?: boolean;
  /** A `RETURNING` list (MariaDB): the statement returns the rows it inserted, in order (with IGNORE: only those). */
  readonly returning?: string;
}

/** A string as an SQL literal (backslash escapes; the stack runs without NO_BACKSLASH_ESCAPES). */
export function sqlString(s: string): string {
  return mysql.escape(s);
}

/** Statements of at most `batchRows` rows each, in order. */
export function* statementsOf(parts: Iterable<Part>, batchRows: number): Generator<Statement> {
  for (const part of parts) {
    if (part.rows === 0) continue;
    const head = `INSERT ${part.ignore ? 'IGNORE ' : ''}INTO ${part.table} (${part.columns.join(', ')}) VALUES\n`;
    const tail = part.returning ? `\nRETURNING ${part.returning}` : '';
    let batch: string[] = [];
    for (const v of part.values()) {
      batch.push(v);
      if (batch.length === batchRows) {
        yield { sql: head + batch.join(',\n') + tail, rows: batch.length };
        batch = [];
      }
    }
    if (batch.length > 0) yield { sql: head + batch.join(',\n') + tail, rows: batch.length };
  }
}

export function totalRows(parts: Iterable<Part>): number {
  let n = 0;
  for (const p of parts) n += p.rows;
  return n;
}
