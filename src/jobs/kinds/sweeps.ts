/**
 * The low-priority sweeps: the repair pass (finish multi-shard writes interrupted after their first
 * transaction) and the reconcile sweep (both sides of every relation, every count), run by
 * `shardql worker` on schedules (see SWEEP_SCHEDULES). The gateway keeps its own repair timer, so a
 * deployment without workers loses nothing; a worker adds the sweeps on top.
 */
import type { RepairPayload, ShardChunkPayload, SweepPlanPayload } from '../../services/backgroundJobs.ts';
import { FIX_KINDS, allShards, reconcile, repairIntents } from '../../services/repair.ts';
import { defineJob, intField, JobPayloadError, objectOf, stringField, throwIfStopping } from '../jobKind.ts';

/** Intents younger than this are left to their writer (it may still be running). */
export const REPAIR_MIN_AGE_MS = 5000;

export const repairPass = defineJob<RepairPayload>({
  queue: 'sweeps',
  summary: 'complete multi-shard writes interrupted after their first transaction (the intent log)',
  encode: (p) => ({ minAgeMs: p.minAgeMs }),
  decode: (data) => ({ minAgeMs: intField(objectOf(data, 'sweep.repair'), 'minAgeMs', 0, 86_400_000, REPAIR_MIN_AGE_MS) }),
  // The sweeps' retry policy (4 runs, backoff from 5 s): a pass cut by a host that is down or frozen
  // for a while runs again once it is back, rather than being kept as failed.
  async handle(p, ctx) {
    const report = await repairIntents(ctx.storage, ctx.topology(), { minAgeMs: p.minAgeMs, jobs: ctx.jobs, log: (line) => ctx.log('repair', { line }) });
    return { completed: report.completed, failed: report.failed };
  },
});

/**
 * Plans one reconcile sweep over every shard of the topology: one `sweep.reconcile-shards` job per
 * `shardsPerJob` shards, so several workers share a sweep and a killed worker redoes one chunk.
 * Chunk job IDs derive from this job's ID: a retried plan enqueues nothing twice.
 */
export const reconcileSweep = defineJob<SweepPlanPayload>({
  queue: 'sweeps',
  summary: 'plan a reconcile sweep of every shard, in chunks',
  encode: (p) => ({ shardsPerJob: p.shardsPerJob }),
  decode: (data) => ({ shardsPerJob: intField(objectOf(data, 'sweep.reconcile'), 'shardsPerJob', 1, 65536, 16) }),
  async handle(p, ctx) {
    const shards = allShards(ctx.topology());
    const run = ctx.jobId.replace(/[^A-Za-z0-9_-]/g, '.');
    let chunks = 0;
    for (let i = 0; i < shards.length; i += p.shardsPerJob) {
      const chunk = shards.slice(i, i + p.shardsPerJob);
      await ctx.jobs.enqueue('sweep.reconcile-shards', { shards: chunk, run });
      chunks++;
    }
    return { shards: shards.length, chunks };
  },
});

