import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeFileAtomic, readTextIfExists } from './files.ts';

/** Pid recorded in a pid file, or null if the file is missing or garbage. */
export function readPidFile(pidFile: string): number | null {
  const text = readTextIfExists(pidFile);
  if (text === null) return null;
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

export function writePidFile(pidFile: string, pid: number): void {
  writeFileAtomic(pidFile, `${pid}\n`);
}

export function removePidFile(pidFile: string): void {
  rmSync(pidFile, { force: true });
}

/** Linux /proc entry of a process, or null when /proc is unavailable / process gone. */
function procFile(pid: number, file: 'stat' | 'comm'): string | null {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return null;
  }
}

/**
 * True if `pid` is a live (non-zombie) process running `binary`. Checking the
 * executable name guards against pid reuse after a reboot or a stale pid file.
 */
export function isProcessAlive(pid: number, binary: string): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    // ESRCH: gone. EPERM: exists but belongs to someone else, which cannot be one of ours.
    return false;
  }
  const stat = procFile(pid, 'stat');
  if (stat === null) return true; // no /proc (non-Linux): trust kill(0)
  // Format: "pid (comm) S ..."; comm may contain spaces/parens, so split at the last ')'.
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  if (state === 'Z' || state === 'X') return false;
  const comm = procFile(pid, 'comm')?.trim() ?? '';
  // The kernel truncates comm to 15 characters.
  return comm === basename(binary).slice(0, 15);
}

/**
 * Start `command` in its own session with stdout/stderr appended to `logFile`,
 * not tied to this Node process: it keeps running after we exit.
 */
export function spawnDetached(command: string, args: readonly string[], opts: { cwd: string; logFile: string }): number {
  const logFd = openSync(opts.logFile, 'a');
  try {
    const child = spawn(command, args, { cwd: opts.cwd, detached: true, stdio: ['ignore', logFd, logFd] });
    // Errors after exec (e.g. ENOENT) are reported through the readiness check.
    child.on('error', () => undefined);
    child.unref();
    if (child.pid === undefined) throw new Error(`could not spawn ${command}`);
    return child.pid;
  } finally {
    closeSync(logFd); // the child has its own copy
  }
}

/** Run a command to completion, capturing combined output (for one-shot tools like mariadb-install-db). */
export function runToCompletion(
  command: string,
  args: readonly string[],
  opts: { cwd?: string; timeoutMs: number },
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'], timeout: opts.timeoutMs });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => chunks.push(c));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output: Buffer.concat(chunks).toString('utf8') }));
  });
}

/** Poll `check` until it returns true or `timeoutMs` elapses. Returns whether it succeeded. */
export async function pollUntil(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let delay = 25;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(Math.min(delay, Math.max(1, deadline - Date.now())));
    delay = Math.min(delay * 2, 250);
  }
}

/**
 * Send `signal` and wait for the process to exit. If it is still there after
 * `graceMs`, SIGKILL it (and wait again, bounded). Returns false if it survived.
 */
export async function terminateProcess(pid: number, binary: string, signal: NodeJS.Signals, graceMs: number): Promise<boolean> {
  const gone = (): boolean => !isProcessAlive(pid, binary);
  if (gone()) return true;
  try {
    process.kill(pid, signal);
  } catch {
    return gone();
  }
  if (await pollUntil(gone, graceMs)) return true;
  if (signal === 'SIGKILL') return false;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return gone();
  }
  return pollUntil(gone, 10_000);
}
