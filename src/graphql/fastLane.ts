import { createRequire } from 'node:module';
import { GraphQLError, type DocumentNode, type GraphQLFormattedError, type GraphQLSchema, type OperationDefinitionNode } from 'graphql';
import type { ApolloServerPlugin } from '@apollo/server';
import type { GatewayContext } from './context.ts';
import type { CostEstimate } from './cost.ts';
import type { JitRunner } from './executor.ts';
import { nameOperation, settleErrors, type CostGate, type PolicyLog } from './operationPolicy.ts';

/**
 * The fast lane: an operation (a query or a mutation) Apollo has already parsed, validated and
 * resolved once, asked again as a plain JSON POST, is answered here without Apollo's request
 * pipeline — the same executor (JitRunner), the same cost check, error formatting, schema privacy,
 * error counts and metrics (operationPolicy.ts), the same bytes out. On a warm small read Apollo's
 * pipeline (its plugin dispatch, hooks and promises, the request and response objects, content
 * negotiation) was 12–18% of the gateway's CPU, the largest block left between it and the bare
 * executor (floor-jit).
 *
 * Anything else takes Apollo's path, which answers it as before: a document not seen yet, GET, a
 * batch, any `extensions` (persisted queries), an Accept that wants neither JSON type, a traced
 * request (Apollo's pipeline opens its operation span), an operation the cost check refuses, and
 * variables the executor cannot coerce (nothing has run then; Apollo tells them).
 */
export type FastContext = GatewayContext & { showCost: boolean };

export interface FastAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** The JSON body, as Apollo writes it (errors, data, extensions; a newline). */
  readonly body: string;
}

export interface FastLaneOptions {
  readonly schema: GraphQLSchema;
  readonly runner: JitRunner;
  readonly cost: CostGate;
  /** The gateway's error policy, as Apollo is given it (`formatError`). */
  readonly formatError: (formatted: GraphQLFormattedError, error: unknown) => GraphQLFormattedError;
  readonly schemaPrivacy: boolean;
  readonly log: PolicyLog;
}

/** A document Apollo parsed, validated and resolved to a query or a mutation. */
interface Prepared {
  readonly document: DocumentNode;
  readonly operation: OperationDefinitionNode;
}

/** Query texts kept (each at most MAX_TEXT characters); all are forgotten when full. */
const MAX_TEXTS = 1000;
const MAX_TEXT = 16_384;

/** The media types Apollo answers a single result with (its MEDIA_TYPES), in its order of choice. */
const APPLICATION_JSON = 'application/json; charset=utf-8';
const GRAPHQL_RESPONSE_JSON = 'application/graphql-response+json; charset=utf-8';
const JSON_CALLBACK = 'application/json; callbackSpec=1.0; charset=utf-8';
/** The Negotiator Apollo chooses with, resolved from it. */
const Negotiator = createRequire(import.meta.resolve('@apollo/server'))('negotiator') as new (req: { headers: { accept: string } }) => { mediaType(types: string[]): string | undefined };

export class FastLane {
  readonly #opts: FastLaneOptions;
  /** Query text → the operation name as the request gave it ('' for none) → its prepared document. */
  readonly #prepared = new Map<string, Map<string, Prepared>>();
  /** Accept value → the content type Apollo would choose (null: one the fast lane leaves to Apollo). */
  readonly #contentTypes = new Map<string, string | null>();

  constructor(opts: FastLaneOptions) {
    this.#opts = opts;
  }

