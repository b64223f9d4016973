import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { anchorsOf, docPages, linksOf, readPage, ROOT, slug } from '../../helpers/markdown.ts';

describe('Docs: GitHub anchors', () => {
  const cases: [string, string, string][] = [
    ['plain words', 'Writes that span shards', 'writes-that-span-shards'],
    ['code and punctuation dropped', 'What a query cost: `extensions.cost`', 'what-a-query-cost-extensionscost'],
    ['hyphens and underscores kept', 'Feeds-and_jobs', 'feeds-and_jobs'],
    ['a link keeps its text', 'See [the model](model.md)', 'see-the-model'],
    ['colons and parentheses dropped', 'Managed databases: passwords and TLS (all)', 'managed-databases-passwords-and-tls-all'],
  ];
  for (const [name, heading, anchor] of cases) test(name, () => assert.equal(slug(heading), anchor));
  test('a repeated heading is numbered', () => {
    assert.deepEqual([...anchorsOf('# A\n## Tested\n```\n# not a heading\n```\n## Tested\n')], ['a', 'tested', 'tested-1']);
  });
});

describe('Docs: every relative link resolves', () => {
  const pages = docPages();
  test('README.md and docs/ hold the pages the README indexes', () => {
    for (const page of ['README.md', 'docs/graphql.md', 'docs/configuration.md', 'docs/operations.md', 'docs/architecture.md', 'docs/benchmarks.md']) {
      assert.ok(pages.includes(page), `${page} is missing`);
    }
  });
  for (const page of pages) {
    test(page, () => {
      const problems: string[] = [];
      for (const { line, target } of linksOf(readPage(page))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: … are not checked here
        const [path, anchor] = target.split('#', 2) as [string, string | undefined];
        const file = path === '' ? join(ROOT, page) : normalize(join(ROOT, dirname(page), decodeURIComponent(path)));
        if (!file.startsWith(ROOT) || !existsSync(file)) {
          problems.push(`${page}:${line}: ${target}: no such file`);
          continue;
        }
        if (anchor !== undefined && anchor !== '') {
          if (!file.endsWith('.md') || statSync(file).isDirectory()) {
            problems.push(`${page}:${line}: ${target}: an anchor into a file that is not Markdown`);
            continue;
          }
          const anchors = anchorsOf(readPage(file.slice(ROOT.length + 1)));
          if (!anchors.has(anchor)) problems.push(`${page}:${line}: ${target}: no heading #${anchor} (has ${[...anchors].join(', ')})`);
        }
      }
      assert.deepEqual(problems, []);
    });
  }
});
