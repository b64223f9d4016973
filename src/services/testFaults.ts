/**
 * A real crash for tests: a gateway started with a test fault ends itself with SIGKILL at one step
 * boundary of one kind of multi-shard write, so its connections are lost mid-write and nothing of
 * the normal error path runs (see `SHARDQL_TEST_FAULT` in config.ts; refused unless explicitly allowed).
 */
import { writeSync } from 'node:fs';
import type { Crash, FaultHook, FaultPoint } from './writeExecutor.ts';

export interface TestFault {
  /** The write's kind, as the executor names it: 'add:user_likes_pins', 'repin', 'deletePin', … */
  readonly kind: string;
  readonly point: FaultPoint;
  /** Crash the n-th time a write of that kind reaches the point (1 = the first). */
  readonly nth: number;
}

/**
 * `<kind>@<point>[#n]`, e.g. `add:user_likes_pins@in-first-transaction#3` (n defaults to 1).
 * Throws an Error that says what was expected and what it got.
 */
export function parseTestFault(text: string): TestFault {
  const m = /^([A-Za-z][\w:]*)@(before-first-transaction|in-first-transaction|after-first-commit|after-step-(?:0|[1-9]\d{0,2})|before-complete)(?:#([1-9]\d{0,5}))?$/.exec(text);
  if (!m) {
    throw new Error(
      `expected <kind>@<point>[#n] with point before-first-transaction, in-first-transaction, after-first-commit, after-step-<i> or before-complete (e.g. repin@after-step-0#3), got ${JSON.stringify(text)}`,
    );
  }
  return { kind: m[1]!, point: m[2] as FaultPoint, nth: m[3] === undefined ? 1 : Number(m[3]) };
}

/** The line a gateway writes to stderr just before it kills itself: which fault, and which write (its key). */
export function testFaultLine(fault: TestFault, idempotencyKey: string | undefined): string {
  return `shardql test fault: SIGKILL at ${fault.point} of ${fault.kind} (time ${fault.nth} it was reached), the write with Idempotency-Key ${idempotencyKey ?? '(none)'}`;
}

/** Ends this process as a crash would: SIGKILL, so no handler, finally block or shutdown runs. */
export function killThisProcess(line: string): never {
  writeSync(2, `${line}\n`); // synchronous: the test reads it after the process is gone
  process.kill(process.pid, 'SIGKILL');
  throw new Error('SIGKILL sent to this process, and it still runs'); // unreachable: SIGKILL cannot be caught
}

/** A fault hook that plays `crash` the n-th time a write of `fault.kind` reaches `fault.point`, and never again. */
export function faultAt(fault: TestFault, crash: (line: string) => never = killThisProcess): FaultHook {
  let reached = 0;
  return (point, kind, idempotencyKey): Crash | undefined => {
    if (point !== fault.point || kind !== fault.kind) return undefined;
    reached++;
    return reached === fault.nth ? () => crash(testFaultLine(fault, idempotencyKey)) : undefined;
  };
}
