/**
 * The provider's key set against a real JWKS server on loopback (node:http) that counts requests,
 * with the key set's clock moved by the test: fetches rationed from the last attempt, good or
 * failed; keys past their age kept while a refresh fails.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, jwtVerify, type CryptoKey, type JWK } from 'jose';
import { providerKeys } from '../../../src/auth/providerKeys.ts';
import { isShardqlError } from '../../../src/core/errors.ts';

let server: Server;
let url: URL;
let status = 200;
let fetches = 0;
let published: JWK[] = [];
let signing: { privateKey: CryptoKey; jwk: JWK };

before(async () => {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
  signing = { privateKey, jwk: { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' } };
  server = createServer((_req, res) => {
    fetches++;
    if (status !== 200) return void res.writeHead(status).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: published }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`);
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

const token = (kid = 'k1'): Promise<string> =>
  new SignJWT({ sub: '1' }).setProtectedHeader({ alg: 'ES256', kid }).setExpirationTime('1h').sign(signing.privateKey);

function keySet() {
  const clock = { now: 1_000_000 };
  const keys = providerKeys({ url, cooldownMs: 30_000, maxAgeMs: 600_000, timeoutMs: 2000, now: () => clock.now });
  return { clock, verify: async (t: Promise<string>) => jwtVerify(await t, keys) };
}

const unavailable = (e: unknown): boolean => isShardqlError(e, 'IDENTITY_PROVIDER_UNAVAILABLE');

describe('Provider keys: one fetch per cooldown, whatever its outcome', () => {
  test('a first fetch that fails: every token unavailable, no fetch until the cooldown has passed', async () => {
    const { clock, verify } = keySet();
    status = 503;
    published = [signing.jwk];
    fetches = 0;
    await assert.rejects(verify(token()), unavailable);
    await Promise.all(Array.from({ length: 5 }, () => assert.rejects(verify(token(`unseen-${Math.random()}`)), unavailable)));
    clock.now += 29_999;
    await assert.rejects(verify(token()), unavailable);
    assert.equal(fetches, 1, 'one attempt within the cooldown');
    status = 200;
    clock.now += 1;
    assert.equal((await verify(token())).payload.sub, '1');
    assert.equal(fetches, 2);
  });

  test('concurrent unknown kids share the one fetch in flight; after a good fetch an unknown kid is not valid', async () => {
    const { clock, verify } = keySet();
    status = 200;
    fetches = 0;
    await verify(token());
    clock.now += 30_000;
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => verify(token(`stranger-${i}`))));
    assert.equal(fetches, 2, 'the first, then one shared by ten');
    for (const r of results) {
      assert.equal(r.status, 'rejected');
      assert.equal((r as PromiseRejectedResult).reason.code, 'ERR_JWKS_NO_MATCHING_KEY');
    }
  });

  test('keys past their age whose refresh fails stay in use; an unknown kid then is unavailable (retry), not refused', async () => {
    const { clock, verify } = keySet();
    status = 200;
    fetches = 0;
    await verify(token());
    status = 503;
    clock.now += 600_000;
    assert.equal((await verify(token())).payload.sub, '1', 'the stale keys verify');
    assert.equal((await verify(token())).payload.sub, '1');
    await assert.rejects(verify(token('rotated-in')), unavailable);
    assert.equal(fetches, 2, 'one refresh attempt, none more within the cooldown');
  });
});
