/**
 * GraphQL over node:http with plain graphql-js (no Apollo): what the floors and the flat baseline
 * serve through. Each distinct query text is parsed and validated once and then only executed —
 * as Apollo does with its document cache — so the floor pays no parse/validate that ours doesn't.
 * `executor: 'jit'` runs each document compiled once by graphql-jit, as the gateway does (the
 * `floor-jit` baseline: what this executor does with no caches, no network and no Apollo).
 * `x-shardql-cost: 1` adds `extensions.cost.sqlRoundTrips`, like the gateway.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { execute, getVariableValues, parse, validate, GraphQLError, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { viewerFromAuthorization } from '../../src/auth/tokens.ts';
import type { Source, SourceContext } from './source.ts';

export interface BaselineServer {
  readonly url: string;
  stop(): Promise<void>;
}

export interface ServeOptions {
  readonly schema: GraphQLSchema;
  readonly jwtSecret: string;
  /** A source for one request (the flat one holds per-request loaders). */
  readonly source: (ctx: SourceContext) => Source;
  /** graphql-js's execute() (default) or graphql-jit's compiled query per document. */
  readonly executor?: 'js' | 'jit';
}

/** A document's operation compiled by graphql-jit once, per operation name. */
function jitRunner(schema: GraphQLSchema): (doc: DocumentNode, operationName: string | undefined, variables: Record<string, unknown>, ctx: SourceContext) => Promise<ExecutionResult> {
  const compiled = new WeakMap<DocumentNode, Map<string, CompiledQuery | ExecutionResult>>();
  return async (doc, operationName, variables, ctx) => {
    let byName = compiled.get(doc);
    if (!byName) compiled.set(doc, (byName = new Map()));
    let c = byName.get(operationName ?? '');
    if (!c) byName.set(operationName ?? '', (c = compileQuery(schema, doc, operationName)));
    if (!isCompiledQuery(c)) return c;
    // Variables coerced by graphql-js first, as the gateway's executor does.
    const op = doc.definitions.find((d) => d.kind === 'OperationDefinition' && (operationName === undefined || d.name?.value === operationName));
    if (op?.kind === 'OperationDefinition' && op.variableDefinitions?.length) {
      const coerced = getVariableValues(schema, op.variableDefinitions, variables, { maxErrors: 50 });
      if (coerced.errors) return { errors: coerced.errors };
    }
    return (await c.query(undefined, ctx, variables)) as ExecutionResult;
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > 1_000_000) throw new Error('body too large');
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function format(errors: readonly GraphQLError[]): unknown[] {
  return errors.map((e) => {
    const original = e.originalError as { code?: unknown } | undefined;
    const code = e.extensions?.code ?? original?.code ?? 'INTERNAL_SERVER_ERROR';
    return { message: e.message, ...(e.path ? { path: e.path } : {}), extensions: { code } };
  });
}

export async function serveGraphql(opts: ServeOptions): Promise<BaselineServer> {
  const jit = opts.executor === 'jit' ? jitRunner(opts.schema) : undefined;
  const documents = new Map<string, DocumentNode | readonly GraphQLError[]>();
  const documentOf = (query: string): DocumentNode | readonly GraphQLError[] => {
    let doc = documents.get(query);
    if (doc === undefined) {
      try {
        const parsed = parse(query);
        const errors = validate(opts.schema, parsed);
        doc = errors.length > 0 ? errors : parsed;
      } catch (err) {
        doc = [err instanceof GraphQLError ? err : new GraphQLError(String(err))];
      }
      if (documents.size < 1000) documents.set(query, doc);
    }
    return doc;
  };

  const handle = async (req: IncomingMessage): Promise<{ status: number; body: unknown }> => {
    if (req.method !== 'POST' || !req.url?.startsWith('/graphql')) return { status: 404, body: { errors: [{ message: 'POST /graphql' }] } };
    const payload = JSON.parse(await readBody(req)) as { query?: string; variables?: Record<string, unknown>; operationName?: string };
    const doc = documentOf(String(payload.query ?? ''));
    if (Array.isArray(doc)) return { status: 400, body: { errors: format(doc as readonly GraphQLError[]) } };
    let viewerId: bigint | undefined;
    try {
      viewerId = await viewerFromAuthorization(opts.jwtSecret, req.headers.authorization);
    } catch (err) {
      return { status: 401, body: { errors: [{ message: (err as Error).message, extensions: { code: 'UNAUTHENTICATED' } }] } };
    }
    const ctx: SourceContext = { viewerId, sqlRoundTrips: 0, src: undefined as unknown as Source };
    (ctx as { src: Source }).src = opts.source(ctx);
    const result: ExecutionResult = jit
      ? await jit(doc as DocumentNode, payload.operationName ?? undefined, payload.variables ?? {}, ctx)
      : await execute({
          schema: opts.schema,
          document: doc as DocumentNode,
          variableValues: payload.variables ?? {},
          ...(payload.operationName ? { operationName: payload.operationName } : {}),
          contextValue: ctx,
        });
    const body: Record<string, unknown> = { data: result.data ?? null };
    if (result.errors) body.errors = format(result.errors);
    if (req.headers['x-shardql-cost'] === '1') body.extensions = { cost: { sqlRoundTrips: ctx.sqlRoundTrips } };
    return { status: 200, body };
  };

  const server: Server = createServer((req, res) => {
    handle(req).then(
      ({ status, body }) => {
        const text = JSON.stringify(body);
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      },
      (err: unknown) => {
        const text = JSON.stringify({ errors: [{ message: String(err), extensions: { code: 'INTERNAL_SERVER_ERROR' } }] });
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(text);
      },
    );
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
