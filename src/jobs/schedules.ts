/**
 * The sweeps a worker keeps on a schedule (BullMQ job schedulers: one per ID in Redis, however many
 * workers upsert it; each run is an ordinary job on the sweeps queue, retried and kept like any).
 */
import type { JobQueue } from './jobQueue.ts';
import { KEEP_COMPLETED, KEEP_FAILED, QUEUES } from './queues.ts';
import type { JsonObject } from './jobKind.ts';
import type { JOB_KINDS } from './registry.ts';
import type { JobName } from '../services/backgroundJobs.ts';
import { REPAIR_MIN_AGE_MS } from './kinds/sweeps.ts';

export interface SweepSchedule {
  /** Run every this many ms; 0 removes the schedule. */
  readonly repairEveryMs: number;
  readonly reconcileEveryMs: number;
  /** The event TTL sweep (`sweep.events`); default 1 h. */
  readonly eventSweepEveryMs?: number;
}

/** Repair every 10 s (the gateway also repairs every 5 s), reconcile every 6 h. */
export const DEFAULT_SWEEP_SCHEDULE: SweepSchedule = { repairEveryMs: 10_000, reconcileEveryMs: 6 * 3600_000, eventSweepEveryMs: 3600_000 };

export async function scheduleSweeps(jobs: JobQueue<typeof JOB_KINDS>, registry: typeof JOB_KINDS, schedule: SweepSchedule): Promise<void> {
  const entries: { kind: JobName; everyMs: number; data: JsonObject }[] = [
    { kind: 'sweep.repair', everyMs: schedule.repairEveryMs, data: registry['sweep.repair'].encode({ minAgeMs: REPAIR_MIN_AGE_MS }) },
    { kind: 'sweep.reconcile', everyMs: schedule.reconcileEveryMs, data: registry['sweep.reconcile'].encode({ shardsPerJob: 16 }) },
    { kind: 'sweep.events', everyMs: schedule.eventSweepEveryMs ?? 3600_000, data: registry['sweep.events'].encode({ shardsPerJob: 16 }) },
  ];
  const queue = jobs.queue('sweeps');
  for (const { kind, everyMs, data } of entries) {
    if (everyMs <= 0) {
      await queue.removeJobScheduler(kind);
      continue;
    }
    const def = registry[kind];
    await queue.upsertJobScheduler(
      kind,
      { every: everyMs },
      {
        name: kind,
        data,
        opts: {
          attempts: def.attempts ?? QUEUES.sweeps.attempts,
          backoff: { type: 'exponential', delay: def.backoffMs ?? QUEUES.sweeps.backoffMs },
          removeOnComplete: KEEP_COMPLETED,
          removeOnFail: KEEP_FAILED,
        },
      },
    );
  }
}
