import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSchema, getOperationAST, getVariableValues, parse, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type { GatewayGraphQLRequestContext } from '@apollo/server-gateway-interface';
import { jitExecutor } from '../../../src/graphql/executor.ts';

/**
 * The gateway's executor (src/graphql/executor.ts) coerces variables with graphql-jit alone, and
 * only when that fails asks graphql-js, whose messages Apollo recognises as BAD_USER_INPUT (400).
 * Checked: every refused variable gets graphql-js's own errors, word for word; good variables run;
 * an execution error keeps its data and is not taken for a variable error.
 */
const schema: GraphQLSchema = buildSchema(`
  enum Order { NEWEST OLDEST }
  input Range { from: Int!, to: Int }
  type Query {
    page(first: Int, order: Order, range: Range, ids: [ID!], name: String!): String
    broken: String
    fine: String
  }
`);
const fields = schema.getQueryType()!.getFields();
fields.page!.resolve = (_root, args) => JSON.stringify(args);
fields.broken!.resolve = () => {
  throw new Error('resolver failed');
};
fields.fine!.resolve = () => 'ok';

const QUERY = 'query($first: Int, $order: Order, $range: Range, $ids: [ID!], $name: String!) { page(first: $first, order: $order, range: $range, ids: $ids, name: $name) }';

async function run(query: string, variables: Record<string, unknown>): Promise<ExecutionResult> {
  const document = parse(query);
  const operation = getOperationAST(document)!;
  const execute = jitExecutor(schema);
  // The fields the executor reads of Apollo's request context.
  const rc = { request: { variables }, document, operation, operationName: null, context: {}, source: query } as unknown as GatewayGraphQLRequestContext;
  return (await execute(rc)) as ExecutionResult;
}

describe('jitExecutor', () => {
  test("variables it cannot coerce get graphql-js's errors, word for word", async () => {
    const document = parse(QUERY);
    const defs = getOperationAST(document)!.variableDefinitions!;
    const bad: Record<string, unknown>[] = [
      { name: 'a', first: 2147483648 },
      { name: 'a', first: 1.5 },
      { name: 'a', first: '10' },
      { name: 'a', order: 'SIDEWAYS' },
      { name: 'a', range: { to: 3 } },
      { name: 'a', range: { from: 1, other: 2 } },
      { name: 'a', ids: [null] },
      { name: null },
      {},
      { name: 'a', first: 1e12, order: 7 },
    ];
    for (const variables of bad) {
      const expected = getVariableValues(schema, defs, variables, { maxErrors: 50 }).errors;
      assert.ok(expected && expected.length > 0, `graphql-js refuses ${JSON.stringify(variables)}`);
      const result = await run(QUERY, variables);
      assert.equal('data' in result, false, JSON.stringify(variables));
      assert.deepEqual(
        result.errors?.map((e) => e.message),
        expected.map((e) => e.message),
        JSON.stringify(variables),
      );
    }
  });

  test('good variables run, coerced as graphql-js coerces them', async () => {
    const result = await run(QUERY, { name: 'x', first: 3, order: 'OLDEST', range: { from: 1 }, ids: [7, '8'] });
    assert.equal(result.errors, undefined);
    assert.deepEqual(JSON.parse(String(result.data?.page)), { first: 3, order: 'OLDEST', range: { from: 1 }, ids: ['7', '8'], name: 'x' });
  });

  test('an execution error keeps its data and is not a variable error', async () => {
    const result = await run('query($name: String!) { fine broken page(name: $name) }', { name: 'x' });
    assert.deepEqual(result.data, { fine: 'ok', broken: null, page: JSON.stringify({ name: 'x' }) });
    assert.deepEqual(result.errors?.map((e) => [e.message, e.path]), [['resolver failed', ['broken']]]);
  });
});
