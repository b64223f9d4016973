import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, getIntrospectionQuery, graphqlSync } from 'graphql';
import { CLIENT_SCHEMA_FILE, INTROSPECTION_OPTIONS, printClientSchema, printIntrospection } from '../../../src/graphql/clientSchema.ts';
import { loadTypeDefs } from '../../../src/graphql/schema.ts';

const root = join(import.meta.dirname, '../../..');

describe("Client schema: the API's SDL as client tools read it", () => {
  test(`${CLIENT_SCHEMA_FILE} is what \`shardql schema print\` prints for schema/ today`, () => {
    assert.equal(readFileSync(join(root, CLIENT_SCHEMA_FILE), 'utf8'), printClientSchema(loadTypeDefs()), `${CLIENT_SCHEMA_FILE} is stale: run npm run model`);
  });

  test("graphql-js buildSchema takes the client file, and refuses the model's declaration that docs once named", () => {
    const kept = readFileSync(join(root, CLIENT_SCHEMA_FILE), 'utf8');
    const schema = buildSchema(kept);
    assert.ok(schema.getQueryType()?.getFields().viewer, 'the file is the API');
    assert.match(schema.getQueryType()!.getFields().viewer!.description ?? '', /token/, 'descriptions are kept');
    assert.doesNotMatch(kept, /@(object|stored|ref|count|relation|create|update|delete|custom)\b/, 'no model vocabulary');
    // What the tools were pointed at before: the declaration alone, whose directives only schema/model.graphql defines.
    assert.throws(() => buildSchema(readFileSync(join(root, 'schema/schema.graphql'), 'utf8')), /Unknown directive "@/);
  });

  test("a schema's own introspection answer prints back to the same file (so the gateway's can be compared with it)", () => {
    const schema = buildSchema(loadTypeDefs());
    const answer = graphqlSync({ schema, source: getIntrospectionQuery(INTROSPECTION_OPTIONS) });
    assert.equal(answer.errors, undefined);
    assert.equal(printIntrospection(answer.data as never), printClientSchema(loadTypeDefs()));
  });

  test('another model prints its own API (examples/qa)', () => {
    const qa = printClientSchema(loadTypeDefs('examples/qa'));
    assert.match(qa, /^type Question\b/m);
    assert.doesNotMatch(qa, /^type Pin\b/m);
    assert.ok(buildSchema(qa).getMutationType());
  });
});
