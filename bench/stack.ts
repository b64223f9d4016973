/**
 * The benchmark's own local stack: by default `<root>/.stack-bench`, apart from the `.stack` that
 * the integration tests drop and re-create databases on, so a benchmark never collides with a test
 * run. Two MariaDB hosts without replicas (a bulk load needs no binlog), Redis, memcached, etcd.
 *
 * Each MariaDB instance gets a buffer pool that holds its share of the data set (~2.2 GB on the host
 * with the flat database, ~1 GB on the other; the import's target ~3 GB over two hosts), as a
 * database host of its own would: with the test stack's 64 MiB, every insert into a table of
 * millions of rows read and wrote pages through the OS (inserting into a 4M-row mapping table:
 * 71 µs of MariaDB CPU per row, 8 µs with 2 GiB), for every system alike. InnoDB takes memory for
 * the pool only as pages are used. `SHARDQL_BENCH_BUFFER_POOL_MB` overrides it.
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

/** MiB of InnoDB buffer pool per MariaDB instance of a benchmark stack (see above). */
export const BENCH_BUFFER_POOL_MB = Number(process.env.SHARDQL_BENCH_BUFFER_POOL_MB ?? 3072);

export async function benchStack(dir: string = DEFAULT_BENCH_STACK, log: (line: string) => void = () => undefined): Promise<BenchStack> {
  const before = await stackStatus(dir);
  const running = before.info !== null && before.services.length > 0 && before.services.every((s) => s.running);
  const t0 = Date.now();
  // Also when it runs: a stack made with another buffer pool size is resized live.
  const info = await stackUp({ dir, hosts: 2, replicas: false, innodbBufferPoolMb: BENCH_BUFFER_POOL_MB, log: (l) => log(`[stack] ${l}`) });
  if (!running) log(`[stack] up in ${Date.now() - t0} ms at ${dir}`);
  return { info, startedHere: !running, dir, stop: () => stackDown(dir) };
}
