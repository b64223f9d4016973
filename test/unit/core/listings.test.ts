import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CONTAINMENT_TABLES, LISTINGS, containersOf, listRole, listedEdges, listingOf, ownedLists } from '../../../src/core/listings.ts';
import { MAPPING_TABLES } from '../../../src/core/mappings.ts';

// What the cascade, reconcile and the import read from the product's declared model (schema/),
// checked against what they hand-wrote before they read it.

describe('Listings: the lists each reference writes, from @ref(listedIn, onDelete)', () => {
  test('every listing of the product, in declaration order', () => {
    assert.deepEqual(
      LISTINGS.map((l) => `${l.type}.${l.field} (${l.key}) → ${l.table} of ${l.to}, ${l.onDelete}`),
      [
        'board.owner (owner_id) → user_has_boards of user, DELETE',
        'pin.board (board_id) → board_has_pins of board, DELETE',
        'pin.pinner (pinner_id) → user_has_pins of user, DELETE',
        'pin.via (via_pin_id) → pin_repinned_as_pins of pin, UNLINK',
        'comment.author (author_id) → user_wrote_comments of user, DELETE',
        'comment.pin (pin_id) → pin_has_comments of pin, DELETE',
      ],
    );
  });

  test('containment lists: the hand-written children and authored lists of the cascade, together', () => {
    const handWritten = ['user_has_boards', 'user_has_pins', 'board_has_pins', 'pin_has_comments', 'user_wrote_comments'];
    assert.deepEqual([...CONTAINMENT_TABLES].sort(), handWritten.sort());
  });

  const roles: { name: string; table: (typeof MAPPING_TABLES)[number]; want: ReturnType<typeof listRole> }[] = [
    { name: 'a user\'s boards are children', table: 'user_has_boards', want: 'child' },
    { name: 'a user\'s comments are children (on other shards)', table: 'user_wrote_comments', want: 'child' },
    { name: 'a pin\'s comments are children', table: 'pin_has_comments', want: 'child' },
    { name: 'a like is one side of a relation', table: 'user_likes_pins', want: 'relation' },
    { name: 'a liker list is the other side', table: 'pin_liked_by_users', want: 'relation' },
    { name: 'a board\'s followers are one side of a relation', table: 'board_followed_by_users', want: 'relation' },
    { name: 'an original\'s repins only link (a repin outlives its original)', table: 'pin_repinned_as_pins', want: 'link' },
  ];
  for (const r of roles) test(`role: ${r.name}`, () => assert.equal(listRole(r.table), r.want));

  test('every mapping table has a role, and a containment list is written by exactly one reference', () => {
    for (const t of MAPPING_TABLES) assert.ok(['child', 'relation', 'link'].includes(listRole(t)), t);
    for (const t of CONTAINMENT_TABLES) assert.equal(LISTINGS.filter((l) => l.table === t).length, 1, t);
    assert.equal(listingOf('user_likes_pins'), undefined, 'a relation a viewer writes is no listing');
  });

  const owned: { type: Parameters<typeof ownedLists>[0]; want: string[] }[] = [
    // The cascade's hand-written order put user_wrote_comments last; a containment list now goes with
    // the others, before the relations (each list is emptied on its own, so the order only decides
    // which goes first).
    { type: 'user', want: ['user_has_boards', 'user_has_pins', 'user_wrote_comments', 'user_likes_pins', 'user_followed_by_users', 'user_follows_users', 'user_follows_boards'] },
    { type: 'board', want: ['board_has_pins', 'board_followed_by_users'] },
    { type: 'pin', want: ['pin_has_comments', 'pin_liked_by_users', 'pin_repinned_as_pins'] },
    { type: 'comment', want: [] },
  ];
  for (const o of owned) {
    test(`ownedLists('${o.type}'): containment first, then the rest in declaration order`, () => {
      assert.deepEqual(ownedLists(o.type), o.want);
      assert.deepEqual([...ownedLists(o.type)].sort(), MAPPING_TABLES.filter((t) => t.startsWith(`${o.type}_`)).sort(), 'every list of the type');
    });
  }

  test('containersOf: what deleting takes an object with', () => {
    assert.deepEqual(containersOf('pin').map((l) => l.field), ['board', 'pinner'], 'not via: a repin outlives its original');
    assert.deepEqual(containersOf('comment').map((l) => l.field), ['author', 'pin']);
    assert.deepEqual(containersOf('user'), []);
  });

  test('listedEdges: a comment is in its author\'s and its pin\'s lists; a repin links to its original', () => {
    assert.deepEqual(
      listedEdges('comment', { author: 9n, pin: 7n }, 'DELETE').map((e) => [e.table, e.from]),
      [
        ['user_wrote_comments', 9n],
        ['pin_has_comments', 7n],
      ],
    );
    assert.deepEqual(listedEdges('pin', { board: 2n, pinner: 3n, via: 4n }, 'UNLINK').map((e) => [e.table, e.from]), [['pin_repinned_as_pins', 4n]]);
    assert.deepEqual(listedEdges('pin', { board: 2n }, 'DELETE').map((e) => [e.table, e.from]), [['board_has_pins', 2n]], 'a missing reference lists nothing');
  });
});