/** `[0,1,2,3,7]` ↔ `"0-3,7"`: a chunk's shards, short in Redis and in job IDs. */
export function shardRanges(shards: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < shards.length; ) {
    let j = i;
    while (j + 1 < shards.length && shards[j + 1] === shards[j]! + 1) j++;
    parts.push(i === j ? `${shards[i]}` : `${shards[i]}-${shards[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

export function parseShardRanges(text: string): number[] {
  const out: number[] = [];
  for (const part of text.split(',')) {
    const m = /^([0-9]{1,5})(?:-([0-9]{1,5}))?$/.exec(part);
    const from = m ? Number(m[1]) : NaN;
    const to = m ? Number(m[2] ?? m[1]) : NaN;
    if (!(from <= to && to <= 65535)) throw new JobPayloadError(`shards: expected ranges like 0-15,32, got ${JSON.stringify(text)}`);
    for (let s = from; s <= to; s++) out.push(s);
  }
  return out;
}

export const reconcileShards = defineJob<ShardChunkPayload>({
  queue: 'sweeps',
  summary: 'reconcile a chunk of shards: every relation both ways, cascades, edges to gone objects, repin edges, counts',
  encode: (p) => ({ shards: shardRanges(p.shards), run: p.run }),
  decode: (data) => {
    const o = objectOf(data, 'sweep.reconcile-shards');
    return { shards: parseShardRanges(stringField(o, 'shards', /^[0-9,-]+$/)), run: stringField(o, 'run', /^[A-Za-z0-9_.-]{1,200}$/) };
  },
  jobId: (p) => `reconcile-${p.run}-${shardRanges(p.shards).replace(/,/g, '_')}`,
  async handle(p, ctx) {
    const topology = ctx.topology();
    const totals: Record<string, number> = { shards: 0, ...Object.fromEntries(FIX_KINDS.map((k) => [k, 0])) };
    // Shard by shard, so a stopping worker hands the rest back (every fix is idempotent).
    for (const shard of p.shards) {
      if (!topology.shardExists(shard)) continue;
      throwIfStopping(ctx);
      const r = await reconcile(ctx.storage, [shard], { jobs: ctx.jobs, log: (line) => ctx.log('reconcile_fix', { shard, line }) });
      totals.shards!++;
      for (const k of FIX_KINDS) totals[k]! += r.byKind[k];
    }
    return totals;
  },
});

/**
 * Plans one event TTL sweep over every shard (the seeds' compaction): one `sweep.events-shards`
 * job per `shardsPerJob` shards, like the reconcile sweep.
 */
export const eventSweep = defineJob<SweepPlanPayload>({
  queue: 'sweeps',
  summary: 'plan an event TTL sweep of every shard, in chunks',
  encode: (p) => ({ shardsPerJob: p.shardsPerJob }),
  decode: (data) => ({ shardsPerJob: intField(objectOf(data, 'sweep.events'), 'shardsPerJob', 1, 65536, 16) }),
  async handle(p, ctx) {
    const shards = allShards(ctx.topology());
    const run = ctx.jobId.replace(/[^A-Za-z0-9_-]/g, '.');
    let chunks = 0;
    for (let i = 0; i < shards.length; i += p.shardsPerJob) {
      await ctx.jobs.enqueue('sweep.events-shards', { shards: shards.slice(i, i + p.shardsPerJob), run });
      chunks++;
    }
    return { shards: shards.length, chunks };
  },
});

/** Deletes, on a chunk of shards, events past their kind's TTL and beyond its newest `versions` (reads hide both already). */
export const eventSweepShards = defineJob<ShardChunkPayload>({
  queue: 'sweeps',
  summary: 'purge expired events and events beyond their kind\'s versions on a chunk of shards',
  encode: (p) => ({ shards: shardRanges(p.shards), run: p.run }),
  decode: (data) => {
    const o = objectOf(data, 'sweep.events-shards');
    return { shards: parseShardRanges(stringField(o, 'shards', /^[0-9,-]+$/)), run: stringField(o, 'run', /^[A-Za-z0-9_.-]{1,200}$/) };
  },
  jobId: (p) => `events-${p.run}-${shardRanges(p.shards).replace(/,/g, '_')}`,
  async handle(p, ctx) {
    const topology = ctx.topology();
    let expired = 0;
    let trimmed = 0;
    // Shard by shard, so a stopping worker hands the rest back (deleting what is hidden is idempotent).
    for (const shard of p.shards) {
      if (!topology.shardExists(shard)) continue;
      throwIfStopping(ctx);
      const r = await ctx.storage.events.sweep([shard]);
      expired += r.expired;
      trimmed += r.trimmed;
    }
    if (expired + trimmed > 0) ctx.log('events_swept', { shards: shardRanges(p.shards), expired, trimmed });
    return { shards: p.shards.length, expired, trimmed };
  },
});
