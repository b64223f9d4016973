/**
 * Builds the CLI (and so the gateway and the worker) into one ES module, `dist/cli.mjs`, with its
 * source map: the project's TypeScript bundled by esbuild, every npm package left to Node as it is
 * installed (`packages: 'external'`).
 *
 *   node scripts/build.mjs             build the CLI, then the web app (scripts/buildWeb.mjs: dist/web)
 *   node scripts/build.mjs --if-stale  build only the CLI, only if a source file is newer than the build (what
 *                                      bin/shardql does; `shardql dev` builds the web app when it changed)
 *
 * Why: run from source, every process start transpiled and resolved ~180 project modules through
 * tsx's loader hooks (a thread of their own, one message per import): ~2.1 CPU-s to import the
 * gateway and the worker, against ~1.05 CPU-s for the bundle. Gateways and workers restart (a
 * deploy, a crash, a scale-out) and the CLI is started by operators and scripts, so that second
 * counts; the test suite alone starts ~70 processes. Type checking stays `npm run typecheck`'s job:
 * esbuild only strips the types.
 *
 * The build is written beside its final name and renamed, so processes that start at once while
 * it is stale may each build, and each finds a whole file.
 */
import { createRequire } from 'node:module';
import { readdirSync, renameSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ENTRY = 'src/cli.ts';
const OUT = 'dist/cli.mjs';

/** The built CLI's absolute path. */
export function cliPath(root = ROOT) {
  return join(root, OUT);
}

function newestSource(dir, newest = 0) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    // A directory's own time changes when a file in it is added, renamed or deleted.
    newest = Math.max(newest, statSync(path).mtimeMs);
    if (entry.isDirectory()) newest = newestSource(path, newest);
  }
  return newest;
}

/** Whether the build is missing or older than a file under src/ (or than the installed packages' lock). */
export function isStale(root = ROOT) {
  let built;
  try {
    built = statSync(cliPath(root)).mtimeMs;
  } catch {
    return true;
  }
  const lock = statSync(join(root, 'package-lock.json'), { throwIfNoEntry: false })?.mtimeMs ?? 0;
  return Math.max(newestSource(join(root, 'src')), lock) > built;
}

/** Builds dist/cli.mjs (and its .map); throws with esbuild's messages if the source does not build. */
export function build(root = ROOT) {
  return bundle(root, ENTRY, cliPath(root));
}

/**
 * Builds the HTTP benchmark (bench/main.ts, with the gateway and the baselines it imports) into
 * dist/bench.mjs, as the CLI is built: the systems it measures then run the code a deployment runs.
 * Run from source instead, tsx's transform keeps every function's name by wrapping each closure it
 * creates in a `__name()` call (Object.defineProperty): 5% of the gateway's CPU on a small read, a
 * cost production never pays. Built at every benchmark start (about a second).
 */
export function buildBench(root = ROOT) {
  return bundle(root, 'bench/main.ts', join(root, 'dist/bench.mjs'));
}

/** `entry` bundled into `out` (and its .map), npm packages left external; throws with esbuild's messages. */
function bundle(root, entry, out) {
  mkdirSync(dirname(out), { recursive: true });
  // Loaded here, not at the top: checking whether the build is current must stay quick (bin/shardql does it at every start).
  const { buildSync } = createRequire(import.meta.url)('esbuild');
  const result = buildSync({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'none',
    logLevel: 'silent',
    write: false,
  });
  const tmp = `.${process.pid}.${Date.now()}.tmp`;
  // The map first: a process that finds the new module also finds its map.
  const files = [...result.outputFiles].sort((a, b) => Number(b.path.endsWith('.map')) - Number(a.path.endsWith('.map')));
  for (const file of files) {
    writeFileSync(file.path + tmp, file.contents);
    renameSync(file.path + tmp, file.path);
  }
  return out;
}

/** The built CLI's path, built first if it is stale. */
export function ensureBuilt(root = ROOT) {
  return isStale(root) ? build(root) : cliPath(root);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const ifStale = process.argv.includes('--if-stale');
  try {
    if (!ifStale || isStale()) {
      const t0 = Date.now();
      build();
      if (!ifStale) console.log(`built ${OUT} in ${Date.now() - t0} ms`);
    }
  } catch (err) {
    // esbuild's error lists each message with its file and line.
    console.error(`shardql: the build of ${ENTRY} failed:\n${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
  if (!ifStale) await (await import('./buildWeb.mjs')).buildWebOrExit();
}
