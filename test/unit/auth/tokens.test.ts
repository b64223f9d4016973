import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT } from 'jose';
import { mintToken, viewerFromAuthorization } from '../../../src/auth/tokens.ts';
import { isShardqlError } from '../../../src/core/errors.ts';
import { refusalReason } from '../../../src/auth/refusals.ts';
import { typeNumberOf } from '../../../src/core/objectTypes.ts';

const SECRET = 'unit-test-secret-that-is-long-enough-for-hs256';

async function userId(): Promise<bigint> {
  // Shard 3429, type user, local 7: built from the layout so the test does not hard-code the type number.
  const { encodeId } = await import('../../../src/core/ids.ts');
  const { OBJECT_TYPES } = await import('../../../src/core/objectTypes.ts');
  return encodeId({ shard: 3429, type: typeNumberOf('user'), local: 7n });
}

const refused = (e: unknown): boolean => isShardqlError(e, 'UNAUTHENTICATED');

describe('Viewer tokens: verified once, remembered only while valid', () => {
  test('a minted token names its user, on every request', async () => {
    const id = await userId();
    const t = await mintToken(SECRET, id, 60);
    assert.equal(await viewerFromAuthorization(SECRET, `Bearer ${t}`), id);
    assert.equal(await viewerFromAuthorization(SECRET, `Bearer ${t}`), id, 'the remembered answer');
  });

  test('a token remembered under one secret is refused under another', async () => {
    const t = await mintToken(SECRET, await userId(), 60);
    await viewerFromAuthorization(SECRET, `Bearer ${t}`);
    await assert.rejects(viewerFromAuthorization(`${SECRET}-other`, `Bearer ${t}`), refused);
  });

  test('a remembered token is refused once it expires', async () => {
    const id = await userId();
    // The next whole second at least 0.5 s away: a token minted at x.999 s with the next second as
    // its expiry would expire before its first check on a busy machine (seen in CI).
    const expiresAt = Math.floor((Date.now() + 1500) / 1000);
    const t = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(String(id))
      .setIssuer('shardql')
      .setIssuedAt()
      .setExpirationTime(expiresAt)
      .sign(new TextEncoder().encode(SECRET));
    assert.equal(await viewerFromAuthorization(SECRET, `Bearer ${t}`), id);
    await new Promise((r) => setTimeout(r, expiresAt * 1000 - Date.now() + 50));
    await assert.rejects(viewerFromAuthorization(SECRET, `Bearer ${t}`), refused);
  });

  test('a tampered token is refused even after the genuine one was remembered', async () => {
    const t = await mintToken(SECRET, await userId(), 60);
    await viewerFromAuthorization(SECRET, `Bearer ${t}`);
    const [h, p, s] = t.split('.');
    const other = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), sub: '1' })).toString('base64url');
    await assert.rejects(viewerFromAuthorization(SECRET, `Bearer ${h}.${other}.${s}`), refused);
  });

  test('a token issued in the future is refused beyond the skew (30 s), with the one message', async () => {
    const id = await userId();
    const at = (iat: number): Promise<string> =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(String(id))
        .setIssuer('shardql')
        .setIssuedAt(iat)
        .setExpirationTime(iat + 3600)
        .sign(new TextEncoder().encode(SECRET));
    const now = Math.floor(Date.now() / 1000);
    await assert.rejects(
      viewerFromAuthorization(SECRET, `Bearer ${await at(now + 600)}`),
      (e: unknown) => refused(e) && (e as Error).message === 'The token is not valid for this gateway',
    );
    await assert.rejects(viewerFromAuthorization(SECRET, `Bearer ${await at(now + 120)}`), refused);
    assert.equal(await viewerFromAuthorization(SECRET, `Bearer ${await at(now + 10)}`), id, 'within the skew: another gateway\'s clock a little ahead');
  });

  test("a token whose subject is no user is refused with the one message, the reason kept for the log", async () => {
    const t = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').setIssuer('shardql').setIssuedAt().setExpirationTime('1h').sign(new TextEncoder().encode(SECRET));
    await assert.rejects(viewerFromAuthorization(SECRET, `Bearer ${t}`), (e: unknown) => {
      assert.ok(refused(e));
      assert.equal((e as Error).message, 'The token is not valid for this gateway');
      assert.match(refusalReason(e), /"sub" names no user/);
      return true;
    });
  });
});
