import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LocalRateLimits } from '../../../src/cache/rateLimits.ts';

const MINUTE = 60_000;

describe('Local rate limits (a gateway\'s own buckets, while Redis cannot answer)', () => {
  test('a bucket gives its limit, refuses with the wait for the next token, and refills with time', () => {
    let now = 1_000_000;
    const rl = new LocalRateLimits({ perViewer: { limit: 3, windowMs: MINUTE }, now: () => now });
    const alice = { viewer: '7', address: '10.0.0.1' };
    for (let i = 0; i < 3; i++) assert.deepEqual(rl.take(alice), { allowed: true });
    assert.deepEqual(rl.take(alice), { allowed: false, retryAfterSeconds: 20, scope: 'viewer' }, '3 per minute: the next token in 20 s');
    now += 19_999;
    assert.equal(rl.take(alice).allowed, false);
    now += 1;
    assert.deepEqual(rl.take(alice), { allowed: true }, 'one token back after 20 s');
    assert.equal(rl.take(alice).allowed, false);
    assert.deepEqual(rl.take({ address: '10.0.0.1' }), { allowed: true }, 'no viewer, no address limit: nothing to take');
  });

  test('a request one bucket refuses takes nothing from the other', () => {
    const now = 5_000;
    const rl = new LocalRateLimits({ perViewer: { limit: 1, windowMs: MINUTE }, perAddress: { limit: 2, windowMs: MINUTE }, now: () => now });
    const alice = { viewer: '1', address: '10.0.0.9' };
    const bob = { viewer: '2', address: '10.0.0.9' };
    assert.equal(rl.take(alice).allowed, true);
    assert.deepEqual(rl.take(alice), { allowed: false, retryAfterSeconds: 60, scope: 'viewer' });
    assert.equal(rl.take(bob).allowed, true, "alice's refused request gave the address its token back");
    assert.deepEqual(rl.take({ viewer: '3', address: '10.0.0.9' }), { allowed: false, retryAfterSeconds: 30, scope: 'address' }, 'the address bucket is empty (2 per minute: 30 s)');
  });

  test('a batch costs its size; a cost above the limit is refused, taking nothing', () => {
    const rl = new LocalRateLimits({ perAddress: { limit: 3, windowMs: 3_000 }, now: () => 0 });
    const who = { address: '::1' };
    assert.equal(rl.take(who, 4).allowed, false);
    assert.equal(rl.take(who, 3).allowed, true, 'the refused batch took nothing');
    assert.deepEqual(rl.take(who, 1), { allowed: false, retryAfterSeconds: 1, scope: 'address' });
  });

  test('bounded: the least recently used bucket goes first, and a gone bucket is a full one', () => {
    let now = 0;
    const rl = new LocalRateLimits({ perAddress: { limit: 1, windowMs: MINUTE }, maxBuckets: 3, now: () => now });
    for (const a of ['a', 'b', 'c']) assert.equal(rl.take({ address: a }).allowed, true);
    assert.equal(rl.size, 3);
    assert.equal(rl.take({ address: 'a' }).allowed, false, 'a refusal keeps its bucket');
    assert.equal(rl.take({ address: 'd' }).allowed, true);
    assert.equal(rl.size, 3, 'never more than maxBuckets');
    assert.equal(rl.take({ address: 'a' }).allowed, true, "a, the least recently taken from, was dropped: it is full again");
    assert.equal(rl.take({ address: 'c' }).allowed, false, 'c is still held');
    now += MINUTE;
    assert.equal(rl.take({ address: 'c' }).allowed, true, 'idle for a window: full');
  });
});
