import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { StackError, errorMessage } from './errors.ts';
import { readTextIfExists, writeFileAtomic } from './files.ts';
import type { StackPlan } from './plan.ts';
import { pollUntil, runToCompletion } from './processes.ts';
import type { ServiceContext, ServiceSpec } from './service.ts';
import type { MysqlEndpoint, StackHost } from './types.ts';
import { ensureStackTls, stackTlsFiles, type StackTlsFiles } from './tls.ts';

/** Longest unix socket path the kernel accepts (sun_path is 108 bytes incl. NUL). */
const MAX_SOCKET_PATH = 107;
/**
 * How long a primary waits for a replica ack before degrading to async.
 * Long enough to ride out a replica hiccup, short enough that a dead replica
 * stalls writes only briefly (only the first commit waits, then semi-sync is
 * off until the replica catches up again).
 */
const SEMI_SYNC_TIMEOUT_MS = 3000;
const REPLICATION_START_TIMEOUT_MS = 30_000;

export type MysqlRole = 'primary' | 'replica';

export interface MysqlInstance {
  name: string;
  role: MysqlRole;
  endpoint: MysqlEndpoint;
  serverId: number;
  /** For replicas: the primary they replicate from, and its service name. */
  source?: MysqlEndpoint;
  sourceName?: string;
  /** Primaries with a replica wait for its ack (semi-sync). */
  semiSyncSource: boolean;
  dir: string;
  dataDir: string;
  /**
   * Private tmpdir: a starting mariadbd deletes every #sql* file in its tmpdir,
   * which breaks other instances' temp tables (and concurrent installs) in a shared /tmp.
   */
  tmpDir: string;
  socket: string;
  cnfFile: string;
  pidFile: string;
  logFile: string;
  installLog: string;
  /** Exists once users (and replication) have been set up. */
  provisionedMarker: string;
  /** The GRANTS_VERSION the accounts were last set up with. */
  grantsMarker: string;
  /** The stack's CA and server certificate: the server offers TLS with them (`src/stack/tls.ts`). */
  stackDir: string;
  tls: StackTlsFiles;
  /** InnoDB buffer pool, MiB (the stack's plan). */
  bufferPoolMb: number;
}

export function mysqlInstances(stackDir: string, host: StackHost, hostIndex: number, bufferPoolMb: number): MysqlInstance[] {
  const make = (role: MysqlRole, endpoint: MysqlEndpoint, source?: MysqlEndpoint): MysqlInstance => {
    const name = `${host.name}-${role}`;
    const dir = join(stackDir, name);
    return {
      name,
      role,
      endpoint,
      // Unique across the stack, stable across restarts: required for replication and promotion.
      serverId: (hostIndex + 1) * 10 + (role === 'primary' ? 1 : 2),
      ...(source ? { source, sourceName: `${host.name}-primary` } : {}),
      semiSyncSource: role === 'primary' && host.replica !== undefined,
      dir,
      dataDir: join(dir, 'data'),
      tmpDir: join(dir, 'tmp'),
      socket: join(dir, 'mysqld.sock'),
      cnfFile: join(dir, 'my.cnf'),
      pidFile: join(dir, `${name}.pid`),
      logFile: join(dir, `${name}.log`),
      installLog: join(dir, 'install.log'),
      provisionedMarker: join(dir, 'provisioned'),
      grantsMarker: join(dir, 'grants'),
      stackDir,
      tls: stackTlsFiles(stackDir),
      bufferPoolMb,
    };
  };
  const list = [make('primary', host.primary)];
  if (host.replica) list.push(make('replica', host.replica, host.primary));
  return list;
}

