import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSchema, isObjectType, isInterfaceType } from 'graphql';
import { servedResolvers } from '../../../src/product/served.ts';
import { loadTypeDefs } from '../../../src/graphql/schema.ts';
import { storedObject } from '../../../src/storage/objectStore.ts';
import { objectFields } from '../../../src/core/objectFields.ts';
import { encodeId } from '../../../src/core/ids.ts';
import { typeNumberOf } from '../../../src/core/objectTypes.ts';

/** The SDL is the source of truth: the resolver map is checked against it, both ways. */
describe('Resolvers against the SDL', () => {
  const schema = buildSchema(loadTypeDefs());
  const map = servedResolvers();

  test('every resolver names a type and a field the schema has', () => {
    for (const [typeName, fields] of Object.entries(map)) {
      const type = schema.getType(typeName);
      assert.ok(type && (isObjectType(type) || isInterfaceType(type)), `${typeName} is a type of the schema`);
      const schemaFields = type.getFields();
      for (const field of Object.keys(fields)) {
        if (field === '__resolveType') continue;
        assert.ok(field in schemaFields, `${typeName}.${field} is in the schema`);
      }
    }
  });

  test('every Query and Mutation field has a resolver', () => {
    for (const root of ['Query', 'Mutation']) {
      const type = schema.getType(root);
      assert.ok(isObjectType(type));
      for (const field of Object.keys(type.getFields())) assert.equal(typeof map[root]?.[field], 'function', `${root}.${field} has a resolver`);
    }
  });

  test('every field of a stored object has a resolver or is a property of the decoded object (no silent default resolver on a JSON blob)', () => {
    const ids = { User: 'user', Board: 'board', Pin: 'pin', Comment: 'comment' } as const;
    for (const [typeName, type] of Object.entries(ids)) {
      const gql = schema.getType(typeName);
      assert.ok(isObjectType(gql));
      // A blob with none of the shown fields: each one still is a property (null or ''), never undefined.
      const o = storedObject(encodeId({ shard: 1, type: typeNumberOf(type), local: 7n }), type, { active: true }, 1, 2);
      const shown = Object.keys(objectFields(type, {}));
      for (const field of Object.keys(gql.getFields())) {
        if (typeof map[typeName]?.[field] === 'function') {
          assert.ok(!shown.includes(field), `${typeName}.${field}: a resolver or a shown field, not both`);
          continue;
        }
        assert.ok(field === 'id' || shown.includes(field), `${typeName}.${field} has a resolver or is a shown field`);
        assert.notEqual((o as unknown as Record<string, unknown>)[field], undefined, `${typeName}.${field} is a property of the decoded object`);
      }
    }
  });

  test('shown fields come from the blob as strings; anything else is null (or empty where the schema says non-null)', () => {
    assert.deepEqual(objectFields('user', { username: 'ann', displayName: 42, about: 'hi' }), { username: 'ann', displayName: null, about: 'hi' });
    assert.deepEqual(objectFields('user', {}), { username: '', displayName: null, about: null });
    assert.deepEqual(objectFields('board', { name: 'B', description: ['x'] }), { name: 'B', description: null });
    assert.deepEqual(objectFields('pin', { title: 'T', link: 'l', imageUrl: 'i' }), { title: 'T', description: null, link: 'l', imageUrl: 'i' });
    assert.deepEqual(objectFields('comment', { text: null }), { text: '' });
  });

  test('Node dispatches every object type', () => {
    assert.equal(typeof map.Node?.__resolveType, 'function');
  });
});
