import mysql from 'mysql2/promise';
import type { Pool, PoolConnection, RowDataPacket, ResultSetHeader } from 'mysql2/promise';
import { ShardqlError } from '../core/errors.ts';
import { shardOf } from '../core/ids.ts';
import type { Endpoint, Topology } from '../core/topology.ts';
import { checkSqlIdentifiers, withoutStringLiterals, type KnownDatabases } from './sqlIdentifiers.ts';
import { connectionWithin, leftWaiting, POOL_WAIT_TIMEOUT } from './connectionWait.ts';
import { sqlSpanAttributes, type OpContext } from './sqlStats.ts';
import type { TlsTrust } from '../core/tlsTrust.ts';

export interface MysqlCredentials {
  readonly user: string;
  readonly password: string;
  /** Connect over TLS, checking the server's certificate against `ca` (PEM), else Node's CA bundle. */
  readonly tls?: TlsTrust;
}

/** mysql2's `ssl` option for a TLS setting (none: a plain connection). Certificates are always checked. */
export function mysqlSsl(tls: TlsTrust | undefined): { ssl?: { ca?: string; rejectUnauthorized: true } } {
  if (!tls) return {};
  return { ssl: { ...(tls.ca !== undefined ? { ca: tls.ca } : {}), rejectUnauthorized: true } };
}

/** mysql2's `ssl` option for `credentials`. */
export function mysqlSslOption(credentials: MysqlCredentials): { ssl?: { ca?: string; rejectUnauthorized: true } } {
  return mysqlSsl(credentials.tls);
}

export interface ShardRouterOptions {
  /** The topology in force; called on every routing decision so a swapped map applies at once. */
  readonly topology: () => Topology;
  readonly credentials: MysqlCredentials;
  /** Connections per host pool. Default 10. */
  readonly poolSize?: number;
  /** Client-side timeout of one SQL statement, ms. Default 5000. */
  readonly queryTimeoutMs?: number;
  /** Connect timeout, ms. Default 2000. */
  readonly connectTimeoutMs?: number;
  /** A host refused a statement because it is read-only (a demoted primary): the map may be stale. */
  readonly onReadOnly?: (host: string) => void;
}

export type SqlValue = string | number | bigint | null | Buffer;
export type Row = RowDataPacket;

/** One SQL statement of a batch: its text, with `?` for every value. */
export interface Statement {
  readonly sql: string;
  readonly values?: readonly SqlValue[];
}

/** What one statement of a batch returned: rows for a SELECT, a header otherwise. */
export type StatementResult = Row[] | ResultSetHeader;

/**
 * One open transaction on one host. Every call is one round trip, counted once in `ctx.stats`
 * however many statements it carries. BEGIN travels with the transaction's first round trip, and
 * COMMIT with its last when that one is `commitWith`.
 */
export interface Tx {
  query(sql: string, values?: readonly SqlValue[]): Promise<Row[]>;
  execute(sql: string, values?: readonly SqlValue[]): Promise<ResultSetHeader>;
  /**
   * Several statements in one round trip, run in order; their results in the same order. A
   * statement that fails stops the batch there (the server runs none after it) and its error is
   * thrown, so the transaction rolls back whole, as after any failed statement.
   */
  batch(statements: readonly Statement[]): Promise<StatementResult[]>;
  /**
   * The transaction's last statements and its COMMIT in one round trip. Nothing may follow; the
   * function given to `transaction` should return right after. If a statement fails, COMMIT never
   * runs and the transaction rolls back whole.
   */
  commitWith(statements: readonly Statement[]): Promise<StatementResult[]>;
}

/** Rows a statement of a batch changed (0 for a SELECT). */
export function affectedRows(result: StatementResult): number {
  return Array.isArray(result) ? 0 : result.affectedRows;
}

/** The AUTO_INCREMENT value a statement of a batch inserted, if it inserted a row. */
export function insertedId(result: StatementResult): bigint | null {
  return Array.isArray(result) || result.affectedRows !== 1 ? null : BigInt(result.insertId);
}

/** A condition in SQL (for a WHERE), with `?` for every value: handed from one store to another. */
export interface SqlCondition {
  readonly sql: string;
  readonly values: readonly SqlValue[];
}