/** The server configuration; passed with --defaults-file so no system my.cnf leaks in. */
export function renderCnf(inst: MysqlInstance): string {
  const settings: [string, string | number | null][] = [
    ['datadir', inst.dataDir],
    ['port', inst.endpoint.port],
    ['bind-address', inst.endpoint.host],
    ['socket', inst.socket],
    ['tmpdir', inst.tmpDir],
    ['pid-file', inst.pidFile],
    ['log-error', inst.logFile],
    // The stack's choice (StackOptions.innodbBufferPoolMb): small by default, as several
    // instances share a small machine; the benchmark's stacks hold their data set in memory.
    ['innodb-buffer-pool-size', `${inst.bufferPoolMb}M`],
    ['innodb-log-file-size', '48M'],
    ['innodb-log-buffer-size', '8M'],
    ['key-buffer-size', '8M'],
    ['aria-pagecache-buffer-size', '8M'],
    ['max-connections', 500],
    ['table-open-cache', 20000],
    ['table-definition-cache', 20000],
    ['open-files-limit', 65535],
    // Durability first: every acknowledged commit is on disk (redo log and binlog).
    ['innodb-flush-log-at-trx-commit', 1],
    ['sync-binlog', 1],
    ['skip-name-resolve', null],
    // Every client connects from 127.0.0.1: connections dropped mid-handshake (servers killed
    // in failover tests) must never get the one host we have blocked.
    ['max-connect-errors', 1000000000],
    ['character-set-server', 'utf8mb4'],
    ['collation-server', 'utf8mb4_bin'],
    // TLS offered with the stack's own CA (plain connections still accepted): clients given
    // SHARDQL_MYSQL_TLS_CA=<stack>/tls/ca.pem connect as to a managed database that requires it.
    ['ssl-ca', inst.tls.ca],
    ['ssl-cert', inst.tls.cert],
    ['ssl-key', inst.tls.key],
    // Replication: binlog on every instance from the first start, so any instance can be
    // promoted and a replica added later can replay the primary's complete history.
    ['server-id', inst.serverId],
    ['log-bin', join(inst.dataDir, 'mysql-bin')],
    ['relay-log', join(inst.dataDir, 'relay-bin')],
    ['binlog-expire-logs-seconds', 0],
    ['binlog-format', 'ROW'],
    ['gtid-strict-mode', 1],
    ['log-slave-updates', 1],
    ['relay-log-recovery', 1],
    ['report-host', inst.endpoint.host],
    ['report-port', inst.endpoint.port],
    // Notice a silent primary within seconds (heartbeat = half of this) for failover tests.
    ['slave-net-timeout', 10],
    // Every instance can act as a semi-sync replica (e.g. an old primary re-attached after failover).
    ['rpl-semi-sync-slave-enabled', 'ON'],
    ['rpl-semi-sync-master-enabled', inst.semiSyncSource ? 'ON' : 'OFF'],
    ['rpl-semi-sync-master-wait-point', 'AFTER_SYNC'],
    ['rpl-semi-sync-master-timeout', SEMI_SYNC_TIMEOUT_MS],
    // Every server starts read-only, primaries included: only the topology map's primaries are made
    // writable (`shardql topology publish|promote|writable`, `stack up` for the map in force), so a
    // demoted primary that restarts can never take a write. The application's account has no
    // privilege that writes through read_only (see createUsers).
    ['read-only', 1],
  ];
  // mariadbd refuses to run as root unless told to; the option is meaningless otherwise.
  if (process.getuid?.() === 0) settings.unshift(['user', 'root']);
  const lines = settings.map(([key, value]) => (value === null ? key : `${key}=${value}`));
  return `# Generated by shardql stack manager; rewritten on every start.\n[mysqld]\n${lines.join('\n')}\n`;
}

function assertSocketPathFits(inst: MysqlInstance): void {
  if (Buffer.byteLength(inst.socket) > MAX_SOCKET_PATH) {
    throw new StackError(
      `${inst.name}: socket path ${inst.socket} is longer than ${MAX_SOCKET_PATH} bytes; use a shorter stack dir`,
      { service: inst.name },
    );
  }
}

