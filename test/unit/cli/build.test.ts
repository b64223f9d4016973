/**
 * The build (scripts/build.mjs) and bin/shardql running it: when it counts as stale, and that the
 * CLI rebuilds a stale build before it runs, so an edited source is what runs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cliPath, isStale } from '../../../scripts/build.mjs';

const ROOT = resolve(import.meta.dirname, '../../..');

/** A project skeleton: src/ with two files, the lock, and optionally a build, every file at `t` (s). */
function skeleton(t: number, built: boolean): string {
  const root = mkdtempSync(join(tmpdir(), 'shardql-build-'));
  mkdirSync(join(root, 'src/core'), { recursive: true });
  const files = ['src/cli.ts', 'src/core/ids.ts', 'package-lock.json', ...(built ? ['dist/cli.mjs'] : [])];
  if (built) mkdirSync(join(root, 'dist'));
  for (const f of files) writeFileSync(join(root, f), '//\n');
  for (const f of [...files, 'src/core', 'src']) utimesSync(join(root, f), t, t);
  return root;
}

test('isStale: no build, or anything under src/ or the lock newer than the build', () => {
  const t = 1_700_000_000;
  const roots: string[] = [];
  const fresh = (built = true) => {
    const r = skeleton(t, built);
    roots.push(r);
    utimesSync(cliPath(r), t + 10, t + 10);
    return r;
  };
  try {
    const none = skeleton(t, false);
    roots.push(none);
    assert.equal(isStale(none), true, 'no build');
    assert.equal(isStale(fresh()), false, 'a build newer than every source');

    const edited = fresh();
    utimesSync(join(edited, 'src/core/ids.ts'), t + 20, t + 20);
    assert.equal(isStale(edited), true, 'a file edited after the build');

    const added = fresh();
    writeFileSync(join(added, 'src/core/new.ts'), '//\n');
    assert.equal(isStale(added), true, 'a file added after the build');

    const removed = fresh();
    rmSync(join(removed, 'src/core/ids.ts'));
    assert.equal(isStale(removed), true, 'a file deleted after the build (its directory changed)');

    const installed = fresh();
    utimesSync(join(installed, 'package-lock.json'), t + 20, t + 20);
    assert.equal(isStale(installed), true, 'packages installed after the build');
  } finally {
    for (const r of roots) rmSync(r, { recursive: true, force: true });
  }
});

test('bin/shardql rebuilds a stale build before it runs', () => {
  const built = cliPath(ROOT);
  // Make the build older than the sources (as after an edit), then run the CLI.
  spawnSync(join(ROOT, 'bin/shardql'), ['--help'], { encoding: 'utf8' });
  utimesSync(built, 1_000_000_000, 1_000_000_000);
  assert.equal(isStale(ROOT), true);
  const r = spawnSync(join(ROOT, 'bin/shardql'), ['--help'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^Usage: shardql <command>/);
  assert.ok(statSync(built).mtimeMs > 1_000_000_000 * 1000, 'the build was written again');
  assert.equal(isStale(ROOT), false);
});
