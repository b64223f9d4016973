import { hashTag } from '../core/redisKeySlot.ts';

/**
 * The queues background jobs run on, split by priority: each is its own BullMQ queue with its own
 * worker concurrency, so a backlog of slow sweeps can never hold a slot fan-out needs.
 *
 * Why separate queues rather than BullMQ priorities on one queue: a priority only orders the jobs
 * *waiting*; once every worker slot has taken a long sweep (none of them waiting on fan-out at that
 * moment), the next fan-out waits for a sweep to end. Separate queues give each class slots of its
 * own, their own depth and lag in `shardql jobs` and /metrics, and let an operator run workers for
 * one class only (`shardql worker --queues feed`). BullMQ priorities also cost a sorted-set insert
 * per job, which the fan-out queue (the busiest) does not need.
 */

export const QUEUE_NAMES = ['feed', 'sweeps', 'import'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

export interface QueueSpec {
  /** What runs there, for help texts. */
  readonly summary: string;
  /** Jobs one worker process runs at once on this queue (SHARDQL_WORKER_CONCURRENCY overrides). */
  readonly concurrency: number;
  /** Runs of a job before it is kept as failed. */
  readonly attempts: number;
  /** First retry delay, ms; doubled each retry (BullMQ's exponential backoff: d, 2d, 4d, …). */
  readonly backoffMs: number;
}

export const QUEUES: Readonly<Record<QueueName, QueueSpec>> = {
  // User-facing: a new pin reaching its followers' feeds. Many short jobs.
  feed: { summary: 'user-facing fan-out (first)', concurrency: 8, attempts: 8, backoffMs: 500 },
  // Repair, reconcile, and later TTL sweeps: long, few, never urgent.
  sweeps: { summary: 'repair, reconcile and other sweeps (last)', concurrency: 1, attempts: 4, backoffMs: 5000 },
  // `shardql import`: chunks of an unsharded database, thousands of rows each. Its own queue so a
  // long import never delays the repair pass, and workers can be added for an import alone
  // (`shardql worker --queues import`). Half the time waiting on MySQL: four at once per worker
  // kept both cores busier than two (bench:import, 1 worker: 13,061 rows/s against 11,986).
  import: { summary: 'chunks of an unsharded database being imported (shardql import)', concurrency: 4, attempts: 5, backoffMs: 1000 },
};

/** Finished jobs kept for `shardql jobs`: failures a week (or the newest 10,000), successes an hour. */
export const KEEP_FAILED = { age: 7 * 86400, count: 10_000 } as const;
export const KEEP_COMPLETED = { age: 3600, count: 1000 } as const;

/** SHARDQL_QUEUE_PREFIX's default. */
export const DEFAULT_QUEUE_PREFIX = 'shardql:jobs';

/**
 * The BullMQ key prefix of one queue: a Redis Cluster hash tag, so every key of the queue (BullMQ's
 * scripts touch several at once) lands in one slot, while different queues may live on different
 * primaries. 'shardql:jobs' + 'feed' → '{shardql:jobs:feed}', and BullMQ's keys are then
 * '{shardql:jobs:feed}:feed:wait', '…:active', …
 */
export function queuePrefix(base: string, queue: QueueName): string {
  if (base === '' || /[{}]/.test(base)) throw new Error(`a queue prefix must be non-empty and hold no braces (it becomes a hash tag), got ${JSON.stringify(base)}`);
  return hashTag(`${base}:${queue}`);
}

/** `feed,sweeps` → the queues named; every name must be known. */
export function parseQueueList(text: string): QueueName[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.filter((n) => !(QUEUE_NAMES as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length > 0) {
    throw new Error(`queues must be a comma-separated list of ${QUEUE_NAMES.join(', ')}, got ${JSON.stringify(text)}`);
  }
  return [...new Set(names as QueueName[])];
}

/**
 * SHARDQL_WORKER_CONCURRENCY: `16` (the fan-out queue; sweeps keep theirs) or per queue,
 * `feed=16,sweeps=2`. Each value 1..1000.
 */
export function parseConcurrency(text: string): Partial<Record<QueueName, number>> {
  const out: Partial<Record<QueueName, number>> = {};
  const value = (v: string): number => {
    if (!/^[0-9]{1,4}$/.test(v) || Number(v) < 1 || Number(v) > 1000) throw new Error(`a concurrency must be an integer in 1..1000, got ${JSON.stringify(v)}`);
    return Number(v);
  };
  if (/^\s*[0-9]+\s*$/.test(text)) return { feed: value(text.trim()) };
  for (const part of text.split(',')) {
    const m = /^\s*([a-z]+)\s*=\s*(\S+)\s*$/.exec(part);
    if (!m || !(QUEUE_NAMES as readonly string[]).includes(m[1]!)) {
      throw new Error(`concurrency must look like 16 or feed=16,sweeps=1 (queues: ${QUEUE_NAMES.join(', ')}), got ${JSON.stringify(text)}`);
    }
    out[m[1] as QueueName] = value(m[2]!);
  }
  return out;
}
