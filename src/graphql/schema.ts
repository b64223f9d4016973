import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse, print } from 'graphql';
import { PROJECT_ROOT } from '../core/projectRoot.ts';
import { withoutModel } from '../core/model/withoutModel.ts';

/** The SDL in schema/*.graphql: the source of truth for the API and for the declared model. */
export const SCHEMA_DIR = join(PROJECT_ROOT, 'schema');

/** schema/*.graphql as written: the API with the model's directives on it (what `npm run model` reads). */
export function loadDeclaration(dir: string = SCHEMA_DIR): string {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .join('\n');
}

/** The API the gateway serves: the declaration without the model's vocabulary. */
export function loadTypeDefs(dir: string = SCHEMA_DIR): string {
  return print(withoutModel(parse(loadDeclaration(dir))));
}
