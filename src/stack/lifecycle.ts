import { StackError } from './errors.ts';
import { tailFile } from './files.ts';
import { isPortFree } from './net.ts';
import {
  isProcessAlive,
  pollUntil,
  readPidFile,
  removePidFile,
  spawnDetached,
  terminateProcess,
  writePidFile,
} from './processes.ts';
import type { ServiceContext, ServiceSpec } from './service.ts';

export const READY_TIMEOUT_MS = 30_000;
/** How long a service gets to shut down cleanly before SIGKILL. */
export const STOP_GRACE_MS = 20_000;

export interface ServiceState {
  /** Pid of the live process recorded in the pid file, else null. */
  pid: number | null;
  /** The process is alive and answers its protocol. */
  ready: boolean;
}

export async function inspectService(svc: ServiceSpec): Promise<ServiceState> {
  const pid = readPidFile(svc.pidFile);
  if (pid === null || !isProcessAlive(pid, svc.binary)) return { pid: null, ready: false };
  return { pid, ready: await svc.isReady() };
}

function failure(svc: ServiceSpec, what: string): StackError {
  const tail = tailFile(svc.logFile);
  return new StackError(`${svc.name} ${what}; see ${svc.logFile}${tail ? `\n--- last log lines ---\n${tail}` : ''}`, {
    service: svc.name,
    logFile: svc.logFile,
  });
}

/** Bounded poll until the service answers; fails fast if the process exits. */
async function waitUntilReady(svc: ServiceSpec, pid: number): Promise<void> {
  let exited = false;
  const settled = await pollUntil(async () => {
    exited = !isProcessAlive(pid, svc.binary);
    return exited || (await svc.isReady()); // stop polling as soon as it is dead
  }, READY_TIMEOUT_MS);
  if (exited) throw failure(svc, `exited during startup (pid ${pid})`);
  if (settled) return;
  throw failure(svc, `did not become ready within ${READY_TIMEOUT_MS / 1000} s (pid ${pid} left running)`);
}

/** Ports a service was killed on can take a moment to be released by the kernel. */
const PORT_RELEASE_MS = 5000;

async function assertPortsFree(svc: ServiceSpec): Promise<void> {
  for (const port of svc.ports) {
    if (!(await pollUntil(() => isPortFree(svc.host, port), PORT_RELEASE_MS))) {
      throw new StackError(
        `${svc.name}: port ${svc.host}:${port} is taken by a process this stack did not start; ` +
          `stop that process (or delete the stack dir to pick new ports)`,
        { service: svc.name },
      );
    }
  }
}

/**
 * Make sure one service runs and is provisioned. A live process is reused (after
 * waiting for it if it is still starting); a dead one is restarted with the same
 * ports and data. Returns whether a process was started.
 */
export async function ensureService(svc: ServiceSpec, ctx: ServiceContext): Promise<'running' | 'started'> {
  const state = await inspectService(svc);
  if (state.pid !== null) {
    if (!state.ready) {
      ctx.log(`${svc.name}: pid ${state.pid} is alive but not answering yet; waiting`);
      await waitUntilReady(svc, state.pid);
    }
    await svc.reconcile?.(ctx);
    await svc.provision?.(ctx);
    return 'running';
  }

  removePidFile(svc.pidFile); // stale: its process is gone
  await svc.prepare?.(ctx);
  await assertPortsFree(svc);
  ctx.log(`${svc.name}: starting on ${svc.address}`);
  const startedAt = Date.now();
  const pid = spawnDetached(ctx.bins[svc.binary], svc.args(ctx), { cwd: svc.dir, logFile: svc.logFile });
  // Written by us right away (some servers write it late or never, e.g. memcached in foreground).
  writePidFile(svc.pidFile, pid);
  await waitUntilReady(svc, pid);
  ctx.log(`${svc.name}: ready in ${Date.now() - startedAt} ms (pid ${pid})`);
  await svc.provision?.(ctx);
  return 'started';
}

/**
 * Signal the service's process and wait for it to exit (SIGKILL after the grace
 * period). No-op if it is not running. Returns the pid that was stopped, if any.
 */
export async function stopServiceProcess(svc: ServiceSpec, signal: NodeJS.Signals): Promise<number | null> {
  const pid = readPidFile(svc.pidFile);
  if (pid === null || !isProcessAlive(pid, svc.binary)) {
    removePidFile(svc.pidFile);
    return null;
  }
  if (!(await terminateProcess(pid, svc.binary, signal, STOP_GRACE_MS))) {
    throw failure(svc, `(pid ${pid}) did not exit after ${signal} and SIGKILL`);
  }
  removePidFile(svc.pidFile);
  return pid;
}

/** Run `fn` for every service, collecting all failures into one error. */
export async function forEachService(
  services: readonly ServiceSpec[],
  fn: (svc: ServiceSpec) => Promise<unknown>,
): Promise<void> {
  const results = await Promise.allSettled(services.map(fn));
  throwIfFailed(results);
}

export function throwIfFailed(results: readonly PromiseSettledResult<unknown>[]): void {
  const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  if (errors.length === 0) return;
  if (errors.length === 1) throw errors[0];
  const lines = errors.map((e) => `- ${e instanceof Error ? e.message : String(e)}`);
  throw new StackError(`${errors.length} services failed:\n${lines.join('\n')}`, { cause: new AggregateError(errors) });
}
