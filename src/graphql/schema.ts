import { parse, print } from 'graphql';
import { readModelFiles } from '../core/model/modelFiles.ts';
import { servedModelFiles } from '../core/model/served.ts';
import type { ModelFile } from '../core/model/parseModel.ts';
import { withoutModel } from '../core/model/withoutModel.ts';

/**
 * The SDL of a model's directory (the vocabulary with it) as written: the API with the model's
 * directives on it. Without `dir`: the model this process serves (SHARDQL_MODEL, core/model/served.ts),
 * so the API and the tables always come from the same files.
 */
export function loadDeclaration(dir?: string): string {
  const files: readonly ModelFile[] = dir === undefined ? servedModelFiles() : readModelFiles(dir);
  return files.map((f) => f.body).join('\n');
}

let servedTypeDefs: string | undefined;

/**
 * The API the gateway serves: the declaration without the model's vocabulary. The served model's
 * is printed once per process (products, resolvers and Apollo all read it at start).
 */
export function loadTypeDefs(dir?: string): string {
  if (dir !== undefined) return print(withoutModel(parse(loadDeclaration(dir))));
  servedTypeDefs ??= print(withoutModel(parse(loadDeclaration())));
  return servedTypeDefs;
}
