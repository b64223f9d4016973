/**
 * The model this process serves: one directory of model SDL (SHARDQL_MODEL, default the project's
 * schema/), read and parsed once, and the one place every runtime layer gets the model from — the
 * object types and tables, mapping tables, stored fields, references, type numbers, mutations,
 * resolvers, cost, cascade, reconcile, import, DDL and the served SDL. `declared.ts` is schema/'s
 * model as a value for pure unit tests (and a unit test checks it equals what schema/ serves).
 *
 * The entry points choose the directory before any module reads the model (src/cli/servedModel.ts
 * is the first import of src/cli.ts); a process that never chooses (a test, a script) serves
 * schema/. Choosing another directory after the model was read is a programming error, refused.
 *
 *   chooseModel('/etc/shardql/model');   // at start, from --model or SHARDQL_MODEL
 *   servedModel().objects.map((o) => o.key)   // ['user', 'board', 'pin', 'comment', 'collection']
 */
import { readModelFiles } from './modelFiles.ts';
import { parseModel, type ModelFile } from './parseModel.ts';
import type { ModelData } from './model.ts';

/** The project's own model, relative to its root. */
export const DEFAULT_MODEL_DIR = 'schema';

interface Served {
  readonly dir: string;
  readonly files: readonly ModelFile[];
  readonly model: ModelData;
}

let chosen = DEFAULT_MODEL_DIR;
let served: Served | undefined;

/**
 * Sets the directory the process serves (absolute or relative to the project's root) and reads it
 * now, so a wrong model is refused at start: throws ModelError (every problem with its
 * file:line:column) or the file system's error for a missing directory.
 */
export function chooseModel(dir: string): ModelData {
  if (served !== undefined && served.dir !== dir) {
    throw new Error(`shardql: the model was read from ${served.dir} before ${dir} was chosen; choose the model before anything reads it`);
  }
  chosen = dir;
  return load().model;
}

function load(): Served {
  if (served === undefined) {
    const files = readModelFiles(chosen);
    served = { dir: chosen, files, model: parseModel(files) };
  }
  return served;
}

/** The served model (read on first use from the chosen directory). */
export function servedModel(): ModelData {
  return load().model;
}

/** The served model's files (the vocabulary among them), as read: the served SDL is printed from them. */
export function servedModelFiles(): readonly ModelFile[] {
  return load().files;
}

/** The directory the served model was read from, as chosen (`schema` unless SHARDQL_MODEL said otherwise). */
export function servedModelDir(): string {
  return load().dir;
}
