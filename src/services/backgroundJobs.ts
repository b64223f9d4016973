/**
 * The port through which services (and the gateway's writes) hand work to background workers. The
 * implementation is a Redis job queue (src/jobs/jobQueue.ts); the payload of each job kind is typed
 * by the job registry (src/jobs/registry.ts).
 */
import type { JobName, JobPayloads } from '../jobs/registry.ts';

export interface EnqueueOptions {
  /** Run no sooner than this many ms from now. */
  readonly delayMs?: number;
  /** Overrides of the kind's retry policy (runs in all; first backoff, doubled each retry). */
  readonly attempts?: number;
  readonly backoffMs?: number;
}

export interface Enqueued {
  /** The job's ID: the kind's own (enqueueing it again while it is kept is a no-op) or BullMQ's. */
  readonly id: string;
}

export interface BackgroundJobs {
  enqueue<K extends JobName>(kind: K, payload: JobPayloads[K], opts?: EnqueueOptions): Promise<Enqueued>;
  /** A payload as the queue carries it (JSON): what a write records in its intent to enqueue later. */
  encode<K extends JobName>(kind: K, payload: JobPayloads[K]): Readonly<Record<string, unknown>>;
  /** Enqueues a job recorded that way: the payload is decoded (checked) first, as a worker would. */
  enqueueRecorded(kind: string, data: Readonly<Record<string, unknown>>): Promise<Enqueued>;
}
