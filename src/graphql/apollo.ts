import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { unwrapResolverError } from '@apollo/server/errors';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import type { KeyValueCache } from '@apollo/utils.keyvaluecache';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { isShardqlError } from '../core/errors.ts';
import type { GatewayContext } from './context.ts';
import { depthLimit } from './limits.ts';
import { resolvers } from './resolvers.ts';
import { loadTypeDefs } from './schema.ts';

export interface ApolloOptions {
  /** In development, introspection is on and every response carries its SQL cost. */
  readonly development: boolean;
  /** Store of automatic persisted queries (Redis in the gateway). */
  readonly apqCache: KeyValueCache<string>;
  /** Deepest selection allowed. Default 12. */
  readonly maxDepth?: number;
  readonly log: (event: string, fields: Record<string, unknown>) => void;
  /** Called once per request with its duration and outcome (metrics). */
  readonly onResponse?: (seconds: number, failed: boolean, ctx: GatewayContext) => void;
}

/** Codes graphql-js and Apollo give to errors about the request itself: their messages are safe. */
const REQUEST_ERROR_CODES = new Set([
  'GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT', 'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED', 'OPERATION_RESOLUTION_FAILURE', 'BAD_REQUEST', 'QUERY_TOO_COMPLEX',
]);

/**
 * Cost of each response in SQL and cache traffic, in `extensions.cost`: always in development, on
 * request (`x-shardql-cost: 1`) otherwise. Also feeds the metrics.
 */
const costPlugin = (onResponse: ApolloOptions['onResponse']): ApolloServerPlugin<GatewayContext & { showCost: boolean }> => ({
  async requestDidStart() {
    const started = process.hrtime.bigint();
    return {
      async willSendResponse({ response, contextValue, errors }) {
        if (contextValue?.op) onResponse?.(Number(process.hrtime.bigint() - started) / 1e9, (errors?.length ?? 0) > 0, contextValue);
        if (!contextValue?.showCost || response.body.kind !== 'single') return;
        const stats = contextValue.op.stats;
        response.body.singleResult.extensions = {
          ...response.body.singleResult.extensions,
          cost: {
            sqlRoundTrips: stats.roundTrips,
            rows: stats.rows,
            shards: [...stats.shards].sort((a, b) => a - b),
            hosts: stats.hosts.size,
            cache: contextValue.op.cache.layers,
          },
        };
      },
    };
  },
});

/**
 * Apollo Server with the gateway's error policy: our errors keep their code and message; errors
 * about the request keep graphql-js's message; anything else is logged and becomes a bare
 * INTERNAL_SERVER_ERROR — no SQL, stack, host or library message ever reaches a client.
 */
export function createApolloServer(opts: ApolloOptions): ApolloServer<GatewayContext & { showCost: boolean }> {
  const formatError = (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const original = unwrapResolverError(error);
    const base = { ...(formatted.locations ? { locations: formatted.locations } : {}), ...(formatted.path ? { path: formatted.path } : {}) };
    if (isShardqlError(original)) {
      return { ...base, message: original.message, extensions: { code: original.code, ...original.details, ...(original.retryable ? { retryable: true } : {}) } };
    }
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && REQUEST_ERROR_CODES.has(code)) {
      const message = opts.development ? formatted.message : formatted.message.replace(/ Did you mean .*$/, '');
      return { ...base, message, extensions: { code } };
    }
    if (original instanceof GraphQLError && typeof original.extensions?.code === 'string' && REQUEST_ERROR_CODES.has(original.extensions.code)) {
      return { ...base, message: original.message, extensions: { code: original.extensions.code } };
    }
    opts.log('internal_error', { error: original instanceof Error ? `${original.name}: ${original.message}` : String(original), stack: original instanceof Error ? original.stack : undefined, path: formatted.path });
    return { ...base, message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } };
  };

  return new ApolloServer<GatewayContext & { showCost: boolean }>({
    typeDefs: loadTypeDefs(),
    resolvers: resolvers as never,
    formatError,
    introspection: opts.development,
    includeStacktraceInErrorResponses: false,
    hideSchemaDetailsFromClientErrors: !opts.development,
    allowBatchedHttpRequests: false,
    // The CLI owns SIGINT/SIGTERM and drains in-flight requests before stopping Apollo.
    stopOnTerminationSignals: false,
    csrfPrevention: true,
    persistedQueries: { cache: opts.apqCache, ttl: 7 * 24 * 3600 },
    validationRules: [depthLimit(opts.maxDepth ?? 12)],
    plugins: [ApolloServerPluginLandingPageDisabled(), costPlugin(opts.onResponse)],
  });
}
