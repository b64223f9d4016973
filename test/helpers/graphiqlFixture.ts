/**
 * A stand-in for the gateway's HTTP layer, for the GraphiQL browser test: a plain node:http server
 * on 127.0.0.1 serving the GraphiQL page and assets from src/http/graphiql.ts and a real Apollo
 * Server 5 at /graphql through `executeHTTPGraphQLRequest`, with the schema
 * `type Query { hello(name: String): String }`. To be replaced by the real gateway later.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloServer, HeaderMap } from '@apollo/server';
import { graphiqlAsset, graphiqlPage, GRAPHIQL_CONTENT_SECURITY_POLICY } from '../../src/http/graphiql.ts';
import type { GraphiqlPageOptions } from '../../src/http/graphiql.ts';

export interface GraphiqlFixtureOptions {
  readonly defaultQuery?: string;
  readonly defaultHeaders?: Readonly<Record<string, string>>;
  readonly title?: string;
  /** Send GRAPHIQL_CONTENT_SECURITY_POLICY with the page (default true). */
  readonly csp?: boolean;
}

/** One request that reached /graphql. */
export interface RecordedGraphqlRequest {
  readonly method: string;
  readonly authorization: string | undefined;
  readonly body: unknown;
}

export interface GraphiqlFixture {
  readonly baseUrl: string;
  readonly graphqlRequests: readonly RecordedGraphqlRequest[];
  close(): Promise<void>;
}

const PAGE_PATH = '/graphiql';
const ASSET_PREFIX = '/graphiql/assets';
const ENDPOINT = '/graphql';

const typeDefs = `type Query { hello(name: String): String }`;
const resolvers = {
  Query: {
    hello: (_parent: unknown, args: { name?: string | null }): string => `Hello ${args.name ?? 'world'}`,
  },
};

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, status: number, contentType: string, body: string | Buffer): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

export async function startGraphiqlFixture(options: GraphiqlFixtureOptions = {}): Promise<GraphiqlFixture> {
  const apollo = new ApolloServer({ typeDefs, resolvers });
  await apollo.start();
  const graphqlRequests: RecordedGraphqlRequest[] = [];
  const pageOptions: GraphiqlPageOptions = {
    endpoint: ENDPOINT,
    assetPrefix: ASSET_PREFIX,
    ...(options.defaultQuery !== undefined ? { defaultQuery: options.defaultQuery } : {}),
    ...(options.defaultHeaders !== undefined ? { defaultHeaders: options.defaultHeaders } : {}),
    ...(options.title !== undefined ? { title: options.title } : {}),
  };

  async function handleGraphql(req: IncomingMessage, res: ServerResponse, search: string): Promise<void> {
    const headers = new HeaderMap();
    for (const [key, value] of Object.entries(req.headers)) {
      if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
    }
    const raw = await readBody(req);
    let body: unknown = raw;
    if (raw !== '' && (headers.get('content-type') ?? '').includes('json')) {
      try {
        body = JSON.parse(raw);
      } catch {
        send(res, 400, 'text/plain; charset=utf-8', 'invalid JSON body');
        return;
      }
    }
    graphqlRequests.push({ method: req.method ?? '', authorization: headers.get('authorization'), body });
    const result = await apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: req.method ?? 'GET', headers, search, body },
      context: async () => ({}),
    });
    for (const [key, value] of result.headers) res.setHeader(key, value);
    res.statusCode = result.status ?? 200;
    if (result.body.kind === 'complete') {
      res.end(result.body.string);
    } else {
      for await (const chunk of result.body.asyncIterator) res.write(chunk);
      res.end();
    }
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const handle = async (): Promise<void> => {
      if (url.pathname === ENDPOINT) return handleGraphql(req, res, url.search);
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed');
      if (url.pathname === PAGE_PATH) {
        if (options.csp !== false) res.setHeader('content-security-policy', GRAPHIQL_CONTENT_SECURITY_POLICY);
        res.setHeader('cache-control', 'no-store');
        return send(res, 200, 'text/html; charset=utf-8', graphiqlPage(pageOptions));
      }
      if (url.pathname.startsWith(`${ASSET_PREFIX}/`)) {
        const asset = graphiqlAsset(url.pathname.slice(ASSET_PREFIX.length + 1));
        if (asset !== undefined) {
          res.setHeader('etag', asset.etag);
          res.setHeader('cache-control', 'no-cache');
          if (req.headers['if-none-match'] === asset.etag) {
            res.writeHead(304);
            res.end();
            return;
          }
          return send(res, 200, asset.contentType, asset.body);
        }
      }
      return send(res, 404, 'text/plain; charset=utf-8', 'not found');
    };
    handle().catch((err: unknown) => {
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', String(err));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    graphqlRequests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await apollo.stop();
    },
  };
}
