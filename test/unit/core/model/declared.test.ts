import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseModel } from '../../../../src/core/model/parseModel.ts';
import { DECLARED_MODULE, renderDeclared } from '../../../../src/core/model/renderDeclared.ts';
import { readModelFiles } from '../../../../src/core/model/modelFiles.ts';
import { AUTHORITATIVE_TABLES, isMirror, mappingSpec } from '../../../../src/core/mappings.ts';
import { OBJECT_TABLES, OBJECT_TYPES, typeName, typeNumberOf } from '../../../../src/core/objectTypes.ts';
import { objectFields } from '../../../../src/core/objectFields.ts';
import { REF_FIELDS } from '../../../../src/core/objectRefs.ts';
import { sampleQuery } from '../../../../src/core/model/sampleQuery.ts';
import { DECLARED } from '../../../../src/core/model/declared.ts';
import { buildSchema, parse, validate } from 'graphql';
import { loadTypeDefs } from '../../../../src/graphql/schema.ts';

const root = join(import.meta.dirname, '../../../..');

describe("The product's declared model (schema/) and what derives from it", () => {
  test(`${DECLARED_MODULE} is what npm run model writes from schema/ today`, () => {
    const fresh = renderDeclared(parseModel(readModelFiles('schema', root)));
    assert.equal(readFileSync(join(root, DECLARED_MODULE), 'utf8'), fresh, `${DECLARED_MODULE} is stale: run npm run model`);
  });

  test("type numbers: Pinterest's pin is type 1 (the seeds' test vector); each number names one type", () => {
    assert.equal(typeNumberOf('pin'), 1);
    for (const [name, n] of Object.entries(OBJECT_TYPES)) assert.equal(typeName(n), name);
    assert.equal(new Set(Object.values(OBJECT_TABLES)).size, Object.keys(OBJECT_TABLES).length);
  });

  test('relations: a viewer-written side and its mirror, an owner order where declared', () => {
    assert.deepEqual(mappingSpec('user_likes_pins'), { from: 'user', to: 'pin', reverse: 'pin_liked_by_users' });
    assert.deepEqual(mappingSpec('board_has_pins'), { from: 'board', to: 'pin', ordered: true });
    assert.deepEqual([...AUTHORITATIVE_TABLES].sort(), ['user_follows_boards', 'user_follows_users', 'user_likes_pins']);
    assert.equal(isMirror('pin_liked_by_users'), true);
    assert.equal(isMirror('user_likes_pins'), false);
  });

  test('decoded fields follow the declaration: required ones read empty, others null, unknown keys ignored', () => {
    assert.deepEqual(objectFields('comment', { text: 7, other: 'x' }), { text: '' });
    assert.deepEqual(objectFields('user', { username: 'ann', about: 'hi' }), { username: 'ann', displayName: null, about: 'hi' });
    assert.equal(REF_FIELDS.via, 'via_pin_id');
  });

  test("GraphiQL's first query walks the viewer's lists and is valid against the served API", () => {
    const query = sampleQuery(DECLARED);
    assert.match(query, /^# The viewer's page: viewer → boards → pins → likers,/);
    assert.deepEqual(validate(buildSchema(loadTypeDefs()), parse(query)).map((e) => e.message), []);
  });

  test('the served API shows none of the model vocabulary', () => {
    const api = loadTypeDefs();
    for (const word of ['@object', '@stored', '@relation', '@ref(', 'StoredFormat', 'RelationOrder', 'directive ']) assert.ok(!api.includes(word), word);
  });
});
