import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CacheStats } from './core/cacheStats.ts';
import { servedModel } from './core/model/served.ts';
import { sampleQuery } from './core/model/sampleQuery.ts';
import { createCacheLayers } from './cache/cacheLayers.ts';
import { GatewayMetrics } from './metrics.ts';
import { jobsRedis } from './jobs/connection.ts';
import { JobQueue, statsForScrapes, statsForScrapesOf } from './jobs/jobQueue.ts';
import { DEFAULT_QUEUE_PREFIX } from './jobs/queues.ts';
import { JOB_KINDS } from './jobs/registry.ts';
import { mintToken, viewerAuthenticator } from './auth/tokens.ts';
import { refusalReason } from './auth/refusals.ts';
import { servedEventSettings, type GatewayConfig } from './config.ts';
import type { Topology } from './core/topology.ts';
import { isShardqlError } from './core/errors.ts';
import { RedisKeyValueCache } from './cache/redisKeyValueCache.ts';
import { MIN_REDIS_VERSION } from './redis/redisVersion.ts';
import { describeRedisTarget } from './redis/redisClient.ts';
import { createApolloServer } from './graphql/apollo.ts';
import { unpatchedDependencies } from './graphql/apolloPatch.ts';
import { DEFAULT_COST_BUDGET, eventCost } from './graphql/cost.ts';
import { LocalRateLimits, RedisRateLimits } from './cache/rateLimits.ts';
import { LayerBreaker } from './cache/breaker.ts';
import type { GatewayContext } from './graphql/context.ts';
import { createHandler } from './http/handler.ts';
import { rateLimitAdmission } from './http/admission.ts';
import { compileTrustedProxies } from './http/clientAddress.ts';
import { InFlight } from './http/drain.ts';
import { readiness } from './http/readiness.ts';
import type { RequestScope } from './core/requestScope.ts';
import { loadManifest } from './http/trustedDocuments.ts';
import { loadWebApp } from './http/webApp.ts';
import { createLoaders } from './loaders/loaders.ts';
import { HomeFeeds } from './loaders/feed.ts';
import { DEFAULT_FEED_OPTIONS, type FeedOptions } from './services/feeds.ts';
import { createLog, type Log } from './log.ts';
import { checkIdempotencyKey } from './core/validate.ts';
import { servedEvents, servedFeed, servedProducts, servedResolvers, servedWrites } from './product/served.ts';
import { startRepairScheduler } from './services/repairScheduler.ts';
import { faultAt } from './services/testFaults.ts';
import type { Tracing } from './telemetry/tracing.ts';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { createStorage } from './storage/index.ts';
import { checkModShardCountAtStart } from './storage/modShardCountRecord.ts';
import { SqlStats } from './storage/sqlStats.ts';
import { startWatchedTopology } from './topology/watchedTopology.ts';

export interface RunningGateway {
  readonly url: string;
  readonly port: number;
  /** The topology in force right now. */
  topology(): Topology;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes every client. */
  stop(graceMs?: number): Promise<void>;
  /** Resolves once the intents of the writes answered so far are deleted (they are, shortly after each answer). */
  settled(): Promise<void>;
}

export interface GatewayOptions {
  /**
   * Where logs go: a `Log`, or a function given each line (JSON, or pretty per `config.logPretty`).
   * Default: lines on stdout.
   */
  readonly log?: Log | ((line: string) => void);
  /** Host to listen on. Default 127.0.0.1. */
  readonly host?: string;
  readonly defaultQuery?: string;
  /** A token GraphiQL and the web app open with (development only). */
  readonly graphiqlToken?: string;
  /** Batch loads per level (default true). False is the N+1 baseline of the benchmark. */
  readonly batching?: boolean;
  /** Look-aside caches in memcached and Redis (default true). False reads MySQL every time. */
  readonly caching?: boolean;
  /** Milliseconds a cache call may take before it counts as a miss. Default 500. */
  readonly cacheTimeoutMs?: number;
  /**
   * How often the background repair pass completes interrupted multi-shard writes, and how old an
   * intent must be before it does (its writer may still be running). Defaults 5000 / 5000 ms; 0
   * interval turns the worker off.
   */
  readonly repair?: { readonly intervalMs?: number; readonly minAgeMs?: number };
  /**
   * Spans go to this exporter, one by one as they end, whatever `config.tracing` says (tests use an
   * in-memory exporter). Unset: OTLP when `config.tracing` is set, else no tracing at all.
   */
  readonly traceExporter?: SpanExporter;
}

