/**
 * The port through which services (and the gateway's writes) hand work to background workers, and
 * its contract: each kind of job by name, with the payload it carries. The implementation is a
 * Redis job queue (src/jobs/jobQueue.ts); the job kinds (src/jobs/registry.ts) implement this
 * contract, one per name, so services name a job and its payload without knowing who runs it.
 */

/**
 * A new item of the served product's home feed (core/feedSpec.ts) to add to the stored feeds of
 * its sources' followers. On the queue it is named in the feed's own words (jobs/kinds/feed.ts):
 * `{ <item type>, <each source's ref>, time }`.
 */
export interface FanoutPayload {
  readonly item: bigint;
  /** Each source's ID by the item's reference naming it. */
  readonly sources: Readonly<Record<string, bigint>>;
  /** The item's time (ms): its sequence in every list. */
  readonly time: number;
}

/** A deleted item to remove from the stored feeds of its audience. */
export interface RetractPayload {
  readonly item: bigint;
  readonly sources: Readonly<Record<string, bigint>>;
}

/** Items one viewer's stored feed must no longer show. */
export interface CleanPayload {
  readonly viewer: bigint;
  /** The items to check; absent: every item the feed holds. */
  readonly items?: readonly bigint[];
}

/** One chunk of an import pass: the source label, the pass, the source table (`pins`) and the chunk's index in the plan. */
export interface PassChunkPayload<T extends string> {
  readonly source: string;
  readonly run: number;
  readonly table: T;
  readonly index: number;
}

/** A repair pass: intents younger than `minAgeMs` are left to their writer (it may still be running). */
export interface RepairPayload {
  readonly minAgeMs: number;
}

/** A sweep planned in chunks: one chunk job per this many shards. */
export interface SweepPlanPayload {
  readonly shardsPerJob: number;
}

/** One chunk of a sweep: its shards, and the run (the planning job) it belongs to. */
export interface ShardChunkPayload {
  readonly shards: readonly number[];
  readonly run: string;
}

/** Every kind of job by name (`<area>.<what>`), with its payload. */
export interface JobPayloads {
  readonly 'feed.fanout': FanoutPayload;
  readonly 'feed.retract': RetractPayload;
  readonly 'feed.clean': CleanPayload;
  readonly 'sweep.repair': RepairPayload;
  readonly 'sweep.reconcile': SweepPlanPayload;
  readonly 'sweep.reconcile-shards': ShardChunkPayload;
  readonly 'sweep.events': SweepPlanPayload;
  readonly 'sweep.events-shards': ShardChunkPayload;
  readonly 'import.chunk': PassChunkPayload<string>;
  readonly 'import.deletes': PassChunkPayload<string>;
}

export type JobName = keyof JobPayloads;

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
