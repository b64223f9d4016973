/**
 * A steady GraphQL load for the topology tests: a few workers, each in a loop picking a user and
 * either reading their profile (user → boards → pins) or pinning to their board. WRITES_PAUSED is
 * retryable and retried (every 10 ms); any other failure is recorded. "Acknowledged" = a createPin that
 * returned a pin.
 */
import { shardOf } from '../../src/core/ids.ts';
import type { GqlResult } from './gateway.ts';

export interface LoadUser {
  readonly id: string;
  readonly token: string;
  readonly boardId: string;
  readonly shard: number;
}

export interface AckedWrite {
  readonly pinId: string;
  readonly boardId: string;
  readonly userId: string;
  readonly shard: number;
  readonly title: string;
  /** When the acknowledgement arrived (ms epoch). */
  readonly at: number;
}

export interface Failure {
  readonly kind: 'read' | 'write';
  readonly shard: number;
  readonly code: string;
  readonly message: string;
  readonly at: number;
}

export interface LoadStats {
  reads: number;
  writes: number;
  /** WRITES_PAUSED answers, each retried. */
  pausedRetries: number;
  firstPausedAt?: number;
  lastPausedAt?: number;
  readonly acked: AckedWrite[];
  readonly failures: Failure[];
  /** Requests that succeeded, by the shard of the user they were for. */
  readonly servedByShard: Map<number, number>;
}

export interface Load {
  readonly stats: LoadStats;
  stop(): Promise<LoadStats>;
}

const PROFILE = `query($id: ID!) { user(id: $id) { id username pinCount boards(first: 2) { edges { node { id name pinCount pins(first: 5) { edges { node { id title } } } } } } } }`;
const CREATE_PIN = `mutation($board: ID!, $title: String!) { createPin(input: { boardId: $board, title: $title }) { id title } }`;

type Gql = (query: string, variables?: Record<string, unknown>, token?: string) => Promise<GqlResult>;

export interface LoadOptions {
  readonly workers?: number;
  /** Share of operations that are writes. Default 0.4. */
  readonly writeShare?: number;
  /** Give up retrying a paused write after this long, ms (then it counts as a failure). Default 20000. */
  readonly pausedRetryMs?: number;
}

function firstError(r: GqlResult): { code: string; message: string } | undefined {
  const e = r.body.errors?.[0];
  return e ? { code: String(e.extensions?.code ?? 'UNKNOWN'), message: e.message } : undefined;
}

export function startLoad(gql: Gql, users: readonly LoadUser[], opts: LoadOptions = {}): Load {
  const stats: LoadStats = { reads: 0, writes: 0, pausedRetries: 0, acked: [], failures: [], servedByShard: new Map() };
  const served = (u: LoadUser): void => void stats.servedByShard.set(u.shard, (stats.servedByShard.get(u.shard) ?? 0) + 1);
  let running = true;
  let n = 0;
  const pick = (): LoadUser => users[Math.floor(Math.random() * users.length)]!;

  const read = async (u: LoadUser): Promise<void> => {
    stats.reads++;
    try {
      const r = await gql(PROFILE, { id: u.id }, u.token);
      const err = firstError(r);
      if (err || r.body.data?.user?.id !== u.id)
        stats.failures.push({ kind: 'read', shard: u.shard, ...(err ?? { code: 'WRONG_DATA', message: r.text.slice(0, 200) }), at: Date.now() });
      else served(u);
    } catch (e) {
      stats.failures.push({ kind: 'read', shard: u.shard, code: 'FETCH', message: String(e), at: Date.now() });
    }
  };

  const write = async (u: LoadUser): Promise<void> => {
    stats.writes++;
    const title = `load ${++n}`;
    const started = Date.now();
    for (;;) {
      let r: GqlResult;
      try {
        r = await gql(CREATE_PIN, { board: u.boardId, title }, u.token);
      } catch (e) {
        stats.failures.push({ kind: 'write', shard: u.shard, code: 'FETCH', message: String(e), at: Date.now() });
        return;
      }
      const err = firstError(r);
      if (!err && r.body.data?.createPin?.id) {
        const pinId = String(r.body.data.createPin.id);
        stats.acked.push({ pinId, boardId: u.boardId, userId: u.id, shard: shardOf(BigInt(pinId)), title, at: Date.now() });
        served(u);
        return;
      }
      if (err?.code === 'WRITES_PAUSED' && Date.now() - started < (opts.pausedRetryMs ?? 20_000)) {
        stats.pausedRetries++;
        stats.firstPausedAt ??= Date.now();
        stats.lastPausedAt = Date.now();
        await new Promise((res) => setTimeout(res, 10));
        continue;
      }
      stats.failures.push({ kind: 'write', shard: u.shard, ...(err ?? { code: 'NO_DATA', message: r.text.slice(0, 200) }), at: Date.now() });
      return;
    }
  };

  const worker = async (): Promise<void> => {
    while (running) {
      const u = pick();
      if (Math.random() < (opts.writeShare ?? 0.4)) await write(u);
      else await read(u);
    }
  };
  const workers = Array.from({ length: opts.workers ?? 4 }, worker);
  return {
    stats,
    async stop() {
      running = false;
      await Promise.all(workers);
      return stats;
    },
  };
}

/** Successful requests for users whose shard `which` accepts. */
export function servedWhere(stats: LoadStats, which: (shard: number) => boolean): number {
  let n = 0;
  for (const [shard, count] of stats.servedByShard) if (which(shard)) n += count;
  return n;
}

/** Signs up `count` users, each with one board. */
export async function createUsers(gql: Gql, count: number, prefix: string): Promise<LoadUser[]> {
  const out: LoadUser[] = [];
  for (let i = 0; i < count; i++) {
    const u = await gql(`mutation($u: String!) { createUser(input: { username: $u }) { user { id } token } }`, { u: `${prefix}${i}` });
    if (u.body.errors) throw new Error(`createUser failed: ${u.text}`);
    const id = String(u.body.data.createUser.user.id);
    const tok = String(u.body.data.createUser.token);
    const b = await gql(`mutation { createBoard(input: { name: "main" }) { id } }`, {}, tok);
    if (b.body.errors) throw new Error(`createBoard failed: ${b.text}`);
    out.push({ id, token: tok, boardId: String(b.body.data.createBoard.id), shard: shardOf(BigInt(id)) });
  }
  return out;
}

/** Milliseconds, as a short figure. */
export const ms = (n: number): string => `${Math.round(n)} ms`;
