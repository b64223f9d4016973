/**
 * Copies whole shard databases from one server to another: `mariadb-dump | mariadb`, streamed, one
 * consistent snapshot per call (--single-transaction). In two parts, so the slow one (DDL) can run
 * before writes are paused: `schema` drops and recreates each table on the target, empty; `data`
 * inserts the rows into those empty tables. Credentials go to both programs in a temporary
 * option file readable only by this user (never on a command line, where `ps` would show them).
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Endpoint } from '../core/topology.ts';
import type { ShardCopyIo } from '../core/serverIo.ts';
import { ShardAdmin } from './shardAdmin.ts';
import type { MysqlCredentials } from './shardRouter.ts';

const DATABASE_NAME = /^(db|msdb)[0-9]{5}$/;
const SEARCH_DIRS = ['/usr/bin', '/usr/local/bin', '/usr/local/mysql/bin', '/opt/homebrew/bin'];

/** The first of `names` found executable in the usual places. */
export function findClientProgram(names: readonly string[]): string {
  for (const dir of SEARCH_DIRS) {
    for (const name of names) {
      const path = join(dir, name);
      try {
        accessSync(path, constants.X_OK);
        return path;
      } catch {
        // keep looking
      }
    }
  }
  throw new Error(`None of ${names.join(', ')} is installed (looked in ${SEARCH_DIRS.join(', ')}); install the MariaDB client`);
}

/**
 * A `[client]` option-file section. Values are double-quoted with `\\`, `\"` and `\n` escaped, which
 * the MariaDB option parser undoes. Example: user shardql, password a"b → `password="a\"b"`.
 */
export function clientOptionFile(credentials: MysqlCredentials, caFile?: string): string {
  const q = (v: string): string => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\r/g, '\\r')}"`;
  // TLS as the application's connections do it (mysqlSslOption): the server's certificate checked,
  // against the configured CA (written next to this file) or the system's.
  const tls = credentials.tls ? `ssl\nssl-verify-server-cert\n${caFile !== undefined ? `ssl-ca=${q(caFile)}\n` : ''}` : '';
  return `[client]\nuser=${q(credentials.user)}\npassword=${q(credentials.password)}\n${tls}`;
}

export interface ShardCopyOptions {
  readonly credentials: MysqlCredentials;
  /** Paths of mariadb-dump and mariadb; found in the usual places by default. */
  readonly programs?: { readonly dump: string; readonly client: string };
  /** Longest one copy may take before both programs are killed, ms. Default 600000. */
  readonly timeoutMs?: number;
}

interface Finished {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

function finished(child: ReturnType<typeof spawn>): Promise<Finished> {
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    if (stderr.length < 4000) stderr += d.toString('utf8');
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stderr: stderr.trim() }));
  });
}

export class ShardCopier {
  readonly #opts: ShardCopyOptions;

  constructor(opts: ShardCopyOptions) {
    this.#opts = opts;
  }

  /** Streams the databases' tables (`schema`) or rows (`data`) from `from` into `to`. Returns the bytes of SQL that went through. */
  async copy(from: Endpoint, to: Endpoint, databases: readonly string[], part: 'schema' | 'data'): Promise<{ bytes: number }> {
    for (const d of databases) if (!DATABASE_NAME.test(d)) throw new Error(`not a shard database name: ${JSON.stringify(d)}`);
    if (databases.length === 0) return { bytes: 0 };
    const programs = this.#opts.programs ?? { dump: findClientProgram(['mariadb-dump', 'mysqldump']), client: findClientProgram(['mariadb', 'mysql']) };
    const dir = mkdtempSync(join(tmpdir(), 'shardql-copy-'));
    const optionFile = join(dir, 'client.cnf');
    try {
      const ca = this.#opts.credentials.tls?.ca;
      const caFile = ca !== undefined ? join(dir, 'ca.pem') : undefined;
      if (caFile !== undefined) writeFileSync(caFile, ca!, { mode: 0o600 });
      writeFileSync(optionFile, clientOptionFile(this.#opts.credentials, caFile), { mode: 0o600 });
      // --defaults-file must come first; it also keeps any my.cnf of the machine out.
      const server = (e: Endpoint): string[] => [
        `--defaults-file=${optionFile}`,
        '--protocol=TCP',
        `--host=${e.host}`,
        `--port=${e.port}`,
        '--default-character-set=utf8mb4',
      ];
      const dump = spawn(
        programs.dump,
        [
          ...server(from),
          '--single-transaction',
          '--skip-lock-tables',
          '--quick',
          '--hex-blob',
          '--no-tablespaces',
          '--skip-dump-date',
          // Shard databases have no triggers; a pre-created one would fire on the restored rows.
          '--skip-triggers',
          part === 'schema' ? '--no-data' : '--no-create-info',
          '--databases',
          ...databases,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      const restore = spawn(programs.client, [...server(to), '--batch'], { stdio: ['pipe', 'ignore', 'pipe'] });
      let bytes = 0;
      dump.stdout.on('data', (d: Buffer) => {
        bytes += d.length;
      });
      dump.stdout.pipe(restore.stdin);
      // A restore that dies must not leave the dump blocked on a full pipe.
      restore.stdin.on('error', () => dump.kill());
      const timeoutMs = this.#opts.timeoutMs ?? 600_000;
      const timer = setTimeout(() => {
        dump.kill('SIGKILL');
        restore.kill('SIGKILL');
      }, timeoutMs);
      const [d, r] = await Promise.all([finished(dump), finished(restore)]).finally(() => clearTimeout(timer));
      if (d.signal === 'SIGKILL' && r.signal === 'SIGKILL')
        throw new Error(`copying ${databases.length} database(s) took longer than ${timeoutMs} ms; stopped`);
      if (d.code !== 0) throw new Error(`mariadb-dump from ${from.host}:${from.port} failed (${d.code ?? d.signal}): ${d.stderr || 'no message'}`);
      if (r.code !== 0) throw new Error(`restoring into ${to.host}:${to.port} failed (${r.code ?? r.signal}): ${r.stderr || 'no message'}`);
      return { bytes };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

/**
 * The I/O a shard move needs (topology/operations ShardCopyIo) over real servers: catalogue, table
 * locks, auto-increments and fingerprints from ShardAdmin, the rows from ShardCopier, all with the
 * operator's credentials. What `topology move` runs, and what tests run it with.
 */
export function shardCopyIo(credentials: MysqlCredentials): ShardCopyIo {
  const admin = new ShardAdmin({ credentials });
  const copier = new ShardCopier({ credentials });
  return {
    existingDatabases: (s, d) => admin.existingDatabases(s, d),
    dropDatabases: (s, d) => admin.dropDatabases(s, d),
    lockForCopy: (s, d, t) => admin.lockForCopy(s, d, t),
    copy: (a, b, d, part) => copier.copy(a, b, d, part),
    alignAutoIncrements: (a, b, d) => admin.alignAutoIncrements(a, b, d),
    fingerprint: (s, d) => admin.fingerprint(s, d),
  };
}
