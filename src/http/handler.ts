import type { IncomingMessage, ServerResponse } from 'node:http';
import { HeaderMap, type ApolloServer } from '@apollo/server';
import { catalogueEntry, isShardqlError, ShardqlError, type ClientCode, type ErrorCode } from '../core/errors.ts';
import { graphiqlAsset, graphiqlPage, GRAPHIQL_CONTENT_SECURITY_POLICY } from './graphiql.ts';
import type { PersistedDocuments } from './trustedDocuments.ts';
import { WEB_APP_BASE, webAppContentSecurityPolicy, type WebApp, type WebSignIn } from './webApp.ts';
import type { Log } from '../log.ts';
import type { RequestTracer } from '../core/trace.ts';
import type { FastAnswer } from '../graphql/fastLane.ts';
import type { Admit } from './admission.ts';
import { clientAddress, type TrustedProxies } from './clientAddress.ts';
import { landingPage, LANDING_PAGE_CONTENT_SECURITY_POLICY } from './landingPage.ts';
import { countError, type RequestScope } from '../core/requestScope.ts';
import { requestIdOf } from './requestId.ts';

/** Largest request body accepted, bytes. */
export const MAX_BODY_BYTES = 1_000_000;
/** Most operations in one batched request, when batching is on. */
export const MAX_BATCH_OPERATIONS = 10;

export interface HandlerOptions<TContext extends object> {
  readonly apollo: ApolloServer<TContext>;
  /**
   * Answers a JSON POST of an operation Apollo has seen before, past its pipeline, alike; undefined
   * leaves the request to Apollo (graphql/fastLane.ts).
   */
  readonly fastLane?: { answer(body: Record<string, unknown>, accept: string | undefined, context: TContext): Promise<FastAnswer | undefined> } | undefined;
  /**
   * Builds the per-request context; throws ShardqlError (e.g. UNAUTHENTICATED) to refuse the
   * request. It may fill in `scope.usage` (SQL and cache counters) for the request's log line.
   */
  readonly context: (req: IncomingMessage, scope: RequestScope) => Promise<TContext>;
  /** Trusted documents: only this manifest's operations run. */
  readonly trusted?: PersistedDocuments | undefined;
  /** Known documents (ignored with `trusted`): this manifest's IDs run beside free-form queries. */
  readonly known?: PersistedDocuments | undefined;
  /**
   * The web app, served at /app (any path under it: the app routes in the browser) and
   * /app/assets/; `token` (development only) signs the page in as the demo user.
   */
  readonly webApp?: { readonly app: WebApp; readonly token?: string | undefined; readonly signIn?: WebSignIn | undefined } | undefined;
  /** GraphiQL (development): served at /graphiql and /, and to a browser opening /graphql. */
  readonly graphiql?: { readonly defaultQuery: string; readonly defaultHeaders?: Record<string, string> } | undefined;
  /**
   * Without GraphiQL, a browser opening /graphql (GET, Accept: text/html) gets a short page saying
   * where the API is (true, the default) or a 404 (false).
   */
  readonly landingPage?: boolean;
  readonly ready: () => Promise<{ ok: boolean; details: Record<string, unknown> }>;
  /** Prometheus exposition for /metrics. */
  readonly metrics?: () => Promise<{ contentType: string; body: string }>;
  readonly log: Log;
  /** Accept a JSON array of operations (at most MAX_BATCH_OPERATIONS). Default false. */
  readonly batching?: boolean;
  /**
   * Admission (rate limits), after the context is built and before GraphQL runs: throws
   * ShardqlError RATE_LIMITED with `retryAfterSeconds` to refuse. `operations`: 1, or the batch size.
   */
  readonly admit?: Admit | undefined;
  /** The viewer of a built context (for admission and the log line). */
  readonly viewerOf?: (context: TContext) => bigint | undefined;
  /** Proxies whose X-Forwarded-For is believed (clientAddress.ts). Unset: the socket's address. */
  readonly trustedProxies?: TrustedProxies | undefined;
  /** Traces: a root span per /graphql request, continuing the caller's `traceparent`. Unset: none. */
  readonly tracer?: RequestTracer | undefined;
}

