import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { attribute, frameOwner, type CpuProfile } from '../../../bench/profile.ts';

const node = (url: string, hitCount: number, functionName = 'f'): CpuProfile['nodes'][number] => ({ callFrame: { url, functionName }, hitCount });

describe('CPU profile attribution', () => {
  it('splits self time by package, category and project file, in percent of non-idle samples', () => {
    const profile: CpuProfile = {
      nodes: [
        node('', 0, '(root)'),
        node('', 30, '(idle)'),
        node('', 2, '(program)'),
        node('', 3, '(garbage collector)'),
        node('file:///repo/node_modules/graphql/execution/execute.js', 4),
        // A copy nested under another package belongs to the innermost one.
        node('file:///repo/node_modules/@apollo/server/node_modules/graphql/language/parser.js', 1),
        node('file:///repo/node_modules/@apollo/server/dist/esm/ApolloServer.js', 3),
        // tsx may add a query string to the URL of a .ts file.
        node('file:///repo/src/cache/redisLists.ts?tsx-namespace=1', 2),
        node('file:///repo/src/graphql/resolvers.ts', 1),
        node('node:internal/streams/readable', 1),
        node('node:net', 1),
        // Node's C++ bindings have no URL either.
        node('', 1, 'writev'),
        node('file:///elsewhere/x.js', 1),
      ],
    };
    assert.deepEqual(attribute(profile, '/repo'), {
      samples: 50,
      idleSamples: 30,
      byPackage: [
        { name: 'graphql', pct: 25 },
        { name: '(garbage collector)', pct: 15 },
        { name: '@apollo/server', pct: 15 },
        { name: 'project:src', pct: 15 },
        { name: '(program)', pct: 10 },
        { name: 'node:internal', pct: 10 },
        { name: '(native)', pct: 5 },
        { name: 'other', pct: 5 },
      ],
      byFile: [
        { name: 'src/cache/redisLists.ts', pct: 10 },
        { name: 'src/graphql/resolvers.ts', pct: 5 },
      ],
    });
  });

  it('keeps the top 8 of each list', () => {
    const profile: CpuProfile = { nodes: Array.from({ length: 10 }, (_, i) => node(`file:///repo/node_modules/p${i}/index.js`, i + 1)) };
    const { byPackage } = attribute(profile, '/repo');
    assert.deepEqual(byPackage.map((s) => s.name), ['p9', 'p8', 'p7', 'p6', 'p5', 'p4', 'p3', 'p2']);
    assert.equal(byPackage[0]!.pct, 18.2);
  });

  it('tells project files outside src/ and files outside the project apart', () => {
    assert.deepEqual(frameOwner('file:///repo/bench/main.ts', 'main', '/repo'), { category: 'project:bench', file: 'bench/main.ts' });
    assert.deepEqual(frameOwner('file:///elsewhere/x.js', 'x', '/repo'), { category: 'other' });
    assert.deepEqual(frameOwner('file:///elsewhere/node_modules/@scope/pkg/lib/a.js', 'a', '/repo'), { category: '@scope/pkg' });
  });

  it('counts a bundled frame for the file its source map names (dist/bench.mjs, dist/cli.mjs)', () => {
    // A real esbuild bundle of two project files and a package, with its linked map, as scripts/build.mjs writes them.
    const repo = mkdtempSync(join(tmpdir(), 'shardql-profile-'));
    try {
      mkdirSync(join(repo, 'src/cache'), { recursive: true });
      mkdirSync(join(repo, 'node_modules/pkg'), { recursive: true });
      writeFileSync(join(repo, 'node_modules/pkg/package.json'), '{"name":"pkg","type":"module","main":"index.js"}');
      writeFileSync(join(repo, 'node_modules/pkg/index.js'), 'export function fromPackage(x) { return x + 1; }\n');
      writeFileSync(join(repo, 'src/cache/near.ts'), 'export function nearGet(k: string): number {\n  return k.length * 2;\n}\n');
      writeFileSync(join(repo, 'src/main.ts'), "import { nearGet } from './cache/near.ts';\nimport { fromPackage } from 'pkg';\nexport function mainEntry(k: string): number {\n  return fromPackage(nearGet(k));\n}\n");
      const { buildSync } = createRequire(import.meta.url)('esbuild');
      buildSync({ absWorkingDir: repo, entryPoints: ['src/main.ts'], outfile: join(repo, 'dist/out.mjs'), bundle: true, platform: 'node', format: 'esm', packages: 'external', sourcemap: 'linked', sourcesContent: false, logLevel: 'silent' });
      const js = readFileSync(join(repo, 'dist/out.mjs'), 'utf8').split('\n');
      const at = (name: string): { lineNumber: number; columnNumber: number } => {
        const line = js.findIndex((l) => l.includes(`function ${name}(`));
        assert.ok(line >= 0, `the bundle defines ${name}`);
        return { lineNumber: line, columnNumber: js[line]!.indexOf(`function ${name}(`) };
      };
      const url = pathToFileURL(join(repo, 'dist/out.mjs')).href;
      const profile: CpuProfile = {
        nodes: [
          { callFrame: { url, functionName: 'nearGet', ...at('nearGet') }, hitCount: 3 },
          { callFrame: { url, functionName: 'mainEntry', ...at('mainEntry') }, hitCount: 1 },
          { callFrame: { url: pathToFileURL(join(repo, 'node_modules/pkg/index.js')).href, functionName: 'fromPackage', lineNumber: 0, columnNumber: 7 }, hitCount: 1 },
        ],
      };
      assert.deepEqual(attribute(profile, repo), {
        samples: 5,
        idleSamples: 0,
        byPackage: [
          { name: 'project:src', pct: 80 },
          { name: 'pkg', pct: 20 },
        ],
        byFile: [
          { name: 'src/cache/near.ts', pct: 60 },
          { name: 'src/main.ts', pct: 20 },
        ],
      });
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});