/** Create the system tables once. A half-initialized datadir (failed install) is wiped and redone. */
async function installDataDir(inst: MysqlInstance, ctx: ServiceContext): Promise<void> {
  if (existsSync(join(inst.dataDir, 'mysql', 'global_priv.MAI'))) return;
  ctx.log(`${inst.name}: initializing data directory`);
  rmSync(inst.dataDir, { recursive: true, force: true });
  rmSync(inst.provisionedMarker, { force: true });
  rmSync(inst.grantsMarker, { force: true });
  const args = [
    '--no-defaults',
    `--datadir=${inst.dataDir}`,
    '--auth-root-authentication-method=normal',
    '--skip-test-db',
    '--skip-name-resolve', // no root@<hostname> account (ignored, with a warning, under skip-name-resolve)
    `--tmpdir=${inst.tmpDir}`, // passed through to the bootstrap mariadbd
    ...(process.getuid?.() === 0 ? ['--user=root'] : []),
  ];
  const { code, output } = await runToCompletion(ctx.bins['mariadb-install-db'], args, {
    cwd: inst.dir,
    timeoutMs: 120_000,
  });
  writeFileSync(inst.installLog, output);
  if (code !== 0) {
    const tail = output.trimEnd().split('\n').slice(-10).join('\n');
    throw new StackError(`${inst.name}: mariadb-install-db failed (exit ${code}); see ${inst.installLog}\n${tail}`, {
      service: inst.name,
      logFile: inst.installLog,
    });
  }
}

async function withRootConnection<T>(
  inst: MysqlInstance,
  fn: (conn: Connection) => Promise<T>,
  connectTimeout = 10_000,
): Promise<T> {
  // root@localhost has an empty password (install --auth-root-authentication-method=normal);
  // provisioning drops the other root accounts, so root is only reachable through this socket.
  const conn = await createConnection({ socketPath: inst.socket, user: 'root', password: '', connectTimeout });
  try {
    return await fn(conn);
  } finally {
    await conn.end();
  }
}

/**
 * What the application's account may do: read and write rows of the shard and mod-shard databases,
 * nothing else. No SUPER, no READ_ONLY ADMIN (it cannot write through read_only, nor turn it off), no
 * DDL, no grants, no access to the system tables. Provisioning, shard copies, promotion, fencing
 * and bulk loads use the admin account.
 */
export const APP_PRIVILEGES = 'SELECT, INSERT, UPDATE, DELETE';
/** Database-name patterns (GRANT wildcards) of the shard (db00000) and mod-shard (msdb00000) databases. */
export const APP_DATABASE_PATTERNS = ['db%', 'msdb%'] as const;
/** Bumped when the accounts' grants change: instances provisioned with older grants get them redone. */
const GRANTS_VERSION = '2: app DML on shard databases only; admin ALL';

/**
 * Accounts are created with the binlog off, on every instance: that keeps them
 * out of the GTID stream (a replica has its own copy instead of replaying it,
 * which would collide) and lets any instance become a primary. Idempotent, and it
 * resets the application account's grants to exactly APP_PRIVILEGES (stacks made
 * before gave it everything).
 */
async function createUsers(conn: Connection, plan: StackPlan): Promise<void> {
  const { user, password } = plan.info.mysql;
  const admin = plan.info.mysql.admin;
  if (!admin) throw new StackError('the stack plan has no admin account (resolvePlan adds one)');
  const repl = plan.info.replication;
  await conn.query('SET SESSION sql_log_bin = 0');
  // install-db also creates password-less root@127.0.0.1/::1/<hostname>: reachable over TCP
  // (and warned about at every start under skip-name-resolve). Keep root socket-only.
  const [roots] = await conn.query<RowDataPacket[]>("SELECT Host FROM mysql.user WHERE User = 'root' AND Host <> 'localhost'");
  for (const row of roots) await conn.query('DROP USER ?@?', ['root', row['Host'] as string]);
  for (const host of ['127.0.0.1', 'localhost']) {
    await conn.query('CREATE USER IF NOT EXISTS ?@? IDENTIFIED BY ?', [user, host, password]);
    await conn.query('ALTER USER ?@? IDENTIFIED BY ?', [user, host, password]);
    await conn.query('REVOKE ALL PRIVILEGES, GRANT OPTION FROM ?@?', [user, host]);
    for (const pattern of APP_DATABASE_PATTERNS) await conn.query(`GRANT ${APP_PRIVILEGES} ON \`${pattern}\`.* TO ?@?`, [user, host]);
    // ALL includes SUPER, READ_ONLY ADMIN, REPLICATION SLAVE ADMIN, ...: what provisioning,
    // shard copies, promotion and fencing need.
    await conn.query('CREATE USER IF NOT EXISTS ?@? IDENTIFIED BY ?', [admin.user, host, admin.password]);
    await conn.query('ALTER USER ?@? IDENTIFIED BY ?', [admin.user, host, admin.password]);
    await conn.query('GRANT ALL PRIVILEGES ON *.* TO ?@? WITH GRANT OPTION', [admin.user, host]);
  }
  await conn.query('CREATE USER IF NOT EXISTS ?@? IDENTIFIED BY ?', [repl.user, '127.0.0.1', repl.password]);
  await conn.query('ALTER USER ?@? IDENTIFIED BY ?', [repl.user, '127.0.0.1', repl.password]);
  await conn.query('GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO ?@?', [repl.user, '127.0.0.1']);
}

