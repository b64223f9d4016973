/**
 * What a kind of background job is: the queue it runs on, how its payload crosses Redis (encode
 * to JSON; decode the JSON back, checking it — once, at the edge), an optional job ID for payloads
 * that must not be enqueued twice, and the handler. A new kind is its name and payload in the
 * contract of the `BackgroundJobs` port (src/services/backgroundJobs.ts) and one `defineJob` entry
 * in src/jobs/registry.ts.
 */
import type { Topology } from '../core/topology.ts';
import type { BackgroundJobs } from '../services/backgroundJobs.ts';
import type { FeedWrites } from '../services/feeds.ts';
import type { FaultHook } from '../services/writeExecutor.ts';
import type { ImportSources } from '../storage/importSource.ts';
import type { Storage } from '../storage/index.ts';
import type { QueueName } from './queues.ts';

export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };
export type JsonObject = { readonly [key: string]: JsonValue };

/** What a handler may use: services and stores, never a queue's internals. */
export interface JobContext {
  readonly storage: Storage;
  /** Import sources (`shardql import`), opened by URL with the worker's configured password. */
  readonly importSources: ImportSources;
  /** The topology in force (the worker watches etcd like a gateway). */
  topology(): Topology;
  /** To enqueue follow-up jobs (e.g. a sweep's chunks). */
  readonly jobs: BackgroundJobs;
  /** The stored home feeds (undefined: this worker has none configured, or no attached product declares a feed). */
  readonly feeds: FeedWrites | undefined;
  /** Tests only (SHARDQL_TEST_FAULT): crashes this worker at a step boundary of the product writes its jobs make. */
  readonly writeFaults?: FaultHook;
  readonly log: (event: string, fields?: Record<string, unknown>) => void;
  /**
   * Aborted when the worker is asked to stop (SIGTERM). A long handler checks it at safe points
   * (`throwIfStopping`) and is then put back in its queue, not counted as a failed attempt; a short
   * one simply finishes.
   */
  readonly signal: AbortSignal;
  /** This job's ID and run (1 = first). */
  readonly jobId: string;
  readonly attempt: number;
  /** Which worker process runs it (`host-pid`). */
  readonly worker: string;
}

/** Thrown by a handler that stopped at a safe point because its worker is stopping: the job goes back to its queue. */
export class JobInterrupted extends Error {
  override readonly name = 'JobInterrupted';
}

export function throwIfStopping(ctx: JobContext): void {
  if (ctx.signal.aborted) throw new JobInterrupted(`job ${ctx.jobId} interrupted: its worker is stopping`);
}

/** A payload that does not decode: the job fails at once (no retry can fix it). */
export class JobPayloadError extends Error {
  override readonly name = 'JobPayloadError';
}

export interface JobKind<P> {
  readonly queue: QueueName;
  /** One line for help and logs. */
  readonly summary: string;
  encode(payload: P): JsonObject;
  /** JSON read back from Redis → the payload; throws JobPayloadError saying what was expected and what came. */
  decode(data: unknown): P;
  /**
   * A job ID for payloads that must run once however often they are enqueued (while the job is
   * kept, a second enqueue with its ID is a no-op), e.g. `fanout-<pinId>`. No ':' (BullMQ's rule).
   */
  jobId?(payload: P): string;
  /** Overrides of the queue's retry policy. */
  readonly attempts?: number;
  readonly backoffMs?: number;
  /** A small JSON summary of what was done, kept with the completed job. */
  handle(payload: P, ctx: JobContext): Promise<JsonObject>;
}

/** Identity with the payload type inferred: `defineJob<{ shards: number[] }>({ … })`. */
export function defineJob<P>(kind: JobKind<P>): JobKind<P> {
  return kind;
}

// biome-ignore lint: `any` lets kinds with different payloads share one record type.
export type JobRegistry = { readonly [name: string]: JobKind<any> };
/** A registry with one kind per name of `P`, each with that name's payload. */
export type JobRegistryOf<P> = { readonly [K in keyof P]: JobKind<P[K]> };
/**
 * The payloads of a registry's kinds by name (`{ 'feed.fanout': FanoutPayload, … }`): read from
 * the whole registry at once, so a queue of the registered kinds takes each name's payload as the
 * port's contract states it (src/services/backgroundJobs.ts).
 */
export type PayloadsOf<R extends JobRegistry> = R extends JobRegistryOf<infer P> ? P : never;

// Decoding helpers: each names the field, what it expected and what it got.

export function objectOf(data: unknown, what: string): Record<string, unknown> {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new JobPayloadError(`${what}: expected a JSON object, got ${JSON.stringify(data)}`);
  return data as Record<string, unknown>;
}

export function intField(o: Record<string, unknown>, field: string, min: number, max: number, fallback?: number): number {
  const v = o[field] ?? fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new JobPayloadError(`${field}: expected an integer in ${min}..${max}, got ${JSON.stringify(o[field])}`);
  }
  return v;
}

export function stringField(o: Record<string, unknown>, field: string, pattern: RegExp): string {
  const v = o[field];
  if (typeof v !== 'string' || !pattern.test(v)) throw new JobPayloadError(`${field}: expected a string matching ${pattern}, got ${JSON.stringify(v)}`);
  return v;
}

export function boolField(o: Record<string, unknown>, field: string): boolean {
  const v = o[field] ?? false;
  if (typeof v !== 'boolean') throw new JobPayloadError(`${field}: expected true or false, got ${JSON.stringify(v)}`);
  return v;
}
