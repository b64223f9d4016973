import { createRemoteJWKSet, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import { ShardqlError } from '../core/errors.ts';
import { parseId } from '../core/ids.ts';

/**
 * Tokens issued by the deployment's identity provider, verified against its JWKS (README
 * "Identity providers").
 */
export interface IdentityProviderOptions {
  /** Where the provider publishes its public keys, e.g. https://id.example.com/.well-known/jwks.json. */
  readonly jwksUrl: string;
  /** The `iss` every token must carry, exactly. */
  readonly issuer: string;
  /** The `aud` every token must name (this gateway's API identifier). */
  readonly audience: string;
  /** The claim holding the shardql user ID (a decimal string). Default `sub`. */
  readonly userClaim?: string;
  /** Clock skew allowed when checking `exp`, `nbf` and `iat`, seconds. Default 30. */
  readonly clockSkewSeconds?: number;
  /**
   * After a fetch, how long a token naming an unknown `kid` waits before it may fetch the keys
   * again, ms (one forged `kid` a second must not become one JWKS fetch a second). Default 30000.
   */
  readonly refetchCooldownMs?: number;
  /** How long fetched keys are used before they are fetched again, ms. Default 600000 (10 min). */
  readonly keysMaxAgeMs?: number;
  /** Time allowed for one JWKS fetch, ms. Default 5000. */
  readonly fetchTimeoutMs?: number;
}

/**
 * Signature algorithms accepted from an identity provider: asymmetric only. `none` and every HMAC
 * algorithm are refused before any key is looked at, so a token "signed" with HS256 using the
 * provider's public key as the secret (the classic key-confusion forgery) never verifies.
 * `Ed25519` is EdDSA's fully specified name (RFC 9864).
 */
export const PROVIDER_ALGORITHMS = ['RS256', 'ES256', 'EdDSA', 'Ed25519'] as const;

export const IDENTITY_PROVIDER_DEFAULTS = {
  userClaim: 'sub',
  clockSkewSeconds: 30,
  refetchCooldownMs: 30_000,
  keysMaxAgeMs: 600_000,
  fetchTimeoutMs: 5000,
} as const;

/** Verifies one provider's tokens: `verify(token)` is the viewer's user ID, or throws ShardqlError. */
export interface ProviderVerifier {
  verify(token: string): Promise<bigint>;
}

/**
 * The keys are fetched on first use and kept (jose's remote JWK set): a token whose `kid` is not
 * among them makes one fetch (after the cooldown), which is how a rotated-in key is picked up
 * without a restart; a key the provider removed stops verifying once the keys are re-fetched.
 */
export function identityProviderVerifier(opts: IdentityProviderOptions): ProviderVerifier {
  const d = IDENTITY_PROVIDER_DEFAULTS;
  const keys = createRemoteJWKSet(new URL(opts.jwksUrl), {
    cooldownDuration: opts.refetchCooldownMs ?? d.refetchCooldownMs,
    cacheMaxAge: opts.keysMaxAgeMs ?? d.keysMaxAgeMs,
    timeoutDuration: opts.fetchTimeoutMs ?? d.fetchTimeoutMs,
  });
  const claim = opts.userClaim ?? d.userClaim;
  return {
    async verify(token) {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, keys, {
          algorithms: [...PROVIDER_ALGORITHMS],
          issuer: opts.issuer,
          audience: opts.audience,
          clockTolerance: opts.clockSkewSeconds ?? d.clockSkewSeconds,
          requiredClaims: ['exp'],
        }));
      } catch (err) {
        throw refusal(err);
      }
      const value = payload[claim];
      if (typeof value !== 'string') throw new ShardqlError('UNAUTHENTICATED', 'The token names no user of this gateway');
      try {
        return parseId(value, { expect: 'user' });
      } catch {
        throw new ShardqlError('UNAUTHENTICATED', 'The token names no user of this gateway');
      }
    },
  };
}

/**
 * What the client is told: expired, or not valid — never which check failed (issuer, audience,
 * signature, key), which would help a forger. A provider that cannot be reached is not the
 * client's fault: retryable, and says nothing of where the provider is.
 */
function refusal(err: unknown): ShardqlError {
  if (err instanceof joseErrors.JWTExpired) return new ShardqlError('UNAUTHENTICATED', 'The token has expired; get a new one', {}, { cause: err });
  if (err instanceof joseErrors.JWKSTimeout || (err instanceof joseErrors.JOSEError && err.code === 'ERR_JOSE_GENERIC') || !(err instanceof joseErrors.JOSEError)) {
    return new ShardqlError('IDENTITY_PROVIDER_UNAVAILABLE', "The identity provider's keys could not be fetched; retry shortly", {}, { cause: err });
  }
  return new ShardqlError('UNAUTHENTICATED', 'The token is not valid for this gateway', {}, { cause: err });
}
