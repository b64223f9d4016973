/**
 * Tokens from an identity provider, on the real gateway over HTTP: a JWKS server of the test's own
 * (node:http on loopback) publishes the provider's public keys; tokens are signed with the private
 * halves. Covers every algorithm accepted, key rotation and unknown keys, each claim check, and the
 * forgeries a gateway must refuse (alg none, HS256 signed with the public key, a tampered payload).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, base64url } from 'jose';
import { JwksServer, PROVIDER_AUDIENCE, PROVIDER_ISSUER, providerKey, sign, type ProviderKey } from '../helpers/oidcProvider.ts';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { codes, startTestGateway, type GqlResult, type TestGateway } from '../helpers/gateway.ts';
import { ProductWrites } from '../../src/product/pinterest/writes.ts';

const ISSUER = PROVIDER_ISSUER;
const AUDIENCE = PROVIDER_AUDIENCE;
const now = (): number => Math.floor(Date.now() / 1000);

let env: TestEnv;
let jwks: JwksServer;
let gateway: TestGateway;
let rsa: ProviderKey;
let ec: ProviderKey;
let ed: ProviderKey;
let alice: string;
let aliceBoard: string;
let jwksUrl: string;
/** The gateway's log lines (event and fields). */
const logged: { event: string; fields: Record<string, unknown> }[] = [];

const VIEWER = '{ viewer { username } }';
async function asViewer(token: string): Promise<GqlResult> {
  return gateway.gql(VIEWER, {}, { token });
}
function assertViewer(r: GqlResult, username: string): void {
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.data.viewer.username, username, r.text);
}
function assertRefused(r: GqlResult, code = 'UNAUTHENTICATED', status = 401): void {
  assert.equal(r.status, status, r.text);
  assert.deepEqual(codes(r), [code]);
  assert.equal(r.body.data, undefined);
}

before(async () => {
  env = await freshEnv({ shards: 8 });
  const writes = new ProductWrites({ storage: env.storage, topology: () => env.topology });
  const aliceUser = await writes.createUser({ username: 'alice' });
  alice = String(aliceUser.id);
  aliceBoard = String((await writes.createBoard(aliceUser.id, { name: 'sea charts' })).id);
  [rsa, ec, ed] = await Promise.all([providerKey('rsa-1', 'RS256'), providerKey('ec-1', 'ES256'), providerKey('ed-1', 'EdDSA')]);
  jwks = new JwksServer();
  jwks.published = [rsa, ec, ed];
  jwksUrl = await jwks.start();
  gateway = await startTestGateway(env, 'identity', {
    env: 'production',
    // A fetch at most every 200 ms on unknown keys: rotation is seen within the test's time.
    identityProvider: { jwksUrl, issuer: ISSUER, audience: AUDIENCE, clockSkewSeconds: 30, refetchCooldownMs: 200 },
  }, { log: (event: string, fields?: Record<string, unknown>) => void logged.push({ event, fields: fields ?? {} }) });
});
after(async () => {
  await gateway?.stop();
  await jwks?.stop();
  await env?.close();
});

