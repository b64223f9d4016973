import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSchema, isObjectType, isInterfaceType } from 'graphql';
import { resolvers } from '../../../src/graphql/resolvers.ts';
import { loadTypeDefs } from '../../../src/graphql/schema.ts';

/** The SDL is the source of truth: the resolver map is checked against it, both ways. */
describe('Resolvers against the SDL', () => {
  const schema = buildSchema(loadTypeDefs());
  const map = resolvers as unknown as Record<string, Record<string, unknown>>;

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

  test('every field computed from a stored object has a resolver (no silent default resolver on a JSON blob)', () => {
    for (const typeName of ['User', 'Board', 'Pin', 'Comment']) {
      const type = schema.getType(typeName);
      assert.ok(isObjectType(type));
      for (const field of Object.keys(type.getFields())) assert.equal(typeof map[typeName]?.[field], 'function', `${typeName}.${field} has a resolver`);
    }
  });

  test('Node dispatches every object type', () => {
    assert.equal(typeof map.Node?.__resolveType, 'function');
  });
});
