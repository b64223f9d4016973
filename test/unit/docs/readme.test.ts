import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { docPages, linksOf, readPage, ROOT } from '../../helpers/markdown.ts';

describe('Docs: the README is a front door', () => {
  const readme = readPage('README.md');
  const lines = readme.split('\n');

  test('at most 300 lines and 30 KB', () => {
    assert.ok(lines.length <= 300, `${lines.length} lines`);
    assert.ok(Buffer.byteLength(readme) <= 30 * 1024, `${Buffer.byteLength(readme)} bytes`);
  });

  test('the two commands are in its first 60 lines, and the test command is the one CI runs', () => {
    const top = lines.slice(0, 60).join('\n');
    assert.match(top, /^npm run dev\b/m);
    assert.match(top, /^npm test\b/m);
    assert.match(readFileSync(join(ROOT, '.ci/run'), 'utf8'), /^npm test$/m, '.ci/run runs the README\'s test command');
  });

  test('it links every page of docs/', () => {
    const linked = new Set(linksOf(readme).map((l) => l.target.split('#')[0]));
    const missing = docPages().filter((p) => p.startsWith('docs/') && !linked.has(p));
    assert.deepEqual(missing, []);
  });
});

describe('Docs: every page says what it is for, and none narrates its history', () => {
  for (const page of docPages().filter((p) => p.startsWith('docs/'))) {
    test(page, () => {
      const text = readPage(page);
      const head = text.split('\n').slice(0, 8).join('\n');
      assert.match(head, /^What this page is for: /m, 'the page starts with what it is for');
      // History belongs in CHANGELOG.md: "(was 16 round trips)", "were 23 and 22", "session 8".
      const history = text.match(/\((?:was|were) \d[^)]*\)|\bwere \d+ and \d+\b|\bsession \d+\b/g) ?? [];
      assert.deepEqual(history, []);
    });
  }
});