/**
 * A whole body with its length, so that node:http sends the head and body in one write, not chunked
 * (a writev of head, chunk size, body and terminator).
 */
function sendComplete(res: ServerResponse, status: number, headers: Record<string, string>, body: string): void {
  res.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  sendComplete(res, status, { 'content-type': 'application/json; charset=utf-8', ...headers }, JSON.stringify(body));
}

/**
 * A request refused before GraphQL runs: a GraphQL-shaped error body with a stable code. A
 * `retryAfterSeconds` among `details` is also sent as the Retry-After header.
 */
export function sendError(res: ServerResponse, code: ClientCode, message: string, status = catalogueEntry(code).status, details: Record<string, unknown> = {}): void {
  const retryAfter = details.retryAfterSeconds;
  const extensions = { code, ...details, ...(catalogueEntry(code).retryable ? { retryable: true } : {}) };
  sendJson(res, status, { errors: [{ message, extensions }] }, typeof retryAfter === 'number' ? { 'retry-after': String(retryAfter) } : {});
}

async function readBody(req: IncomingMessage): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > MAX_BODY_BYTES) throw new ShardqlError('INVALID_ARGUMENT', `Expected a request body of at most ${MAX_BODY_BYTES} bytes`, { status: 413 });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new ShardqlError('INVALID_ARGUMENT', `Expected a request body of at most ${MAX_BODY_BYTES} bytes`, { status: 413 });
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Whether a request is a browser navigating (it asks for HTML), as Apollo Server and GraphQL Yoga tell. */
function wantsHtml(req: IncomingMessage): boolean {
  return req.method === 'GET' && (req.headers.accept ?? '').includes('text/html');
}

/**
 * The gateway's HTTP surface: /graphql (Apollo; a page for browsers), /graphiql (served from
 * local assets), /app (the web app, when built and configured), /healthz, /readyz, /metrics. Everything refused here is refused before any SQL
 * runs. Every /graphql request gets a request ID (`x-request-id`), a root span when traced, and
 * ends with one log line.
 */
