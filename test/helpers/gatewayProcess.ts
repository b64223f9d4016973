/**
 * A gateway in a process of its own (`bin/shardql serve`), for tests that kill it: a crash test
 * needs a process whose connections really drop, not an exception inside this one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { testStackDir, type TestEnv } from './env.ts';
import { TEST_JWT_SECRET, gqlClient, type TestGateway } from './gateway.ts';

const SHARDQL = resolve(import.meta.dirname, '../../bin/shardql');

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface GatewayProcess {
  readonly pid: number;
  readonly url: string;
  readonly gql: TestGateway['gql'];
  /** Settles when the process has ended: its exit code, or the signal that ended it. */
  readonly exited: Promise<Exit>;
  /** Whether the process has ended. */
  readonly ended: () => boolean;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** SIGTERM (a graceful stop), and its exit. */
  stop(): Promise<Exit>;
}

const running = new Set<ChildProcess>();

/**
 * Starts `shardql serve` on the test stack, on a free port, serving the topology at `topologyKey`,
 * and resolves once it listens. `vars`: more SHARDQL_* settings (e.g. a test fault). Rejects with
 * its stderr if it ends or does not listen within `timeoutMs`. `args`: more command-line arguments.
 */
export async function startGatewayProcess(
  env: TestEnv,
  opts: { topologyKey: string; vars?: Record<string, string>; timeoutMs?: number; args?: readonly string[] },
): Promise<GatewayProcess> {
  const vars: Record<string, string | undefined> = { ...process.env };
  // Only what this call sets: no SHARDQL_* of the caller's shell leaks in.
  for (const k of Object.keys(vars)) if (k.startsWith('SHARDQL_')) delete vars[k];
  Object.assign(vars, {
    SHARDQL_STACK_DIR: testStackDir(),
    SHARDQL_ENV: 'development',
    SHARDQL_PORT: '0',
    SHARDQL_TOPOLOGY_KEY: opts.topologyKey,
    SHARDQL_JWT_SECRET: TEST_JWT_SECRET,
    ...opts.vars,
  });
  const child = spawn(SHARDQL, ['serve', ...(opts.args ?? [])], { env: vars, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  let ended = false;
  const exited = new Promise<Exit>((resolveExit) => {
    child.once('exit', (code, signal) => {
      ended = true;
      running.delete(child);
      resolveExit({ code, signal });
    });
  });
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`the gateway process did not listen within ${timeoutMs} ms; stderr: ${stderr}`)), timeoutMs);
    const look = (): void => {
      const m = /listening on (http:\/\/\S+?)[;\s]/.exec(stdout);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off('data', look);
      resolveUrl(m[1]!);
    };
    child.stdout!.on('data', look);
    void exited.then((e) => {
      clearTimeout(timer);
      reject(new Error(`the gateway process ended before it listened (${e.signal ?? `exit ${e.code}`}): ${stderr}`));
    });
  });
  return {
    pid: child.pid!,
    url,
    gql: gqlClient(env, url),
    exited,
    ended: () => ended,
    stdout: () => stdout,
    stderr: () => stderr,
    async stop() {
      if (!ended) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Kills (SIGKILL) every gateway process these helpers started that still runs: for `after` hooks. */
export async function killGatewayProcesses(): Promise<void> {
  const left = [...running];
  await Promise.all(
    left.map(
      (c) =>
        new Promise<void>((done) => {
          c.once('exit', () => done());
          c.kill('SIGKILL');
        }),
    ),
  );
}
