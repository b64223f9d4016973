import { describe, test } from 'node:test';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { readModelFiles } from '../../../src/core/model/modelFiles.ts';
import { parseModel, problemText } from '../../../src/core/model/parseModel.ts';
import { servedModel } from '../../../src/core/model/served.ts';
import { takenCode } from '../../../src/core/errors.ts';
import { loadTypeDefs } from '../../../src/graphql/schema.ts';
import { derivedQueryResolvers, queryFields } from '../../../src/graphql/queryResolvers.ts';
import { attach, attachedFeed, missingNeeds, unresolvedFields, type Product } from '../../../src/product/product.ts';
import { pinterest } from '../../../src/product/pinterest/index.ts';
import { PRODUCTS } from '../../../src/product/served.ts';
import { PINTEREST_EVENTS } from '../../../src/product/pinterest/events.ts';
import { eventSpecProblems, type EventSpec, type StoredKindSpec } from '../../../src/core/events.ts';
import type { ModelData } from '../../../src/core/model/model.ts';

const qa = parseModel(readModelFiles('examples/qa'));
const qaSdl = loadTypeDefs('examples/qa');

describe('Products: attached by the names they need', () => {
  test('Pinterest attaches to schema/, with nothing missing', () => {
    assert.deepEqual(missingNeeds(pinterest, servedModel(), loadTypeDefs()), []);
    assert.deepEqual(attach([pinterest], servedModel(), loadTypeDefs()), { attached: [pinterest], refused: [] });
  });

  test('Pinterest does not attach to examples/qa, and says which types, relations and fields it lacks', () => {
    const missing = missingNeeds(pinterest, qa, qaSdl);
    for (const m of ['type board', 'type pin', 'type comment', 'relation user_likes_pins', 'relation user_follows_boards', 'field Query.homeFeed', 'field Mutation.repin', 'field User.activity', 'type ActivityEvent']) {
      assert.ok(missing.includes(m), `${m} in ${JSON.stringify(missing)}`);
    }
    // The QA model has users, follows of users and a createUser mutation: those are not missing.
    for (const m of ['type user', 'relation user_follows_users', 'field Mutation.createUser']) assert.ok(!missing.includes(m), m);
    assert.deepEqual(attach([pinterest], qa, qaSdl), { attached: [], refused: [{ product: 'pinterest', missing }] });
  });

  test('a product whose feed names a relation the model lacks is refused, and says which', () => {
    const feed = { ...pinterest.feed!, sources: [pinterest.feed!.sources[0]!, { ref: 'board', follows: 'user_follows_walls' }] };
    const walls: Product = { ...pinterest, feed };
    assert.deepEqual(missingNeeds(walls, servedModel(), loadTypeDefs()), ['relation user_follows_walls']);
    assert.deepEqual(attach([walls], servedModel(), loadTypeDefs()), { attached: [], refused: [{ product: 'pinterest', missing: ['relation user_follows_walls'] }] });
  });

  test('a product whose feed is read by a Query field the SDL lacks is refused', () => {
    const elsewhere: Product = { ...pinterest, feed: { ...pinterest.feed!, field: 'pinFeed' } };
    assert.deepEqual(missingNeeds(elsewhere, servedModel(), loadTypeDefs()), ['field Query.pinFeed']);
  });

  test("schema/ serves Pinterest's feed, resolved against the model", () => {
    const feed = attachedFeed(attach(PRODUCTS, servedModel(), loadTypeDefs()), servedModel());
    assert.deepEqual(
      feed?.sources.map((s) => [s.ref, s.follows, s.followers, s.items]),
      [
        ['pinner', 'user_follows_users', 'user_followed_by_users', 'user_has_pins'],
        ['board', 'user_follows_boards', 'board_followed_by_users', 'board_has_pins'],
      ],
    );
  });

  test('examples/qa: no attached product declares a feed, so the gateway and the workers build none', () => {
    const attachment = attach(PRODUCTS, qa, qaSdl);
    assert.deepEqual(attachment.attached, []);
    assert.equal(attachedFeed(attachment, qa), undefined);
  });

  test('two attached products that both declare a feed are refused', () => {
    const { writes: _writes, ...feedOnly } = pinterest;
    const other: Product = { ...feedOnly, name: 'other' };
    assert.throws(() => attach([pinterest, other], servedModel(), loadTypeDefs()), /products pinterest, other each declare a home feed; expected at most one/);
  });

  test('two attached products that both bring writes are refused', () => {
    const other: Product = { name: 'other', needs: { types: [], relations: [] }, resolvers: {}, writes: pinterest.writes! };
    assert.throws(() => attach([pinterest, other], servedModel(), loadTypeDefs()), /products pinterest, other each bring their writes; expected at most one/);
  });
});