interface SlaveStatusRow extends RowDataPacket {
  Slave_IO_Running: string;
  Slave_SQL_Running: string;
  Last_IO_Error: string;
  Last_SQL_Error: string;
}

/**
 * Point a replica at its primary with GTID. An empty gtid_slave_pos makes it
 * replay the primary's binlog from the very beginning, which is complete
 * because the primary has had log-bin since its first start.
 */
async function startReplication(conn: Connection, inst: MysqlInstance, plan: StackPlan): Promise<void> {
  const source = inst.source;
  if (!source) throw new Error(`${inst.name} has no source`);
  const repl = plan.info.replication;
  await conn.query('STOP SLAVE');
  await conn.query(
    'CHANGE MASTER TO MASTER_HOST = ?, MASTER_PORT = ?, MASTER_USER = ?, MASTER_PASSWORD = ?, ' +
      'MASTER_USE_GTID = slave_pos, MASTER_CONNECT_RETRY = 1',
    [source.host, source.port, repl.user, repl.password],
  );
  await conn.query('START SLAVE');

  let last: SlaveStatusRow | undefined;
  const running = await pollUntil(async () => {
    const [rows] = await conn.query<SlaveStatusRow[]>('SHOW SLAVE STATUS');
    last = rows[0];
    return last?.Slave_IO_Running === 'Yes' && last.Slave_SQL_Running === 'Yes';
  }, REPLICATION_START_TIMEOUT_MS);
  if (!running) {
    const why = [last?.Last_IO_Error, last?.Last_SQL_Error].filter(Boolean).join('; ') || 'no error reported';
    throw new StackError(
      `${inst.name}: replication from ${source.host}:${source.port} did not start ` +
        `(IO=${last?.Slave_IO_Running ?? '?'}, SQL=${last?.Slave_SQL_Running ?? '?'}): ${why}; see ${inst.logFile}`,
      { service: inst.name, logFile: inst.logFile },
    );
  }
}

/**
 * One-time setup after the first successful start; idempotent, so retried if it was interrupted.
 * An instance provisioned with older grants (GRANTS_VERSION) has its accounts redone.
 */
async function provision(inst: MysqlInstance, ctx: ServiceContext): Promise<void> {
  const provisioned = existsSync(inst.provisionedMarker);
  if (provisioned && readTextIfExists(inst.grantsMarker) === `${GRANTS_VERSION}\n`) return;
  ctx.log(`${inst.name}: ${provisioned ? 'updating account grants' : `creating users${inst.role === 'replica' ? ' and starting replication' : ''}`}`);
  try {
    await withRootConnection(inst, async (conn) => {
      await createUsers(conn, ctx.plan);
      if (inst.role === 'replica' && !provisioned) await startReplication(conn, inst, ctx.plan);
    });
  } catch (err) {
    if (err instanceof StackError) throw err;
    throw new StackError(`${inst.name}: provisioning failed: ${errorMessage(err)}`, {
      service: inst.name,
      logFile: inst.logFile,
      cause: err,
    });
  }
  if (!provisioned) writeFileSync(inst.provisionedMarker, `${new Date().toISOString()}\n`);
  writeFileSync(inst.grantsMarker, `${GRANTS_VERSION}\n`);
}

