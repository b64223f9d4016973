/**
 * The layer check's import graph (scripts/importGraph.ts): which imports a file makes, type-only
 * ones included, and the cycles among files that `npm run lint` refuses.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { importCycles, importsOf, type ImportCycle, type ImportEdge } from '../../../scripts/importGraph.ts';

describe('Import graph: the imports a file makes', () => {
  const cases: [string, string, ImportEdge[]][] = [
    ['a value import', `import { a } from './a.ts';`, [{ spec: './a.ts', typeOnly: false }]],
    ['a type-only import', `import type { A } from './a.ts';`, [{ spec: './a.ts', typeOnly: true }]],
    // verbatimModuleSyntax keeps it as `import {} from './a.ts'`: the module is loaded.
    ['an import whose names are all inline types', `import { type A, type B } from './a.ts';`, [{ spec: './a.ts', typeOnly: false }]],
    ['a type-only re-export', `export type { A } from './a.ts';`, [{ spec: './a.ts', typeOnly: true }]],
    ['a re-export of everything', `export * from './a.ts';`, [{ spec: './a.ts', typeOnly: false }]],
    ['an import for its side effects', `import './a.ts';`, [{ spec: './a.ts', typeOnly: false }]],
    ['a dynamic import', `const m = await import('./a.ts');`, [{ spec: './a.ts', typeOnly: false }]],
    ['an import type in a signature', `export function f(x: import('./a.ts').A): void {}`, [{ spec: './a.ts', typeOnly: true }]],
    ['an import split over lines', `import {\n  a,\n  b,\n} from './a.ts';`, [{ spec: './a.ts', typeOnly: false }]],
    ['an import in a comment', `// import { a } from './a.ts';\n/* import { b } from './b.ts'; */`, []],
    ['an import in a string', "const s = \"import { a } from './a.ts'\";\nconst t = `/*`;\nimport { b } from './b.ts';", [{ spec: './b.ts', typeOnly: false }]],
  ];
  for (const [name, text, expected] of cases) {
    test(`reads ${name}`, () => assert.deepEqual(importsOf('x.ts', text), expected));
  }
});

describe('Import graph: cycles', () => {
  const graph = (edges: Record<string, string[]>): Map<string, string[]> => new Map(Object.entries(edges));
  const cases: [string, Record<string, string[]>, ImportCycle[]][] = [
    ['none in a chain', { a: ['b'], b: ['c'], c: [] }, []],
    ['none in a diamond', { a: ['b', 'c'], b: ['d'], c: ['d'], d: [] }, []],
    ['none in an empty graph', {}, []],
    ['a file that imports itself', { a: ['a', 'b'], b: [] }, [{ files: ['a'], cycle: ['a'] }]],
    ['two files that import each other', { a: ['b'], b: ['a', 'c'], c: [] }, [{ files: ['a', 'b'], cycle: ['a', 'b'] }]],
    ['three files round, in import order from the first', { c: ['a'], a: ['b'], b: ['c'] }, [{ files: ['a', 'b', 'c'], cycle: ['a', 'b', 'c'] }]],
    [
      'the shortest way round when a component has two',
      { a: ['b', 'd'], b: ['c'], c: ['a'], d: ['a'] },
      [{ files: ['a', 'b', 'c', 'd'], cycle: ['a', 'd'] }],
    ],
    [
      'a component whose cycles through the first file leave others out',
      { a: ['b'], b: ['a', 'c'], c: ['b'] },
      [{ files: ['a', 'b', 'c'], cycle: ['a', 'b'] }],
    ],
    [
      'two separate cycles, each once',
      { a: ['b'], b: ['a'], c: ['d'], d: ['e'], e: ['c'], f: ['a', 'c'] },
      [
        { files: ['a', 'b'], cycle: ['a', 'b'] },
        { files: ['c', 'd', 'e'], cycle: ['c', 'd', 'e'] },
      ],
    ],
    ['an edge to a file outside the graph', { a: ['b'], b: ['z'] }, []],
  ];
  for (const [name, edges, expected] of cases) {
    test(`finds ${name}`, () => assert.deepEqual(importCycles(graph(edges)), expected));
  }

  test('finds one long cycle through 2000 files, in order', () => {
    const n = 2000;
    const edges: Record<string, string[]> = {};
    const name = (i: number): string => `f${String(i).padStart(4, '0')}`;
    for (let i = 0; i < n; i++) edges[name(i)] = [name((i + 1) % n)];
    const [only, ...rest] = importCycles(graph(edges));
    assert.equal(rest.length, 0);
    assert.equal(only!.files.length, n);
    assert.deepEqual(only!.cycle, Array.from({ length: n }, (_, i) => name(i)));
  });
});
