/**
 * Loads the synthetic data set into the benchmark stack (if it is not there already).
 *
 *   tsx bench/load.ts [--users N] [--scale K] [--quick] [--shards N] [--seed N] [--force] [--stack-dir DIR]
 *
 * Default: 100,000 users (about 1M pins and 3M likes and follows, 11M rows with both directions,
 * counts and lookups); --scale 10 makes it 10×. --quick is the 2,000-user set of `npm run bench -- --quick`.
 */
import { parseArgs } from 'node:util';
import { defaultParams } from '../src/bulk/generate.ts';
import { ensureDataset, slotFor } from '../src/bulk/dataset.ts';
import { benchStack, DEFAULT_BENCH_STACK } from './stack.ts';

export const DEFAULT_USERS = 100_000;
export const QUICK_USERS = 2_000;

export function datasetChoice(opts: { quick: boolean; users?: string | undefined; scale?: string | undefined; seed?: string | undefined; shards?: string | undefined }) {
  const scale = opts.scale === undefined ? 1 : Number(opts.scale);
  if (!(scale > 0)) throw new Error(`--scale must be a positive number, got ${opts.scale}`);
  const users = opts.users !== undefined ? Number(opts.users) : Math.round((opts.quick ? QUICK_USERS : DEFAULT_USERS) * scale);
  if (!Number.isInteger(users) || users < 100) throw new Error(`--users must be an integer of at least 100, got ${opts.users}`);
  const slot = slotFor(opts.quick ? 'quick' : 'main', opts.shards === undefined ? undefined : Number(opts.shards));
  const params = defaultParams(users, opts.quick ? 'q' : 'b', opts.seed === undefined ? undefined : Number(opts.seed));
  return { slot, params };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      users: { type: 'string' },
      scale: { type: 'string' },
      quick: { type: 'boolean', default: false },
      shards: { type: 'string' },
      seed: { type: 'string' },
      force: { type: 'boolean', default: false },
      'stack-dir': { type: 'string' },
    },
  });
  const log = (l: string): void => void process.stderr.write(`${l}\n`);
  const stack = await benchStack(values['stack-dir'] ?? DEFAULT_BENCH_STACK, log);
  const { slot, params } = datasetChoice({ quick: values.quick ?? false, users: values.users, scale: values.scale, seed: values.seed, shards: values.shards });
  const { info, reused } = await ensureDataset({ stack: stack.info, slot, params, log, force: values.force ?? false });
  console.log(JSON.stringify({ reused, slot: info.slot, shards: info.shards, summary: info.summary, load: info.load }, null, 2));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
