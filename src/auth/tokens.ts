import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { ShardqlError } from '../core/errors.ts';
import { parseId } from '../core/ids.ts';

/**
 * Viewer tokens: HS256 JWTs whose subject is the user ID (decimal). Signed with the configured
 * secret; `shardql token` mints one in development.
 */
const ISSUER = 'shardql';
const ALGORITHM = 'HS256';

function key(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
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
  if (header === undefined || header === '') return undefined;
  const m = /^Bearer ([A-Za-z0-9_.-]{1,4096})$/.exec(header);
  if (!m) throw new ShardqlError('UNAUTHENTICATED', 'Expected an Authorization header of the form "Bearer <token>"');
  try {
    const { payload } = await jwtVerify(m[1]!, key(secret), { issuer: ISSUER, algorithms: [ALGORITHM] });
    return parseId(payload.sub, { expect: 'user' });
  } catch (err) {
    const expired = err instanceof joseErrors.JWTExpired;
    throw new ShardqlError('UNAUTHENTICATED', expired ? 'The token has expired; get a new one' : 'The token is not valid for this gateway');
  }
}