/** Statements for a batch, and how to read what they returned (given exactly their own results). */
export interface BatchPart<T> {
  readonly statements: readonly Statement[];
  read(results: readonly StatementResult[]): T;
}

/** Parts as one batch: their statements in order, and `read` hands each part its own results. */
export function batchOf<T extends readonly unknown[]>(...parts: { readonly [K in keyof T]: BatchPart<T[K]> }): BatchPart<T> {
  const list = parts as readonly BatchPart<unknown>[];
  return {
    statements: list.flatMap((p) => p.statements),
    read(results) {
      let at = 0;
      return list.map((p) => {
        const n = p.statements.length;
        at += n;
        return p.read(results.slice(at - n, at));
      }) as unknown as T;
    },
  };
}

/**
 * Refuses a statement of a batch that is not exactly one statement: batches are joined with `;`
 * on a connection that accepts several, so a `;` inside one (outside a string literal) would let
 * it run more than its caller meant. Our SQL never has one; this catches a bug, not a client.
 */
function checkSingleStatement(sql: string): void {
  if (withoutStringLiterals(sql).includes(';')) throw new Error(`Refused SQL in a batch: expected one statement, got ${JSON.stringify(sql.slice(0, 60))}`);
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  POOL_WAIT_TIMEOUT,
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_QUERY_INTERRUPTED',
]);

/**
 * Whether a statement (or a wait for a connection) that failed was cut by the request's deadline
 * rather than by its host: its timeout was clamped to the deadline (shorter than the statement
 * timeout, `clampedMs < statementTimeoutMs`) and the timer fired (the driver's, or the pool wait's),
 * or it failed once the deadline had passed.
 * The timer is recognised by its error, not by the clock: Node's timers count whole ms on the
 * monotonic clock and `Date.now()` reads the wall clock, so a timer of `deadline - Date.now()` ms
 * fires while `Date.now()` is still 1 ms short of the deadline about one time in ten (measured:
 * 41–69 of 400). A CI run once answered SHARD_UNAVAILABLE for such a read.
 */
export function cutByDeadline(err: unknown, clampedMs: number, statementTimeoutMs: number, deadline: number | undefined, now: number): boolean {
  if (deadline === undefined || clampedMs >= statementTimeoutMs) return false;
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'PROTOCOL_SEQUENCE_TIMEOUT' || code === POOL_WAIT_TIMEOUT || now >= deadline;
}

/**
 * Turns a driver error into one a client may see. Connection-level failures become a retryable
 * SHARD_UNAVAILABLE naming the shards, not the host; a read-only server (a demoted primary) too.
 * Anything else is a bug or bad SQL: returned as is (the caller rethrows it; the edge masks it).
 */
export function translate(err: unknown, shards: readonly number[]): unknown {
  // A statement of no shard (a catalogue or mod-shard query) names no shard, and never its host.
  const what = shards.length === 0 ? 'A database is' : shards.length === 1 ? `Shard ${shards[0]} is` : `Shards ${shards.join(', ')} are`;
  const code = (err as { code?: unknown }).code;
  const errno = (err as { errno?: unknown }).errno;
  const isTimeout = err instanceof Error && /timeout/i.test(err.message) && (err as { fatal?: boolean }).fatal !== false;
  if ((typeof code === 'string' && UNAVAILABLE_CODES.has(code)) || isTimeout) {
    return new ShardqlError(
      'SHARD_UNAVAILABLE',
      `${what} unavailable; retry later`,
      { shards: [...shards] },
      { cause: err },
    );
  }
  if (errno === 1290 || errno === 1836) {
    // ER_OPTION_PREVENTS_STATEMENT / ER_READ_ONLY_MODE: the server is read-only (a replica or a demoted primary).
    return new ShardqlError(
      'SHARD_UNAVAILABLE',
      `${what} read-only right now; retry later`,
      { shards: [...shards], readOnly: true },
      { cause: err },
    );
  }
  return err;
}

