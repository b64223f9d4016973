#!/usr/bin/env node
/**
 * Patches installed dependencies where their code costs the gateway more than a few lines of change
 * are worth; run after every install (`postinstall`) and by scripts/ensure-deps.sh, so a checkout
 * whose node_modules predates a patch gets it too. Idempotent. Fails loudly when a file no longer
 * reads as expected (the dependency changed: look again at whether the patch is still needed).
 *
 * @apollo/server 5.5.1, utils/makeGatewayGraphQLRequestContext.js: the request context Apollo
 * hands a gateway executor has `response.http` built as an object literal with a `status`
 * getter/setter. V8 keeps accessors in the object's map, so every request made a new map (maps
 * live in old space) whose accessor closures capture that request's context. A dead old-space map
 * still counts as a root for the young-generation GC until the next full GC, so every request's
 * whole state — context, DataLoaders, result tree — survived its scavenges and was promoted:
 * ~3.5-7 MB promoted per scavenge, scavenge pauses of 15-30 ms, the small reads' p99 at 7-10x
 * their p50 (`--trace-gc-nvp`; a plain schema, no gateway: ~0.5 MB). The same getter/setter on a
 * class (prototype accessors, one map) behaves exactly alike and promotes nothing per request.
 *
 * @apollo/utils.createhash 3.0.1, dist/index.js: `createHash` calls `module.require("crypto")` on
 * every call, and Apollo calls it once per request (the document cache's key). A require goes
 * through the module loader's resolution (and tsx's hooks) every time: 2.5% of the gateway's busy
 * CPU on a small read (board page 1's profile: computeQueryHash 4.3%, of which Module._load 2.5%).
 * The patch requires the module once and keeps it.
 */
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const PATCH_MARK = '/* shardql: response.http accessors on a class (scripts/patch-deps.mjs) */';

const ORIGINAL = `    const response = {
        http: {
            headers: new FetcherHeadersForHeaderMap(newRequestContext.response.http.headers),
            get status() {
                return newRequestContext.response.http.status;
            },
            set status(newStatus) {
                newRequestContext.response.http.status = newStatus;
            },
        },
    };`;

const PATCHED = `    ${PATCH_MARK}
    const response = { http: new GatewayResponseHttp(newRequestContext) };`;

const CLASS = `
${PATCH_MARK}
class GatewayResponseHttp {
    headers;
    #context;
    constructor(newRequestContext) {
        this.#context = newRequestContext;
        this.headers = new FetcherHeadersForHeaderMap(newRequestContext.response.http.headers);
    }
    get status() {
        return this.#context.response.http.status;
    }
    set status(newStatus) {
        this.#context.response.http.status = newStatus;
    }
}
`;

const files = ['esm', 'cjs'].map((kind) => join(root, 'node_modules/@apollo/server/dist', kind, 'utils/makeGatewayGraphQLRequestContext.js'));
let failed = false;
for (const file of files) {
  if (!existsSync(file)) {
    console.error(`patch-deps: ${file} is missing (is @apollo/server installed?)`);
    failed = true;
    continue;
  }
  const text = readFileSync(file, 'utf8');
  if (text.includes(PATCH_MARK)) continue;
  if (!text.includes(ORIGINAL)) {
    console.error(`patch-deps: ${file} no longer holds the response.http literal this patch replaces; check the new @apollo/server version (see scripts/patch-deps.mjs)`);
    failed = true;
    continue;
  }
  // The class goes before the source map comment (ESM) or at the end (CJS): both are module scope.
  const patched = text.replace(ORIGINAL, PATCHED);
  const at = patched.lastIndexOf('//# sourceMappingURL=');
  writeFileSync(file, at < 0 ? patched + CLASS : patched.slice(0, at) + CLASS + patched.slice(at));
  console.error(`patch-deps: patched ${file.slice(root.length + 1)}`);
}

export const CREATEHASH_PATCH_MARK = '/* shardql: crypto required once (scripts/patch-deps.mjs) */';
const HASH_ORIGINAL = `function createHash(kind) {
    if (utils_isnodelike_1.isNodeLike && module.require) {
        return module.require("crypto").createHash(kind);
    }`;
const HASH_PATCHED = `${CREATEHASH_PATCH_MARK}
let nodeCrypto;
function createHash(kind) {
    if (utils_isnodelike_1.isNodeLike && module.require) {
        return (nodeCrypto ??= module.require("crypto")).createHash(kind);
    }`;
const hashFile = join(root, 'node_modules/@apollo/utils.createhash/dist/index.js');
if (!existsSync(hashFile)) {
  console.error(`patch-deps: ${hashFile} is missing (is @apollo/server installed?)`);
  failed = true;
} else {
  const text = readFileSync(hashFile, 'utf8');
  if (!text.includes(CREATEHASH_PATCH_MARK)) {
    if (!text.includes(HASH_ORIGINAL)) {
      console.error(`patch-deps: ${hashFile} no longer requires crypto on every call as this patch expects; check the new @apollo/utils.createhash version (see scripts/patch-deps.mjs)`);
      failed = true;
    } else {
      writeFileSync(hashFile, text.replace(HASH_ORIGINAL, HASH_PATCHED));
      console.error(`patch-deps: patched ${hashFile.slice(root.length + 1)}`);
    }
  }
}
process.exit(failed ? 1 : 0);
