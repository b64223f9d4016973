import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HeaderMap } from '@apollo/server';
import { createRequire } from 'node:module';
import { createHash as nodeCreateHash } from 'node:crypto';
import { APOLLO_PATCH_MARK, CREATEHASH_PATCH_MARK, NEGOTIATE_PATCH_MARK, QUERYHASH_PATCH_MARK, unpatchedDependencies } from '../../../src/graphql/apolloPatch.ts';

/**
 * scripts/patch-deps.mjs changes how @apollo/server builds the request context a gateway executor
 * gets: `response.http.status` from a class's accessors instead of a getter/setter literal (which
 * made a new V8 map per request, and every request's state survive its scavenges). Checked here:
 * the patch is installed (ESM and CommonJS builds), and the object behaves as Apollo's did.
 */
/** The Negotiator @apollo/server uses, resolved from it. */
const Negotiator = createRequire(import.meta.resolve('@apollo/server'))('negotiator') as new (req: { headers: { accept?: string | undefined } }) => { mediaType(types: string[]): string | undefined };
const dist = join(dirname(fileURLToPath(import.meta.resolve('@apollo/server'))), '..');
const file = (kind: 'esm' | 'cjs'): string => join(dist, kind, 'utils/makeGatewayGraphQLRequestContext.js');

