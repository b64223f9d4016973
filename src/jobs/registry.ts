/**
 * Every kind of background job: name → queue, payload codec, handler. A new kind is one entry here
 * and its name and payload in the contract the kinds implement (src/services/backgroundJobs.ts).
 *
 * Job names are `<area>.<what>`. The feed kinds (`feed.fanout` — add a new item of the home feed
 * an attached product declares to its followers' stored feeds — and the removals) run on the
 * `feed` queue, which workers serve first (src/jobs/queues.ts); the gateway enqueues them through
 * the `BackgroundJobs` port its services get (src/services/backgroundJobs.ts).
 */
import type { JobPayloads } from '../services/backgroundJobs.ts';
import type { JobRegistryOf } from './jobKind.ts';
import { servedFeed } from '../product/served.ts';
import { feedJobs } from './kinds/feed.ts';
import { eventSweep, eventSweepShards, reconcileShards, reconcileSweep, repairPass } from './kinds/sweeps.ts';
import { importChunkJob, importDeletesJob } from './kinds/import.ts';

export const JOB_KINDS = {
  ...feedJobs(servedFeed),
  'sweep.repair': repairPass,
  'sweep.reconcile': reconcileSweep,
  'sweep.reconcile-shards': reconcileShards,
  'sweep.events': eventSweep,
  'sweep.events-shards': eventSweepShards,
  'import.chunk': importChunkJob,
  'import.deletes': importDeletesJob,
} as const satisfies JobRegistryOf<JobPayloads>;
