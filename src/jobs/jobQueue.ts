/**
 * The producer side of the job queue (BullMQ on Redis): enqueue a job of a registered kind, and
 * read each queue's depth, lag and latest failures. The gateway holds one (its services enqueue
 * through the `BackgroundJobs` port; /metrics reads `stats`), and so do the worker (follow-up jobs,
 * schedules) and `shardql jobs`.
 */
import { Queue, type Job } from 'bullmq';
import type { RedisClient } from '../redis/redisClient.ts';
import type { EnqueueOptions, Enqueued } from '../services/backgroundJobs.ts';
import type { JobRegistry, JsonObject, PayloadsOf } from './jobKind.ts';
import { KEEP_COMPLETED, KEEP_FAILED, QUEUE_NAMES, QUEUES, queuePrefix, type QueueName } from './queues.ts';

export interface JobFailure {
  readonly id: string;
  readonly kind: string;
  readonly reason: string;
  /** Runs made, and runs allowed. */
  readonly attempts: number;
  readonly maxAttempts: number;
  /** When it last failed, ms since the epoch. */
  readonly failedAt: number | null;
}

export interface QueueStats {
  readonly queue: QueueName;
  /** Ready to run now (BullMQ's wait and prioritized). */
  readonly waiting: number;
  readonly active: number;
  /** Scheduled for later: retries in backoff, delayed jobs, the next run of a schedule. */
  readonly delayed: number;
  /** Kept failures (ran out of attempts, or could not be decoded). */
  readonly failed: number;
  /** How long the oldest waiting job has been due, ms; null when none waits. */
  readonly lagMs: number | null;
  /** The newest failures first (as many as asked). */
  readonly latestFailures: readonly JobFailure[];
}

export interface JobQueueOptions<R extends JobRegistry> {
  /** A client the queues share (not closed by `close`). */
  readonly redis: RedisClient;
  /** SHARDQL_QUEUE_PREFIX; each queue's keys get their own hash tag (`queuePrefix`). */
  readonly prefix: string;
  readonly registry: R;
  /** Clock, ms. Default Date.now. */
  readonly now?: () => number;
}

export class JobQueue<R extends JobRegistry> {
  readonly #registry: R;
  readonly #queues: ReadonlyMap<QueueName, Queue>;
  readonly #now: () => number;

  constructor(opts: JobQueueOptions<R>) {
    this.#registry = opts.registry;
    this.#now = opts.now ?? Date.now;
    this.#queues = new Map(
      QUEUE_NAMES.map((name) => {
        const queue = new Queue(name, { connection: opts.redis, prefix: queuePrefix(opts.prefix, name) });
        // Connection errors surface on the calls that fail; the client reconnects by itself.
        queue.on('error', () => undefined);
        return [name, queue];
      }),
    );
  }

  /** The BullMQ queue behind a name (the worker schedules on it). */
  queue(name: QueueName): Queue {
    return this.#queues.get(name)!;
  }

  async enqueue<K extends keyof R & string>(kind: K, payload: PayloadsOf<R>[K], opts: EnqueueOptions = {}): Promise<Enqueued> {
    const def = this.#registry[kind];
    if (def === undefined) throw new Error(`no job kind ${JSON.stringify(kind)} is registered`);
    const spec = QUEUES[def.queue];
    const jobId = def.jobId?.(payload);
    const job = await this.queue(def.queue).add(kind, def.encode(payload), {
      attempts: opts.attempts ?? def.attempts ?? spec.attempts,
      backoff: { type: 'exponential', delay: opts.backoffMs ?? def.backoffMs ?? spec.backoffMs },
      removeOnComplete: KEEP_COMPLETED,
      removeOnFail: KEEP_FAILED,
      ...(jobId !== undefined ? { jobId } : {}),
      ...(opts.delayMs ? { delay: opts.delayMs } : {}),
    });
    return { id: job.id! };
  }

  /** A payload as the queue carries it: what a write records in its intent (BackgroundJobs.encode). */
  encode<K extends keyof R & string>(kind: K, payload: PayloadsOf<R>[K]): JsonObject {
    const def = this.#registry[kind];
    if (def === undefined) throw new Error(`no job kind ${JSON.stringify(kind)} is registered`);
    return def.encode(payload);
  }

  /** Enqueues a job recorded as its encoded payload (an intent step), decoding it first as a worker would. */
  async enqueueRecorded(kind: string, data: Readonly<Record<string, unknown>>): Promise<Enqueued> {
    const def = this.#registry[kind as keyof R & string];
    if (def === undefined) throw new Error(`no job kind ${JSON.stringify(kind)} is registered`);
    return this.enqueue(kind as keyof R & string, def.decode(data as JsonObject) as PayloadsOf<R>[keyof R & string]);
  }

  /** Depth, lag and the newest `failures` failures of every queue: 2 round trips in all (every call in parallel). */
  stats(opts: { readonly failures?: number } = {}): Promise<QueueStats[]> {
    return Promise.all(QUEUE_NAMES.map((name) => this.#statsOf(name, opts.failures ?? 0)));
  }

  async #statsOf(name: QueueName, failures: number): Promise<QueueStats> {
    const queue = this.queue(name);
    const [counts, oldest, failed] = await Promise.all([
      queue.getJobCounts('wait', 'prioritized', 'active', 'delayed', 'failed'),
      // The wait list's far end is its oldest job.
      queue.getJobs(['wait'], 0, 0, true),
      failures > 0 ? queue.getJobs(['failed'], 0, failures - 1, false) : Promise.resolve([]),
    ]);
    const n = (k: string): number => counts[k] ?? 0;
    const first = oldest[0];
    return {
      queue: name,
      waiting: n('wait') + n('prioritized'),
      active: n('active'),
      delayed: n('delayed'),
      failed: n('failed'),
      lagMs: first ? Math.max(0, this.#now() - dueAt(first)) : null,
      latestFailures: failed.map((j) => ({
        id: j.id ?? '?',
        kind: j.name,
        reason: j.failedReason ?? '',
        attempts: j.attemptsMade,
        maxAttempts: j.opts.attempts ?? 1,
        failedAt: j.finishedOn ?? null,
      })),
    };
  }

  async close(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((q) => q.close()));
  }
}

/** When a waiting job became due: enqueued, plus any delay it was given. */
function dueAt(job: Job): number {
  return job.timestamp + (job.delay ?? 0);
}

/**
 * Queue stats for a metrics scrape: at most one read per `maxAgeMs` however often it is scraped
 * (concurrent scrapes share it), and null when Redis does not answer within `timeoutMs`, so a
 * scrape never waits on a slow Redis.
 */
export function statsForScrapes(queue: JobQueue<JobRegistry>, opts: { readonly maxAgeMs: number; readonly timeoutMs: number; readonly now?: () => number }): () => Promise<QueueStats[] | null> {
  return statsForScrapesOf(() => queue.stats(), opts);
}

/** As statsForScrapes, for any read (e.g. the feed work counters). */
export function statsForScrapesOf<T>(read: () => Promise<T>, opts: { readonly maxAgeMs: number; readonly timeoutMs: number; readonly now?: () => number }): () => Promise<T | null> {
  const now = opts.now ?? Date.now;
  let last: { at: number; value: Promise<T | null> } | undefined;
  return () => {
    if (last && now() - last.at < opts.maxAgeMs) return last.value;
    const value = new Promise<T | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), opts.timeoutMs);
      read().then(
        (s) => (clearTimeout(timer), resolve(s)),
        () => (clearTimeout(timer), resolve(null)),
      );
    });
    last = { at: now(), value };
    return value;
  };
}
