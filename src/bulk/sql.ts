/**
 * Multi-row INSERT statements from row generators. A "part" is one table's rows on one database
 * with its row count known in advance (so progress has a total before anything is sent).
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
}

/** A string as an SQL literal (backslash escapes; the stack runs without NO_BACKSLASH_ESCAPES). */
export function sqlString(s: string): string {
  return mysql.escape(s);
}

/** Statements of at most `batchRows` rows each, in order. */
export function* statementsOf(parts: Iterable<Part>, batchRows: number): Generator<Statement> {
  for (const part of parts) {
    if (part.rows === 0) continue;
    const head = `INSERT INTO ${part.table} (${part.columns.join(', ')}) VALUES\n`;
    let batch: string[] = [];
    for (const v of part.values()) {
      batch.push(v);
      if (batch.length === batchRows) {
        yield { sql: head + batch.join(',\n'), rows: batch.length };
        batch = [];
      }
    }
    if (batch.length > 0) yield { sql: head + batch.join(',\n'), rows: batch.length };
  }
}

export function totalRows(parts: Iterable<Part>): number {
  let n = 0;
  for (const p of parts) n += p.rows;
  return n;
}