/**
 * A running instance whose generated config changed (typically: replicas were
 * added to a stack created without them, or another buffer pool size asked for):
 * persist the new config and apply the semi-sync settings and the buffer pool
 * size live; everything else takes effect at the next restart.
 */
async function reconcileRunning(inst: MysqlInstance, ctx: ServiceContext): Promise<void> {
  const cnf = renderCnf(inst);
  if (readTextIfExists(inst.cnfFile) === cnf) return;
  ctx.log(`${inst.name}: configuration changed; applying semi-sync settings and the buffer pool size live (the rest, e.g. TLS, applies at the next restart)`);
  await withRootConnection(inst, async (conn) => {
    await resizeBufferPool(conn, inst.bufferPoolMb * 2 ** 20);
    await conn.query('SET GLOBAL rpl_semi_sync_master_wait_point = AFTER_SYNC');
    await conn.query('SET GLOBAL rpl_semi_sync_master_timeout = ?', [SEMI_SYNC_TIMEOUT_MS]);
    await conn.query(`SET GLOBAL rpl_semi_sync_master_enabled = ${inst.semiSyncSource ? 'ON' : 'OFF'}`);
    await conn.query('SET GLOBAL rpl_semi_sync_slave_enabled = ON');
  });
  writeFileAtomic(inst.cnfFile, cnf);
}

/** Resizes InnoDB's buffer pool online and waits until MariaDB says it is done (it rounds up to whole chunks). */
async function resizeBufferPool(conn: Connection, bytes: number): Promise<void> {
  const [size] = await conn.query<RowDataPacket[]>('SELECT @@innodb_buffer_pool_size AS b');
  if (Number(size[0]?.['b']) === bytes) return;
  await conn.query('SET GLOBAL innodb_buffer_pool_size = ?', [bytes]);
  const done = await pollUntil(async () => {
    const [rows] = await conn.query<RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_resize_status'");
    const status = String(rows[0]?.Value ?? '');
    return status === '' || /completed/i.test(status);
  }, 120_000);
  if (!done) throw new StackError(`the InnoDB buffer pool did not finish resizing to ${bytes / 2 ** 20} MiB within 120 s`);
}

/**
 * Liveness: an authenticated ping over the unix socket. (A bare TCP probe would
 * log an "Aborted connection" warning on every check; the socket and the TCP
 * port are opened together, and mariadbd exits if it cannot bind the port.)
 */
async function mysqlPings(inst: MysqlInstance): Promise<boolean> {
  try {
    await withRootConnection(inst, (conn) => conn.ping(), 1000);
    return true;
  } catch {
    return false;
  }
}

export function mysqlService(inst: MysqlInstance): ServiceSpec {
  return {
    name: inst.name,
    binary: 'mariadbd',
    dir: inst.dir,
    pidFile: inst.pidFile,
    logFile: inst.logFile,
    host: inst.endpoint.host,
    ports: [inst.endpoint.port],
    address: `${inst.endpoint.host}:${inst.endpoint.port}`,
    ...(inst.sourceName !== undefined ? { dependsOn: inst.sourceName } : {}),
    stopPhase: inst.role === 'replica' ? 0 : 1,
    args: () => [`--defaults-file=${inst.cnfFile}`],
    isReady: () => mysqlPings(inst),
    prepare: async (ctx) => {
      assertSocketPathFits(inst);
      mkdirSync(inst.tmpDir, { recursive: true });
      await installDataDir(inst, ctx);
      ensureStackTls(inst.stackDir);
      writeFileAtomic(inst.cnfFile, renderCnf(inst));
    },
    provision: (ctx) => provision(inst, ctx),
    reconcile: (ctx) => reconcileRunning(inst, ctx),
  };
}
