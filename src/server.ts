import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CacheStats } from './cache/cacheStats.ts';
import { createCacheLayers } from './cache/cacheLayers.ts';
import { GatewayMetrics } from './metrics.ts';
import { jobsRedis } from './jobs/connection.ts';
import { JobQueue, statsForScrapes, statsForScrapesOf } from './jobs/jobQueue.ts';
import { DEFAULT_QUEUE_PREFIX } from './jobs/queues.ts';
import { JOB_KINDS } from './jobs/registry.ts';
import { mintToken, viewerFromAuthorization } from './auth/tokens.ts';
import type { GatewayConfig } from './config.ts';
import type { Topology } from './core/topology.ts';
import { RedisKeyValueCache } from './cache/redisKeyValueCache.ts';
import { createApolloServer } from './graphql/apollo.ts';
import { DEFAULT_COST_BUDGET } from './graphql/cost.ts';
import { RedisRateLimits } from './cache/rateLimits.ts';
import { ShardqlError } from './core/errors.ts';
import type { GatewayContext } from './graphql/context.ts';
import { createHandler } from './http/handler.ts';
import { loadManifest } from './http/trustedDocuments.ts';
import { createLoaders } from './loaders/loaders.ts';
import { HomeFeeds } from './loaders/feed.ts';
import { DEFAULT_FEED_OPTIONS, type FeedOptions } from './services/feeds.ts';
import { jsonLogger, type Log } from './log.ts';
import { checkIdempotencyKey } from './core/validate.ts';
import { ProductWrites } from './services/writes.ts';
import { repairIntents } from './services/repair.ts';
import { faultAt } from './services/testFaults.ts';
import { createStorage } from './storage/index.ts';
import { SqlStats } from './storage/sqlStats.ts';
import { GatewayPresence, createWatchingEtcdClient, etcdTopologySource } from './topology/etcdTopologySource.ts';
import { TopologyWatcher } from './topology/topologyWatcher.ts';

export interface RunningGateway {
  readonly url: string;
  readonly port: number;
  /** The topology in force right now. */
  topology(): Topology;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes every client. */
  stop(graceMs?: number): Promise<void>;
}

export interface GatewayOptions {
  readonly log?: Log | ((line: string) => void);
  /** Host to listen on. Default 127.0.0.1. */
  readonly host?: string;
  readonly defaultQuery?: string;
  /** A token GraphiQL opens with (development). */
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
}

export const SAMPLE_QUERY = `# A profile: user → boards → pins → likers, with counts from the count tables.
# The response's extensions.cost shows the SQL round trips, shards and hosts it touched.
query Profile {
  viewer {
    username
    followerCount
    boards(first: 5) {
      edges {
        node {
          name
          pinCount
          pins(first: 5) {
            edges { node { id title likeCount likers(first: 3) { edges { node { username } } } } }
          }
        }
      }
    }
  }
}
`;

/**
 * The composition root: reads nothing from the environment itself (config comes in), builds every
 * client, and serves. Only this file and the CLI know how the pieces fit together.
 */