describe('Identity provider tokens (JWKS)', () => {
  test('RS256, ES256 and EdDSA tokens name their viewer; the keys are fetched once and kept', async () => {
    const before = jwks.fetches;
    for (const key of [rsa, ec, ed]) assertViewer(await asViewer(await sign(key, { sub: alice })), 'alice');
    assertViewer(await asViewer(await sign(rsa, { sub: alice })), 'alice');
    assert.ok(jwks.fetches - before <= 1, `keys fetched ${jwks.fetches - before} times for 4 tokens`);
  });

  test("the gateway's own HS256 tokens still work beside the provider's", async () => {
    assertViewer(await asViewer(await gateway.token(alice)), 'alice');
  });

  test('key rotation: a new kid is fetched when first seen; a withdrawn key stops verifying', async () => {
    const rsa2 = await providerKey('rsa-2', 'RS256');
    const unpublished = await sign(rsa2, { sub: alice });
    assertRefused(await asViewer(unpublished));
    jwks.published = [rsa2, ec, ed];
    // The refused token above started the cooldown; poll (bounded) until a refetch is allowed.
    const deadline = Date.now() + 5000;
    let r = await asViewer(unpublished);
    while (r.status !== 200 && Date.now() < deadline) r = await asViewer(unpublished);
    assertViewer(r, 'alice');
    const fetches = jwks.fetches;
    assertViewer(await asViewer(await sign(rsa2, { sub: alice })), 'alice');
    assert.equal(jwks.fetches, fetches, 'a known kid makes no fetch');
    // rsa-1 is no longer published: the keys in hand (fetched after the rotation) lack it.
    assertRefused(await asViewer(await sign(rsa, { sub: alice })));
    // Rotated back for the tests below: wait (bounded) until the gateway has fetched rsa-1 again.
    jwks.published = [rsa, ec, ed];
    const back = Date.now() + 5000;
    let again = await asViewer(await sign(rsa, { sub: alice }));
    while (again.status !== 200 && Date.now() < back) again = await asViewer(await sign(rsa, { sub: alice }));
    assertViewer(again, 'alice');
  });

  test('a kid the provider never published is refused, and costs at most one fetch per cooldown', async () => {
    const stranger = await providerKey('who-knows', 'ES256');
    const fetches = jwks.fetches;
    const started = Date.now();
    for (let i = 0; i < 5; i++) assertRefused(await asViewer(await sign(stranger, { sub: alice })));
    // A token signed by an unknown key that claims a published kid is refused by its signature.
    assertRefused(await asViewer(await sign(stranger, { sub: alice }, { kid: ec.kid })));
    // One fetch per 200 ms cooldown at most, however many forged tokens arrive.
    const allowed = 1 + Math.ceil((Date.now() - started) / 200);
    assert.ok(jwks.fetches - fetches <= allowed, `${jwks.fetches - fetches} fetches for 6 forged tokens in ${Date.now() - started} ms`);
  });

  test('wrong issuer, wrong audience, no exp, no user claim, a user ID that is not one: refused', async () => {
    assertRefused(await asViewer(await sign(rsa, { sub: alice, iss: 'https://evil.example.test/' })));
    assertRefused(await asViewer(await sign(rsa, { sub: alice, aud: 'https://other-api.example.test/' })));
    const noExp = await new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: alice }).setProtectedHeader({ alg: 'RS256', kid: rsa.kid }).sign(rsa.privateKey);
    assertRefused(await asViewer(noExp));
    assertRefused(await asViewer(await sign(rsa, {})));
    assertRefused(await asViewer(await sign(rsa, { sub: 'auth0|5f7c8ec7c33c6c004bbafe82' })));
  });

  test('expiry, not-before and issued-at are checked with a small clock skew (30 s)', async () => {
    const expired = await asViewer(await sign(rsa, { sub: alice, exp: now() - 120 }));
    assertRefused(expired);
    assert.match(expired.body.errors![0]!.message, /expired/);
    assertViewer(await asViewer(await sign(rsa, { sub: alice, exp: now() - 10 })), 'alice');
    assertRefused(await asViewer(await sign(rsa, { sub: alice, nbf: now() + 120 })));
    assertViewer(await asViewer(await sign(rsa, { sub: alice, nbf: now() + 10 })), 'alice');
    // Issued in the future (no nbf): a token minted to outlive what its issuer meant.
    const future = await asViewer(await sign(rsa, { sub: alice, iat: now() + 600, exp: now() + 1200 }));
    assertRefused(future);
    assert.equal(future.body.errors![0]!.message, 'The token is not valid for this gateway');
    assertRefused(await asViewer(await sign(rsa, { sub: alice, iat: now() + 120 })));
    assertViewer(await asViewer(await sign(rsa, { sub: alice, iat: now() + 10 })), 'alice');
  });

  test('every refusal says the same "not valid", whichever check failed; why goes to the log under the request ID', async () => {
    const cases: [string, Promise<string>, RegExp][] = [
      ['wrong issuer', sign(rsa, { sub: alice, iss: 'https://evil.example.test/' }), /"iss"/],
      ['wrong audience', sign(rsa, { sub: alice, aud: 'https://other-api.example.test/' }), /"aud"/],
      ['issued in the future', sign(rsa, { sub: alice, iat: now() + 600 }), /"iat"/],
      // Signature, issuer, audience and times all pass: the client must not learn that.
      ["a board's ID as the user", sign(rsa, { sub: aliceBoard }), /"sub" names no user/],
      ['a username as the user', sign(rsa, { sub: 'alice' }), /"sub" names no user/],
      ['no user claim', sign(rsa, {}), /"sub" names no user/],
    ];
    for (const [i, [what, token, reason]] of cases.entries()) {
      const requestId = `identity-refusal-${i}`;
      const r = await gateway.gql(VIEWER, {}, { token: await token, headers: { 'x-request-id': requestId } });
      assertRefused(r);
      assert.equal(r.body.errors![0]!.message, 'The token is not valid for this gateway', what);
      assert.deepEqual(r.body.errors![0]!.extensions, { code: 'UNAUTHENTICATED' }, what);
      const lines = logged.filter((l) => l.event === 'token_refused' && l.fields.requestId === requestId);
      assert.equal(lines.length, 1, `${what}: ${JSON.stringify(lines)}`);
      assert.equal(lines[0]!.fields.code, 'UNAUTHENTICATED', what);
      assert.match(String(lines[0]!.fields.reason), reason, what);
    }
  });

  test('a tampered token is refused: payload changed, signature cut, signature of another token', async () => {
    const bob = String((await new ProductWrites({ storage: env.storage, topology: () => env.topology }).createUser({ username: 'bob' })).id);
    const [h, , s] = (await sign(rsa, { sub: alice })).split('.') as [string, string, string];
    const forged = base64url.encode(JSON.stringify({ iss: ISSUER, aud: AUDIENCE, sub: bob, exp: now() + 600 }));
    assertRefused(await asViewer(`${h}.${forged}.${s}`));
    assertRefused(await asViewer(`${h}.${forged}.`));
    const other = (await sign(rsa, { sub: bob })).split('.');
    assertRefused(await asViewer(`${h}.${forged}.${other[2]!.slice(0, -4)}AAAA`));
    assertViewer(await asViewer(await sign(rsa, { sub: bob })), 'bob');
  });

  test('alg none and HS256 signed with the provider\'s public key (key confusion) are refused', async () => {
    const header = (alg: string): string => base64url.encode(JSON.stringify({ alg, kid: rsa.kid, typ: 'JWT' }));
    const payload = base64url.encode(JSON.stringify({ iss: ISSUER, aud: AUDIENCE, sub: alice, exp: now() + 600 }));
    for (const alg of ['none', 'None', 'NONE']) assertRefused(await asViewer(`${header(alg)}.${payload}.`));
    for (const secret of [rsa.spki, JSON.stringify(rsa.jwk), rsa.jwk.n!]) {
      const confused = await new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: alice, exp: now() + 600 })
        .setProtectedHeader({ alg: 'HS256', kid: rsa.kid })
        .sign(new TextEncoder().encode(secret));
      assertRefused(await asViewer(confused));
    }
    // Other algorithms, even ones jose supports, are not the provider's: refused unread.
    const hs384 = await new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: alice, exp: now() + 600 })
      .setProtectedHeader({ alg: 'HS384' })
      .sign(new TextEncoder().encode('x'.repeat(48)));
    assertRefused(await asViewer(hs384));
  });
});