describe('Products: their events, checked against the model when they attach', () => {
  /** Pinterest with one stored kind changed (or added). */
  const withKind = (name: string, kind: StoredKindSpec): Product => ({ ...pinterest, events: { ...PINTEREST_EVENTS, storedKinds: { ...PINTEREST_EVENTS.storedKinds, [name]: kind } } });
  const withEvents = (events: Partial<EventSpec>): Product => ({ ...pinterest, events: { ...PINTEREST_EVENTS, ...events } });
  /** schema/ without one relation (and the inverse naming it). */
  const without = (table: string): ModelData => {
    const m = servedModel();
    return { ...m, relations: m.relations.filter((r) => r.table !== table).map((r) => (r.inverse === table ? { ...r, inverse: null } : r)) };
  };

  test("Pinterest's spec holds together and every edge's relation is in schema/", () => {
    assert.deepEqual(eventSpecProblems(PINTEREST_EVENTS), []);
    assert.equal(attach([pinterest], servedModel(), loadTypeDefs()).attached[0]?.events, PINTEREST_EVENTS);
  });

  const cases: [string, Product, ModelData, string[]][] = [
    [
      'an edge naming a relation the model lacks',
      withKind('pin_liked', { kind: 'LIKE', side: 'notifications', edge: { table: 'pin_saved_by_users', from: 'object', to: 'actor' } }),
      servedModel(),
      ['relation pin_saved_by_users (event kind pin_liked)'],
    ],
    // Only the events name pin_liked_by_users (not the hooks' needs): the model alone decides.
    ['a model without the relation an edge names', pinterest, without('pin_liked_by_users'), ['relation pin_liked_by_users (event kind pin_liked)']],
    [
      "an edge from the row user on a relation that is not the viewer's",
      withKind('liked_pin', { kind: 'LIKE', side: 'activity', edge: { table: 'pin_liked_by_users', from: 'user', to: 'object' } }),
      servedModel(),
      ['relation pin_liked_by_users from user (event kind liked_pin), got from pin'],
    ],
    ['a stored kind of no activity kind', withKind('pin_saved', { kind: 'SAVE', side: 'notifications', edge: null }), servedModel(), ['event kind pin_saved: its kind SAVE is not among the activity kinds (LIKE, REPIN, COMMENT, FOLLOW_USER, FOLLOW_BOARD)']],
    ['two stored kinds for one kind on one side', withKind('pin_liked_again', { kind: 'LIKE', side: 'notifications', edge: null }), servedModel(), ['event kind pin_liked_again: a second stored kind for LIKE on notifications']],
    ['a stored kind the events table cannot hold', withKind('Pin-Liked', { kind: 'COMMENT', side: 'activity', edge: null }), servedModel(), ['event kind "Pin-Liked": expected 1-32 lowercase letters or underscores', 'event kind Pin-Liked: a second stored kind for COMMENT on activity']],
    ['a served field the SDL lacks', withEvents({ fields: { latest: ['User.newestActivity'] } }), servedModel(), ['field User.newestActivity']],
  ];
  for (const [name, product, model, missing] of cases) {
    test(`refused: ${name}`, () => {
      assert.deepEqual(missingNeeds(product, model, loadTypeDefs()), missing);
      assert.deepEqual(attach([product], model, loadTypeDefs()), { attached: [], refused: [{ product: 'pinterest', missing }] });
    });
  }

  test('two attached products that both declare events are refused (one events table)', () => {
    const other: Product = { name: 'other', needs: { types: [], relations: [] }, resolvers: {}, events: PINTEREST_EVENTS };
    assert.throws(() => attach([pinterest, other], servedModel(), loadTypeDefs()), /products pinterest, other each declare events; expected at most one/);
  });
});

