import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultEventRetention, eventIdOf, eventOf as eventIn, parseEventRetention as parseIn, storedKindsOf as storedKindsIn, type Happening, type EventSide } from '../../../src/core/events.ts';
import { PINTEREST_EVENTS } from '../../../src/product/pinterest/events.ts';

// The generic functions over Pinterest's spec (src/product/pinterest/events.ts).
const eventOf = (h: Happening, user: bigint, side: EventSide) => eventIn(PINTEREST_EVENTS, h, user, side);
const storedKindsOf = (side: EventSide, kinds: readonly string[] | null) => storedKindsIn(PINTEREST_EVENTS, side, kinds);
const parseEventRetention = (text: string) => parseIn(PINTEREST_EVENTS, text);
const DEFAULT_EVENT_RETENTION = defaultEventRetention(PINTEREST_EVENTS);

describe('Events: IDs, kinds, retention settings', () => {
  const like = { kind: 'LIKE', actor: 7n, object: 42n, detail: null, ts: 1_700_000_000_000 } as const;
  test('an event ID is the happening\'s: the same every time, in both sequences; another time is another event', () => {
    assert.equal(eventIdOf(like), eventIdOf({ ...like }));
    assert.equal(eventOf(like, 7n, 'activity').id, eventOf(like, 9n, 'notifications').id);
    assert.notEqual(eventIdOf(like), eventIdOf({ ...like, ts: like.ts + 1 }));
    assert.ok(eventIdOf(like) < 2n ** 63n);
    assert.equal(eventOf(like, 7n, 'activity').kind, 'liked_pin');
    assert.equal(eventOf(like, 9n, 'notifications').kind, 'pin_liked');
  });
  test('a side\'s kinds, or those asked', () => {
    assert.deepEqual(storedKindsOf('notifications', ['LIKE', 'FOLLOW_USER']), ['pin_liked', 'user_followed']);
    assert.equal(storedKindsOf('activity', null).length, 5);
  });
  const cases: [string, string, Record<string, { versions: number; ttlMs: number }>][] = [
    ['one kind', 'pin_liked=500/30d', { pin_liked: { versions: 500, ttlMs: 30 * 86_400_000 } }],
    ['a side', 'activity=10/12h', { liked_pin: { versions: 10, ttlMs: 12 * 3_600_000 }, followed_user: { versions: 10, ttlMs: 12 * 3_600_000 } }],
    ['every kind, then one', '*=5/10s, board_followed=1/500ms', { user_followed: { versions: 5, ttlMs: 10_000 }, board_followed: { versions: 1, ttlMs: 500 } }],
  ];
  for (const [name, text, expected] of cases) {
    test(`SHARDQL_EVENT_RETENTION: ${name}`, () => {
      const r = parseEventRetention(text);
      for (const [k, v] of Object.entries(expected)) assert.deepEqual(r[k as keyof typeof r], v);
      if (name === 'one kind') assert.deepEqual(r.liked_pin, DEFAULT_EVENT_RETENTION.liked_pin);
    });
  }
  for (const bad of ['pin_liked=0/1d', 'nope=1/1d', 'pin_liked=5', 'pin_liked=5/1y']) {
    test(`refuses ${JSON.stringify(bad)}`, () => assert.throws(() => parseEventRetention(bad), /event retention/));
  }
});
