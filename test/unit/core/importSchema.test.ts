import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  defaultSchema,
  ImportConfigError,
  blobText,
  buildBlob,
  cutRanges,
  importedUnique,
  oldIdOf,
  parseImportConfig,
  placeOnOpenShard,
  resolveSchema,
  timeOf,
} from '../../../src/core/importSchema.ts';
import { deriveImportSpec } from '../../../src/core/importSpec.ts';
import { servedModel } from '../../../src/core/model/served.ts';
import { pinterestImport } from '../../../src/product/pinterest/importSource.ts';

/** Pinterest's source schema: derived from its model, with the product's names. */
const SPEC = deriveImportSpec(servedModel(), pinterestImport);

const FLAT = new Map<string, Set<string>>([
  ['users', new Set(['id', 'username', 'data', 'created_at', 'updated_at', 'board_count'])],
  ['boards', new Set(['id', 'owner_id', 'data', 'created_at', 'updated_at'])],
  ['pins', new Set(['id', 'board_id', 'pinner_id', 'via_pin_id', 'position', 'data', 'created_at', 'updated_at'])],
  ['likes', new Set(['user_id', 'pin_id', 'created_at'])],
  ['follows', new Set(['follower_id', 'followee_id', 'created_at'])],
  ['board_follows', new Set(['user_id', 'board_id', 'created_at'])],
]);

describe('Import: the source schema and its config', () => {
  test('the benchmark’s flat database fits the defaults: no comments table, no email column', () => {
    const { schema, notes } = resolveSchema(parseImportConfig(undefined, SPEC), (t) => FLAT.get(t));
    assert.equal(schema.tables.comments, null);
    assert.equal(schema.tables.users?.roles.email, null);
    assert.equal(schema.tables.pins?.roles.via, 'via_pin_id');
    assert.deepEqual(notes, ['the source has no table comments: no comments to import']);
  });
  test('a config renames tables and columns over the defaults; names it gives must exist', () => {
    const parsed = parseImportConfig({ timeUnit: 's', tables: { pins: { table: 'pin', pinner: 'user_id', via: null, data: null, fields: { title: 'title' } }, comments: null } }, SPEC);
    assert.equal(parsed.schema.tables.pins?.table, 'pin');
    assert.equal(parsed.schema.tables.pins?.roles.board, 'board_id', 'a default kept');
    assert.equal(parsed.schema.timeUnit, 's');
    assert.throws(
      () => resolveSchema(parsed, (t) => (t === 'pin' ? new Set(['id', 'board_id', 'created_at']) : FLAT.get(t))),
      /pin\.user_id \(pins pinner\) does not exist; pin\.title \(pins field title\) does not exist/,
    );
  });
  const bad: [string, unknown, RegExp][] = [
    ['an unknown table', { tables: { pinz: {} } }, /unknown table "pinz"/],
    ['an unknown role', { tables: { pins: { pinnr: 'x' } } }, /tables\.pins\.pinnr: unknown role/],
    ['a name that is no identifier', { tables: { users: { id: 'id; DROP TABLE x' } } }, /expected a column name/],
    ['a required table dropped', { tables: { users: null } }, /cannot be null/],
    ['a bad time unit', { timeUnit: 'h' }, /timeUnit/],
  ];
  for (const [name, json, re] of bad) test(`refuses ${name}`, () => assert.throws(() => parseImportConfig(json, SPEC), (e: unknown) => e instanceof ImportConfigError && re.test(e.message)));
  test('the defaults name every table', () => assert.equal(defaultSchema(SPEC).tables.boardFollows?.table, 'board_follows'));
});

describe('Import: blobs, keys and placement', () => {
  test('a blob: the data column without the fields the importer owns, mapped columns over it, resolved references; keys sorted', () => {
    const blob = buildBlob({ title: 'a', board_id: '999', active: false, empty: '' }, { link: 'https://x', title: 'b', gone: null }, { board_id: '42', via_pin_id: undefined });
    assert.equal(JSON.stringify(blob), '{"board_id":"42","link":"https://x","title":"b"}');
    assert.equal(blobText({ b: 1, a: { d: 1, c: 2 }, active: true }), '{"a":{"c":2,"d":1},"b":1}');
  });
  test('a username keeps the data column’s spelling when it is the same name', () => {
    assert.equal(importedUnique('username', 'alice_1', { username: 'Alice_1' }), 'Alice_1');
    assert.equal(importedUnique('username', 'alice_1', { username: 'someone' }), 'alice_1');
  });
  test('placement is uniform-ish and the same every time', () => {
    const hits = new Array<number>(16).fill(0);
    for (let i = 0; i < 16_000; i++) hits[placeOnOpenShard('shop', String(i), 16)]!++;
    assert.ok(Math.min(...hits) > 850 && Math.max(...hits) < 1150, `spread ${hits.join(',')}`);
    assert.equal(placeOnOpenShard('shop', '42', 16), placeOnOpenShard('shop', '42', 16));
    assert.notDeepEqual(
      Array.from({ length: 20 }, (_, i) => placeOnOpenShard('shop', String(i), 16)),
      Array.from({ length: 20 }, (_, i) => placeOnOpenShard('other', String(i), 16)),
    );
  });
  test('old IDs and times', () => {
    assert.equal(oldIdOf('241294492511762325'), '241294492511762325');
    assert.equal(oldIdOf(7), '7');
    assert.throws(() => oldIdOf('7x'));
    assert.equal(timeOf('1700000000000', 'ms'), 1_700_000_000_000);
    assert.equal(timeOf(1_700_000_000, 's'), 1_700_000_000_000);
    assert.equal(timeOf(new Date(5), 'ms'), 5);
    assert.throws(() => timeOf('yesterday', 'ms'), ImportConfigError);
  });
  test('key ranges cover every key, never split a key, about `target` rows each', () => {
    assert.deepEqual(
      cutRanges(
        [
          ['1', 3],
          ['2', 3],
          ['5', 3],
        ],
        5,
      ),
      [
        { range: { after: null, upTo: '2' }, rows: 6 },
        { range: { after: '2', upTo: null }, rows: 3 },
      ],
    );
    assert.deepEqual(cutRanges([['1', 10]], 5), [{ range: { after: null, upTo: null }, rows: 10 }]);
    assert.deepEqual(cutRanges([], 5), [{ range: { after: null, upTo: null }, rows: 0 }]);
  });
});
