import { ShardqlError } from '../core/errors.ts';
import type { Admission, Who } from '../cache/rateLimits.ts';
import type { LayerBreaker } from '../cache/breaker.ts';
import type { Log } from '../log.ts';
import type { RequestScope } from '../core/requestScope.ts';

/** What admission needs of the shared rate limiter (RedisRateLimits). */
export interface RateLimiter {
  take(who: Who, cost: number): Promise<Admission>;
}

/** What admission needs of this process's own buckets (LocalRateLimits). */
export interface LocalRateLimiter {
  take(who: Who, cost: number): Admission;
}

export type Admit = (scope: RequestScope, viewer: bigint | undefined, operations: number) => Promise<void>;

/** Which limiter decided: the buckets every replica shares, or this gateway's own. */
export type LimiterKind = 'redis' | 'local';

/**
 * Rate limits, after the viewer is known and before GraphQL runs: per viewer and per client
 * address (the scope's, so behind trusted proxies it is the client's, not the proxy's). Refuses
 * with RATE_LIMITED and `retryAfterSeconds`.
 *
 * The shared buckets (Redis) decide. When they cannot (Redis down, full, or too slow), this
 * gateway's own buckets decide instead, with the same rates: an outage of Redis neither becomes an
 * API outage nor lifts the limits (each replica then counts on its own). After failures in a row
 * the breaker skips Redis for its cooldown, so an unreachable Redis costs no request a timeout.
 */
export function rateLimitAdmission(opts: {
  readonly limiter: RateLimiter;
  readonly local: LocalRateLimiter;
  readonly breaker: LayerBreaker;
  readonly log: Log;
  /** Each decision (`allowed` or `refused`) and who made it; `error` when the shared limiter failed (then `local` decides). */
  readonly onOutcome?: (outcome: 'allowed' | 'refused' | 'error', limiter: LimiterKind) => void;
}): Admit {
  const decide = async (who: Who, cost: number, requestId: string): Promise<{ verdict: Admission; limiter: LimiterKind }> => {
    if (opts.breaker.mayTry()) {
      try {
        const verdict = await opts.limiter.take(who, cost);
        opts.breaker.succeeded();
        return { verdict, limiter: 'redis' };
      } catch (err) {
        opts.breaker.failed();
        opts.onOutcome?.('error', 'redis');
        opts.log('rate_limit_unavailable', { requestId, error: err instanceof Error ? err.message : String(err), fallback: 'local' });
      }
    }
    return { verdict: opts.local.take(who, cost), limiter: 'local' };
  };
  return async (scope, viewer, operations) => {
    const { verdict, limiter } = await decide({ viewer: viewer?.toString(), address: scope.address }, operations, scope.id);
    opts.onOutcome?.(verdict.allowed ? 'allowed' : 'refused', limiter);
    if (!verdict.allowed) {
      throw new ShardqlError('RATE_LIMITED', `Too many requests from this ${verdict.scope}; retry in ${verdict.retryAfterSeconds} s`, {
        retryAfterSeconds: verdict.retryAfterSeconds,
        scope: verdict.scope,
      });
    }
  };
}
