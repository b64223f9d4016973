import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What scripts/patch-deps.mjs writes into the files it patches. */
export const APOLLO_PATCH_MARK = '/* shardql: response.http accessors on a class (scripts/patch-deps.mjs) */';

/**
 * Whether the installed @apollo/server carries scripts/patch-deps.mjs's change (the request context
 * handed to the gateway executor builds `response.http` from a class, not from a getter/setter
 * literal that made every request's state survive young-generation GCs). An install run with
 * `--ignore-scripts` skips it: the gateway then works the same, with scavenge pauses of 15–30 ms.
 */
export function apolloGatewayPatched(): boolean {
  try {
    const entry = fileURLToPath(import.meta.resolve('@apollo/server'));
    return readFileSync(join(dirname(entry), 'utils/makeGatewayGraphQLRequestContext.js'), 'utf8').includes(APOLLO_PATCH_MARK);
  } catch {
    return false;
  }
}
