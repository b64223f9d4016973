/**
 * What MariaDB itself counted over a measured run, summed over every primary of the benchmark's
 * stack: statements (`Questions`: each statement of a multi-statement batch counts once, BEGIN and
 * COMMIT included) and durable commits (`Binlog_commits`: transactions that wrote, each fsynced
 * with the binlog; a read-only transaction is none). Read before and after each warm run, like the
 * CPU accounting, so the report says per request what a system asks of the databases, not only
 * what the databases spent on it. The probe's own reads add one statement per host per reading.
 */
import mysql from 'mysql2/promise';
import type { StackInfo } from '../src/stack/localStack.ts';

export interface MysqlCounters {
  readonly statements: number;
  readonly commits: number;
}

/** Per request over the measured runs of one system (null when no MariaDB was read). */
export interface MysqlPerRequest {
  readonly statements: number;
  readonly commits: number;
}

/** A system's measured runs so far: what the counters gained, over how many requests. */
export interface MysqlTally {
  readonly gained: MysqlCounters;
  readonly requests: number;
}

export const NO_MYSQL: MysqlTally = { gained: { statements: 0, commits: 0 }, requests: 0 };

/** `tally` plus one run's gain from `before` to `after` over `requests`; null once a reading failed. */
export function addMysql(tally: MysqlTally | null, before: MysqlCounters | null, after: MysqlCounters | null, requests: number): MysqlTally | null {
  if (!tally || !before || !after) return null;
  return {
    gained: { statements: tally.gained.statements + after.statements - before.statements, commits: tally.gained.commits + after.commits - before.commits },
    requests: tally.requests + requests,
  };
}

export function mysqlPerRequest(tally: MysqlTally | null): MysqlPerRequest | null {
  if (!tally || tally.requests === 0) return null;
  return { statements: tally.gained.statements / tally.requests, commits: tally.gained.commits / tally.requests };
}

export class MysqlProbe {
  readonly #stack: StackInfo;
  #conns: mysql.Connection[] | undefined;

  constructor(stack: StackInfo) {
    this.#stack = stack;
  }

  /** The counters now, summed over the primaries; null if one did not answer. */
  async counters(): Promise<MysqlCounters | null> {
    try {
      this.#conns ??= await this.#connect();
      let statements = 0;
      let commits = 0;
      for (const c of this.#conns) {
        const [rows] = await c.query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions', 'Binlog_commits')");
        for (const r of rows as { Variable_name: string; Value: string }[]) {
          if (r.Variable_name === 'Questions') statements += Number(r.Value);
          else commits += Number(r.Value);
        }
      }
      return { statements, commits };
    } catch {
      return null;
    }
  }

  async #connect(): Promise<mysql.Connection[]> {
    const { admin, user, password } = this.#stack.mysql;
    const account = admin ?? { user, password };
    return Promise.all(this.#stack.mysql.hosts.map((h) => mysql.createConnection({ host: h.primary.host, port: h.primary.port, user: account.user, password: account.password })));
  }

  async close(): Promise<void> {
    const conns = this.#conns ?? [];
    this.#conns = undefined;
    await Promise.allSettled(conns.map((c) => c.end()));
  }
}