/** What a message names: `shard 12`, `shards 3, 4`, or `a mod shard` (a statement of no shard). */
function shardsText(shards: readonly number[]): string {
  return shards.length === 0 ? 'a mod shard' : shards.length === 1 ? `shard ${shards[0]}` : `shards ${shards.join(', ')}`;
}

/**
 * mysql2's own formatting, except that a statement without values is sent as it is: mysql2 passes
 * `[]` for "no values", and its formatter still walks the whole text for a `?` first, which on an
 * import's multi-row INSERTs (hundreds of kB, sent without values) was a tenth of a worker's CPU.
 */
function formatQuery(this: { config: { stringifyObjects?: boolean } }, sql: string, values: unknown, timezone?: string): string {
  if (values === undefined || values === null || (Array.isArray(values) && values.length === 0)) return sql;
  return mysql.format(sql, values as never, this.config.stringifyObjects ?? false, timezone ?? 'local');
}

/**
 * Resolves shards to hosts through the topology in force and runs SQL on the host's primary.
 * Two mysql2 pools per primary endpoint, made on first use and kept across topology versions: one
 * for single statements (reads, autocommit writes) and one for transactions, whose connections
 * accept several statements per round trip (`Tx.batch`). Only transactions need that, so only
 * their pool allows it: a statement sent through `query` can never carry a second one.
 */
export class ShardRouter {
  readonly #opts: ShardRouterOptions;
  /** Every statement's timeout, ms (`queryTimeoutMs`, default 5000); a read's may be clamped to the request's deadline. */
  readonly #statementTimeoutMs: number;
  readonly #pools = new Map<string, Pool>();
  /** Set by `close`: no pool is opened again (a late caller gets an error, not a connection that keeps the process alive). */
  #closed = false;

  constructor(opts: ShardRouterOptions) {
    this.#opts = opts;
    this.#statementTimeoutMs = opts.queryTimeoutMs ?? 5000;
  }

  get topology(): Topology {
    return this.#opts.topology();
  }

  /** The host holding a shard, for reading: in the request's map (`ctx.topology`) if it has one. */
  hostOfShard(shard: number, ctx?: OpContext): string {
    const host = (ctx?.topology ?? this.topology).hostOfShard(shard);
    if (host === undefined) {
      throw new ShardqlError('INVALID_ID', `Expected an ID on a shard of this deployment, got shard ${shard}`, { reason: 'unknown_shard' });
    }
    return host;
  }

  /**
   * The host holding a shard, for writing: refuses while the shard is paused for a move. Always the
   * newest map, never a request's snapshot: a write must not land where the newest map says the
   * shard no longer lives, nor on a shard it pauses.
   */
  writableHostOfShard(shard: number): string {
    if (this.topology.isPaused(shard)) {
      throw new ShardqlError('WRITES_PAUSED', `Writes to shard ${shard} are paused for maintenance; retry shortly`, { shards: [shard] });
    }
    return this.hostOfShard(shard);
  }

  hostOfId(id: bigint): string {
    return this.hostOfShard(shardOf(id));
  }

  hostOfModShard(modShard: number, ctx?: OpContext): string {
    const host = (ctx?.topology ?? this.topology).hostOfModShard(modShard);
    if (host === undefined) throw new ShardqlError('INVALID_TOPOLOGY', `Mod shard ${modShard} has no host`);
    return host;
  }

  /** The host holding a mod shard, for writing: the newest map, refused while a move pauses it (as writableHostOfShard). */
  writableHostOfModShard(modShard: number): string {
    if (this.topology.isModShardPaused(modShard)) {
      throw new ShardqlError('WRITES_PAUSED', `Writes to mod shard ${modShard} are paused for maintenance; retry shortly`, { modShards: [modShard] });
    }
    return this.hostOfModShard(modShard);
  }

  /** Groups items by the host of their shard: the unit of one round trip. */
  groupByHost<T>(items: Iterable<T>, shardOfItem: (item: T) => number, ctx?: OpContext): Map<string, T[]> {
    const out = new Map<string, T[]>();
    for (const item of items) {
      const host = this.hostOfShard(shardOfItem(item), ctx);
      const list = out.get(host);
      if (list) list.push(item);
      else out.set(host, [item]);
    }
    return out;
  }

