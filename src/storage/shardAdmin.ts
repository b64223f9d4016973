/**
 * Operator-side SQL on one server, addressed by endpoint rather than through the topology: what
 * shard moves and replica promotion need (catalogue, checksums, table locks, replication control).
 * Every call opens its own short connection with the operator's credentials; nothing is pooled.
 */
import mysql from 'mysql2/promise';
import type { Connection, RowDataPacket } from 'mysql2/promise';
import type { Endpoint } from '../core/topology.ts';
import { mysqlSslOption, type MysqlCredentials } from './shardRouter.ts';
import type { ReplicaState } from '../core/serverIo.ts';

/** Shard and mod-shard database names: the only names these statements interpolate. */
const DATABASE_NAME = /^(db|msdb)[0-9]{5}$/;

function checkedDatabases(databases: readonly string[]): string[] {
  for (const d of databases) if (!DATABASE_NAME.test(d)) throw new Error(`not a shard database name: ${JSON.stringify(d)}`);
  return [...databases];
}

const quote = (name: string): string => `\`${name.replace(/`/g, '``')}\``;

export interface ShardAdminOptions {
  readonly credentials: MysqlCredentials;
  /** Connect timeout, ms. Default 2000. */
  readonly connectTimeoutMs?: number;
}

export interface TableFingerprint {
  readonly rows: number;
  readonly checksum: string | null;
  /** The next auto-increment value; null for a table without one. */
  readonly autoIncrement: number | null;
}

/** What a replica reports about its replication: the shape the topology operations expect. */
export type ReplicationState = ReplicaState;

export class ShardAdmin {
  readonly #opts: ShardAdminOptions;

  constructor(opts: ShardAdminOptions) {
    this.#opts = opts;
  }

  async #connect(server: Endpoint): Promise<Connection> {
    return mysql.createConnection({
      host: server.host,
      port: server.port,
      user: this.#opts.credentials.user,
      password: this.#opts.credentials.password,
      ...mysqlSslOption(this.#opts.credentials),
      connectTimeout: this.#opts.connectTimeoutMs ?? 2000,
      supportBigNumbers: true,
      bigNumberStrings: true,
      multipleStatements: false,
    });
  }

