import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The project's root directory (where package.json, schema/ and bin/ are), found from this module's
 * own location: src/core/ when run from source, dist/ when run from the build (scripts/build.mjs),
 * so a path written as "two levels up" would hold in only one of them.
 */
export const PROJECT_ROOT: string = findRoot(import.meta.dirname);

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'schema'))) return dir;
    if (dirname(dir) === dir) throw new Error(`shardql: no project root (package.json beside schema/) above ${from}`);
  }
}