  /**
   * The pool of a host's primary in `topology` (a request's snapshot), else in the newest map.
   * `transactions`: the pool whose connections take batches of statements.
   */
  #pool(host: string, topology?: Topology, transactions = false): Pool {
    const endpoint: Endpoint = (topology?.doc.hosts[host] ?? this.topology.hostSpec(host)).primary;
    const key = `${endpoint.host}:${endpoint.port}${transactions ? ' tx' : ''}`;
    let pool = this.#pools.get(key);
    if (!pool) {
      if (this.#closed) throw new Error('the shard router is closed');
      pool = mysql.createPool({
        host: endpoint.host,
        port: endpoint.port,
        user: this.#opts.credentials.user,
        password: this.#opts.credentials.password,
        ...mysqlSslOption(this.#opts.credentials),
        connectionLimit: this.#opts.poolSize ?? 10,
        connectTimeout: this.#opts.connectTimeoutMs ?? 2000,
        supportBigNumbers: true,
        bigNumberStrings: true,
        jsonStrings: true,
        multipleStatements: transactions,
        charset: 'utf8mb4_bin',
        enableKeepAlive: true,
        // No stack captured per query (mysql2 builds one for every call, for its error messages):
        // errors are translated here and never shown raw. It was 3% of a like's CPU.
        trace: false,
        queryFormat: formatQuery,
      });
      this.#pools.set(key, pool);
    }
    return pool;
  }

  readonly #known: KnownDatabases = {
    shard: (s) => this.topology.hostOfShard(s) !== undefined,
    modShard: (m) => this.topology.hostOfModShard(m) !== undefined,
  };

