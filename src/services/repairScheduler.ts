import type { Topology } from '../core/topology.ts';
import type { Storage } from '../storage/index.ts';
import type { BackgroundJobs } from './backgroundJobs.ts';
import { repairIntents } from './repair.ts';

type Log = (event: string, fields: Record<string, unknown>) => void;

export interface RepairSchedulerOptions {
  readonly storage: Storage;
  /** The topology in force at each pass. */
  readonly topology: () => Topology;
  /** Milliseconds between passes; 0 starts none. Default 5000. */
  readonly intervalMs?: number;
  /** How old an intent must be before a pass completes it (its writer may still be running), ms. Default 5000. */
  readonly minAgeMs?: number;
  /** Replays cache invalidations recorded as failed (CacheLayers.sweepUnshared); resolves to the keys swept. */
  readonly sweep?: () => Promise<number>;
  /** The job queue, for intents that record a job to enqueue (a new pin's fan-out). */
  readonly jobs?: BackgroundJobs | undefined;
  readonly log: Log;
}

export interface RepairScheduler {
  /** No new pass starts; resolves when the one running, if any, is done. */
  stop(): Promise<void>;
}

/**
 * The gateway's background repair: every interval, one pass that finishes multi-shard writes
 * interrupted after their first transaction, and replays cache invalidations recorded as failed
 * (in MySQL as intents; in Redis: the sweep). Passes never overlap.
 */
export function startRepairScheduler(opts: RepairSchedulerOptions): RepairScheduler {
  const every = opts.intervalMs ?? 5000;
  const { log } = opts;
  let running: Promise<unknown> | undefined;
  const sweep = (): Promise<unknown> =>
    opts.sweep
      ? opts.sweep().then(
          (n) => n > 0 && log('unshared_swept', { keys: n }),
          (err: unknown) => log('unshared_sweep_failed', { error: err instanceof Error ? err.message : String(err) }),
        )
      : Promise.resolve();
  const pass = (): void => {
    if (running) return;
    running = Promise.all([
      repairIntents(opts.storage, opts.topology(), { minAgeMs: opts.minAgeMs ?? 5000, jobs: opts.jobs, log: (line) => log('repair', { line }) })
        .then((r) => r.completed + r.failed > 0 && log('repair_pass', { ...r }))
        .catch((err: unknown) => log('repair_failed', { error: err instanceof Error ? err.message : String(err) })),
      sweep(),
    ]).finally(() => (running = undefined));
  };
  const timer = every > 0 ? setInterval(pass, every) : undefined;
  timer?.unref();
  return {
    async stop() {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