/** GraphiQL's first query: the viewer's page, derived from the declared model. */
export const SAMPLE_QUERY = sampleQuery(servedModel());

/**
 * The composition root: reads nothing from the environment itself (config comes in), builds every
 * client and hands each to the layer that uses it. It wires; the work is done in the layers
 * (admission and readiness in http/, the repair scheduler in services/, the drain in http/drain.ts).
 */
export async function startGateway(config: GatewayConfig, opts: GatewayOptions = {}): Promise<RunningGateway> {
  // Products attach by the names they need; a model field none of them resolves is refused here,
  // before anything connects (ModelError, each field with its file:line:column).
  const products = servedProducts();
  const development = config.env === 'development';
  const log: Log =
    opts.log && opts.log.length > 1
      ? (opts.log as Log)
      : createLog({
          ...(opts.log ? { write: opts.log as (line: string) => void } : {}),
          ...(config.logLevel ? { level: config.logLevel } : {}),
          // Pretty for a person at a terminal in development; JSON for anything that reads the lines.
          pretty: config.logPretty ?? (development && process.stdout.isTTY === true),
        });

  // The map in force is the watcher's: read at revision R, watched from R+1 and re-read
  // periodically; every valid new version is swapped in whole, an invalid one refused, and while
  // etcd is away the last good one serves. The gateway's entry in etcd says which revision it
  // serves: a shard move waits for every gateway to serve its pause before copying.
  const watched = await startWatchedTopology({
    endpoints: config.etcdEndpoints,
    access: config.etcdAccess,
    topologyKey: config.topologyKey,
    refreshIntervalMs: config.topologyRefreshMs,
    log,
  });
  const { watcher } = watched;
  const topology = watched.current;

  // Generous: under load the event loop's own delay counts against it (150 ms turned warm hits into misses).
  const cacheTimeoutMs = opts.cacheTimeoutMs ?? 500;
  const nearEntries = config.nearCacheEntries ?? 200_000;
  const feedOptions: FeedOptions = { ...DEFAULT_FEED_OPTIONS, ...config.feed };
  const layers = await createCacheLayers({ redis: config.redis, memcached: config.memcached, timeoutMs: cacheTimeoutMs, nearEntries, feedSize: feedOptions.size });
  if (!layers.redisReachable) log('redis_unavailable', { redis: describeRedisTarget(config.redis), error: layers.redisError });
  if (layers.memcachedError !== undefined) log('memcached_unavailable', { memcached: config.memcached.servers, error: layers.memcachedError, effect: 'objects are read from MySQL until it answers' });
  for (const server of layers.redisOutdated) log('redis_unsupported', { server, need: MIN_REDIS_VERSION, effect: 'the invalidation log fails: no read uses L1, every write waits for the repair pass' }, 'error');
  const redis = layers.redis;
  const metrics = new GatewayMetrics();
  const caching = opts.caching ?? true;
  // Activity and notifications only when an attached product declares them (its kinds, the configured retention).
  const eventSpec = servedEvents();
  const events = eventSpec ? servedEventSettings(config, eventSpec) : null;
  const storage = createStorage({
    topology,
    credentials: config.mysql,
    events,
    ...(config.queryTimeoutMs !== undefined ? { queryTimeoutMs: config.queryTimeoutMs } : {}),
    ...(caching
      ? {
          cache: { objects: layers.objects, lists: layers.lists, ...(nearEntries > 0 ? { near: layers.near } : {}) },
        }
      : {}),
    onInvalidationError: (layer, err) => log('cache_invalidation_failed', { layer, error: err instanceof Error ? err.message : String(err) }),
    // A demoted primary refused a write: this gateway's map may be stale.
    onReadOnly: () => void watcher.refresh(),
  });
  await checkModShardCountAtStart(storage.router, topology(), log).catch(async (err: unknown) => {
    await storage.close();
    layers.close();
    await watched.close();
    throw err;
  });
  metrics.topologyRevision.set(Number(watcher.revision()));
  // Tests only (config refuses it elsewhere): this process kills itself at one step of one write.
  if (config.testFault) log('test_fault_armed', { ...config.testFault });
  // The job queue: services enqueue through it (its `BackgroundJobs` port: feed fan-outs and
  // removals), and /metrics reads its depth and lag. Workers are other processes.
  const jobsClient = jobsRedis(config.redis, 'producer');
  const jobs = new JobQueue({ redis: jobsClient, prefix: config.queuePrefix ?? DEFAULT_QUEUE_PREFIX, registry: JOB_KINDS });
  const queueStats = statsForScrapes(jobs, { maxAgeMs: 1000, timeoutMs: 250 });
  const feedWork = statsForScrapesOf(() => layers.feeds.work(), { maxAgeMs: 1000, timeoutMs: 250 });
  const writes = servedWrites({ storage, topology, jobs, log, intentCompletionDelayMs: config.intentCompletionDelayMs, ...(config.testFault ? { faults: faultAt(config.testFault) } : {}) });
  // A home feed only when an attached product declares one. Stored feeds need the Redis layer;
  // without caching every read of it merges from MySQL.
  const feed = servedFeed();
  const homeFeeds = feed ? new HomeFeeds({ feed, storage, feeds: caching ? layers.feeds : undefined, options: feedOptions, jobs, log }) : undefined;
  const trusted = config.trustedDocuments ? loadManifest(config.trustedDocuments) : undefined;
  if (trusted) log('trusted_documents', { operations: trusted.size });
  const webApp = config.webApp ? loadWebApp(config.webApp) : undefined;
  const known = webApp ? loadManifest(webApp.manifestPath) : undefined;
  if (known) log('web_app', { path: '/app', operations: known.size, trustedOnly: trusted !== undefined });

  // Traces only when configured: otherwise OpenTelemetry is not even loaded, no tracer exists and
  // the request path makes no span.
  let tracing: Tracing | undefined;
  if (opts.traceExporter || config.tracing) {
    const telemetry = await import('./telemetry/tracing.ts');
    tracing = opts.traceExporter
      ? new telemetry.Tracing({ exporter: opts.traceExporter, batch: false, ...(config.tracing?.serviceName ? { serviceName: config.tracing.serviceName } : {}) })
      : telemetry.otlpTracing({ endpoint: config.tracing!.otlpEndpoint, ...config.tracing });
  }

  for (const p of unpatchedDependencies()) {
    log('dependency_unpatched', { package: p.package, effect: p.effect, fix: 'node scripts/patch-deps.mjs (npm runs it after install)' }, 'warn');
  }
  // Products the served model lacks names for are left out, and said so.
  log('products', { attached: products.attached.map((p) => p.name), notAttached: products.refused.map((r) => ({ product: r.product, missing: r.missing })), feed: feed?.field ?? null });
  const { apollo, fastLane } = createApolloServer({
    resolvers: servedResolvers(),
    development,
    apqCache: new RedisKeyValueCache(redis),
    log,
    costBudget: { rows: config.maxCost ?? DEFAULT_COST_BUDGET.rows, roundTrips: config.maxRoundTrips ?? DEFAULT_COST_BUDGET.roundTrips },
    eventCost: events ? eventCost(events.spec, Math.max(0, ...Object.values(events.retention).map((r) => r.versions))) : undefined,
    ...(config.introspection !== undefined ? { introspection: config.introspection } : {}),
    ...(config.schemaPrivacy !== undefined ? { schemaPrivacy: config.schemaPrivacy } : {}),
    batching: config.batchedRequests ?? false,
    fastLane: config.fastLane ?? true,
    onResponse: (seconds, failed, ctx) => metrics.recordRequest(seconds, failed, ctx.op.stats, ctx.op.cache),
  });
  await apollo.start();

  const authenticate = viewerAuthenticator({ secret: config.jwtSecret, identityProvider: config.identityProvider });
  const context = async (req: IncomingMessage, scope: RequestScope): Promise<GatewayContext & { showCost: boolean }> => {
    // A bad token refuses the whole request (401, UNAUTHENTICATED): never silently anonymous. The
    // client is told only "expired" or "not valid"; why is logged under the request's ID.
    const viewerId = await authenticate(req.headers.authorization).catch((err: unknown) => {
      if (isShardqlError(err)) log('token_refused', { requestId: scope.id, code: err.code, reason: refusalReason(err) });
      throw err;
    });
    const inForce = topology();
    const op = { stats: new SqlStats(), cache: new CacheStats(), deadline: Date.now() + (config.requestTimeoutMs ?? 10_000), topology: inForce, near: {}, trace: scope.trace };
    scope.usage = op;
    const idempotencyKey = checkIdempotencyKey(req.headers['idempotency-key']);
    return {
      viewerId,
      loaders: createLoaders(storage, op, { batch: opts.batching ?? true }),
      writes,
      feed: homeFeeds,
      op,
      topology: inForce,
      idempotencyKey,
      request: scope,
      mintToken: (userId) => mintToken(config.jwtSecret, userId, 30 * 24 * 3600),
      showCost: development || req.headers['x-shardql-cost'] === '1',
    };
  };

  // Rate limits in Redis (all replicas share them); while Redis cannot answer, this gateway's own buckets.
  const admit = config.rateLimit
    ? rateLimitAdmission({
        limiter: new RedisRateLimits({ redis, ...config.rateLimit }),
        local: new LocalRateLimits(config.rateLimit),
        breaker: new LayerBreaker(),
        log,
        onOutcome: (outcome, limiter) => metrics.rateLimit.inc({ outcome, limiter }),
      })
    : undefined;

  const handler = createHandler({
    apollo,
    fastLane,
    context,
    viewerOf: (ctx) => ctx.viewerId,
    admit,
    batching: config.batchedRequests ?? false,
    trusted,
    known,
    // The development token signs the page in; production pages sign in with the identity provider where configured, else ask a person for a token.
    webApp: webApp ? { app: webApp, token: development ? opts.graphiqlToken : undefined, signIn: config.webSignIn } : undefined,
    trustedProxies: config.trustedProxies ? compileTrustedProxies(config.trustedProxies) : undefined,
    tracer: tracing,
    graphiql: development
      ? {
          defaultQuery: opts.defaultQuery ?? SAMPLE_QUERY,
          ...(opts.graphiqlToken ? { defaultHeaders: { Authorization: `Bearer ${opts.graphiqlToken}` } } : {}),
        }
      : undefined,
    landingPage: config.landingPage ?? true,
    ready: readiness({
      topology,
      revision: () => watcher.revision(),
      ageMs: () => watcher.ageMs(),
      rejected: () => watcher.rejected(),
      ping: (host) => storage.router.ping(host),
    }),
    metrics: async () => {
      metrics.topologyRevision.set(Number(watcher.revision()));
      metrics.topologyAge.set(watcher.ageMs() / 1000);
      const [queues, work] = await Promise.all([queueStats(), homeFeeds ? feedWork() : null]);
      metrics.recordQueues(queues);
      metrics.recordFeedWork(work);
      return { contentType: metrics.registry.contentType, body: await metrics.registry.metrics() };
    },
    log,
  });

  // The caller's options (tests) over the settings.
  const repairEvery = opts.repair?.intervalMs ?? config.intentRepairEveryMs;
  const repairAge = opts.repair?.minAgeMs ?? config.intentRepairAgeMs;
  const repair = startRepairScheduler({
    storage,
    topology,
    ...(repairEvery !== undefined ? { intervalMs: repairEvery } : {}),
    ...(repairAge !== undefined ? { minAgeMs: repairAge } : {}),
    ...(caching ? { sweep: () => layers.sweepUnshared() } : {}),
    jobs,
    log,
  });

  const inFlight = new InFlight();
  const server: Server = createServer(inFlight.track(handler));
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, opts.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${opts.host ?? '127.0.0.1'}:${port}`;
  log('listening', { url, env: config.env, tracing: tracing !== undefined, identityProvider: config.identityProvider !== undefined });

  return {
    url,
    port,
    topology,
    settled: () => writes.settled(),
    async stop(graceMs = 10_000) {
      const repaired = repair.stop();
      await inFlight.close(server, graceMs);
      await repaired;
      await writes.settled(); // the intents answered writes still had to delete
      await apollo.stop();
      await storage.close();
      await jobs.close().catch(() => undefined);
      jobsClient.disconnect();
      layers.close();
      await watched.close();
      await tracing?.shutdown().catch(() => undefined);
      log('stopped', {});
    },
  };
}
