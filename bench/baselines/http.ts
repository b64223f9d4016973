/**
 * GraphQL over node:http with plain graphql-js (no Apollo): what the floor and the flat baseline
 * serve through. Each distinct query text is parsed and validated once and then only executed —
 * as Apollo does with its document cache — so the floor pays no parse/validate that ours doesn't.
 * `x-shardql-cost: 1` adds `extensions.cost.sqlRoundTrips`, like the gateway.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { execute, parse, validate, GraphQLError, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
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
    const result: ExecutionResult = await execute({
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