  /** The Apollo plugin that shows the fast lane each operation Apollo has parsed, validated and resolved. */
  learn(): ApolloServerPlugin<FastContext> {
    return {
      requestDidStart: async () => ({
        didResolveOperation: async ({ request, source, document, operation }) => {
          if ((operation?.operation !== 'query' && operation?.operation !== 'mutation') || typeof request.query !== 'string' || request.query !== source || source.length > MAX_TEXT) return;
          let byName = this.#prepared.get(source);
          if (!byName) {
            if (this.#prepared.size >= MAX_TEXTS) this.#prepared.clear();
            this.#prepared.set(source, (byName = new Map()));
          }
          byName.set(request.operationName ?? '', { document, operation });
        },
      }),
    };
  }

  /** The answer to a JSON POST body, or undefined: Apollo's path answers it. */
  async answer(body: Record<string, unknown>, accept: string | undefined, context: FastContext): Promise<FastAnswer | undefined> {
    const { query, operationName, variables, extensions } = body;
    if (typeof query !== 'string' || (extensions !== undefined && extensions !== null)) return undefined;
    if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return undefined;
    if (variables !== undefined && variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) return undefined;
    const prepared = this.#prepared.get(query)?.get(operationName ?? '');
    if (!prepared || context.request?.trace) return undefined;
    const contentType = this.#contentType(accept);
    if (contentType === null) return undefined;
    const started = process.hrtime.bigint();
    const { document, operation } = prepared;
    const raw = (variables ?? {}) as Record<string, unknown>;
    let estimate: CostEstimate;
    try {
      estimate = this.#opts.cost.check(this.#opts.schema, document, operation, raw, context);
    } catch {
      return undefined;
    }
    const name = operation.name?.value;
    const result = await this.#opts.runner.run(document, operation, name, context, raw);
    if (!('data' in result)) return undefined;
    nameOperation(context.request, operation, name ?? null);
    const formatted = result.errors ? this.#format(result.errors) : undefined;
    const single: { errors?: readonly GraphQLFormattedError[] | undefined; data?: unknown; extensions?: Record<string, unknown> } = {
      ...result,
      errors: settleErrors(formatted?.errors, context.request, this.#opts),
    };
    this.#opts.cost.respond(context, started, (result.errors?.length ?? 0) > 0, single, estimate);
    return {
      status: formatted?.status ?? 200,
      headers: { ...formatted?.headers, 'content-type': contentType },
      body: `${JSON.stringify({ errors: single.errors, data: single.data, extensions: single.extensions })}\n`,
    };
  }

  /** As Apollo (runHttpQuery, chooseContentTypeForSingleResultResponse), kept per Accept value (64 at most). */
  #contentType(accept: string | undefined): string | null {
    if (!accept) return APPLICATION_JSON;
    let type = this.#contentTypes.get(accept);
    if (type === undefined) {
      const chosen = new Negotiator({ headers: { accept } }).mediaType([APPLICATION_JSON, GRAPHQL_RESPONSE_JSON, JSON_CALLBACK]);
      type = chosen === APPLICATION_JSON || chosen === GRAPHQL_RESPONSE_JSON ? chosen : null;
      if (this.#contentTypes.size < 64) this.#contentTypes.set(accept, type);
    }
    return type;
  }

  /**
   * Execution errors as Apollo formats them (errorNormalize.js, stack traces off): a code
   * (INTERNAL_SERVER_ERROR when none), an `extensions.http` taken out into the response's status
   * and headers, then the gateway's formatError; a formatter that throws gives a bare internal error.
   */
  #format(errors: readonly GraphQLError[]): { errors: GraphQLFormattedError[]; status: number | undefined; headers: Record<string, string> } {
    let status: number | undefined;
    const headers: Record<string, string> = {};
    const out = errors.map((error) => {
      try {
        const g = error instanceof GraphQLError ? error : new GraphQLError(String((error as Error)?.message ?? error), { originalError: error as Error });
        const extensions: Record<string, unknown> = { ...g.extensions, code: g.extensions.code ?? 'INTERNAL_SERVER_ERROR' };
        const http = extensions.http as { status?: unknown; headers?: unknown } | undefined;
        if (http && typeof http === 'object' && (!('status' in http) || typeof http.status === 'number') && (!('headers' in http) || http.headers instanceof Map)) {
          if (http.status) status = http.status as number;
          if (http.headers) for (const [k, v] of http.headers as Map<string, string>) headers[k.toLowerCase()] = v;
          delete extensions.http;
        }
        return this.#opts.formatError({ ...g.toJSON(), extensions }, error);
      } catch {
        return { message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } };
      }
    });
    return { errors: out, status, headers };
  }
}
