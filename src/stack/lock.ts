import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { StackError } from './errors.ts';
import { isErrno } from './files.ts';
import { pollUntil, readPidFile } from './processes.ts';

/** Long enough for a cold `up` (install + first start of every instance) to finish. */
const LOCK_WAIT_MS = 180_000;

function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return isErrno(err, 'EPERM');
  }
}

/** Try once to create the lock file; clears it first if its owner is dead. */
function tryAcquire(lockFile: string): boolean {
  try {
    const fd = openSync(lockFile, 'wx');
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return true;
  } catch (err) {
    if (!isErrno(err, 'EEXIST')) throw err;
  }
  const owner = readPidFile(lockFile);
  // A lock without a readable pid may be in the middle of being written: wait.
  if (owner !== null && !isPidAlive(owner)) rmSync(lockFile, { force: true });
  return false;
}

/**
 * Serialize mutating stack operations (up/down/start/stop) on one directory,
 * also across processes: `node --test` runs test files in parallel and several
 * of them may call stackUp on the same project stack.
 */
export async function withStackLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const lockFile = join(dir, '.lock');
  if (!(await pollUntil(() => tryAcquire(lockFile), LOCK_WAIT_MS))) {
    throw new StackError(
      `Timed out waiting for ${lockFile} (held by pid ${readPidFile(lockFile) ?? '?'}): another stack operation is running`,
    );
  }
  try {
    return await fn();
  } finally {
    rmSync(lockFile, { force: true });
  }
}
