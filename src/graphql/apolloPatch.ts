import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What scripts/patch-deps.mjs writes into @apollo/server's request context builder. */
export const APOLLO_PATCH_MARK = '/* shardql: response.http accessors on a class (scripts/patch-deps.mjs) */';

/** What scripts/patch-deps.mjs writes into @apollo/server's request pipeline. */
export const NEGOTIATE_PATCH_MARK = '/* shardql: incremental format negotiated once per Accept value (scripts/patch-deps.mjs) */';

/** What scripts/patch-deps.mjs writes into @apollo/server's request pipeline's query hash. */
export const QUERYHASH_PATCH_MARK = '/* shardql: query hashes kept per query text (scripts/patch-deps.mjs) */';

/** What scripts/patch-deps.mjs writes into @apollo/utils.createhash. */
export const CREATEHASH_PATCH_MARK = '/* shardql: crypto required once (scripts/patch-deps.mjs) */';

export interface DependencyPatch {
  readonly package: string;
  /** The installed file the patch changes. */
  readonly file: () => string;
  readonly mark: string;
  /** What running without it costs. */
  readonly effect: string;
}

/**
 * The patches scripts/patch-deps.mjs applies (npm's postinstall; an install run with
 * `--ignore-scripts` skips them, and the gateway then works the same, only slower):
 * - @apollo/server: the request context handed to the gateway executor builds `response.http`
 *   from a class, not from a getter/setter literal that made every request's state survive
 *   young-generation GCs (scavenge pauses of 15–30 ms without it);
 * - @apollo/utils.createhash (Apollo's per-request document hash): `crypto` required once, not
 *   through the module loader on every request (~3.5% of a small read's CPU without it);
 * - @apollo/server's request pipeline: the incremental-delivery format (which a gateway executor
 *   never reads) negotiated once per Accept value, not on every request (~3.6% of a board page's CPU);
 *   and each query text's SHA-256 kept, not computed again on every request (~1.9%).
 */
export const DEPENDENCY_PATCHES: readonly DependencyPatch[] = [
  {
    package: '@apollo/server',
    file: () => join(dirname(fileURLToPath(import.meta.resolve('@apollo/server'))), 'utils/makeGatewayGraphQLRequestContext.js'),
    mark: APOLLO_PATCH_MARK,
    effect: 'every request survives young-generation GCs: long scavenge pauses',
  },
  {
    package: '@apollo/server',
    file: () => join(dirname(fileURLToPath(import.meta.resolve('@apollo/server'))), 'requestPipeline.js'),
    mark: NEGOTIATE_PATCH_MARK,
    effect: 'an Accept header negotiated on every request for a format the gateway never uses',
  },
  {
    package: '@apollo/server',
    file: () => join(dirname(fileURLToPath(import.meta.resolve('@apollo/server'))), 'requestPipeline.js'),
    mark: QUERYHASH_PATCH_MARK,
    effect: 'every query text hashed with SHA-256 on every request',
  },
  {
    package: '@apollo/utils.createhash',
    file: () => fileURLToPath(import.meta.resolve('@apollo/utils.createhash')),
    mark: CREATEHASH_PATCH_MARK,
    effect: 'crypto required through the module loader on every request',
  },
];

/** The patches the installed packages do not carry (a file that cannot be read counts as unpatched). */
export function unpatchedDependencies(): DependencyPatch[] {
  return DEPENDENCY_PATCHES.filter((p) => {
    try {
      return !readFileSync(p.file(), 'utf8').includes(p.mark);
    } catch {
      return true;
    }
  });
}
