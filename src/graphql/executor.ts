import type { GatewayExecutor, GatewayInterface } from '@apollo/server-gateway-interface';
import { GraphQLError, GraphQLID, execute, getVariableValues, printSchema, type DocumentNode, type ExecutionResult, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { formatId } from '../core/ids.ts';

/**
 * Runs operations with graphql-jit instead of graphql-js's execute(): each document (Apollo keeps
 * one parsed and validated DocumentNode per query text) is compiled once into a function that
 * resolves its selection set without building a resolve info, a path list and a promise per field.
 * On the warm profile (250 pins, 1,000 objects) graphql-js's execute was the largest block of
 * CPU after garbage collection, most of the garbage its own.
 *
 * Apollo Server 5 has no executor option; a gateway's `load()` may return one, which Apollo then
 * calls after parsing, validation and every plugin hook up to `executionDidStart`: persisted
 * queries, trusted documents, limits, the cost plugin and the error policy all run as before.
 */
export function jitGateway(schema: GraphQLSchema, runner: JitRunner = new JitRunner(schema)): GatewayInterface {
  return {
    onSchemaLoadOrUpdate(callback) {
      callback({ apiSchema: schema, coreSupergraphSdl: printSchema(schema) });
      return () => undefined;
    },
    load: async () => ({ executor: jitExecutor(schema, runner) }),
    stop: async () => undefined,
  };
}

/**
 * Runs a parsed and validated document's operation with graphql-jit, each (document, operation
 * name) compiled once: Apollo's executor and the fast lane (fastLane.ts) share one.
 */
export class JitRunner {
  readonly #schema: GraphQLSchema;
  readonly #compiled = new WeakMap<DocumentNode, Map<string, CompiledQuery>>();

  constructor(schema: GraphQLSchema) {
    this.#schema = schema;
  }

  /**
   * The operation's result. Variables graphql-jit cannot coerce: errors and no `data` at all (an
   * execution error leaves `data`); told with graphql-js's coercion, for its messages and nodes:
   * Apollo marks them BAD_USER_INPUT (status 400) by their wording. Coercing only then, not before
   * every request, saves a second coercion of every good request (1.9% of a board page's CPU).
   */
  async run(document: DocumentNode, operation: OperationDefinitionNode, operationName: string | undefined, context: unknown, variables: Record<string, unknown>): Promise<ExecutionResult> {
    const query = this.#compiledFor(document, operationName);
    if (!isCompiledQuery(query)) return { errors: (query.errors ?? []).map(asGraphQLError) };
    const result = await query.query(undefined, context, variables);
    if (!result.errors) return result;
    if (!('data' in result) && operation.variableDefinitions && operation.variableDefinitions.length > 0) {
      const coerced = getVariableValues(this.#schema, operation.variableDefinitions, variables, { maxErrors: 50 });
      if (coerced.errors) return { errors: coerced.errors };
    }
    return { ...result, errors: result.errors.map(asGraphQLError) };
  }

  #compiledFor(document: DocumentNode, operationName: string | undefined): CompiledQuery | ExecutionResult {
    let byName = this.#compiled.get(document);
    if (!byName) this.#compiled.set(document, (byName = new Map()));
    const known = byName.get(operationName ?? '');
    if (known) return known;
    const c = compileQuery(this.#schema, document, operationName, { customSerializers: { ID: serializeId } });
    if (isCompiledQuery(c)) byName.set(operationName ?? '', c);
    return c;
  }
}

export function jitExecutor(schema: GraphQLSchema, runner: JitRunner = new JitRunner(schema)): GatewayExecutor {
  return async (rc) => {
    const operation = rc.operation;
    // No operation resolved (a name that is not there, two and no name): graphql-js's execute says
    // which, resolving nothing, and Apollo turns its error into OPERATION_RESOLUTION_FAILURE.
    if (!operation) return execute({ schema, document: rc.document, operationName: rc.operationName }) as ExecutionResult;
    return runner.run(rc.document, operation, rc.operationName ?? undefined, rc.context, rc.request.variables ?? {});
  };
}

/**
 * An object's ID is a bigint on the decoded object (no resolver formats it: see
 * core/objectFields.ts); shown as its decimal string, as formatId does. Anything else as graphql-js
 * serializes an ID.
 */
function serializeId(value: unknown): unknown {
  return typeof value === 'bigint' ? formatId(value) : GraphQLID.serialize(value);
}

/**
 * graphql-jit's errors pass `instanceof GraphQLError` but leave `extensions` undefined, where
 * Apollo's error formatting expects an object: rebuilt as graphql-js errors, path, locations
 * and original error kept.
 */
function asGraphQLError(e: GraphQLError): GraphQLError {
  const out = new GraphQLError(e.message, { path: e.path, originalError: e.originalError, ...(e.extensions ? { extensions: e.extensions } : {}) });
  if (e.locations) (out as { locations: typeof e.locations }).locations = e.locations;
  return out;
}
