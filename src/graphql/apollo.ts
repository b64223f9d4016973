import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import type { KeyValueCache } from '@apollo/utils.keyvaluecache';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { isShardqlError, type ShardqlError } from '../core/errors.ts';
import type { GatewayContext } from './context.ts';
import { DEFAULT_COST_BUDGET, type CostBudget, type CostEstimate, type EventCost } from './cost.ts';
import { CostGate, nameOperation, settleErrors, type OnResponse, type PolicyLog } from './operationPolicy.ts';
import { aliasLimit, depthLimit, directiveLimit, SHAPE_LIMITS } from './limits.ts';
import { makeExecutableSchema } from '@graphql-tools/schema';
import { jitGateway, JitRunner } from './executor.ts';
import { FastLane, type FastContext } from './fastLane.ts';
import type { ResolverMap } from './resolvers.ts';
import { loadTypeDefs } from './schema.ts';

export interface ApolloOptions {
  /** The served API's resolvers (the model's and the attached products', src/product/served.ts). */
  readonly resolvers: ResolverMap;
  /** In development, introspection is on and every response carries its SQL cost. */
  readonly development: boolean;
  /** Store of automatic persisted queries (Redis in the gateway). */
  readonly apqCache: KeyValueCache<string>;
  /** Deepest selection allowed. Default 12. */
  readonly maxDepth?: number;
  /** What one operation may cost (rows, SQL round trips), estimated before it runs. Default 50000 rows, 500 round trips. */
  readonly costBudget?: CostBudget;
  /** The served product's event fields and the events kept per kind (cost.ts `eventCost`). Absent: none is charged as events. */
  readonly eventCost?: EventCost | undefined;
  /** Schema introspection. Default: on in development only. */
  readonly introspection?: boolean;
  /** Several operations in one HTTP request (a JSON array). Default false. */
  readonly batching?: boolean;
  /**
   * Validation errors name no type, field or argument: one error with a stable code and a generic
   * message goes to the client, the full messages to the log under the request ID. Default: when
   * not in development.
   */
  readonly schemaPrivacy?: boolean;
  readonly log: PolicyLog;
  /** Called once per request with its duration and outcome (metrics). */
  readonly onResponse?: OnResponse;
  /** Operations seen before answered past Apollo's pipeline, alike (fastLane.ts). Default true. */
  readonly fastLane?: boolean;
}

/** Codes graphql-js and Apollo give to errors about the request itself: their messages are safe. */
const REQUEST_ERROR_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
  'OPERATION_RESOLUTION_FAILURE',
  'BAD_REQUEST',
  'QUERY_TOO_COMPLEX',
]);

/**
 * Per request: names the operation and counts the response's errors by code for the request's
 * log line, opens the operation's span (loader levels, SQL and cache calls go under it), and — with
 * schema privacy — replaces validation and variable errors by one generic error, logging the real
 * messages under the request ID.
 */
const observePlugin = (opts: { readonly schemaPrivacy: boolean; readonly log: PolicyLog }): ApolloServerPlugin<GatewayContext & { showCost: boolean }> => ({
  async requestDidStart({ contextValue }) {
    const scope = contextValue?.request;
    const span = scope?.trace?.operation('graphql');
    let name: string | undefined;
    return {
      async didResolveOperation({ operation, operationName }) {
        if (!scope || !operation) return;
        name = nameOperation(scope, operation, operationName);
        span?.rename(`${operation.operation} ${name}`);
      },
      async willSendResponse({ response }) {
        const body = response.body.kind === 'single' ? response.body.singleResult : undefined;
        const errors = settleErrors(body?.errors, scope, opts);
        if (body && errors !== body.errors) body.errors = errors;
        span?.end({ 'graphql.operation.name': name ?? '', 'shardql.errors': errors?.length ?? 0 }, errors?.length ? { code: errors[0]!.extensions?.code } : undefined);
      },
    };
  },
});

/** A refusal before execution, as Apollo wants it thrown: a GraphQLError carrying our error and its HTTP status. */
function refusal(err: ShardqlError): GraphQLError {
  return new GraphQLError(err.message, { originalError: err, extensions: { http: { status: 400 } } });
}

/**
 * Cost of each response (CostGate): the estimate checked once the operation is known, refused as a
 * request error when over budget; the metrics and `extensions.cost` at the response.
 */
const costPlugin = (gate: CostGate): ApolloServerPlugin<GatewayContext & { showCost: boolean }> => ({
  async requestDidStart() {
    const started = process.hrtime.bigint();
    let estimate: CostEstimate | undefined;
    return {
      async didResolveOperation({ schema, document, operation, request, contextValue }) {
        if (!operation) return;
        if (operation.operation === 'subscription') {
          throw new GraphQLError('Expected a query or a mutation: this gateway has no subscriptions', {
            extensions: { code: 'GRAPHQL_VALIDATION_FAILED', http: { status: 400 } },
          });
        }
        try {
          estimate = gate.check(schema, document, operation, request.variables ?? {}, contextValue);
        } catch (err) {
          throw isShardqlError(err) ? refusal(err) : err;
        }
      },
      async willSendResponse({ response, contextValue, errors }) {
        gate.respond(contextValue, started, (errors?.length ?? 0) > 0, response.body.kind === 'single' ? response.body.singleResult : undefined, estimate);
      },
    };
  },
});