  /**
   * How long the next step of an operation may take (a wait for a connection, one round trip): the
   * statement timeout, clamped to what is left before the request's deadline (`ctx.deadline`). Past
   * the deadline nothing more is sent: REQUEST_TIMEOUT (retryable). Writes too: a request is
   * answered by its deadline whatever host hangs, and a write stopped between its commits leaves
   * its intent to the repair pass, as any failure there does (a retry with its idempotency key
   * finishes it).
   */
  #timeoutWithin(ctx: OpContext, shards: readonly number[]): number {
    const timeout = this.#statementTimeoutMs;
    if (ctx.deadline === undefined) return timeout;
    const left = ctx.deadline - Date.now();
    if (left <= 0) {
      throw new ShardqlError('REQUEST_TIMEOUT', `The request ran out of time before it reached ${shardsText(shards)}; retry later`, { shards: [...shards] });
    }
    return Math.min(timeout, Math.ceil(left));
  }

  /**
   * A connection of `pool`, waited for no longer than `#timeoutWithin` allows: a host that stopped
   * answering holds every connection of its pool until the statements on them time out, and mysql2
   * would queue the next caller behind them with no bound.
   */
  async #connection(pool: Pool, host: string, shards: readonly number[], ctx: OpContext): Promise<PoolConnection> {
    const wait = this.#timeoutWithin(ctx, shards);
    try {
      return await connectionWithin(pool, wait);
    } catch (err) {
      throw this.#failure(err, host, shards, ctx, wait);
    }
  }

  /**
   * A driver error as a client may see it (`translate`); REQUEST_TIMEOUT when the request's
   * deadline cut it (its timeout was clamped to it: `cutByDeadline`), not its host.
   */
  #failure(err: unknown, host: string, shards: readonly number[], ctx: OpContext, clampedMs: number): unknown {
    const e = this.#translate(err, host, shards);
    if (e instanceof ShardqlError && e.code === 'SHARD_UNAVAILABLE' && cutByDeadline(err, clampedMs, this.#statementTimeoutMs, ctx.deadline, Date.now())) {
      return new ShardqlError('REQUEST_TIMEOUT', `The request ran out of time at ${shardsText(shards)}; retry later`, { shards: [...shards] }, { cause: err });
    }
    return e;
  }

  /** One statement on a host: exactly one round trip, recorded in `ctx.stats`. */
  async query(host: string, shards: readonly number[], sql: string, values: readonly SqlValue[], ctx: OpContext = {}): Promise<Row[]> {
    const conn = await this.#connection(this.#pool(host, ctx.topology), host, shards, ctx);
    try {
      return await this.#send(conn, host, shards, sql, values, ctx);
    } finally {
      conn.release(); // a no-op for one `#send` destroyed
    }
  }

  /**
   * One write to a mod shard (one round trip), on its host in the newest map. Waiting for a
   * connection can outlast a swap of the map (a move's flip, while the pool is full of statements
   * the move's lock held): once a connection is there the map is read again, and a mod shard moved
   * or paused meanwhile is not written there (WRITES_PAUSED, retryable), as `transaction` does for
   * shards.
   */
  async writeModShard(modShard: number, sql: string, values: readonly SqlValue[], ctx: OpContext = {}): Promise<Row[]> {
    const host = this.writableHostOfModShard(modShard);
    const conn = await this.#connection(this.#pool(host), host, [], ctx);
    try {
      if (this.topology.hostOfModShard(modShard) !== host || this.topology.isModShardPaused(modShard)) {
        throw new ShardqlError('WRITES_PAUSED', `Writes to mod shard ${modShard} are paused for maintenance; retry shortly`, { modShards: [modShard] });
      }
      return await this.#send(conn, host, [], sql, values, ctx);
    } finally {
      conn.release();
    }
  }

  /** One statement on `conn`; a connection its timeout left waiting on the server is destroyed (`leftWaiting`). */
  async #send(conn: PoolConnection, host: string, shards: readonly number[], sql: string, values: readonly SqlValue[], ctx: OpContext): Promise<Row[]> {
    checkSqlIdentifiers(sql, this.#known);
    const timeout = this.#timeoutWithin(ctx, shards);
    const span = ctx.trace?.begin('sql', sqlSpanAttributes(host, shards, 1), 'client');
    try {
      const [rows] = await conn.query<Row[]>({ sql, values: values as unknown[], timeout });
      ctx.stats?.record(host, shards, rows.length);
      span?.end({ 'db.response.returned_rows': rows.length });
      return rows;
    } catch (err) {
      if (leftWaiting(err)) conn.destroy();
      ctx.stats?.record(host, shards, 0);
      const e = this.#failure(err, host, shards, ctx, timeout);
      span?.end(undefined, e);
      throw e;
    }
  }

  /**
   * Runs `fn` in one local transaction on the host of `shard` (writes refused while it is paused).
   * Commits if `fn` resolves, rolls back if it throws.
   */
  async transaction<T>(shard: number, fn: (tx: Tx) => Promise<T>, ctx: OpContext = {}): Promise<T> {
    const host = this.writableHostOfShard(shard);
    return this.transactionOnHost(host, [shard], fn, ctx);
  }

  /**
   * Runs `fn` in one transaction on `host`. A transaction InnoDB chose as a deadlock victim was
   * rolled back whole, so it is run again (up to 4 times, with a short random pause): `fn` must
   * decide from what it reads, as every caller's does.
   */
  async transactionOnHost<T>(host: string, shards: readonly number[], fn: (tx: Tx) => Promise<T>, ctx: OpContext = {}): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#transactionOnce(host, shards, fn, ctx);
      } catch (err) {
        if ((err as { code?: unknown }).code !== 'ER_LOCK_DEADLOCK' || attempt >= 4) throw err;
        await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 8 * attempt));
      }
    }
  }

  async #transactionOnce<T>(host: string, shards: readonly number[], fn: (tx: Tx) => Promise<T>, ctx: OpContext): Promise<T> {
    const conn = await this.#connection(this.#pool(host, undefined, true), host, shards, ctx);
    // Waiting for a connection can outlast a topology swap: a shard paused (or moved) meanwhile is not written here.
    const moved = (): number | undefined => shards.find((s) => this.topology.isPaused(s) || this.topology.hostOfShard(s) !== host);
    const paused = (s: number): ShardqlError =>
      new ShardqlError('WRITES_PAUSED', `Writes to shard ${s} are paused for maintenance; retry shortly`, { shards: [s] });
    const movedNow = moved();
    if (movedNow !== undefined) {
      conn.release();
      throw paused(movedNow);
    }
    // A connection whose statement timed out still waits for its server: it is destroyed, not rolled back.
    let broken = false;
    // BEGIN rides with the first round trip, COMMIT with the last one if that is `commitWith`: a
    // transaction of one batch is one round trip. Nothing sent at all: nothing to begin or commit.
    let begun = false;
    let ended = false;
    // A batch carrying COMMIT that failed, in case `fn` swallows its error: the transaction is
    // still open then, and must be rolled back, not handed back to the pool.
    let commitFailed: { error: unknown } | undefined;
    const send = async (statements: readonly Statement[], commit: boolean): Promise<StatementResult[]> => {
      if (ended) throw new Error('a statement after the transaction committed (commitWith must be its last call)');
      const all: Statement[] = [...(begun ? [] : [{ sql: 'BEGIN' }]), ...statements, ...(commit ? [{ sql: 'COMMIT' }] : [])];
      const skip = begun ? 0 : 1;
      // Every statement is checked on its own, and each gets exactly its own values.
      const texts = all.map((st) => {
        checkSqlIdentifiers(st.sql, this.#known);
        if (all.length > 1) checkSingleStatement(st.sql);
        return st.values && st.values.length > 0 ? conn.format(st.sql, st.values as unknown[]) : st.sql;
      });
      const timeout = this.#timeoutWithin(ctx, shards);
      begun = true;
      if (commit) ended = true;
      const span = ctx.trace?.begin('sql', sqlSpanAttributes(host, shards, all.length), 'client');
      try {
        const [result] = await conn.query({ sql: texts.join(';\n'), timeout });
        const results = (all.length === 1 ? [result] : result) as StatementResult[];
        const rows = results.reduce((n, r) => n + (Array.isArray(r) ? r.length : 0), 0);
        ctx.stats?.record(host, shards, rows);
        span?.end({ 'db.response.returned_rows': rows });
        return results.slice(skip, skip + statements.length);
      } catch (err) {
        if (leftWaiting(err)) broken = true;
        ctx.stats?.record(host, shards, 0);
        const e = this.#failure(err, host, shards, ctx, timeout);
        span?.end(undefined, e);
        // A statement cancelled by a shard move (it waited on the source's lock) is a paused write: retryable as such.
        const gone = e instanceof ShardqlError && e.code === 'SHARD_UNAVAILABLE' ? moved() : undefined;
        const thrown = gone === undefined ? e : paused(gone);
        if (commit) commitFailed = { error: thrown };
        throw thrown;
      }
    };
    const one = async (sql: string, values: readonly SqlValue[] = []): Promise<StatementResult> => (await send([{ sql, values }], false))[0]!;
    const tx: Tx = {
      query: async (sql, values) => (await one(sql, values)) as Row[],
      execute: async (sql, values) => (await one(sql, values)) as ResultSetHeader,
      batch: (statements) => send(statements, false),
      commitWith: (statements) => send(statements, true),
    };
    try {
      const result = await fn(tx);
      if (commitFailed) throw commitFailed.error;
      if (begun && !ended) await send([], true);
      return result;
    } catch (err) {
      // Also after a batch that failed midway: the statements before the failing one took effect
      // inside the transaction, and COMMIT (if the batch carried it) never ran.
      if (begun && !broken) {
        try {
          // Bounded as every statement is; no time left: the connection is closed instead.
          await conn.query({ sql: 'ROLLBACK', timeout: this.#timeoutWithin(ctx, shards) });
        } catch {
          broken = true; // the connection is gone, or still waiting: do not hand it to the next caller
        }
      }
      throw err;
    } finally {
      if (broken) conn.destroy();
      else conn.release();
    }
  }

  #translate(err: unknown, host: string, shards: readonly number[]): unknown {
    const e = translate(err, shards);
    if (e instanceof ShardqlError && e.details.readOnly === true) this.#opts.onReadOnly?.(host);
    return e;
  }

  /** One trivial round trip to a host's primary: what readiness checks. */
  async ping(host: string): Promise<void> {
    await this.query(host, [], 'SELECT 1', []);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.allSettled(pools.map((p) => p.end()));
  }
}
