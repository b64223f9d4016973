/**
 * The bulk loader: multi-row INSERTs (1,000 rows per statement by default) over one connection per
 * stream — one stream per MySQL host, so hosts load in parallel — with the next statement built
 * while the previous one runs. Progress goes to stderr; the report gives rows per second.
 */
import { createConnection, type Connection } from 'mysql2/promise';
import type { Endpoint } from '../core/topology.ts';
import { human, progressBar, type ProgressStream } from './progress.ts';
import { statementsOf, totalRows, type Part } from '../storage/bulkSql.ts';

export interface LoadStream {
  /** Shown in the report, e.g. `mysql001`. */
  readonly name: string;
  readonly endpoint: Endpoint;
  readonly parts: readonly Part[];
  /**
   * Keep the load out of the binary log. Only for a host without replicas: a replica would then
   * miss the rows.
   */
  readonly skipBinlog?: boolean;
}

export interface LoadOptions {
  readonly credentials: { readonly user: string; readonly password: string };
  /** Rows per INSERT. Default 1000. */
  readonly batchRows?: number;
  /** INSERT statements per transaction (one commit, one log flush). Default 10. */
  readonly statementsPerCommit?: number;
  /** Progress bar (default: process.stderr); null for none. */
  readonly progress?: ProgressStream | null;
  readonly label?: string;
}

export interface StreamReport {
  readonly name: string;
  readonly rows: number;
  readonly statements: number;
  readonly ms: number;
}

export interface LoadReport {
  readonly rows: number;
  readonly ms: number;
  readonly rowsPerSecond: number;
  readonly streams: StreamReport[];
}

async function connect(endpoint: Endpoint, credentials: LoadOptions['credentials']): Promise<Connection> {
  return createConnection({
    host: endpoint.host,
    port: endpoint.port,
    user: credentials.user,
    password: credentials.password,
    supportBigNumbers: true,
    bigNumberStrings: true,
    charset: 'utf8mb4_bin',
    multipleStatements: false,
  });
}

export async function bulkLoad(streams: readonly LoadStream[], opts: LoadOptions): Promise<LoadReport> {
  const batchRows = opts.batchRows ?? 1000;
  const perCommit = Math.max(1, opts.statementsPerCommit ?? 10);
  const total = streams.reduce((n, s) => n + totalRows(s.parts), 0);
  const out = opts.progress === undefined ? process.stderr : opts.progress;
  if (out && opts.label) out.write(`${opts.label}: ${human(total)} rows over ${streams.length} streams (${streams.map((s) => s.name).join(', ')})\n`);
  const bar = out ? progressBar(out, total) : undefined;
  const started = Date.now();

  const run = async (stream: LoadStream): Promise<StreamReport> => {
    const t0 = Date.now();
    const conn = await connect(stream.endpoint, opts.credentials);
    let rows = 0;
    let statements = 0;
    try {
      if (stream.skipBinlog) await conn.query('SET SESSION sql_log_bin = 0');
      const it = statementsOf(stream.parts, batchRows)[Symbol.iterator]();
      let inTx = 0;
      let next = it.next();
      while (!next.done) {
        if (inTx === 0) await conn.query('BEGIN');
        const stmt = next.value;
        // Send this statement, build the next one while the server works on it.
        const sent = conn.query(stmt.sql);
        next = it.next();
        await sent;
        rows += stmt.rows;
        statements++;
        bar?.add(stmt.rows);
        if (++inTx === perCommit || next.done) {
          await conn.query('COMMIT');
          inTx = 0;
        }
      }
    } finally {
      await conn.end().catch(() => undefined);
    }
    return { name: stream.name, rows, statements, ms: Date.now() - t0 };
  };

  let reports: StreamReport[];
  try {
    reports = await Promise.all(streams.map(run));
  } finally {
    bar?.finish();
  }
  const ms = Date.now() - started;
  const rows = reports.reduce((n, r) => n + r.rows, 0);
  return { rows, ms, rowsPerSecond: ms > 0 ? Math.round((rows * 1000) / ms) : rows, streams: reports };
}
