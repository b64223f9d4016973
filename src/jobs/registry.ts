/**
 * Every kind of background job: name → queue, payload codec, handler. A new kind is one entry.
 *
 * Job names are `<area>.<what>`. The feed fan-out kinds (issue 12: `feed.fanout` — add a pin to
 * its followers' stored feeds — and the removals) go here, on the `feed` queue, which workers
 * already serve first (src/jobs/queues.ts); the gateway enqueues them through the
 * `BackgroundJobs` port its services get (src/services/backgroundJobs.ts).
 */
import type { PayloadOf } from './jobKind.ts';
import { importChunkJob } from './kinds/import.ts';
import { reconcileShards, reconcileSweep, repairPass } from './kinds/sweeps.ts';

export const JOB_KINDS = {
  'sweep.repair': repairPass,
  'sweep.reconcile': reconcileSweep,
  'sweep.reconcile-shards': reconcileShards,
  'import.chunk': importChunkJob,
} as const;

export type JobName = keyof typeof JOB_KINDS;
export type JobPayloads = { readonly [K in JobName]: PayloadOf<typeof JOB_KINDS, K> };
