/**
 * Real `shardql worker` processes for tests, and `shardql <command>` runs, against the shared local
 * stack with a test's own topology key and queue prefix.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { cliArgv } from './cli.ts';
import assert from 'node:assert/strict';

const root = resolve(import.meta.dirname, '../..');

export interface WorkerProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** `host-pid`, as the worker names itself on the jobs it runs. */
  readonly name: string;
  /** Every JSON log line so far. */
  readonly logs: Record<string, unknown>[];
  /** Resolves with the exit code (null) and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The environment of the CLI children: the local stack's defaults, overridden by `env`; no inherited SHARDQL_* addresses. */
function childEnv(env: Readonly<Record<string, string>>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...process.env };
  for (const k of Object.keys(out)) if (/^SHARDQL_(ETCD|MYSQL_|TOPOLOGY_KEY|REDIS|MEMCACHED|QUEUE|WORKER|REPAIR|RECONCILE)/.test(k)) delete out[k];
  return { ...out, ...env };
}

/**
 * Starts `shardql worker` and waits for its `worker_started` line (or the first line of event
 * `until`, e.g. one a worker logs before it can start).
 */
export async function startWorkerProcess(env: Readonly<Record<string, string>>, args: readonly string[] = [], until = 'worker_started'): Promise<WorkerProcess> {
  const child = spawn(process.execPath, cliArgv('worker', ...args), {
    cwd: root,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.once('exit', (code, signal) => res({ code, signal })));
  const started = new Promise<string>((res, rej) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      logs.push(entry);
      if (entry.event === until) res(String(entry.worker ?? ''));
    });
    void exited.then(({ code, signal }) => rej(new Error(`worker exited before starting (${signal ?? code}): ${stderr}`)));
  });
  // Cleared once the race is decided: a pending 20 s timer kept the test file's process alive for
  // up to 20 s after its last test (node:test waits for the event loop to empty).
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, rej) => {
    timer = setTimeout(() => rej(new Error(`worker logged no ${until} within 20 s: ${stderr}`)), 20_000);
  });
  let name: string;
  try {
    name = await Promise.race([started, timeout]);
  } catch (err) {
    // A worker that starts after the test gave up would consume the next test's jobs, and keep this test process alive.
    child.kill('SIGKILL');
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return { child, pid: child.pid!, name, logs, exited };
}

/** `shardql <args>` to completion. */
export async function runCli(env: Readonly<Record<string, string>>, args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, cliArgv(...args), { cwd: root, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number>((res, rej) => {
    child.once('error', rej);
    child.once('close', (c) => res(c ?? -1));
  });
  return { code, stdout, stderr };
}

/** Polls `check` until it returns a value that is not undefined, failing after `timeoutMs`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await sleep(25);
  }
}

/**
 * The worker processes of one test file: each started with the file's environment (plus extras),
 * every one still running stopped at the end (a worker left running would consume the next test's
 * jobs, and keep the test process alive).
 */
export class TestWorkers {
  readonly #env: (extra: Readonly<Record<string, string>>) => Record<string, string>;
  readonly #started: WorkerProcess[] = [];

  constructor(env: (extra: Readonly<Record<string, string>>) => Record<string, string>) {
    this.#env = env;
  }

  /** Workers of the feed queue alone, on the stack's topology at `topologyKey` and the queues under `prefix`. */
  static feed(topologyKey: string, prefix: string): TestWorkers {
    return new TestWorkers((extra) => ({
      SHARDQL_STACK_DIR: process.env.SHARDQL_STACK_DIR ?? '',
      SHARDQL_TOPOLOGY_KEY: topologyKey,
      SHARDQL_QUEUE_PREFIX: prefix,
      SHARDQL_WORKER_QUEUES: 'feed',
      ...extra,
    }));
  }

  async start(extra: Readonly<Record<string, string>> = {}): Promise<WorkerProcess> {
    const w = await startWorkerProcess(this.#env(extra));
    this.#started.push(w);
    return w;
  }

  /** Sends `signal` to every worker still running and waits until each has exited. */
  async stopAll(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const running = this.#started.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
    for (const w of running) w.child.kill(signal);
    await Promise.all(running.map((w) => w.exited));
  }
}
