import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../core/projectRoot.ts';

/** The SDL in schema/*.graphql: the source of truth for the API. */
export const SCHEMA_DIR = join(PROJECT_ROOT, 'schema');

export function loadTypeDefs(dir: string = SCHEMA_DIR): string {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.graphql'))
    .sort()
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .join('\n');
}
