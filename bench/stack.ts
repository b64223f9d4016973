/**
 * The benchmark's own local stack: by default `<root>/.stack-bench`, apart from the `.stack` that
 * the integration tests drop and re-create databases on, so a benchmark never collides with a test
 * run. Two MariaDB hosts without replicas (a bulk load needs no binlog), Redis, memcached, etcd.
 */
import { resolve } from 'node:path';
import { stackDown, stackStatus, stackUp, type StackInfo } from '../src/stack/localStack.ts';

export const ROOT = resolve(import.meta.dirname, '..');
export const DEFAULT_BENCH_STACK = resolve(ROOT, '.stack-bench');

export interface BenchStack {
  readonly info: StackInfo;
  /** Whether this process started any of it (then it may stop it at the end). */
  readonly startedHere: boolean;
  readonly dir: string;
  stop(): Promise<void>;
}

export async function benchStack(dir: string = DEFAULT_BENCH_STACK, log: (line: string) => void = () => undefined): Promise<BenchStack> {
  const before = await stackStatus(dir);
  const running = before.info !== null && before.services.length > 0 && before.services.every((s) => s.running);
  const t0 = Date.now();
  const info = running && before.info ? before.info : await stackUp({ dir, hosts: 2, replicas: false, log: (l) => log(`[stack] ${l}`) });
  if (!running) log(`[stack] up in ${Date.now() - t0} ms at ${dir}`);
  return { info, startedHere: !running, dir, stop: () => stackDown(dir) };
}
