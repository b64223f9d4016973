/**
 * The test command (`npm test`): unit tests (no server), then the local stack brought up once for
 * the whole run, then the integration tests one file at a time against it.
 *
 *   tsx test/run.ts              everything
 *   tsx test/run.ts --unit       unit tests only (no server; the inner loop)
 *   tsx test/run.ts --integration [name-filter…]
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { availableParallelism } from 'node:os';
import { readStackInfo, stackStatus, stackUp, stackDown } from '../src/stack/localStack.ts';
import { ensureBuilt } from '../scripts/build.mjs';

const root = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const unitOnly = args.includes('--unit');
const integrationOnly = args.includes('--integration');
const filters = args.filter((a) => !a.startsWith('--'));

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...testFiles(path));
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out.sort();
}

const selected = (files: string[]): string[] => (filters.length === 0 ? files : files.filter((f) => filters.some((x) => f.includes(x))));
const unit = integrationOnly ? [] : selected(testFiles(join(root, 'test/unit')));
const integration = unitOnly ? [] : selected(testFiles(join(root, 'test/integration')));

const stackDir = process.env.SHARDQL_STACK_DIR ?? join(root, '.stack');
let startedHere = false;
if (integration.length > 0) {
  // The tests that start `shardql` processes run the build (test/helpers/cli.ts): built once here,
  // before any of them, so a source that does not build fails the run at once with esbuild's message.
  const built = Date.now();
  ensureBuilt(root);
  console.log(`[build] dist/cli.mjs current (${Date.now() - built} ms)`);
  const before = await stackStatus(stackDir);
  startedHere = !before.services.every((s) => s.running) || before.info === null;
  const t0 = Date.now();
  const info = await stackUp({ dir: stackDir, hosts: 2, replicas: true, log: (l) => console.log(`[stack] ${l}`) });
  console.log(`[stack] up in ${Date.now() - t0} ms: ${info.mysql.hosts.length} MariaDB hosts with replicas, Redis, memcached, etcd`);
}

// Two node:test runs: the unit files side by side (pure, no shared state: a file's run is mostly
// its process starting, so one per core halves their wall time), then the integration files one
// at a time, because they share one stack.
// SHARDQL_TEST_RUN_DROPS_AT_END (test/helpers/env.ts RUN_DROPS_AT_END): the files leave their shard
// databases to the next file's freshEnv, and this run drops them at its end.
const run = (list: string[], concurrency: number): number => {
  if (list.length === 0) return 0;
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...list],
    { stdio: 'inherit', cwd: root, env: { ...process.env, SHARDQL_STACK_DIR: stackDir, SHARDQL_TEST_RUN_DROPS_AT_END: '1' } },
  );
  return result.status ?? 1;
};
const unitStatus = run(unit, Math.max(2, availableParallelism()));
let integrationStatus = run(integration, 1);
// Dropped once here, so `shardql dev` on this stack finds none of the tests' claims.
const info = integration.length > 0 && process.env.SHARDQL_STACK_KEEP !== '1' ? readStackInfo(stackDir) : null;
if (info) {
  try {
    // Loaded here: the test helpers (database, Redis, memcached and etcd clients) only matter after integration files.
    const { dropStackTestData } = await import('./helpers/env.ts');
    await dropStackTestData(info);
  } catch (err) {
    console.error(`[stack] dropping the test databases failed: ${err instanceof Error ? err.message : String(err)}`);
    integrationStatus ||= 1;
  }
}

if (startedHere && (process.env.CI === 'true' || process.env.SHARDQL_STACK_KEEP === '0')) await stackDown(stackDir);
process.exit(unitStatus !== 0 ? unitStatus : integrationStatus);
