import { jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import { describeValue, isShardqlError, type ShardqlError } from '../core/errors.ts';
import { parseId } from '../core/ids.ts';
import { servedModel } from '../core/model/served.ts';
import { keysUnavailable, providerKeys } from './providerKeys.ts';
import { checkIssuedAt, joseRefusal, tokenRefused } from './refusals.ts';

/**
 * Tokens issued by the deployment's identity provider, verified against its JWKS (docs/security.md
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
   * After a fetch, good or failed, how long before the keys may be fetched again, ms (one forged
   * `kid` a second must not become one JWKS fetch a second, least of all while the provider is
   * failing). Default 30000.
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
 * The keys are fetched on first use and kept (providerKeys.ts: at most one fetch per cooldown, a
 * rotated-in key picked up without a restart, a withdrawn one refused once the keys are re-fetched).
 * Every refusal says "expired" or "not valid" (refusals.ts), whichever check failed.
 */
export function identityProviderVerifier(opts: IdentityProviderOptions): ProviderVerifier {
  const d = IDENTITY_PROVIDER_DEFAULTS;
  const keys = providerKeys({
    url: new URL(opts.jwksUrl),
    cooldownMs: opts.refetchCooldownMs ?? d.refetchCooldownMs,
    maxAgeMs: opts.keysMaxAgeMs ?? d.keysMaxAgeMs,
    timeoutMs: opts.fetchTimeoutMs ?? d.fetchTimeoutMs,
  });
  const claim = opts.userClaim ?? d.userClaim;
  const skew = opts.clockSkewSeconds ?? d.clockSkewSeconds;
  return {
    async verify(token) {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, keys, {
          algorithms: [...PROVIDER_ALGORITHMS],
          issuer: opts.issuer,
          audience: opts.audience,
          clockTolerance: skew,
          requiredClaims: ['exp'],
        }));
      } catch (err) {
        throw refusal(err);
      }
      checkIssuedAt(payload, skew);
      const value = payload[claim];
      try {
        if (typeof value !== 'string') throw new Error('not a string');
        return parseId(value, { expect: servedModel().viewer });
      } catch (err) {
        throw tokenRefused(`the claim ${JSON.stringify(claim)} names no user of this gateway: ${describeValue(value)}`, err);
      }
    },
  };
}

/**
 * A failed verification as the client sees it: jose's refusals "expired" or "not valid"; keys that
 * could not be had (providerKeys' own error), or anything else that is no verdict on the token,
 * IDENTITY_PROVIDER_UNAVAILABLE.
 */
function refusal(err: unknown): ShardqlError {
  if (isShardqlError(err)) return err;
  if (err instanceof joseErrors.JOSEError) return joseRefusal(err);
  return keysUnavailable(err);
}
