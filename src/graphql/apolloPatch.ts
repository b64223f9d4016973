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

/** What scripts/patch-deps.mjs writes into @apollo/utils.createhash. */
export const CREATEHASH_PATCH_MARK = '/* shardql: crypto required once (scripts/patch-deps.mjs) */';

/**
 * Whether the installed @apollo/utils.createhash (Apollo's per-request document hash) carries
 * scripts/patch-deps.mjs's change: `crypto` required once, not through the module loader on every
 * request (~2.5% of a small read's CPU).
 */
export function apolloHashPatched(): boolean {
  try {
    return readFileSync(fileURLToPath(import.meta.resolve('@apollo/utils.createhash')), 'utf8').includes(CREATEHASH_PATCH_MARK);
  } catch {
    return false;
  }
}
