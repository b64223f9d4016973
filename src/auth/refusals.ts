import { errors as joseErrors, type JWTPayload } from 'jose';
import { ShardqlError } from '../core/errors.ts';

/**
 * What a client is told when its token is refused, whoever issued it: expired, or not valid —
 * never which check failed or which passed (signature, issuer, audience, times, user claim), which
 * would help a forger. Why it was refused travels as the error's `cause`, for the log only
 * (`refusalReason`).
 */
export const TOKEN_NOT_VALID = 'The token is not valid for this gateway';
export const TOKEN_EXPIRED = 'The token has expired; get a new one';

/** A refused token: UNAUTHENTICATED with the one message, `reason` kept for the log. */
export function tokenRefused(reason: string, cause?: unknown): ShardqlError {
  return new ShardqlError('UNAUTHENTICATED', TOKEN_NOT_VALID, {}, { cause: new Error(reason, cause === undefined ? undefined : { cause }) });
}

/** A refusal from jose's checks: "expired" for `exp`, "not valid" for everything else. */
export function joseRefusal(err: joseErrors.JOSEError): ShardqlError {
  if (err instanceof joseErrors.JWTExpired) return new ShardqlError('UNAUTHENTICATED', TOKEN_EXPIRED, {}, { cause: new Error(err.message, { cause: err }) });
  return tokenRefused(err.message, err);
}

/** Why a token was refused (or its keys could not be had), for the log: the cause's message, else the error's. */
export function refusalReason(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return err.cause instanceof Error ? err.cause.message : err.message;
}

/**
 * Refuses a token issued later than now plus the skew. jose checks `iat` only together with a
 * maximum token age (which would also make `iat` required), so a token minted for the future —
 * one that outlives the lifetime its issuer meant — passed every other check; an absent `iat` is
 * fine (`exp` bounds the token). `payload` has been through jwtVerify, so `iat` is a number if present.
 */
export function checkIssuedAt(payload: JWTPayload, skewSeconds: number, nowSeconds = Math.floor(Date.now() / 1000)): void {
  if (payload.iat !== undefined && payload.iat > nowSeconds + skewSeconds) {
    throw tokenRefused(`"iat" is ${payload.iat - nowSeconds} s in the future (skew ${skewSeconds} s)`);
  }
}
