/** `shardql worker` (runs background jobs) and `shardql jobs` (the queues' depth, lag and failures). */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ConfigError, loadWorkerConfig, type WorkerConfig } from '../config.ts';
import { describeRedisTarget } from '../redis/redisClient.ts';
import type { QueueStats } from '../jobs/jobQueue.ts';
import { QUEUE_NAMES, QUEUES, parseConcurrency, parseQueueList } from '../jobs/queues.ts';
import { JOB_KINDS } from '../jobs/registry.ts';
import { jsonLogger } from '../log.ts';
import { CliError, UsageError, type CliContext, type Command } from './command.ts';
import { seconds, table } from './format.ts';
import { configFor, println, withJobQueue } from './runtime.ts';

function workerConfigFor(ctx: CliContext, overrides: { queues?: string | undefined; concurrency?: string | undefined }): WorkerConfig {
  let base: WorkerConfig;
  try {
    base = loadWorkerConfig(ctx.env);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message);
    throw err;
  }
  try {
    return {
      ...base,
      ...(overrides.queues !== undefined ? { queues: parseQueueList(overrides.queues) } : {}),
      ...(overrides.concurrency !== undefined ? { concurrency: { ...base.concurrency, ...parseConcurrency(overrides.concurrency) } } : {}),
    };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

const worker: Command = {
  name: 'worker',
  summary: 'Run background jobs (fan-out first, then repair and reconcile sweeps); stops gracefully on SIGINT/SIGTERM',
  options: {
    queues: { type: 'string', value: 'LIST', help: `Queues to serve, e.g. feed (default $SHARDQL_WORKER_QUEUES, else ${QUEUE_NAMES.join(',')})` },
    concurrency: { type: 'string', value: 'N|Q=N,…', help: 'Jobs at once: 16 (fan-out) or feed=16,sweeps=1 (default $SHARDQL_WORKER_CONCURRENCY)' },
  },
  details: [
    'Queues, by priority (each with its own concurrency, so sweeps never take a fan-out slot):',
    ...QUEUE_NAMES.map((q) => `  ${q.padEnd(7)} ${QUEUES[q].summary}; ${QUEUES[q].concurrency} at once by default`),
    '',
    'Any number of workers may run, on any machines: they share the queues in Redis. A worker killed',
    'mid-job loses nothing: its job runs again on a live worker once its lock expires',
    '($SHARDQL_WORKER_LOCK_MS, default 15000, checked every $SHARDQL_WORKER_STALLED_CHECK_MS, default 5000).',
    'SIGTERM: no new job is taken; running jobs finish or go back to their queue within',
    '$SHARDQL_WORKER_STOP_GRACE_MS (default 10000). Logs are JSON lines on stdout.',
  ].join('\n'),
  async run(args, ctx) {
    const config = configFor(ctx);
    const workerConfig = workerConfigFor(ctx, { queues: args.string('queues'), concurrency: args.string('concurrency') });
    // Installed before the worker says it started: a supervisor's SIGTERM right after that line
    // must find the handler (else it kills the process outright) and stops the worker gracefully.
    const signalled = ctx.waitForSignal();
    const { startWorker } = await import('../worker.ts');
    const running = await startWorker(config, workerConfig, jsonLogger((line) => println(ctx.stdout, line)));
    const signal = await signalled;
    println(ctx.stderr, `${signal}: stopping worker ${running.name} (again to force)`);
    await running.stop();
    return 0;
  },
};

function ago(ms: number | null): string {
  return ms === null ? '-' : seconds(ms);
}

function printStats(ctx: CliContext, stats: readonly QueueStats[]): void {
  const rows = stats.map((s) => [s.queue, String(s.waiting), String(s.active), String(s.delayed), String(s.failed), ago(s.lagMs)]);
  for (const line of table([['queue', 'waiting', 'active', 'delayed', 'failed', 'lag (oldest waiting)'], ...rows])) println(ctx.stdout, line);
  for (const s of stats) {
    if (s.latestFailures.length === 0) continue;
    println(ctx.stdout, `\nLatest failures on ${s.queue} (newest first, ${s.failed} kept):`);
    for (const f of s.latestFailures) {
      const when = f.failedAt === null ? '?' : new Date(f.failedAt).toISOString();
      println(ctx.stdout, `  ${when}  ${f.kind}  job ${f.id}  run ${f.attempts}/${f.maxAttempts}: ${f.reason}`);
    }
  }
}

const jobsCommand: Command = {
  name: 'jobs',
  summary: 'The job queues: depth (waiting, active, delayed), failures with their reasons, and lag',
  options: {
    failures: { type: 'string', value: 'N', help: 'Latest failures to show per queue (default 5)' },
    json: { type: 'boolean', help: 'One JSON object: {"queues":[{queue, waiting, active, delayed, failed, lagMs, latestFailures}]}' },
  },
  details: 'Lag is how long the oldest waiting job has been due: a growing lag means too few workers.',
  async run(args, ctx) {
    const failures = args.int('failures', 5, 0, 1000);
    const config = configFor(ctx);
    await withJobQueue(config, async (queue) => {
      const stats = await Promise.race([
        queue.stats({ failures }),
        new Promise<never>((_, reject) => setTimeout(() => reject(new CliError(`${describeRedisTarget(config.redis)} did not answer within 10 s`)), 10_000).unref()),
      ]);
      if (args.flag('json')) println(ctx.stdout, JSON.stringify({ queues: stats }));
      else printStats(ctx, stats);
    });
  },
};

export interface WorkerProcess {
  readonly pid: number;
  /** SIGTERM, then waits for it to exit (SIGKILL after `graceMs` more). */
  stop(graceMs?: number): Promise<void>;
}

/**
 * `shardql worker` as a child process of this command (what `shardql dev` runs beside its gateway),
 * its output lines prefixed with `[worker]`. If it dies, that is said, and the gateway keeps serving.
 */
export function spawnWorker(ctx: CliContext, env: Readonly<Record<string, string>> = {}): WorkerProcess {
  const child = spawn(join(ctx.root, 'bin/shardql'), ['worker'], {
    env: { ...ctx.env, SHARDQL_STACK_DIR: ctx.stackDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: a terminal's Ctrl-C reaches only `dev`, which then sends one SIGTERM
    // (a second signal would make the worker give up its running jobs at once).
    detached: true,
  });
  for (const [from, to] of [[child.stdout, ctx.stdout], [child.stderr, ctx.stderr]] as const) {
    createInterface({ input: from }).on('line', (line) => println(to, `[worker] ${line}`));
  }
  let stopping = false;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      if (!stopping) println(ctx.stderr, `[worker] exited (${signal ?? `status ${code}`}); the gateway keeps serving. Start another: shardql worker`);
      resolve();
    });
  });
  return {
    pid: child.pid ?? -1,
    async stop(graceMs = 15_000) {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

export const workerCommands: readonly Command[] = [worker, jobsCommand];
