/**
 * The consumer side: one BullMQ worker per queue this process serves, each with its own
 * concurrency, running the registered handler of each job.
 *
 * - A job is decoded once, here; a payload that does not decode, or a kind this queue does not
 *   know, fails at once (UnrecoverableError: no retry can fix it) and is kept as failed.
 * - A handler that throws is retried with exponential backoff until its attempts run out, then kept.
 * - A worker killed mid-job (SIGKILL, a lost machine) stops renewing its lock; after `lockMs` the
 *   job is stalled, and the next stalled check (every `stalledCheckMs`, by any worker) puts it
 *   back to run again. Handlers are idempotent, so a job that ran partly and runs again takes
 *   effect once.
 * - `stop()` (SIGTERM): no new job is taken; running handlers are told through their signal and
 *   either finish or stop at a safe point, and go back to their queue without using an attempt.
 *   Whatever still runs after the grace period is left to the stalled check.
 */
import { hostname } from 'node:os';
import { UnrecoverableError, WaitingError, Worker, type Job } from 'bullmq';
import type { RedisClient } from '../redis/redisClient.ts';
import type { Topology } from '../core/topology.ts';
import type { BackgroundJobs } from '../services/backgroundJobs.ts';
import type { FeedWrites } from '../services/feeds.ts';
import type { FaultHook } from '../services/writeExecutor.ts';
import type { ImportSources } from '../storage/importSource.ts';
import type { Storage } from '../storage/index.ts';
import { JobInterrupted, type JobContext, type JobRegistry, type JsonObject } from './jobKind.ts';
import { QUEUES, queuePrefix, type QueueName } from './queues.ts';

export interface JobWorkersOptions {
  /** A worker-role client (`jobsRedis(…, 'worker')`); each queue's worker duplicates it for its blocking fetch. */
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly registry: JobRegistry;
  /** Queues served by this process. */
  readonly queues: readonly QueueName[];
  /** Per queue; default QUEUES[queue].concurrency. */
  readonly concurrency?: Partial<Record<QueueName, number>>;
  /** How long a job's lock lives without renewal (renewed every half of it), ms. Default 15000. */
  readonly lockMs?: number;
  /** How often stalled jobs are looked for, ms. Default 5000. */
  readonly stalledCheckMs?: number;
  readonly storage: Storage;
  readonly importSources: ImportSources;
  topology(): Topology;
  readonly jobs: BackgroundJobs;
  /** The stored home feeds the feed jobs write. */
  readonly feeds?: FeedWrites | undefined;
  /** Tests only: see JobContext.writeFaults. */
  readonly writeFaults?: FaultHook;
  readonly log: (event: string, fields?: Record<string, unknown>) => void;
}

export const DEFAULT_LOCK_MS = 15_000;
export const DEFAULT_STALLED_CHECK_MS = 5000;
/** A job found stalled this many times is kept as failed (a job that kills its worker must not loop forever). */
const MAX_STALLED = 2;

export class JobWorkers {
  /** `host-pid`, recorded with the jobs this process runs. */
  readonly name = `${hostname()}-${process.pid}`;
  readonly #opts: JobWorkersOptions;
  readonly #workers: Worker[] = [];
  readonly #stopping = new AbortController();

  constructor(opts: JobWorkersOptions) {
    this.#opts = opts;
  }

  /** Starts every queue's worker; resolves once each has connected. */
  async start(): Promise<void> {
    const opts = this.#opts;
    for (const queue of opts.queues) {
      const worker = new Worker(queue, (job, token) => this.#run(queue, job, token), {
        connection: opts.redis,
        prefix: queuePrefix(opts.prefix, queue),
        name: this.name,
        concurrency: opts.concurrency?.[queue] ?? QUEUES[queue].concurrency,
        lockDuration: opts.lockMs ?? DEFAULT_LOCK_MS,
        stalledInterval: opts.stalledCheckMs ?? DEFAULT_STALLED_CHECK_MS,
        maxStalledCount: MAX_STALLED,
        autorun: false,
      });
      worker.on('error', (err) => opts.log('worker_error', { queue, error: err.message }));
      worker.on('failed', (job, err) => {
        if (!job) return;
        const final = job.attemptsMade >= (job.opts.attempts ?? 1) || err instanceof UnrecoverableError;
        opts.log(final ? 'job_failed' : 'job_retry', { queue, kind: job.name, id: job.id, attempt: job.attemptsMade, error: err.message });
      });
      worker.on('stalled', (id) => opts.log('job_stalled', { queue, id }));
      this.#workers.push(worker);
      void worker.run().catch((err: unknown) => opts.log('worker_stopped', { queue, error: err instanceof Error ? err.message : String(err) }));
      await worker.waitUntilReady();
    }
    // `feed`: the Query field of the home feed whose jobs it runs (null: no attached product declares one).
    opts.log('worker_started', { worker: this.name, queues: opts.queues.map((q) => `${q}×${opts.concurrency?.[q] ?? QUEUES[q].concurrency}`), feed: opts.feeds?.feed.field ?? null });
  }

  async #run(queue: QueueName, job: Job, token: string | undefined): Promise<JsonObject> {
    const kind = this.#opts.registry[job.name];
    if (kind === undefined || kind.queue !== queue) throw new UnrecoverableError(`no job kind ${JSON.stringify(job.name)} runs on the ${queue} queue`);
    let payload: unknown;
    try {
      payload = kind.decode(job.data);
    } catch (err) {
      throw new UnrecoverableError(`${job.name}: bad payload: ${err instanceof Error ? err.message : String(err)}`);
    }
    const ctx: JobContext = {
      storage: this.#opts.storage,
      importSources: this.#opts.importSources,
      topology: this.#opts.topology,
      jobs: this.#opts.jobs,
      feeds: this.#opts.feeds,
      ...(this.#opts.writeFaults ? { writeFaults: this.#opts.writeFaults } : {}),
      log: (event, fields) => this.#opts.log(event, { kind: job.name, id: job.id, ...fields }),
      signal: this.#stopping.signal,
      jobId: job.id ?? '',
      attempt: job.attemptsMade + 1,
      worker: this.name,
    };
    try {
      return await kind.handle(payload, ctx);
    } catch (err) {
      if (err instanceof JobInterrupted && token !== undefined) {
        // Back to the front of its queue, with its attempts untouched.
        await job.moveToWait(token);
        this.#opts.log('job_returned', { queue, kind: job.name, id: job.id });
        throw new WaitingError();
      }
      throw err;
    }
  }

  /**
   * Takes no new job; lets running ones finish or return (their signal is aborted at once) for up
   * to `graceMs`; then closes anyway, leaving what still runs to the stalled check.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.#stopping.abort();
    const closing = Promise.all(this.#workers.map((w) => w.close()));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
    const outcome = await Promise.race([closing.then(() => 'closed' as const), late]);
    clearTimeout(timer);
    if (outcome === 'late') {
      this.#opts.log('worker_stop_forced', { graceMs });
      await Promise.all(this.#workers.map((w) => w.close(true)));
    }
  }
}
