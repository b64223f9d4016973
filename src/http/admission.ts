import { ShardqlError } from '../core/errors.ts';
import type { Admission } from '../cache/rateLimits.ts';
import type { Log } from '../log.ts';
import type { RequestScope } from './requestScope.ts';

/** What admission needs of the rate limiter (RedisRateLimits). */
export interface RateLimiter {
  take(who: { readonly viewer?: string | undefined; readonly address: string }, cost: number): Promise<Admission>;
}

export type Admit = (scope: RequestScope, viewer: bigint | undefined, operations: number) => Promise<void>;

/**
 * Rate limits, after the viewer is known and before GraphQL runs: per viewer and per client
 * address (the scope's, so behind trusted proxies it is the client's, not the proxy's). Refuses
 * with RATE_LIMITED and `retryAfterSeconds`; a limiter that fails lets the request through
 * (logged; a cache outage must not become an API outage).
 */
export function rateLimitAdmission(opts: {
  readonly limiter: RateLimiter;
  readonly log: Log;
  /** Each decision: `allowed`, `refused`, or `error` (the limiter failed). */
  readonly onOutcome?: (outcome: 'allowed' | 'refused' | 'error') => void;
}): Admit {
  return async (scope, viewer, operations) => {
    let verdict: Admission;
    try {
      verdict = await opts.limiter.take({ viewer: viewer?.toString(), address: scope.address }, operations);
    } catch (err) {
      opts.onOutcome?.('error');
      opts.log('rate_limit_unavailable', { requestId: scope.id, error: err instanceof Error ? err.message : String(err) });
      return;
    }
    opts.onOutcome?.(verdict.allowed ? 'allowed' : 'refused');
    if (!verdict.allowed) {
      throw new ShardqlError('RATE_LIMITED', `Too many requests from this ${verdict.scope}; retry in ${verdict.retryAfterSeconds} s`, {
        retryAfterSeconds: verdict.retryAfterSeconds,
        scope: verdict.scope,
      });
    }
  };
}
