import { webcrypto } from 'node:crypto';
import { SignJWT, decodeProtectedHeader, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import { describeValue, ShardqlError } from '../core/errors.ts';
import { parseId } from '../core/ids.ts';
import { servedModel } from '../core/model/served.ts';
import { IDENTITY_PROVIDER_DEFAULTS, identityProviderVerifier, PROVIDER_ALGORITHMS, type IdentityProviderOptions } from './identityProvider.ts';
import { checkIssuedAt, joseRefusal, tokenRefused } from './refusals.ts';

/**
 * The gateway's own viewer tokens: HS256 JWTs whose subject is the user ID (decimal). Signed with
 * the configured secret; `shardql token` mints one, and `createUser` returns one. Tokens of the
 * deployment's identity provider are verified in identityProvider.ts; `viewerAuthenticator` below
 * accepts both.
 */
const ISSUER = 'shardql';
const ALGORITHM = 'HS256';
/**
 * How far ahead a token's `iat` may be, seconds: another gateway's clock may run a little ahead of
 * this one's. `exp` is checked to the second (the remembered tokens below end with it).
 */
const ISSUED_AT_SKEW_SECONDS = IDENTITY_PROVIDER_DEFAULTS.clockSkewSeconds;

function key(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

/**
 * Verifying one HS256 token took a WebCrypto key import per request (6% of a warm feed request's
 * CPU). The key is imported once per secret; and a token verified once is remembered until it
 * expires (the same token signs every request of a session; HMAC verification of the same bytes
 * gives the same answer), in a bounded map.
 */
interface Verifier {
  readonly key: Promise<webcrypto.CryptoKey>;
  readonly verified: Map<string, { readonly viewer: bigint; readonly expiresAt: number }>;
}
const verifiers = new Map<string, Verifier>();
const MAX_REMEMBERED_TOKENS = 10_000;

function verifierOf(secret: string): Verifier {
  let v = verifiers.get(secret);
  if (!v) {
    v = { key: webcrypto.subtle.importKey('raw', key(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']), verified: new Map() };
    verifiers.set(secret, v);
  }
  return v;
}

export async function mintToken(secret: string, userId: bigint, ttlSeconds: number): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: ALGORITHM })
    .setSubject(userId.toString())
    .setIssuer(ISSUER)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
    .sign(key(secret));
}

/**
 * The viewer of a request from its Authorization header: undefined when there is none, the user
 * ID when the token is valid, UNAUTHENTICATED otherwise (a bad token is never silently anonymous).
 */
export async function viewerFromAuthorization(secret: string, header: string | undefined): Promise<bigint | undefined> {
  const token = bearerToken(header);
  return token === undefined ? undefined : verifyGatewayToken(secret, token);
}

function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined || header === '') return undefined;
  const m = /^Bearer ([A-Za-z0-9_.-]{1,4096})$/.exec(header);
  if (!m) {
    throw new ShardqlError('UNAUTHENTICATED', 'Expected an Authorization header of the form "Bearer <token>"', {}, { cause: new Error('the Authorization header is not the token scheme followed by 1–4096 token characters') });
  }
  return m[1]!;
}

async function verifyGatewayToken(secret: string, token: string): Promise<bigint> {
  const verifier = verifierOf(secret);
  const known = verifier.verified.get(token);
  if (known !== undefined && known.expiresAt > Date.now()) return known.viewer;
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, await verifier.key, { issuer: ISSUER, algorithms: [ALGORITHM] }));
  } catch (err) {
    throw err instanceof joseErrors.JOSEError ? joseRefusal(err) : tokenRefused('the token could not be verified', err);
  }
  checkIssuedAt(payload, ISSUED_AT_SKEW_SECONDS);
  let viewer: bigint;
  try {
    viewer = parseId(payload.sub, { expect: servedModel().viewer });
  } catch (err) {
    throw tokenRefused('"sub" names no user of this gateway', err);
  }
  if (typeof payload.exp === 'number') {
    if (verifier.verified.size >= MAX_REMEMBERED_TOKENS) verifier.verified.clear();
    verifier.verified.set(token, { viewer, expiresAt: payload.exp * 1000 });
  }
  return viewer;
}

export interface AuthenticatorOptions {
  /** The gateway's own HS256 secret (the local stack, tests, and tokens `createUser` returns). */
  readonly secret: string;
  /** The deployment's identity provider, if any: its RS256/ES256/EdDSA tokens are accepted too. */
  readonly identityProvider?: IdentityProviderOptions | undefined;
}

/**
 * The viewer of a request from its Authorization header, whoever issued the token: the header's
 * `alg` picks the verifier — HS256 the gateway's secret (issuer `shardql`), an asymmetric
 * algorithm the identity provider's keys — and every other `alg` (`none`, HS384, PS256, …) is
 * refused unread. Each verifier then pins its own algorithms again, so neither can be reached with
 * the other's kind of signature.
 */
export function viewerAuthenticator(opts: AuthenticatorOptions): (header: string | undefined) => Promise<bigint | undefined> {
  const provider = opts.identityProvider ? identityProviderVerifier(opts.identityProvider) : undefined;
  const asymmetric: ReadonlySet<string> = new Set(PROVIDER_ALGORITHMS);
  return async (header) => {
    const token = bearerToken(header);
    if (token === undefined) return undefined;
    let alg: unknown;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch (err) {
      throw tokenRefused('its header is not a JWS header', err);
    }
    if (alg === ALGORITHM) return verifyGatewayToken(opts.secret, token);
    if (provider && typeof alg === 'string' && asymmetric.has(alg)) return provider.verify(token);
    throw tokenRefused(`"alg" ${describeValue(alg)} is not one this gateway accepts`);
  };
}
