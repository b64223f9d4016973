import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeId, formatId } from '../../../src/core/ids.ts';
import { isShardqlError } from '../../../src/core/errors.ts';
import { OBJECT_TYPES, typeNumberOf } from '../../../src/core/objectTypes.ts';
import { eventOf as eventIn, type EventSide, type Happening } from '../../../src/core/events.ts';
import { PINTEREST_EVENTS } from '../../../src/product/pinterest/events.ts';
import type { Storage } from '../../../src/storage/index.ts';
import { storedObject } from '../../../src/storage/objectStore.ts';
import { productHooks } from '../../../src/product/pinterest/hooks.ts';

const on = (shard: number, type: keyof typeof OBJECT_TYPES, local: bigint) => encodeId({ shard, type: typeNumberOf(type), local });
const ann = on(1, 'user', 1n);
const bob = on(2, 'user', 2n);
const bobsPin = storedObject(on(2, 'pin', 3n), 'pin', { pinner_id: formatId(bob) }, 1, 1);

const eventOf = (h: Happening, user: bigint, side: EventSide) => eventIn(PINTEREST_EVENTS, h, user, side);

// The relation hooks below read and write nothing: no storage is reached.
const hooks = productHooks({ storage: {} as Storage });

describe('Product hooks: what a relation records, by its table', () => {
  test("a like of another's pin: the liker's LIKE activity and the pinner's notification, which it shows in", () => {
    const r = hooks.relation!.user_likes_pins!.records!({ op: 'add', viewer: ann, target: bobsPin, owner: bob, sequence: 42 });
    const h = { kind: 'LIKE' as const, actor: ann, object: bobsPin.id, detail: null, ts: 42 };
    assert.deepEqual(r, { events: { own: eventOf(h, ann, 'activity'), notify: eventOf(h, bob, 'notifications') }, notifies: bob });
  });

  test('a like of one\'s own pin: the activity only, and no one\'s notifications', () => {
    const r = hooks.relation!.user_likes_pins!.records!({ op: 'add', viewer: bob, target: bobsPin, owner: bob, sequence: 42 });
    assert.equal(r.events?.notify, null);
    assert.equal(r.notifies, undefined);
  });

  test('following oneself is refused (INVALID_ARGUMENT on userId); following another is not', () => {
    const me = storedObject(ann, 'user', { username: 'ann' }, 1, 1);
    const check = hooks.relation!.user_follows_users!.check!;
    assert.throws(
      () => check({ op: 'add', viewer: ann, target: me }),
      (err: unknown) => isShardqlError(err) && err.code === 'INVALID_ARGUMENT' && err.message === 'Expected another user to follow, got the viewer',
    );
    check({ op: 'add', viewer: bob, target: me });
  });

  test('unfollows clean the stored feed; an unlike does not', () => {
    assert.equal(typeof hooks.relation!.user_follows_users!.removed, 'function');
    assert.equal(typeof hooks.relation!.user_follows_boards!.removed, 'function');
    assert.equal(hooks.relation!.user_likes_pins!.removed, undefined);
  });
});
