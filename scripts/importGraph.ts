/**
 * The import graph of a source tree, for the layer check (scripts/check-layers.ts): every module
 * a file names, read by the TypeScript parser (so a string or comment that looks like an import
 * is none), and the cycles among files. Type-only imports count as edges: a cycle of types still
 * ties two modules into one unit that cannot be understood, tested or moved apart.
 */
import ts from 'typescript';

export interface ImportEdge {
  /** The module as written: `'../core/ids.ts'`, `'bullmq'`. */
  readonly spec: string;
  /**
   * Erased at runtime: `import type …`, `export type … from`, `import('…').T` in a type. An
   * `import { type A }` is not: under `verbatimModuleSyntax` it stays as `import {} from …` and
   * loads the module.
   */
  readonly typeOnly: boolean;
}

/**
 * Every module `text` names: static imports and re-exports, `import x = require(…)`, dynamic
 * `import(…)` and import types.
 *
 *   importsOf('a.ts', "import type { T } from './t.ts';\nexport * from './u.ts';")
 *   → [{ spec: './t.ts', typeOnly: true }, { spec: './u.ts', typeOnly: false }]
 */
export function importsOf(fileName: string, text: string): ImportEdge[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const out: ImportEdge[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      out.push({ spec: node.moduleSpecifier.text, typeOnly: node.importClause?.isTypeOnly ?? false });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      out.push({ spec: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      out.push({ spec: node.moduleReference.expression.text, typeOnly: node.isTypeOnly });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      out.push({ spec: node.argument.literal.text, typeOnly: true });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg && ts.isStringLiteralLike(arg)) out.push({ spec: arg.text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** A set of files that import one another round: `cycle` is one path through them, in import order. */
export interface ImportCycle {
  /** Every file of the strongly connected component, sorted. */
  readonly files: readonly string[];
  /**
   * A shortest cycle through the first of `files`: each file imports the next and the last
   * imports the first. `['a', 'b']` reads a → b → a; a file that imports itself is `['a']`.
   */
  readonly cycle: readonly string[];
}

/**
 * The cycles of a graph (file → the files it imports): each strongly connected component of more
 * than one file, and each file that imports itself, sorted by first file. Tarjan's algorithm.
 *
 *   importCycles(new Map([['a', ['b']], ['b', ['a', 'c']], ['c', []]]))
 *   → [{ files: ['a', 'b'], cycle: ['a', 'b'] }]
 */
export function importCycles(graph: ReadonlyMap<string, Iterable<string>>): ImportCycle[] {
  const next = (file: string): string[] => [...(graph.get(file) ?? [])];
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const connect = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next(v)) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    components.push(component);
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v);

  const cycles: ImportCycle[] = [];
  for (const component of components) {
    const files = component.sort();
    const first = files[0]!;
    if (files.length === 1 && !next(first).includes(first)) continue;
    cycles.push({ files, cycle: shortestCycle(first, new Set(files), next) });
  }
  return cycles.sort((a, b) => (a.files[0]! < b.files[0]! ? -1 : 1));
}

/** Breadth first from `start` inside `within`, back to `start`: the files on the way, `start` first. */
function shortestCycle(start: string, within: ReadonlySet<string>, next: (file: string) => string[]): string[] {
  const cameFrom = new Map<string, string>();
  let frontier = [start];
  while (frontier.length > 0) {
    const after: string[] = [];
    for (const v of frontier) {
      for (const w of next(v).sort()) {
        if (!within.has(w)) continue;
        if (w === start) {
          const path = [v];
          while (path[0] !== start) path.unshift(cameFrom.get(path[0]!)!);
          return path;
        }
        if (cameFrom.has(w)) continue;
        cameFrom.set(w, v);
        after.push(w);
      }
    }
    frontier = after;
  }
  throw new Error(`${start} is in no cycle of its component`);
}