  async #with<T>(server: Endpoint, fn: (c: Connection) => Promise<T>): Promise<T> {
    const conn = await this.#connect(server);
    try {
      return await fn(conn);
    } finally {
      await conn.end().catch(() => conn.destroy());
    }
  }

  async #rows(c: Connection, sql: string, values: unknown[] = []): Promise<RowDataPacket[]> {
    const [rows] = await c.query<RowDataPacket[]>(sql, values);
    return rows;
  }

  /** Answers a trivial query within the connect timeout. */
  async reachable(server: Endpoint): Promise<boolean> {
    try {
      await this.#with(server, (c) => this.#rows(c, 'SELECT 1'));
      return true;
    } catch {
      return false;
    }
  }

  async existingDatabases(server: Endpoint, databases: readonly string[]): Promise<string[]> {
    const names = checkedDatabases(databases);
    if (names.length === 0) return [];
    return this.#with(server, async (c) => {
      const rows = await this.#rows(c, 'SELECT schema_name AS db FROM information_schema.schemata WHERE schema_name IN (?)', [names]);
      return rows.map((r) => String(r.db)).sort();
    });
  }

  async dropDatabases(server: Endpoint, databases: readonly string[]): Promise<void> {
    const names = checkedDatabases(databases);
    await this.#with(server, async (c) => {
      for (const db of names) await c.query(`DROP DATABASE IF EXISTS ${quote(db)}`);
    });
  }

  /** The databases' tables, quoted (`\`db00004\`.\`pins\``), with their next auto-increment value. */
  async #tableList(c: Connection, databases: readonly string[]): Promise<{ name: string; key: string; autoIncrement: number | null }[]> {
    const names = checkedDatabases(databases);
    if (names.length === 0) return [];
    const rows = await this.#rows(
      c,
      "SELECT table_schema AS db, table_name AS t, auto_increment AS ai FROM information_schema.tables WHERE table_schema IN (?) AND table_type = 'BASE TABLE' ORDER BY table_schema, table_name",
      [names],
    );
    return rows.map((r) => ({
      name: `${quote(String(r.db))}.${quote(String(r.t))}`,
      key: `${String(r.db)}.${String(r.t)}`,
      autoIncrement: r.ai === null || r.ai === undefined ? null : Number(r.ai),
    }));
  }

  async #tables(c: Connection, databases: readonly string[]): Promise<string[]> {
    return (await this.#tableList(c, databases)).map((t) => t.name);
  }

  /**
   * Raises every table's auto-increment counter on `to` to at least its value on `from`: a copy must
   * not hand out again a local ID the source handed out (rows inserted and rolled back leave gaps that
   * a restore alone does not reproduce). Returns how many tables changed; usually none.
   */
  async alignAutoIncrements(from: Endpoint, to: Endpoint, databases: readonly string[]): Promise<number> {
    const source = await this.#with(from, (c) => this.#tableList(c, databases));
    return this.#with(to, async (c) => {
      const target = new Map((await this.#tableList(c, databases)).map((t) => [t.key, t]));
      let changed = 0;
      for (const s of source) {
        const t = target.get(s.key);
        if (s.autoIncrement === null || !t || (t.autoIncrement !== null && t.autoIncrement >= s.autoIncrement)) continue;
        await c.query(`ALTER TABLE ${t.name} AUTO_INCREMENT = ${Math.trunc(s.autoIncrement)}`);
        changed++;
      }
      return changed;
    });
  }

  /**
   * Row count and CHECKSUM TABLE of every table of the databases, keyed `db.table`. Two round trips
   * per call whatever the number of tables.
   */
  async fingerprint(server: Endpoint, databases: readonly string[]): Promise<Map<string, TableFingerprint>> {
    return this.#with(server, async (c) => {
      const tables = await this.#tableList(c, databases);
      const out = new Map<string, TableFingerprint>();
      if (tables.length === 0) return out;
      const checksums = new Map((await this.#rows(c, `CHECKSUM TABLE ${tables.map((t) => t.name).join(', ')}`)).map((r) => [String(r.Table), r.Checksum]));
      const counts = await this.#rows(c, tables.map((t, i) => `SELECT ${i} AS i, COUNT(*) AS n FROM ${t.name}`).join(' UNION ALL '));
      const rowsByIndex = new Map(counts.map((r) => [Number(r.i), Number(r.n)]));
      tables.forEach((t, i) => {
        const sum = checksums.get(t.key);
        out.set(t.key, { rows: rowsByIndex.get(i) ?? -1, checksum: sum === null || sum === undefined ? null : String(sum), autoIncrement: t.autoIncrement });
      });
      return out;
    });
  }

  /**
   * FLUSH TABLES … WITH READ LOCK over every table of the databases, on a connection held until
   * release(): taking it waits for write transactions open on those tables (they hold metadata locks
   * until they end), then every new write to them waits; reads go on. release() first cancels (KILL
   * QUERY) statements still waiting for the lock — they fail, so nothing is written to a copy that no
   * longer serves — then unlocks.
   */
  async lockForCopy(
    server: Endpoint,
    databases: readonly string[],
    timeoutMs: number,
  ): Promise<{ waitedMs: number; release(): Promise<{ cancelled: number }> }> {
    const names = checkedDatabases(databases);
    const conn = await this.#connect(server);
    try {
      const tables = await this.#tables(conn, names);
      await conn.query(`SET SESSION lock_wait_timeout = ${Math.max(1, Math.ceil(timeoutMs / 1000))}`);
      const started = Date.now();
      if (tables.length > 0) await conn.query(`FLUSH TABLES ${tables.join(', ')} WITH READ LOCK`);
      const waitedMs = Date.now() - started;
      const [[own]] = await conn.query<RowDataPacket[]>('SELECT CONNECTION_ID() AS id');
      const ownId = Number(own?.id);
      let released = false;
      return {
        waitedMs,
        release: async () => {
          if (released) return { cancelled: 0 };
          released = true;
          let cancelled = 0;
          try {
            const waiting = await this.#rows(
              conn,
              "SELECT id, info FROM information_schema.processlist WHERE id <> ? AND state LIKE 'Waiting for table metadata lock%'",
              [ownId],
            );
            for (const w of waiting) {
              const info = String(w.info ?? '');
              if (names.some((db) => info.includes(db))) {
                await conn.query(`KILL QUERY ${Number(w.id)}`).catch(() => undefined);
                cancelled++;
              }
            }
            await conn.query('UNLOCK TABLES');
          } finally {
            await conn.end().catch(() => conn.destroy());
          }
          return { cancelled };
        },
      };
    } catch (err) {
      conn.destroy();
      throw err;
    }
  }

  // Replication ----------------------------------------------------------------------------------

  async replicaState(server: Endpoint): Promise<ReplicationState> {
    return this.#with(server, async (c) => {
      const [status] = await this.#rows(c, 'SHOW SLAVE STATUS');
      const [vars] = await this.#rows(c, 'SELECT @@global.read_only AS ro, @@global.gtid_slave_pos AS applied, @@global.rpl_semi_sync_slave_enabled AS semi');
      const [semiStatus] = await this.#rows(c, "SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_slave_status'");
      const sqlError = status ? String(status.Last_SQL_Error ?? '') : '';
      return {
        replicating: status !== undefined,
        ...(status ? { source: { host: String(status.Master_Host), port: Number(status.Master_Port) } } : {}),
        ioRunning: status?.Slave_IO_Running === 'Yes',
        sqlRunning: status?.Slave_SQL_Running === 'Yes',
        ...(sqlError !== '' ? { sqlError } : {}),
        receivedGtid: String(status?.Gtid_IO_Pos ?? ''),
        appliedGtid: String(vars?.applied ?? ''),
        readOnly: Number(vars?.ro) === 1,
        semiSync: Number(vars?.semi) === 1 && semiStatus?.Value === 'ON',
      };
    });
  }

  async binlogPosition(server: Endpoint): Promise<string> {
    return this.#with(server, async (c) => String((await this.#rows(c, 'SELECT @@global.gtid_binlog_pos AS pos'))[0]?.pos ?? ''));
  }

  async stopReceiving(server: Endpoint): Promise<void> {
    await this.#with(server, (c) => c.query('STOP SLAVE IO_THREAD'));
  }

  /** MASTER_GTID_WAIT: true once the server has applied `gtid`, false after timeoutMs. */
  async waitApplied(server: Endpoint, gtid: string, timeoutMs: number): Promise<boolean> {
    return this.#with(server, async (c) => {
      const [row] = await this.#rows(c, 'SELECT MASTER_GTID_WAIT(?, ?) AS r', [gtid, timeoutMs / 1000]);
      return Number(row?.r) === 0;
    });
  }

  /** Forgets the replication source (read_only stays as it is: makeWritable). Returns the GTID position it holds. */
  async makePrimary(server: Endpoint): Promise<string> {
    return this.#with(server, async (c) => {
      await c.query('STOP SLAVE');
      await c.query('RESET SLAVE ALL');
      return String((await this.#rows(c, 'SELECT @@global.gtid_current_pos AS pos'))[0]?.pos ?? '');
    });
  }

  /**
   * read_only = 0 — refused (throws) on a server that replicates from another: a replica that took
   * writes would diverge from its source. Returns whether it was read-only.
   */
  async makeWritable(server: Endpoint): Promise<{ wasReadOnly: boolean }> {
    return this.#with(server, async (c) => {
      const [status] = await this.#rows(c, 'SHOW SLAVE STATUS');
      if (status !== undefined) {
        throw new Error(`it replicates from ${String(status.Master_Host)}:${String(status.Master_Port)}; a replica is never made writable`);
      }
      const wasReadOnly = Number((await this.#rows(c, 'SELECT @@global.read_only AS ro'))[0]?.ro) === 1;
      if (wasReadOnly) await c.query('SET GLOBAL read_only = 0');
      return { wasReadOnly };
    });
  }

  /** read_only = 1; accounts without READ_ONLY ADMIN (the application's) can no longer write there. */
  async fence(server: Endpoint): Promise<void> {
    await this.#with(server, (c) => c.query('SET GLOBAL read_only = 1'));
  }
}
