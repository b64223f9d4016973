import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeId, formatId, shardOf } from '../../../src/core/ids.ts';
import { DECLARED } from '../../../src/core/model/declared.ts';
import { OBJECT_TYPES, typeNumberOf } from '../../../src/core/objectTypes.ts';
import { isShardqlError } from '../../../src/core/errors.ts';
import { storedObject } from '../../../src/storage/objectStore.ts';
import {
  applyPatch,
  checkOwner,
  createFields,
  createPlan,
  listingEdges,
  objectDef,
  ownerOf,
  relationChange,
  relationDef,
  updatePatch,
} from '../../../src/services/writePlans.ts';
import { mutationResolvers } from '../../../src/graphql/mutationResolvers.ts';

const on = (shard: number, type: keyof typeof OBJECT_TYPES, local: bigint) => encodeId({ shard, type: typeNumberOf(type), local });
const ann = on(3, 'user', 1n);
const bob = on(5, 'user', 2n);
const annsBoard = on(3, 'board', 10n);
const bobsPin = on(5, 'pin', 20n);

/** Asserts `fn` throws a ShardqlError with this code and message. */
function refuses(fn: () => unknown, code: string, message: string | RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(isShardqlError(err), `a ShardqlError, got ${String(err)}`);
    assert.equal(err.code, code);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });
}

describe('Write plans: a declared create is a pure plan (the product model)', () => {
  test('createPin: on its board\'s shard, the board locked active, the pin listed on the board and as the pinner\'s', () => {
    const plan = createPlan(DECLARED, 'pin', { kind: 'createPin', viewer: ann, fields: { title: 'Tea' }, refs: { board: annsBoard }, listedByStep: ['via'] });
    assert.equal(plan.kind, 'createPin');
    assert.equal(plan.shard, shardOf(annsBoard));
    assert.deepEqual(plan.lock, { id: annsBoard, type: 'board' });
    assert.deepEqual(plan.data, { title: 'Tea', board_id: formatId(annsBoard), pinner_id: formatId(ann) });
    const pin = { id: on(3, 'pin', 99n), createdAt: 1_700_000_000_000 };
    assert.deepEqual(listingEdges(plan, pin), [
      { op: 'add', table: 'board_has_pins', from: annsBoard, to: pin.id, sequence: pin.createdAt },
      { op: 'add', table: 'user_has_pins', from: ann, to: pin.id, sequence: pin.createdAt },
    ]);
  });

  test('createBoard: placed with its owner, the viewer, so on the viewer\'s shard with no lock; listed as the owner\'s', () => {
    const plan = createPlan(DECLARED, 'board', { kind: 'createBoard', viewer: ann, fields: { name: 'Kitchens' }, refs: {} });
    assert.equal(plan.shard, shardOf(ann));
    assert.equal(plan.lock, null);
    assert.deepEqual(plan.data, { name: 'Kitchens', owner_id: formatId(ann) });
    assert.deepEqual(plan.listings, [{ ref: 'owner', table: 'user_has_boards', from: ann, local: true }]);
  });

  test('createComment: on its pin\'s shard (another user\'s), the pin locked; the author\'s list left to the step that lists it', () => {
    const plan = createPlan(DECLARED, 'comment', { kind: 'createComment', viewer: ann, fields: { text: 'nice' }, refs: { pin: bobsPin }, listedByStep: ['author'] });
    assert.equal(plan.shard, shardOf(bobsPin));
    assert.deepEqual(plan.lock, { id: bobsPin, type: 'pin' });
    assert.deepEqual(plan.data, { text: 'nice', author_id: formatId(ann), pin_id: formatId(bobsPin) });
    assert.deepEqual(plan.listings, [{ ref: 'pin', table: 'pin_has_comments', from: bobsPin, local: true }]);
  });

  test('a list on another shard that no step writes is a mistake of the product\'s hooks, not a silent orphan', () => {
    assert.throws(
      () => createPlan(DECLARED, 'comment', { kind: 'createComment', viewer: ann, fields: { text: 'nice' }, refs: { pin: bobsPin } }),
      /Comment\.author is listed in user_wrote_comments on another shard/,
    );
  });

  test('without the object it is placed with: INVALID_ARGUMENT naming the argument', () => {
    refuses(() => createPlan(DECLARED, 'pin', { kind: 'createPin', viewer: ann, fields: {}, refs: {} }), 'INVALID_ARGUMENT', /^Expected boardId to be the ID of a board/);
  });

  test('a type placed with nothing lands on the open shard the plan is given', () => {
    const plan = createPlan(DECLARED, 'user', { kind: 'signUp', viewer: ann, fields: { username: 'cy' }, refs: {}, openShard: () => 7 });
    assert.equal(plan.shard, 7);
    assert.equal(plan.lock, null);
  });
});