export function createHandler<TContext extends object>(opts: HandlerOptions<TContext>): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://gateway');
    if (url.pathname === '/graphql') return graphqlRequest(req, res, url);
    const started = process.hrtime.bigint();
    await other(req, res, url);
    // Probes and scrapes (/healthz, /readyz, /metrics) come every few seconds: their lines are debug.
    opts.log('request', { method: req.method, path: url.pathname.slice(0, 64), status: res.statusCode, durationMs: Number(process.hrtime.bigint() - started) / 1e6 }, 'debug');
  };

  async function other(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    try {
      if (url.pathname === '/healthz') return sendJson(res, 200, { status: 'ok' });
      if (url.pathname === '/readyz') {
        const r = await opts.ready();
        return sendJson(res, r.ok ? 200 : 503, { status: r.ok ? 'ready' : 'not ready', ...r.details });
      }
      if (url.pathname === '/metrics' && opts.metrics) {
        const m = await opts.metrics();
        res.writeHead(200, { 'content-type': m.contentType });
        return void res.end(m.body);
      }
      if (opts.graphiql && req.method === 'GET' && (url.pathname === '/graphiql' || url.pathname === '/')) return sendGraphiql(res);
      if (opts.webApp && req.method === 'GET' && (url.pathname === WEB_APP_BASE || url.pathname.startsWith(`${WEB_APP_BASE}/`))) return sendWebApp(req, res, url.pathname, opts.webApp);
      if (opts.graphiql && req.method === 'GET' && url.pathname.startsWith('/graphiql/assets/')) {
        const asset = graphiqlAsset(url.pathname.slice('/graphiql/assets/'.length));
        if (asset) {
          if (req.headers['if-none-match'] === asset.etag) return void res.writeHead(304).end();
          res.writeHead(200, { 'content-type': asset.contentType, etag: asset.etag, 'cache-control': 'public, max-age=3600' });
          return void res.end(asset.body);
        }
      }
      const paths = ['/graphql', ...(opts.graphiql ? ['/graphiql'] : []), ...(opts.webApp ? [WEB_APP_BASE] : []), '/healthz', '/readyz', '/metrics'];
      return sendError(res, 'NOT_FOUND', `Expected a path of this gateway (${paths.join(', ')}), got ${JSON.stringify(url.pathname.slice(0, 64))}`);
    } catch (err) {
      failed(res, err, undefined);
    }
  }

  function sendGraphiql(res: ServerResponse): void {
    const html = graphiqlPage({ endpoint: '/graphql', assetPrefix: '/graphiql/assets', title: 'shardql', ...opts.graphiql! });
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': GRAPHIQL_CONTENT_SECURITY_POLICY, 'cache-control': 'no-store' });
    res.end(html);
  }

  function sendWebApp(req: IncomingMessage, res: ServerResponse, path: string, web: NonNullable<HandlerOptions<TContext>['webApp']>): void {
    const assetPrefix = `${WEB_APP_BASE}/assets/`;
    if (path.startsWith(assetPrefix)) {
      const asset = web.app.asset(path.slice(assetPrefix.length));
      if (!asset) return sendError(res, 'NOT_FOUND', `Expected an asset of the web app, got ${JSON.stringify(path.slice(0, 64))}`);
      if (req.headers['if-none-match'] === asset.etag) return void res.writeHead(304).end();
      res.writeHead(200, { 'content-type': asset.contentType, etag: asset.etag, 'cache-control': 'public, max-age=3600' });
      return void res.end(asset.body);
    }
    const html = web.app.page({ endpoint: '/graphql', token: web.token, signIn: web.signIn });
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': webAppContentSecurityPolicy(web.signIn), 'cache-control': 'no-store' });
    res.end(html);
  }

  /** A request that failed before or outside GraphQL: our errors keep their code; anything else is logged and a bare 500. */
  function failed(res: ServerResponse, err: unknown, scope: RequestScope | undefined): void {
    if (res.headersSent) return void res.destroy();
    if (isShardqlError(err)) {
      if (scope) countError(scope, err.code);
      const { status: declared, ...details } = err.details;
      const status = typeof declared === 'number' ? declared : catalogueEntry(err.code).status;
      return sendError(res, err.code, err.message, status, details);
    }
    if (scope) countError(scope, 'INTERNAL_SERVER_ERROR');
    opts.log('http_error', {
      ...(scope ? { requestId: scope.id } : {}),
      error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
      stack: err instanceof Error ? err.stack : undefined,
    });
    sendError(res, 'INTERNAL_SERVER_ERROR', 'Internal server error', 500);
  }

  async function graphqlRequest(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const started = process.hrtime.bigint();
    const method = req.method ?? 'GET';
    const address = clientAddress(req, opts.trustedProxies);
    const scope: RequestScope = {
      id: requestIdOf(req.headers['x-request-id']),
      address,
      trace: opts.tracer?.startRequest(req.headers, `${method} /graphql`, { 'http.request.method': method, 'url.path': '/graphql', 'client.address': address }),
      operation: undefined,
      errors: {},
      usage: undefined,
    };
    res.setHeader('x-request-id', scope.id);
    let viewer: bigint | undefined;
    try {
      viewer = await graphql(req, res, url, scope);
    } catch (err) {
      failed(res, err, scope);
    }
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const status = res.statusCode;
    const usage = scope.usage;
    opts.log(
      'request',
      {
        requestId: scope.id,
        method,
        status,
        durationMs: Math.round(ms * 100) / 100,
        client: scope.address,
        ...(scope.operation !== undefined ? { operation: scope.operation } : {}),
        ...(scope.fastLane ? { fastLane: true } : {}),
        ...(viewer !== undefined ? { viewer: viewer.toString() } : {}),
        ...(usage
          ? {
              sqlRoundTrips: usage.stats.roundTrips,
              sqlRows: usage.stats.rows,
              cacheRoundTrips: { memcached: usage.cache.layers.memcached?.roundTrips ?? 0, redis: usage.cache.layers.redis?.roundTrips ?? 0 },
            }
          : {}),
        ...(Object.keys(scope.errors).length > 0 ? { errors: scope.errors } : {}),
        ...(scope.trace ? { traceId: scope.trace.traceId } : {}),
      },
      status >= 500 ? 'error' : 'info',
    );
    scope.trace?.end({ 'http.response.status_code': status }, status >= 500 ? { code: 'INTERNAL_SERVER_ERROR' } : undefined);
  }

  /** Serves one /graphql request; returns its viewer, if the context was built. */
  async function graphql(req: IncomingMessage, res: ServerResponse, url: URL, scope: RequestScope): Promise<bigint | undefined> {
    if (wantsHtml(req)) {
      if (opts.graphiql) return void sendGraphiql(res);
      if (opts.landingPage ?? true) {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': LANDING_PAGE_CONTENT_SECURITY_POLICY, 'cache-control': 'public, max-age=300' });
        return void res.end(landingPage('/graphql'));
      }
      countError(scope, 'NOT_FOUND');
      return void sendError(res, 'NOT_FOUND', 'Expected a GraphQL request: POST /graphql with a JSON body');
    }
    let body: unknown = undefined;
    const refuse = (code: ErrorCode, message: string, status?: number): undefined => {
      countError(scope, code);
      sendError(res, code, message, status);
      return undefined;
    };
    if (req.method === 'POST') {
      const text = await readBody(req);
      const type = req.headers['content-type'] ?? '';
      if (type.startsWith('application/json') || type.startsWith('application/graphql-response+json')) {
        try {
          body = JSON.parse(text);
        } catch {
          return refuse('INVALID_ARGUMENT', 'Expected a JSON request body', 400);
        }
      } else {
        body = text;
      }
      if (Array.isArray(body) && !opts.batching) return refuse('INVALID_ARGUMENT', 'Expected one operation per request: batching is off', 400);
      if (Array.isArray(body) && (body.length === 0 || body.length > MAX_BATCH_OPERATIONS)) {
        return refuse('INVALID_ARGUMENT', `Expected a batch of 1 to ${MAX_BATCH_OPERATIONS} operations, got ${body.length}`, 400);
      }
    }
    if (opts.trusted) {
      if (req.method !== 'POST' || typeof body !== 'object' || body === null) {
        return refuse('PERSISTED_QUERY_NOT_ALLOWED', 'This gateway runs only trusted documents, sent by POST as JSON');
      }
      const trusted = opts.trusted;
      body = Array.isArray(body) ? body.map((b: unknown) => trusted.resolve((b ?? {}) as Record<string, unknown>)) : trusted.resolve(body as Record<string, unknown>);
    } else if (opts.known && req.method === 'POST' && typeof body === 'object' && body !== null) {
      const known = opts.known;
      body = Array.isArray(body) ? body.map((b: unknown) => (typeof b === 'object' && b !== null ? known.resolveKnown(b as Record<string, unknown>) : b)) : known.resolveKnown(body as Record<string, unknown>);
    }
    const context = await opts.context(req, scope);
    const viewer = opts.viewerOf?.(context);
    await opts.admit?.(scope, viewer, Array.isArray(body) ? body.length : 1);
    if (opts.fastLane && req.method === 'POST' && typeof body === 'object' && body !== null && !Array.isArray(body)) {
      const fast = await opts.fastLane.answer(body as Record<string, unknown>, req.headers.accept, context);
      if (fast) {
        scope.fastLane = true;
        sendComplete(res, fast.status, fast.headers, fast.body);
        return viewer;
      }
    }
    const headers = new HeaderMap();
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    const response = await opts.apollo.executeHTTPGraphQLRequest({
      httpGraphQLRequest: { method: req.method ?? 'GET', headers, search: url.search, body },
      context: async () => context,
    });
    const out: Record<string, string> = {};
    for (const [k, v] of response.headers) out[k] = v;
    if (response.body.kind === 'complete') {
      sendComplete(res, response.status ?? 200, out, response.body.string);
      return viewer;
    }
    res.writeHead(response.status ?? 200, out);
    for await (const chunk of response.body.asyncIterator) res.write(chunk);
    res.end();
    return viewer;
  }
}
