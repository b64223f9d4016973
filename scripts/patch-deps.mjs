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
 *
 * @apollo/server 5.5.1, requestPipeline.js: every request builds a Negotiator over its Accept header
 * to choose between the two incremental-delivery formats (\`useLegacyIncremental\`), which a gateway
 * executor (ours) never reads: 3.6% of the gateway's busy CPU on a board page (negotiator and its
 * media-type parsing). The answer depends on the Accept header alone, so the patch keeps it per
 * header value (at most 64 distinct values kept; others are negotiated every time, as before).
 *
 * @apollo/server 5.5.1, requestPipeline.js: every request's query text is hashed with SHA-256 (the
 * document cache's key, and the check of an automatic persisted query's hash): 1.9% of a board
 * page's CPU, for the same few texts again and again. The patch keeps the hash per text (texts up
 * to 16 KiB, 512 at most, all forgotten when full): a Map lookup hashes the string with V8's fast
 * string hash instead.
 */
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const PATCH_MARK = '/* shardql: response.http accessors on a class (scripts/patch-deps.mjs) */';

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

const CREATEHASH_PATCH_MARK = '/* shardql: crypto required once (scripts/patch-deps.mjs) */';
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

/** Module-scope code goes before the source map comment (ESM) or at the end (CJS): both are module scope. */
function atModuleScope(text, code) {
  const at = text.lastIndexOf('//# sourceMappingURL=');
  return at < 0 ? text + code : text.slice(0, at) + code + text.slice(at);
}

function withClass(text) {
  return atModuleScope(text.replace(ORIGINAL, PATCHED), CLASS);
}

const NEGOTIATE_PATCH_MARK = '/* shardql: incremental format negotiated once per Accept value (scripts/patch-deps.mjs) */';
/** The expression as each build spells it: the Negotiator and MEDIA_TYPES names differ. */
const negotiation = (negotiator, types, accept) => `new ${negotiator}({
                    headers: { accept: ${accept} },
                }).mediaType([
                    ${types}.MULTIPART_MIXED_EXPERIMENTAL_ALPHA_9,
                    ${types}.MULTIPART_MIXED_EXPERIMENTAL_ALPHA_2,
                ]) === ${types}.MULTIPART_MIXED_EXPERIMENTAL_ALPHA_2`;
function negotiatePatch(kind, negotiator, types) {
  const original = `                useLegacyIncremental: ${negotiation(negotiator, types, "request.http?.headers.get('accept')")},`;
  const memo = `
${NEGOTIATE_PATCH_MARK}
const shardqlLegacyIncrementalByAccept = new Map();
function shardqlLegacyIncremental(accept) {
    let legacy = shardqlLegacyIncrementalByAccept.get(accept);
    if (legacy === undefined) {
        legacy = ${negotiation(negotiator, types, 'accept')};
        if (shardqlLegacyIncrementalByAccept.size < 64) shardqlLegacyIncrementalByAccept.set(accept, legacy);
    }
    return legacy;
}
`;
  return {
    file: `node_modules/@apollo/server/dist/${kind}/requestPipeline.js`,
    mark: NEGOTIATE_PATCH_MARK,
    original,
    apply: (text) => atModuleScope(text.replace(original, `                useLegacyIncremental: shardqlLegacyIncremental(request.http?.headers.get('accept')),`), memo),
    changed: 'no longer negotiates the incremental format as this patch expects; check the new @apollo/server version',
  };
}

const QUERYHASH_PATCH_MARK = '/* shardql: query hashes kept per query text (scripts/patch-deps.mjs) */';
/** The hash call as each build spells it. */
function queryHashPatch(kind, createHashCall) {
  const original = `function computeQueryHash(query) {
    return ${createHashCall}('sha256').update(query).digest('hex');
}`;
  const patched = `${QUERYHASH_PATCH_MARK}
const shardqlQueryHashes = new Map();
function computeQueryHash(query) {
    let hash = shardqlQueryHashes.get(query);
    if (hash === undefined) {
        hash = ${createHashCall}('sha256').update(query).digest('hex');
        if (query.length <= 16384) {
            if (shardqlQueryHashes.size >= 512) shardqlQueryHashes.clear();
            shardqlQueryHashes.set(query, hash);
        }
    }
    return hash;
}`;
  return {
    file: `node_modules/@apollo/server/dist/${kind}/requestPipeline.js`,
    mark: QUERYHASH_PATCH_MARK,
    original,
    apply: (text) => text.replace(original, patched),
    changed: 'no longer hashes the query as this patch expects; check the new @apollo/server version',
  };
}

const PATCHES = [
  ...['esm', 'cjs'].map((kind) => ({
    file: `node_modules/@apollo/server/dist/${kind}/utils/makeGatewayGraphQLRequestContext.js`,
    mark: PATCH_MARK,
    original: ORIGINAL,
    apply: withClass,
    changed: 'no longer holds the response.http literal this patch replaces; check the new @apollo/server version',
  })),
  negotiatePatch('esm', 'Negotiator', 'MEDIA_TYPES'),
  negotiatePatch('cjs', 'negotiator_1.default', 'ApolloServer_js_1.MEDIA_TYPES'),
  queryHashPatch('esm', 'createHash'),
  queryHashPatch('cjs', '(0, utils_createhash_1.createHash)'),
  {
    file: 'node_modules/@apollo/utils.createhash/dist/index.js',
    mark: CREATEHASH_PATCH_MARK,
    original: HASH_ORIGINAL,
    apply: (text) => text.replace(HASH_ORIGINAL, HASH_PATCHED),
    changed: 'no longer requires crypto on every call as this patch expects; check the new @apollo/utils.createhash version',
  },
];

let failed = false;
for (const patch of PATCHES) {
  const file = join(root, patch.file);
  if (!existsSync(file)) {
    console.error(`patch-deps: ${file} is missing (is @apollo/server installed?)`);
    failed = true;
    continue;
  }
  const text = readFileSync(file, 'utf8');
  if (text.includes(patch.mark)) continue;
  if (!text.includes(patch.original)) {
    console.error(`patch-deps: ${file} ${patch.changed} (see scripts/patch-deps.mjs)`);
    failed = true;
    continue;
  }
  writeFileSync(file, patch.apply(text));
  console.error(`patch-deps: patched ${patch.file}`);
}
process.exit(failed ? 1 : 0);