describe('Write plans: input checked against the declared fields', () => {
  const pin = objectDef(DECLARED, 'pin');
  const board = objectDef(DECLARED, 'board');
  const comment = objectDef(DECLARED, 'comment');
  const refusals: { name: string; run: () => unknown; message: string | RegExp }[] = [
    { name: 'a title over its maxLength (200)', run: () => createFields(pin, { title: 'x'.repeat(201) }), message: /^Expected title to be at most 200 characters, got / },
    { name: 'a comment over its maxLength (1000)', run: () => createFields(comment, { text: 'x'.repeat(1001) }), message: /^Expected text to be at most 1000 characters/ },
    { name: 'a link that is no http(s) URL (format URL)', run: () => createFields(pin, { link: 'javascript:alert(1)' }), message: /^Expected link to be an absolute http or https URL/ },
    { name: 'a required name left out', run: () => createFields(board, { description: 'd' }), message: 'Expected name to be non-empty text, got undefined' },
    { name: 'a required name of blanks', run: () => createFields(board, { name: '   ' }), message: /^Expected name to be non-empty text/ },
    { name: 'a required name cleared on update', run: () => updatePatch(board, { name: null }), message: 'Expected name to be text, got null' },
    { name: 'an immutable username changed', run: () => updatePatch(objectDef(DECLARED, 'user'), { username: 'other' }), message: /^Expected username to stay as it was made/ },
  ];
  for (const r of refusals) test(`refused: ${r.name} (INVALID_ARGUMENT)`, () => refuses(r.run, 'INVALID_ARGUMENT', r.message));

  test('create: values trimmed and URLs normalized, blob keys as declared; optional fields left out, null or empty are not kept', () => {
    assert.deepEqual(createFields(pin, { title: '  Tea ', link: 'https://example.com', description: '', imageUrl: null }), { title: 'Tea', link: 'https://example.com/' });
  });

  test('update: undefined leaves a field, null clears it, a value replaces it', () => {
    const patch = updatePatch(board, { name: undefined, description: null });
    assert.deepEqual(patch, { description: null });
    assert.deepEqual(applyPatch({ name: 'B', description: 'old', owner_id: '1' }, patch), { name: 'B', owner_id: '1' });
    assert.deepEqual(applyPatch({ name: 'B' }, updatePatch(board, { name: ' New ' })), { name: 'New' });
  });
});

describe('Write plans: owners and relations from the model', () => {
  const board = storedObject(annsBoard, 'board', { owner_id: formatId(ann) }, 1, 1);
  const pin = storedObject(bobsPin, 'pin', { pinner_id: formatId(bob), board_id: '1' }, 1, 1);
  const user = storedObject(bob, 'user', { username: 'bob' }, 1, 1);

  test('whose thing it is: its owner ref; a user is their own', () => {
    assert.equal(ownerOf(DECLARED, board), ann);
    assert.equal(ownerOf(DECLARED, pin), bob);
    assert.equal(ownerOf(DECLARED, user), bob);
  });

  test('only the owner may change it: FORBIDDEN naming the type', () => {
    checkOwner(DECLARED, board, ann);
    refuses(() => checkOwner(DECLARED, board, bob), 'FORBIDDEN', 'Only the owner may change this board');
    refuses(() => checkOwner(DECLARED, pin, ann), 'FORBIDDEN', 'Only the owner may change this pin');
  });

  test("a relation's edge is the viewer's: viewer → target in the relation's table", () => {
    assert.deepEqual(relationChange(relationDef(DECLARED, 'user_likes_pins'), 'add', ann, bobsPin, 42), { op: 'add', table: 'user_likes_pins', from: ann, to: bobsPin, sequence: 42 });
  });

  test('a resolver is derived for every declared mutation but the @custom ones', () => {
    const derived: string[] = Object.keys(mutationResolvers(DECLARED)).sort();
    const expected = DECLARED.mutations.filter((m) => m.action !== 'CUSTOM').map((m) => m.name).sort();
    assert.ok(derived.includes('likePin') && derived.includes('createPin') && derived.includes('movePin'));
    assert.ok(!derived.includes('repin') && !derived.includes('createUser'));
    assert.deepEqual(derived, expected);
  });
});
