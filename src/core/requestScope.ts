import type { RequestTrace } from './trace.ts';

/**
 * What the gateway knows about one HTTP request from its first byte to its log line: made by the
 * HTTP handler (src/http/handler.ts), filled in by the layers the request passes through (the
 * GraphQL layer names the operation and counts its errors), read back for the one log line every
 * request ends with. Here, below both, so that the GraphQL layer does not import the HTTP one.
 */
export interface RequestScope {
  /** From the request's `x-request-id` when it is a plausible ID, else made by the handler (http/requestId.ts); sent back in `x-request-id`. */
  readonly id: string;
  /** The client's address (after trusted proxies, see http/clientAddress.ts): rate limits and logs use it. */
  readonly address: string;
  /** The request's root span; undefined when tracing is off. */
  readonly trace: RequestTrace | undefined;
  /** Name(s) of the GraphQL operation(s) run, as the log shows them. */
  operation: string | undefined;
  /** Error codes of the response, with how often each came. */
  readonly errors: Record<string, number>;
  /** The request's SQL and cache traffic, once the context that counts them is built. */
  usage: RequestUsage | undefined;
  /** Answered by the fast lane (graphql/fastLane.ts), not Apollo's pipeline: the log line says so. */
  fastLane?: boolean;
}

/** Structurally the SqlStats and CacheStats of the request's context. */
export interface RequestUsage {
  readonly stats: { readonly roundTrips: number; readonly rows: number };
  readonly cache: { readonly layers: Readonly<Record<string, { readonly roundTrips: number }>> };
}

export function countError(scope: RequestScope, code: string): void {
  scope.errors[code] = (scope.errors[code] ?? 0) + 1;
}