/**
 * Apollo Server with the gateway's error policy: our errors keep their code and message; errors
 * about the request keep graphql-js's message; anything else is logged and becomes a bare
 * INTERNAL_SERVER_ERROR — no SQL, stack, host or library message ever reaches a client.
 */
export function createApolloServer(opts: ApolloOptions): { apollo: ApolloServer<FastContext>; fastLane: FastLane | undefined } {
  const formatError = (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const unwrapped = unwrapResolverError(error);
    // Refusals before execution (limits, cost) carry our error inside Apollo's.
    const original = unwrapped instanceof GraphQLError && isShardqlError(unwrapped.originalError) ? unwrapped.originalError : unwrapped;
    const base = { ...(formatted.locations ? { locations: formatted.locations } : {}), ...(formatted.path ? { path: formatted.path } : {}) };
    if (isShardqlError(original)) {
      return {
        ...base,
        message: original.message,
        extensions: { code: original.code, ...original.details, ...(original.retryable ? { retryable: true } : {}) },
      };
    }
    const code = formatted.extensions?.code;
    const tokens = code === 'GRAPHQL_PARSE_FAILED' ? /Document contains more tha[nt] (\d+) tokens/.exec(formatted.message) : null;
    if (tokens) {
      return {
        message: `Expected a document of at most ${tokens[1]} tokens, got more`,
        extensions: { code: 'QUERY_TOO_COMPLEX', limit: 'tokens', max: Number(tokens[1]) },
      };
    }
    if (typeof code === 'string' && REQUEST_ERROR_CODES.has(code)) {
      const message = opts.development ? formatted.message : formatted.message.replace(/ Did you mean .*$/, '');
      return { ...base, message, extensions: { code } };
    }
    if (original instanceof GraphQLError && typeof original.extensions?.code === 'string' && REQUEST_ERROR_CODES.has(original.extensions.code)) {
      return { ...base, message: original.message, extensions: { code: original.extensions.code } };
    }
    // Apollo's own refusals of a request (a bad persisted-query version or hash) carry no code.
    if (
      original instanceof GraphQLError &&
      original.extensions.code === undefined &&
      original.originalError == null &&
      original.path === undefined &&
      original.extensions.http !== undefined
    ) {
      return { ...base, message: original.message, extensions: { code: 'BAD_REQUEST' } };
    }
    opts.log('internal_error', {
      error: original instanceof Error ? `${original.name}: ${original.message}` : String(original),
      stack: original instanceof Error ? original.stack : undefined,
      path: formatted.path,
    });
    return { ...base, message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } };
  };

  const schema = makeExecutableSchema({ typeDefs: loadTypeDefs(), resolvers: opts.resolvers as never });
  const runner = new JitRunner(schema);
  const cost = new CostGate(opts.costBudget ?? DEFAULT_COST_BUDGET, opts.eventCost, opts.onResponse);
  const observe = { schemaPrivacy: opts.schemaPrivacy ?? !opts.development, log: opts.log };
  const fastLane = (opts.fastLane ?? true) ? new FastLane({ schema, runner, cost, formatError, ...observe }) : undefined;
  const apollo = new ApolloServer<FastContext>({
    gateway: jitGateway(schema, runner),
    formatError,
    introspection: opts.introspection ?? opts.development,
    includeStacktraceInErrorResponses: false,
    hideSchemaDetailsFromClientErrors: !opts.development,
    allowBatchedHttpRequests: opts.batching ?? false,
    // The CLI owns SIGINT/SIGTERM and drains in-flight requests before stopping Apollo.
    stopOnTerminationSignals: false,
    csrfPrevention: true,
    persistedQueries: { cache: opts.apqCache, ttl: 7 * 24 * 3600 },
    parseOptions: { maxTokens: SHAPE_LIMITS.tokens },
    validationRules: [depthLimit(opts.maxDepth ?? SHAPE_LIMITS.depth), aliasLimit(SHAPE_LIMITS.aliases), directiveLimit(SHAPE_LIMITS.directives)],
    // Cache control is off: it adds willResolveField to every field, which wraps every resolver of
    // every request (8% of a warm profile's CPU, and garbage), for cache hints nobody reads here.
    plugins: [
      observePlugin(observe),
      ApolloServerPluginLandingPageDisabled(),
      ApolloServerPluginCacheControlDisabled(),
      costPlugin(cost),
      ...(fastLane ? [fastLane.learn()] : []),
    ],
  });
  return { apollo, fastLane };
}
