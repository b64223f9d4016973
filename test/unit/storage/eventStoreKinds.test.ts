import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventSettings, type EventSpec } from '../../../src/core/events.ts';
import { evenLayout, parseTopology } from '../../../src/core/topology.ts';
import { PINTEREST_EVENTS } from '../../../src/product/pinterest/events.ts';
import { createStorage, type Storage } from '../../../src/storage/index.ts';

/**
 * A storage whose one host listens nowhere (port 1): any statement fails to connect, so what
 * answers here answered without MariaDB. createStorage connects at the first query only.
 */
function unreachable(spec?: EventSpec): Storage {
  const topology = parseTopology(evenLayout({ hosts: { h1: { primary: { host: '127.0.0.1', port: 1 } } }, shards: 4, modShards: 2 }));
  return createStorage({ topology: () => topology, credentials: { user: 'nobody', password: 'none' }, events: spec ? eventSettings(spec) : null });
}

describe('Event store: the kinds it is given, and none without a spec', () => {
  test('no spec (a model no product with events attaches to): nothing notifies, and the sweep and empty reads touch no database', async () => {
    const storage = unreachable();
    try {
      assert.deepEqual(Object.keys(storage.events.spec.storedKinds), []);
      assert.equal(storage.events.notifies('pin_liked_by_users'), false);
      assert.deepEqual(await storage.events.sweep([0, 1, 2, 3]), { expired: 0, trimmed: 0 });
      assert.deepEqual(await storage.events.page({ user: 1n, kinds: [], first: 10 }), { edges: [], hasNextPage: false, endCursor: null });
      assert.deepEqual(storage.events.keysOf([]), []);
      // A product's event met by a storage made without its spec: the error says which mistake it is.
      const liked = { user: 7n, id: 1n, ts: 1, actor: 8n, object: 9n, detail: null, kind: 'pin_liked' };
      assert.throws(() => storage.events.keysOf([liked]), /^Error: unknown event kind "pin_liked": this store has no event kinds \(its storage was made with events: null, not the served product's/);
    } finally {
      await storage.close();
    }
  });

  test("Pinterest's spec: the notifications' edges notify, the activity's do not; an event of an unknown kind is refused", async () => {
    const storage = unreachable(PINTEREST_EVENTS);
    try {
      for (const table of ['pin_liked_by_users', 'pin_repinned_as_pins', 'pin_has_comments', 'user_followed_by_users', 'board_followed_by_users']) assert.equal(storage.events.notifies(table), true, table);
      for (const table of ['user_likes_pins', 'user_has_pins', 'user_follows_users']) assert.equal(storage.events.notifies(table), false, table);
      const event = { user: 7n, id: 1n, ts: 1, actor: 8n, object: 9n, detail: null };
      assert.deepEqual(storage.events.keysOf([{ ...event, kind: 'pin_liked' }, { ...event, kind: 'liked_pin' }]), ['l:notifications:7']);
      assert.throws(() => storage.events.keysOf([{ ...event, kind: 'pin_saved' }]), /unknown event kind "pin_saved" \(kinds: pin_liked, /);
      // With kinds, the sweep reads the shards: here it cannot reach them.
      await assert.rejects(storage.events.sweep([0]));
    } finally {
      await storage.close();
    }
  });
});
