/**
 * The files of a model, read from its directory: its own *.graphql files and the vocabulary
 * (schema/model.graphql) unless the directory holds its own (a copy of schema/ does), each named by its path from the project's
 * root so that a problem reads `examples/qa/schema.graphql:41:37: …`. The only I/O of the model's
 * reading; parseModel.ts takes what this returns.
 *
 *   readModelFiles('examples/qa')  // [{ name: 'schema/model.graphql', … }, { name: 'examples/qa/schema.graphql', … }]
 */
import { readFileSync, readdirSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { PROJECT_ROOT } from '../projectRoot.ts';
import type { ModelFile } from './parseModel.ts';

/** The vocabulary every model is declared in. */
export const VOCABULARY_FILE = join(PROJECT_ROOT, 'schema', 'model.graphql');

/** `dir`: a model's directory, absolute or relative to the project's root (`schema`, `examples/qa`). */
export function readModelFiles(dir: string, root: string = PROJECT_ROOT): ModelFile[] {
  const abs = resolve(root, dir);
  const own = readdirSync(abs)
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .map((f) => join(abs, f));
  // A directory holding its own model.graphql (schema/, or a copy of it) brings its vocabulary.
  const paths = own.some((p) => basename(p) === basename(VOCABULARY_FILE)) ? own : [VOCABULARY_FILE, ...own];
  return paths.map((p) => {
    const rel = relative(root, p);
    return { name: rel.startsWith('..') ? p : rel.split(sep).join('/'), body: readFileSync(p, 'utf8') };
  });
}
