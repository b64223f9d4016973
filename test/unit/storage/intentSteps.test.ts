import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeId } from '../../../src/core/ids.ts';
import { listingBetween, listingFor, listingOfRef } from '../../../src/core/listings.ts';
import { OBJECT_TYPES, typeNumberOf } from '../../../src/core/objectTypes.ts';
import { decodeSteps } from '../../../src/storage/intentLog.ts';

// One generic step keeps a list on another shard in step with an object (`syncListing`); what a
// refused add means comes from the model's `@ref(listedIn, onDelete)`. Intents recorded by a
// previous version name their list by its two objects (`syncAuthored`, `syncRepin`).

const id = (type: keyof typeof OBJECT_TYPES, shard: number, local: bigint): string => `${encodeId({ shard, type: typeNumberOf(type), local })}`;

describe('Listing steps: which list and what its refusal means, from the model', () => {
  test('a listing by its table, by its reference, and by its two types', () => {
    assert.deepEqual([listingFor('user_wrote_comments').field, listingFor('user_wrote_comments').onDelete], ['author', 'DELETE']);
    assert.deepEqual([listingFor('pin_repinned_as_pins').field, listingFor('pin_repinned_as_pins').onDelete], ['via', 'UNLINK']);
    assert.throws(() => listingFor('user_likes_pins'), /no @ref\(listedIn: "user_likes_pins"\)/);
    assert.equal(listingOfRef('comment', 'author').table, 'user_wrote_comments');
    assert.equal(listingOfRef('pin', 'via').table, 'pin_repinned_as_pins');
    assert.throws(() => listingOfRef('pin', 'title'), /pin\.title has no @ref\(listedIn:\)/);
    assert.equal(listingBetween('comment', 'user', 'DELETE')?.table, 'user_wrote_comments');
    assert.equal(listingBetween('pin', 'pin', 'UNLINK')?.table, 'pin_repinned_as_pins');
    assert.equal(listingBetween('pin', 'user', 'UNLINK'), undefined);
  });

  test("a previous version's steps decode into today's, others unchanged", () => {
    const author = id('user', 3, 7n);
    const comment = id('comment', 5, 9n);
    const original = id('pin', 2, 11n);
    const pin = id('pin', 4, 12n);
    const stored = JSON.stringify([
      { kind: 'syncAuthored', author, comment },
      { kind: 'syncRepin', original, pin, created: true },
      { kind: 'syncRepin', original, pin },
      { kind: 'purge', id: pin },
    ]);
    assert.deepEqual(decodeSteps(stored), [
      { kind: 'syncListing', table: 'user_wrote_comments', from: author, object: comment },
      { kind: 'syncListing', table: 'pin_repinned_as_pins', from: original, object: pin, created: true },
      { kind: 'syncListing', table: 'pin_repinned_as_pins', from: original, object: pin },
      { kind: 'purge', id: pin },
    ]);
    assert.throws(() => decodeSteps(JSON.stringify([{ kind: 'syncAuthored', author: id('board', 1, 3n), comment }])), /no DELETE listing/);
  });
});