describe('Query fields derived from the model', () => {
  test('examples/qa: viewer, node, user(id, handle), question(id), tag(id, name)', () => {
    assert.deepEqual(Object.keys(derivedQueryResolvers(qa, queryFields(qaSdl))).sort(), ['node', 'question', 'tag', 'user', 'viewer']);
  });

  test("schema/: everything but the product's homeFeed", () => {
    assert.deepEqual(Object.keys(derivedQueryResolvers(servedModel(), queryFields(loadTypeDefs()))).sort(), ['board', 'node', 'pin', 'user', 'viewer']);
  });

  test('a field named after a type with an argument that is none of its unique fields is refused', () => {
    const sdl = qaSdl.replace('question(id: ID!): Question', 'question(id: ID, title: String): Question');
    assert.notEqual(sdl, qaSdl);
    assert.throws(() => derivedQueryResolvers(qa, queryFields(sdl)), /Query\.question\(title\): expected a field of Question declared @stored\(unique: …\), got title/);
  });
});

describe('The code of a taken unique value', () => {
  const cases: [string, string][] = [
    ['username', 'USERNAME_TAKEN'],
    ['email', 'EMAIL_TAKEN'],
    ['handle', 'HANDLE_TAKEN'],
    ['tag', 'TAG_TAKEN'],
    ['import:user', 'IMPORT_USER_TAKEN'],
  ];
  for (const [ns, code] of cases) test(`${ns} → ${code}`, () => assert.equal(takenCode(ns), code));
});

describe('Fields only a product answers: a field with no model directive must be resolved by an attached product', () => {
  /** examples/qa with `playCount: Int!` on Question (no directive): where it is, and the model. */
  function withPlayCount(): { model: ModelData; at: string } {
    const files = readModelFiles('examples/qa');
    const anchor = '  title: String! @stored(maxLength: 150)\n';
    const changed = files.map((f) => (f.body.includes(anchor) ? { ...f, body: f.body.replace(anchor, `${anchor}  playCount: Int!\n`) } : f));
    const file = changed.find((f) => f.body.includes('playCount'))!;
    const line = file.body.slice(0, file.body.indexOf('playCount')).split('\n').length;
    return { model: parseModel(changed), at: `${file.name}:${line}:3` };
  }

  test("the checker accepts the field and records it with where it is; id and createdAt are every type's own", () => {
    const { model } = withPlayCount();
    const question = model.objects.find((o) => o.key === 'question')!;
    assert.deepEqual(question.productFields.map((f) => f.field), ['playCount']);
    assert.deepEqual(qa.objects.flatMap((o) => o.productFields), [], 'examples/qa has none: every other field has a directive');
  });

  test('no attached product resolves it: refused at the field, saying what was expected', () => {
    const { model, at } = withPlayCount();
    const problems = unresolvedFields(model, attach(PRODUCTS, model, qaSdl).attached).map(problemText);
    assert.deepEqual(problems, [
      `${at}: Question.playCount has no model directive and no product is attached, expected @stored, @ref, @relation, @count or @viewerEdge, or a field a product resolves`,
    ]);
  });

  test("schema/'s activity and notifications are Pinterest's: resolved when it is attached, refused without it", () => {
    assert.deepEqual(unresolvedFields(servedModel(), [pinterest]), []);
    assert.deepEqual(
      unresolvedFields(servedModel(), []).map((p) => p.message.split(' has ')[0]),
      ['User.activity', 'User.latestActivity', 'User.notifications'],
    );
  });

  test('npm run model refuses such a directory with the field\'s file:line:column (exit 1)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'shardql-playcount-'));
    try {
      const body = readFileSync('examples/qa/schema.graphql', 'utf8').replace('  title: String! @stored(maxLength: 150)\n', '  title: String! @stored(maxLength: 150)\n  playCount: Int!\n');
      writeFileSync(join(dir, 'schema.graphql'), body);
      const line = body.slice(0, body.indexOf('playCount')).split('\n').length;
      const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/gen-model.ts', dir], { encoding: 'utf8' });
      assert.equal(run.status, 1, run.stdout + run.stderr);
      assert.match(run.stderr, new RegExp(`schema\\.graphql:${line}:3: Question\\.playCount has no model directive and no product is attached, expected @stored`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
