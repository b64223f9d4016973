import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SECRET_VARIABLES, SETTINGS } from '../../../src/config.ts';
import { readPage, ROOT, tableRows } from '../../helpers/markdown.ts';

/** Every file under src/, and bin/shardql (the launcher reads two settings before Node starts). */
function sources(): string[] {
  const out: string[] = [join(ROOT, 'bin/shardql')];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) out.push(path);
    }
  };
  walk(join(ROOT, 'src'));
  return out;
}

/**
 * Names the code reads from an environment: `env.X`, `env['X']`, `process.env.X` (TypeScript),
 * `${X:-…}` / `$X` (the shell launcher), and a name passed as a whole string literal to a reader
 * (`int('SHARDQL_FEED_SIZE', 1)`). Messages that merely mention a name inside a sentence do not count.
 */
function namesRead(file: string): Set<string> {
  const text = readFileSync(file, 'utf8');
  const out = new Set<string>();
  const patterns = file.endsWith('.ts')
    ? [/\benv(?:\?)?\.(SHARDQL_[A-Z0-9_]+)\b/g, /\benv\[\s*['"](SHARDQL_[A-Z0-9_]+)['"]\s*\]/g, /['"](SHARDQL_[A-Z0-9_]+)['"]/g]
    : [/\$\{?(SHARDQL_[A-Z0-9_]+)/g];
  for (const p of patterns) for (const m of text.matchAll(p)) out.add(m[1]!);
  return out;
}

describe('Docs: every setting the code reads is in docs/configuration.md', () => {
  const names = SETTINGS.map((s) => s.name);
  const page = readPage('docs/configuration.md');
  const rows = tableRows(page).filter((cells) => /`SHARDQL_/.test(cells[0] ?? ''));

  test('the settings table has no duplicates, and a _FILE variant for every secret', () => {
    assert.equal(new Set(names).size, names.length);
    for (const secret of SECRET_VARIABLES) assert.ok(names.includes(`${secret}_FILE`), `${secret}_FILE`);
  });

  test('every name the code reads (src/, bin/shardql) is in the settings table', () => {
    const missing: string[] = [];
    for (const file of sources()) {
      for (const name of namesRead(file)) {
        // A prefix the code completes (`${prefix}_TLS`) counts when settings start with it.
        const known = names.includes(name) || names.some((n) => n.startsWith(`${name}_`));
        if (!known) missing.push(`${name} (${file.slice(ROOT.length + 1)})`);
      }
    }
    assert.deepEqual(missing, []);
  });

  test('the scan finds what the code is known to read', () => {
    const all = new Set(sources().flatMap((f) => [...namesRead(f)]));
    for (const name of ['SHARDQL_DEBUG', 'SHARDQL_WORKER_TEST_JOBS', 'SHARDQL_STACK_DIR', 'SHARDQL_SEMI_SPACE_MB', 'SHARDQL_FEED_SIZE', 'SHARDQL_HOST']) {
      assert.ok(all.has(name), name);
    }
  });

  for (const setting of SETTINGS) {
    test(`${setting.name}: a row of its own, read by ${setting.readBy.join(', ')}`, () => {
      const row = rows.find((cells) => cells[0]!.split(/,\s*/).includes(`\`${setting.name}\``));
      assert.ok(row, `docs/configuration.md has no table row naming \`${setting.name}\` in its first column`);
      const readBy = row[1]!.split(/,\s*/).sort();
      assert.deepEqual(readBy, [...setting.readBy].sort(), `the "read by" column of ${setting.name}`);
      assert.ok((row[2] ?? '') !== '', `${setting.name} states its default`);
      assert.ok((row[3] ?? '').length > 10, `${setting.name} says what it means`);
    });
  }
});
