import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LayerBreaker } from '../../../src/cache/breaker.ts';

describe('Cache layer breaker', () => {
  test('skips the layer for the cooldown after failures in a row, then tries again', () => {
    let now = 1000;
    const b = new LayerBreaker({ cooldownMs: 500, threshold: 2, now: () => now });
    assert.equal(b.mayTry(), true);
    b.failed();
    assert.equal(b.mayTry(), true, 'one failure is not an outage');
    b.succeeded();
    b.failed();
    assert.equal(b.mayTry(), true, 'a success in between resets the count');
    b.failed();
    assert.equal(b.mayTry(), false);
    now += 499;
    assert.equal(b.mayTry(), false);
    now += 1;
    assert.equal(b.mayTry(), true);
  });
  test('keeps failed invalidations until they are replayed', () => {
    const b = new LayerBreaker();
    b.addPending(['o:1', 'o:2']);
    b.addPending(['o:2']);
    assert.deepEqual(b.pendingInvalidations, ['o:1', 'o:2']);
    b.clearPending(['o:1']);
    assert.deepEqual(b.pendingInvalidations, ['o:2']);
  });
});
