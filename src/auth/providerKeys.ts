import { createLocalJWKSet, errors as joseErrors, type JSONWebKeySet, type JWTVerifyGetKey, type LocalJWKSet } from 'jose';
import { ShardqlError } from '../core/errors.ts';

export interface ProviderKeysOptions {
  /** Where the provider publishes its public keys (JWKS). */
  readonly url: URL;
  /** Least time between two fetches, whatever the first one's outcome, ms. */
  readonly cooldownMs: number;
  /** How long fetched keys are used before they are fetched again, ms. */
  readonly maxAgeMs: number;
  /** Time allowed for one fetch, ms. */
  readonly timeoutMs: number;
  /** The clock, ms (tests move it). Default Date.now. */
  readonly now?: () => number;
}

/**
 * An identity provider's public keys, for jwtVerify: fetched on first use and kept `maxAgeMs`; a
 * token naming a `kid` not among them fetches them again, which is how a rotated-in key is picked
 * up without a restart.
 *
 * Fetches are rationed by the time of the last *attempt*, not of the last success: a token with a
 * made-up `kid` costs at most one fetch per cooldown whether the provider answers or not (else,
 * while the provider fails, every such token is a fetch, at the sender's rate). Concurrent tokens
 * that need a fetch wait for the one in flight. Between attempts:
 * - with no keys in hand (the first fetch failed) every token is IDENTITY_PROVIDER_UNAVAILABLE;
 * - an unknown `kid` after a failed attempt is IDENTITY_PROVIDER_UNAVAILABLE too (the key may have
 *   been published meanwhile: retry), after a good one it is not a key of the provider;
 * - keys past their age whose refresh failed are still used until the next attempt succeeds.
 */
export function providerKeys(opts: ProviderKeysOptions): JWTVerifyGetKey {
  const now = opts.now ?? Date.now;
  let keys: LocalJWKSet | undefined;
  let fetchedAt = -Infinity;
  let attemptedAt = -Infinity;
  /** Why the last attempt failed; undefined when it succeeded. */
  let failure: unknown;
  let inFlight: Promise<void> | undefined;

  const load = async (): Promise<void> => {
    const res = await fetch(opts.url, {
      redirect: 'manual',
      signal: AbortSignal.timeout(opts.timeoutMs),
      headers: { accept: 'application/json, application/jwk-set+json' },
    });
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new Error(`the JWKS answered HTTP ${res.status}`);
    }
    // createLocalJWKSet checks the shape (JWKSInvalid): a failed attempt like any other.
    keys = createLocalJWKSet((await res.json()) as JSONWebKeySet);
    fetchedAt = now();
  };

  /** Fetches the keys unless a fetch is in flight (waits for it) or the cooldown has not passed. Never rejects. */
  const refresh = (): Promise<void> => {
    if (inFlight) return inFlight;
    if (now() < attemptedAt + opts.cooldownMs) return Promise.resolve();
    attemptedAt = now();
    const attempt = load().then(
      () => void (failure = undefined),
      (err: unknown) => void (failure = err),
    );
    inFlight = attempt.finally(() => (inFlight = undefined));
    return inFlight;
  };

  return async (header, token) => {
    if (keys === undefined || now() >= fetchedAt + opts.maxAgeMs) await refresh();
    if (keys === undefined) throw keysUnavailable(failure);
    try {
      return await keys(header, token);
    } catch (err) {
      if (!(err instanceof joseErrors.JWKSNoMatchingKey)) throw err;
      await refresh();
      if (failure !== undefined) throw keysUnavailable(failure);
      return keys(header, token);
    }
  };
}

/** The provider's keys could not be had: not the client's fault (retryable), and nothing of where the provider is. */
export function keysUnavailable(cause: unknown): ShardqlError {
  return new ShardqlError('IDENTITY_PROVIDER_UNAVAILABLE', "The identity provider's keys could not be fetched; retry shortly", {}, { cause });
}
