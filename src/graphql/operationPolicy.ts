import { getVariableValues, type DocumentNode, type GraphQLFormattedError, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import type { RequestScope } from '../core/requestScope.ts';
import type { GatewayContext } from './context.ts';
import { checkCost, estimateCost, type CostBudget, type CostEstimate, type EventCost } from './cost.ts';

/**
 * What every GraphQL request goes through whichever way it runs (Apollo's pipeline, apollo.ts; or
 * the fast lane, fastLane.ts): its name for the log line, the errors it may send and how they are
 * counted, and its cost checked before and reported after.
 */

/** How the gateway logs (log.ts's shape). */
export type PolicyLog = (event: string, fields: Record<string, unknown>) => void;
/** Called once per request with its duration and outcome (metrics). */
export type OnResponse = (seconds: number, failed: boolean, ctx: GatewayContext) => void;

/**
 * What a client is told, with schema privacy on, when its operation does not validate (or its
 * variables do not fit it): the same answer whichever names were wrong, right or missing, so
 * probing the schema by its error messages learns nothing.
 */
export const PRIVATE_VALIDATION_ERROR = {
  message: 'The operation is not valid against this API (see the request ID in the server log)',
  extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
} as const;
export const PRIVATE_VARIABLES_ERROR = {
  message: "The operation's variables do not match its variable definitions (see the request ID in the server log)",
  extensions: { code: 'BAD_USER_INPUT' },
} as const;

/** Names a request's operation for its log line (a batch's, joined by commas); returns the name. */
export function nameOperation(scope: RequestScope | undefined, operation: OperationDefinitionNode, operationName: string | null | undefined): string {
  const name = operationName ?? operation.name?.value ?? '(anonymous)';
  if (scope) scope.operation = scope.operation === undefined ? name : `${scope.operation},${name}`;
  return name;
}

/**
 * The errors a response sends: with schema privacy, validation and variable errors become one
 * generic error (the real messages logged under the request ID); each is counted by code for the
 * request's log line.
 */
export function settleErrors(
  errors: readonly GraphQLFormattedError[] | undefined,
  scope: RequestScope | undefined,
  opts: { readonly schemaPrivacy: boolean; readonly log: PolicyLog },
): readonly GraphQLFormattedError[] | undefined {
  let sent = errors;
  if (errors && opts.schemaPrivacy) {
    const invalid = errors.some((e) => e.extensions?.code === 'GRAPHQL_VALIDATION_FAILED');
    const variables = !invalid && errors.some((e) => e.extensions?.code === 'BAD_USER_INPUT');
    if (invalid || variables) {
      opts.log('graphql_invalid', { requestId: scope?.id, errors: errors.map((e) => `${String(e.extensions?.code)}: ${e.message}`) });
      sent = [invalid ? PRIVATE_VALIDATION_ERROR : PRIVATE_VARIABLES_ERROR];
    }
  }
  if (scope) {
    for (const e of sent ?? []) {
      const code = String(e.extensions?.code ?? 'INTERNAL_SERVER_ERROR');
      scope.errors[code] = (scope.errors[code] ?? 0) + 1;
    }
  }
  return sent;
}

/**
 * Cost of each response in SQL and cache traffic, in `extensions.cost`: always in development, on
 * request (`x-shardql-cost: 1`) otherwise. Also feeds the metrics. Before execution, refuses an
 * operation whose estimated cost (cost.ts) is over budget, or whose page sizes are out of range.
 */
export class CostGate {
  // An estimate depends only on the document, the operation, the variables as sent and the host
  // count: the same page asked again is neither coerced nor walked again. Apollo keeps one
  // DocumentNode per query text.
  readonly #estimates = new WeakMap<DocumentNode, Map<string, CostEstimate>>();
  readonly #budget: CostBudget;
  readonly #events: EventCost | undefined;
  readonly #onResponse: OnResponse | undefined;

  constructor(budget: CostBudget, events: EventCost | undefined, onResponse: OnResponse | undefined) {
    this.#budget = budget;
    this.#events = events;
    this.#onResponse = onResponse;
  }

  /** The operation's estimate; throws ShardqlError when it is over budget or a page size is out of range. */
  check(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, raw: Record<string, unknown>, contextValue: GatewayContext): CostEstimate {
    const hosts = Object.keys(contextValue.topology.doc.hosts).length;
    let byArgs = this.#estimates.get(document);
    if (!byArgs) this.#estimates.set(document, (byArgs = new Map()));
    const key = `${hosts}|${operation.name?.value ?? ''}|${JSON.stringify(raw)}`;
    let e = byArgs.get(key);
    if (e === undefined) {
      // Bad variables fail execution before any resolver runs; cost what can be read meanwhile.
      const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], raw, { maxErrors: 1 });
      e = estimateCost({ schema, document, operation, hosts, feed: contextValue.feed?.cost, ...(this.#events ? { events: this.#events } : {}), variables: coerced.coerced ?? {} });
      if (byArgs.size >= 1000) byArgs.clear();
      byArgs.set(key, e);
    }
    checkCost(e, this.#budget);
    return e;
  }

  /** At the response: the metrics, and `extensions.cost` on `result` when the request asked for it. */
  respond(contextValue: (GatewayContext & { showCost: boolean }) | undefined, startedNs: bigint, failed: boolean, result: { extensions?: Record<string, unknown> } | undefined, estimate: CostEstimate | undefined): void {
    if (contextValue?.op) this.#onResponse?.(Number(process.hrtime.bigint() - startedNs) / 1e9, failed, contextValue);
    if (!contextValue?.showCost || !result) return;
    const stats = contextValue.op.stats;
    result.extensions = {
      ...result.extensions,
      cost: {
        sqlRoundTrips: stats.roundTrips,
        rows: stats.rows,
        shards: [...stats.shards].sort((a, b) => a - b),
        hosts: stats.hosts.size,
        cache: contextValue.op.cache.layers,
        ...(estimate ? { estimate: { rows: estimate.rows, sqlRoundTrips: estimate.roundTrips } } : {}),
      },
    };
  }
}