export async function startGateway(config: GatewayConfig, opts: GatewayOptions = {}): Promise<RunningGateway> {
  const log: Log = opts.log && opts.log.length <= 1 ? jsonLogger(opts.log as (line: string) => void) : ((opts.log as Log | undefined) ?? jsonLogger());
  const development = config.env === 'development';

  // The map in force (`current`): read at revision R, watched from R+1 and re-read periodically;
  // every valid new version is swapped in whole, an invalid one refused, and while etcd is away the
  // last good one serves. The gateway's entry in etcd says which revision it serves: a shard move
  // waits for every gateway to serve its pause before copying.
  const etcd = createWatchingEtcdClient(config.etcdEndpoints);
  const presence = new GatewayPresence({ etcd, topologyKey: config.topologyKey, log });
  let current: Topology;
  const watcher = new TopologyWatcher({
    source: etcdTopologySource(etcd, config.topologyKey),
    log,
    ...(config.topologyRefreshMs !== undefined ? { refreshIntervalMs: config.topologyRefreshMs } : {}),
    onSwap: (swap) => {
      current = swap.topology;
      presence.update(swap.revision);
    },
  });
  try {
    await watcher.start();
  } catch (err) {
    etcd.close();
    throw err;
  }
  current = watcher.current();
  presence.start(watcher.revision());

  // Generous: under load the event loop's own delay counts against it (150 ms turned warm hits into misses).
  const cacheTimeoutMs = opts.cacheTimeoutMs ?? 500;
  const nearEntries = config.nearCacheEntries ?? 200_000;
  const feedOptions: FeedOptions = { ...DEFAULT_FEED_OPTIONS, ...config.feed };
  const layers = await createCacheLayers({ redis: config.redis, memcached: config.memcached.servers, timeoutMs: cacheTimeoutMs, nearEntries, feedSize: feedOptions.size });
  if (!layers.redisReachable) log('redis_unavailable', {});
  const redis = layers.redis;
  const metrics = new GatewayMetrics();
  const caching = opts.caching ?? true;
  const storage = createStorage({
    topology: () => current,
    credentials: config.mysql,
    ...(config.events ? { events: config.events } : {}),
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
  metrics.topologyRevision.set(Number(watcher.revision()));
  // Tests only (config refuses it elsewhere): this process kills itself at one step of one write.
  if (config.testFault) log('test_fault_armed', { ...config.testFault });
  // The job queue: services enqueue through it (its `BackgroundJobs` port: feed fan-outs and
  // removals), and /metrics reads its depth and lag. Workers are other processes.
  const jobsClient = jobsRedis(config.redis, 'producer');
  const jobs = new JobQueue({ redis: jobsClient, prefix: config.queuePrefix ?? DEFAULT_QUEUE_PREFIX, registry: JOB_KINDS });
  const queueStats = statsForScrapes(jobs, { maxAgeMs: 1000, timeoutMs: 250 });
  const feedWork = statsForScrapesOf(() => layers.feeds.work(), { maxAgeMs: 1000, timeoutMs: 250 });
  const writes = new ProductWrites({ storage, topology: () => current, jobs, log, ...(config.testFault ? { faults: faultAt(config.testFault) } : {}) });
  // Stored feeds need the Redis layer; without caching every home feed read merges from MySQL.
  const homeFeeds = new HomeFeeds({ storage, feeds: caching ? layers.feeds : undefined, options: feedOptions, jobs, log });
  const trusted = config.trustedDocuments ? loadManifest(config.trustedDocuments) : undefined;
  if (trusted) log('trusted_documents', { operations: trusted.size });

  const apollo = createApolloServer({
    development,
    apqCache: new RedisKeyValueCache(redis),
    log,
    costBudget: { rows: config.maxCost ?? DEFAULT_COST_BUDGET.rows, roundTrips: config.maxRoundTrips ?? DEFAULT_COST_BUDGET.roundTrips },
    ...(config.introspection !== undefined ? { introspection: config.introspection } : {}),
    batching: config.batchedRequests ?? false,
    onResponse: (seconds, failed, ctx) => metrics.recordRequest(seconds, failed, ctx.op.stats, ctx.op.cache),
  });
  await apollo.start();

  const context = async (req: IncomingMessage): Promise<GatewayContext & { showCost: boolean }> => {
    // A bad token refuses the whole request (401, UNAUTHENTICATED): never silently anonymous.
    const viewerId = await viewerFromAuthorization(config.jwtSecret, req.headers.authorization);
    const op = { stats: new SqlStats(), cache: new CacheStats(), deadline: Date.now() + (config.requestTimeoutMs ?? 10_000), topology: current, near: {} };
    const idempotencyKey = checkIdempotencyKey(req.headers['idempotency-key']);
    return {
      viewerId,
      loaders: createLoaders(storage, op, { batch: opts.batching ?? true }),
      writes,
      homeFeeds,
      op,
      topology: current,
      idempotencyKey,
      mintToken: (userId) => mintToken(config.jwtSecret, userId, 30 * 24 * 3600),
      showCost: development || req.headers['x-shardql-cost'] === '1',
    };
  };

  // Rate limits in Redis (all replicas share them); a Redis failure lets the request through.
  const rateLimits = config.rateLimit ? new RedisRateLimits({ redis, ...config.rateLimit }) : undefined;
  const admit = async (req: IncomingMessage, ctx: GatewayContext, operations: number): Promise<void> => {
    if (!rateLimits) return;
    let verdict;
    try {
      verdict = await rateLimits.take({ viewer: ctx.viewerId?.toString(), address: req.socket.remoteAddress ?? 'unknown' }, operations);
    } catch (err) {
      metrics.rateLimit.inc({ outcome: 'error' });
      log('rate_limit_unavailable', { error: err instanceof Error ? err.message : String(err) });
      return;
    }
    metrics.rateLimit.inc({ outcome: verdict.allowed ? 'allowed' : 'refused' });
    if (!verdict.allowed) {
      throw new ShardqlError('RATE_LIMITED', `Too many requests from this ${verdict.scope}; retry in ${verdict.retryAfterSeconds} s`, {
        retryAfterSeconds: verdict.retryAfterSeconds,
        scope: verdict.scope,
      });
    }
  };

  const handler = createHandler({
    apollo,
    context,
    admit,
    batching: config.batchedRequests ?? false,
    trusted,
    graphiql: development
      ? {
          defaultQuery: opts.defaultQuery ?? SAMPLE_QUERY,
          ...(opts.graphiqlToken ? { defaultHeaders: { Authorization: `Bearer ${opts.graphiqlToken}` } } : {}),
        }
      : undefined,
    ready: async () => {
      const hosts: Record<string, string> = {};
      await Promise.all(
        Object.keys(current.doc.hosts).map(async (h) => {
          try {
            await storage.router.ping(h);
            hosts[h] = 'ok';
          } catch {
            hosts[h] = 'unavailable';
          }
        }),
      );
      const ok = Object.values(hosts).every((s) => s === 'ok');
      const rejected = watcher.rejected();
      return { ok, details: { topology: { revision: watcher.revision(), ageMs: watcher.ageMs(), ...(rejected ? { rejected } : {}) }, hosts } };
    },
    metrics: async () => {
      metrics.topologyRevision.set(Number(watcher.revision()));
      metrics.topologyAge.set(watcher.ageMs() / 1000);
      const [queues, work] = await Promise.all([queueStats(), feedWork()]);
      metrics.recordQueues(queues);
      metrics.recordFeedWork(work);
      return { contentType: metrics.registry.contentType, body: await metrics.registry.metrics() };
    },
    log,
  });

  // The repair pass: finishes multi-shard writes interrupted after their first transaction, and
  // replays cache invalidations recorded as failed (in MySQL as intents; in Redis: the sweep).
  const repairEvery = opts.repair?.intervalMs ?? 5000;
  let repairing: Promise<unknown> | undefined;
  const sweep = (): Promise<unknown> =>
    caching
      ? layers.sweepUnshared().then(
          (n) => n > 0 && log('unshared_swept', { keys: n }),
          (err: unknown) => log('unshared_sweep_failed', { error: err instanceof Error ? err.message : String(err) }),
        )
      : Promise.resolve();
  const repairTimer =
    repairEvery > 0
      ? setInterval(() => {
          if (repairing) return;
          repairing = Promise.all([
            repairIntents(storage, current, { minAgeMs: opts.repair?.minAgeMs ?? 5000, log: (line) => log('repair', { line }) })
              .then((r) => r.completed + r.failed > 0 && log('repair_pass', { ...r }))
              .catch((err: unknown) => log('repair_failed', { error: err instanceof Error ? err.message : String(err) })),
            sweep(),
          ]).finally(() => (repairing = undefined));
        }, repairEvery)
      : undefined;
  repairTimer?.unref();

  let inFlight = 0;
  let drained: (() => void) | undefined;
  const server: Server = createServer((req, res) => {
    inFlight++;
    res.on('close', () => {
      inFlight--;
      if (inFlight === 0) drained?.();
    });
    void handler(req, res);
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, opts.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${opts.host ?? '127.0.0.1'}:${port}`;
  log('listening', { url, env: config.env });

  return {
    url,
    port,
    topology: () => current,
    async stop(graceMs = 10_000) {
      if (repairTimer) clearInterval(repairTimer);
      server.close();
      server.closeIdleConnections();
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          drained = resolve;
          setTimeout(resolve, graceMs).unref();
        });
      }
      server.closeAllConnections();
      await repairing;
      await apollo.stop();
      await storage.close();
      await jobs.close().catch(() => undefined);
      jobsClient.disconnect();
      layers.close();
      await watcher.stop();
      await presence.stop();
      etcd.close();
      log('stopped', {});
    },
  };
}