describe('@apollo/server patch (scripts/patch-deps.mjs)', () => {
  test('is installed in both builds, and the gateway sees it', () => {
    for (const kind of ['esm', 'cjs'] as const) assert.ok(readFileSync(file(kind), 'utf8').includes(APOLLO_PATCH_MARK), `${kind} build patched`);
    assert.deepEqual(unpatchedDependencies().map((p) => p.package), []);
  });

  test("response.http reads and writes Apollo's response like the original, with no accessor of its own", async () => {
    const { makeGatewayGraphQLRequestContext } = (await import(file('esm'))) as {
      makeGatewayGraphQLRequestContext: (rc: unknown, server: unknown, internals: unknown) => { response: { http: { status?: number; headers: { get(k: string): string | null; set(k: string, v: string): void } } } };
    };
    const make = () => {
      const apolloResponse = { http: { status: undefined as number | undefined, headers: new HeaderMap([['x-a', '1']]) } };
      const rc = { request: { query: '{ a }', http: { method: 'POST', search: '', headers: new HeaderMap() } }, response: apolloResponse, contextValue: {} };
      return { apolloResponse, gateway: makeGatewayGraphQLRequestContext(rc, { logger: console, cache: undefined }, { includeStacktraceInErrorResponses: false }) };
    };
    const one = make();
    const two = make();
    assert.equal(one.gateway.response.http.status, undefined);
    one.gateway.response.http.status = 418;
    assert.deepEqual([one.apolloResponse.http.status, one.gateway.response.http.status, two.apolloResponse.http.status], [418, 418, undefined]);
    one.apolloResponse.http.status = 200;
    assert.equal(one.gateway.response.http.status, 200);
    assert.equal(one.gateway.response.http.headers.get('x-a'), '1');
    one.gateway.response.http.headers.set('x-b', '2');
    assert.equal(one.apolloResponse.http.headers.get('x-b'), '2');
    // The point of the patch: the accessor lives on a shared prototype, not on each request's object.
    assert.equal(Object.getOwnPropertyDescriptor(one.gateway.response.http, 'status'), undefined);
    assert.equal(Object.getPrototypeOf(one.gateway.response.http), Object.getPrototypeOf(two.gateway.response.http));
  });

  test("the request pipeline's incremental format: negotiated once per Accept value, with Negotiator's answers", () => {
    const ALPHA_9 = 'multipart/mixed; incrementalSpec=v0.2';
    const ALPHA_2 = 'multipart/mixed; deferSpec=20220824';
    const original = (accept: string | undefined): boolean => new Negotiator({ headers: { accept } }).mediaType([ALPHA_9, ALPHA_2]) === ALPHA_2;
    for (const kind of ['esm', 'cjs'] as const) {
      const text = readFileSync(join(dist, kind, 'requestPipeline.js'), 'utf8');
      assert.ok(text.includes(NEGOTIATE_PATCH_MARK), `${kind} build patched`);
      assert.ok(!text.includes("headers: { accept: request.http?.headers.get('accept') }"), `${kind}: no per-request negotiation left`);
      // The memo as installed, run over the Negotiator the file names, its cache filled past its bound.
      const body = text.slice(text.indexOf(NEGOTIATE_PATCH_MARK) + NEGOTIATE_PATCH_MARK.length);
      const types = { MULTIPART_MIXED_EXPERIMENTAL_ALPHA_9: ALPHA_9, MULTIPART_MIXED_EXPERIMENTAL_ALPHA_2: ALPHA_2 };
      const scope = kind === 'esm' ? { Negotiator, MEDIA_TYPES: types } : { negotiator_1: { default: Negotiator }, ApolloServer_js_1: { MEDIA_TYPES: types } };
      const end = body.indexOf('//# sourceMappingURL=');
      const code = end < 0 ? body : body.slice(0, end);
      const memo = new Function(...Object.keys(scope), `${code}\nreturn shardqlLegacyIncremental;`)(...Object.values(scope)) as (accept: string | undefined) => boolean;
      const accepts = [undefined, '', '*/*', 'application/json', ALPHA_2, ALPHA_9, `${ALPHA_9}, ${ALPHA_2}`, `${ALPHA_2};q=0.9, ${ALPHA_9};q=0.1`, 'multipart/mixed', ...Array.from({ length: 70 }, (_, i) => `application/x-${i}, ${i % 2 ? ALPHA_2 : ALPHA_9}`)];
      for (let round = 0; round < 2; round++) for (const a of accepts) assert.equal(memo(a), original(a), `${kind}, accept ${a}, round ${round}`);
      assert.equal(memo(ALPHA_2), true);
      assert.equal(memo(undefined), false);
    }
  });

  test("the request pipeline's query hash: kept per text, always the text's SHA-256", () => {
    const sha256 = (text: string): string => nodeCreateHash('sha256').update(text).digest('hex');
    for (const kind of ['esm', 'cjs'] as const) {
      const text = readFileSync(join(dist, kind, 'requestPipeline.js'), 'utf8');
      assert.ok(text.includes(QUERYHASH_PATCH_MARK), `${kind} build patched`);
      // The function as installed, over a counting createHash under the name the file uses.
      const from = text.indexOf(QUERYHASH_PATCH_MARK);
      const code = text.slice(from, text.indexOf('\n}\n', from) + 3);
      let hashed = 0;
      const createHash = (kind: string) => (hashed++, nodeCreateHash(kind));
      const scope = kind === 'esm' ? { createHash } : { utils_createhash_1: { createHash } };
      const computeQueryHash = new Function(...Object.keys(scope), `${code}\nreturn computeQueryHash;`)(...Object.values(scope)) as (query: string) => string;
      const texts = ['{ a }', '{ a }\n', '{ b }', 'x'.repeat(16384), 'y'.repeat(16385), ...Array.from({ length: 600 }, (_, i) => `query Q${i} { a }`)];
      for (const t of texts) assert.equal(computeQueryHash(t), sha256(t), `${kind}: ${t.slice(0, 20)}`);
      // Kept: the same text again is not hashed again; a text over 16 KiB always is.
      const before = hashed;
      for (let i = 0; i < 3; i++) assert.equal(computeQueryHash('query Q599 { a }'), sha256('query Q599 { a }'));
      assert.equal(hashed, before, `${kind}: a kept text is not hashed again`);
      computeQueryHash('y'.repeat(16385));
      assert.equal(hashed, before + 1, `${kind}: a long text is not kept`);
      // Past the bound (512 kept, then all forgotten), every answer is still the text's own hash.
      for (const t of texts) assert.equal(computeQueryHash(t), sha256(t), `${kind}, again: ${t.slice(0, 20)}`);
    }
  });

  test('@apollo/utils.createhash requires crypto once, and hashes as before', () => {
    const hashFile = fileURLToPath(import.meta.resolve('@apollo/utils.createhash'));
    assert.ok(readFileSync(hashFile, 'utf8').includes(CREATEHASH_PATCH_MARK), 'patched');
    const { createHash } = createRequire(import.meta.url)(hashFile) as { createHash: typeof nodeCreateHash };
    for (const text of ['', '{ a }', 'query Q { user(id: "1") { boards { edges { node { id } } } } }']) {
      assert.equal(createHash('sha256').update(text).digest('hex'), nodeCreateHash('sha256').update(text).digest('hex'));
    }
    assert.equal(createHash('sha1').update('x').digest('hex'), nodeCreateHash('sha1').update('x').digest('hex'));
  });
});
