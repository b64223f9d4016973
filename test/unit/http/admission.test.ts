import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LayerBreaker } from '../../../src/cache/breaker.ts';
import { LocalRateLimits, type Admission } from '../../../src/cache/rateLimits.ts';
import { isShardqlError } from '../../../src/core/errors.ts';
import { rateLimitAdmission, type RateLimiter } from '../../../src/http/admission.ts';
import type { RequestScope } from '../../../src/core/requestScope.ts';

const scope = (address: string): RequestScope => ({ id: 'r1', address, trace: undefined, operation: undefined, errors: {}, usage: undefined }) as unknown as RequestScope;

/**
 * The decision only: which limiter decides when. The shared limiter here is a stand-in that
 * answers or throws on command; `hardening.test.ts` runs the same fallback against a real Redis
 * that is unreachable, and cut then back.
 */
describe('Rate-limit admission: the shared buckets decide, this gateway\'s own while they cannot', () => {
  test('a failing shared limiter hands the decision to the local buckets, which still refuse; the breaker then skips it', async () => {
    let now = 0;
    let down = true;
    let asked = 0;
    const shared: RateLimiter = {
      take: async (): Promise<Admission> => {
        asked++;
        if (down) throw new Error('Connection is closed.');
        return { allowed: true };
      },
    };
    const outcomes: string[] = [];
    const logged: string[] = [];
    const admit = rateLimitAdmission({
      limiter: shared,
      local: new LocalRateLimits({ perViewer: { limit: 2, windowMs: 60_000 }, now: () => now }),
      breaker: new LayerBreaker({ cooldownMs: 1000, threshold: 2, now: () => now }),
      log: (event) => void logged.push(event),
      onOutcome: (outcome, limiter) => void outcomes.push(`${outcome}:${limiter}`),
    });
    await admit(scope('10.0.0.1'), 7n, 1);
    await admit(scope('10.0.0.1'), 7n, 1);
    await assert.rejects(admit(scope('10.0.0.1'), 7n, 1), (e: unknown) => isShardqlError(e, 'RATE_LIMITED') && e.details.scope === 'viewer');
    assert.equal(asked, 2, 'after 2 failures in a row the breaker skips the shared limiter');
    assert.deepEqual(outcomes, ['error:redis', 'allowed:local', 'error:redis', 'allowed:local', 'refused:local']);
    assert.deepEqual(logged, ['rate_limit_unavailable', 'rate_limit_unavailable']);
    // Back: once the cooldown is over the shared buckets decide again.
    down = false;
    now += 1000;
    await admit(scope('10.0.0.1'), 7n, 1);
    assert.equal(asked, 3);
    assert.equal(outcomes.at(-1), 'allowed:redis');
  });
});