describe('Identity provider settings', () => {
  test('the user-ID claim is configurable', async () => {
    const other = await startTestGateway(env, 'identity-claim', {
      env: 'production',
      identityProvider: { jwksUrl, issuer: ISSUER, audience: AUDIENCE, userClaim: 'https://shardql.example/uid' },
    });
    try {
      const token = await sign(ec, { sub: 'auth0|someone', 'https://shardql.example/uid': alice });
      assertViewer(await other.gql(VIEWER, {}, { token }), 'alice');
      assertRefused(await other.gql(VIEWER, {}, { token: await sign(ec, { sub: alice }) }));
    } finally {
      await other.stop();
    }
  });

  test('a provider answering 503: unknown kids cost one fetch per cooldown, concurrent ones share it; keys fetched once it is back', async () => {
    const failing = new JwksServer();
    failing.published = [rsa];
    failing.status = 503;
    const url = await failing.start();
    const cooldownMs = 2000;
    const other = await startTestGateway(env, 'identity-outage', {
      env: 'production',
      identityProvider: { jwksUrl: url, issuer: ISSUER, audience: AUDIENCE, refetchCooldownMs: cooldownMs },
    });
    try {
      const forged = await Promise.all(Array.from({ length: 10 }, async (_, i) => sign(await providerKey(`unseen-${i}`, 'ES256'), { sub: alice })));
      // Ten at once: one fetch in flight, shared; every one told to retry.
      const started = Date.now();
      const together = await Promise.all(forged.map((token) => other.gql(VIEWER, {}, { token })));
      for (const r of together) assertRefused(r, 'IDENTITY_PROVIDER_UNAVAILABLE', 503);
      // Ten more, one after another, within the cooldown: no fetch at all.
      for (const token of forged) assertRefused(await other.gql(VIEWER, {}, { token }), 'IDENTITY_PROVIDER_UNAVAILABLE', 503);
      const elapsed = Date.now() - started;
      assert.ok(elapsed < cooldownMs, `the 20 requests took ${elapsed} ms, longer than the cooldown: the count below would not be one cooldown's`);
      assert.equal(failing.fetches, 1, `${failing.fetches} JWKS fetches for 20 tokens within one cooldown`);
      // Back up: the next attempt after the cooldown fetches the keys, and the genuine token verifies.
      failing.status = 200;
      const genuine = await sign(rsa, { sub: alice });
      const deadline = Date.now() + 5000;
      let r = await other.gql(VIEWER, {}, { token: genuine });
      while (r.status !== 200 && Date.now() < deadline) r = await other.gql(VIEWER, {}, { token: genuine });
      assertViewer(r, 'alice');
      assert.equal(failing.fetches, 2, 'one fetch after the cooldown, none while it held');
    } finally {
      await other.stop();
      await failing.stop();
    }
  });

  test('a provider that cannot be reached: IDENTITY_PROVIDER_UNAVAILABLE (503, retryable), nothing about where', async () => {
    const dead = createServer();
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve));
    const port = (dead.address() as AddressInfo).port;
    await new Promise<void>((resolve) => dead.close(() => resolve()));
    const other = await startTestGateway(env, 'identity-dead', {
      env: 'production',
      identityProvider: { jwksUrl: `http://127.0.0.1:${port}/jwks.json`, issuer: ISSUER, audience: AUDIENCE, fetchTimeoutMs: 500 },
    });
    try {
      const r = await other.gql(VIEWER, {}, { token: await sign(rsa, { sub: alice }) });
      assertRefused(r, 'IDENTITY_PROVIDER_UNAVAILABLE', 503);
      assert.equal(r.body.errors![0]!.extensions!.retryable, true);
      assert.ok(!r.text.includes(String(port)));
    } finally {
      await other.stop();
    }
  });
});

