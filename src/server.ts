import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';
import memjs from 'memjs';
import { CacheStats } from './cache/cacheStats.ts';
import { MemcachedObjects } from './cache/memcachedObjects.ts';
import { RedisLists } from './cache/redisLists.ts';
import { GatewayMetrics } from './metrics.ts';
import { mintToken, viewerFromAuthorization } from './auth/tokens.ts';
import type { GatewayConfig } from './config.ts';
import type { Topology } from './core/topology.ts';
import { RedisKeyValueCache } from './cache/redisKeyValueCache.ts';
import { createApolloServer } from './graphql/apollo.ts';
import type { GatewayContext } from './graphql/context.ts';
import { createHandler } from './http/handler.ts';
import { loadManifest } from './http/trustedDocuments.ts';
import { createLoaders } from './loaders/loaders.ts';
import { jsonLogger, type Log } from './log.ts';
import { ProductWrites } from './services/writes.ts';
import { createStorage } from './storage/index.ts';
import { SqlStats } from './storage/sqlStats.ts';
import { loadTopology } from './topology/etcdTopology.ts';

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
  /** Milliseconds a cache call may take before it counts as a miss. Default 150. */
  readonly cacheTimeoutMs?: number;
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

  const etcd = new Etcd3({ hosts: [...config.etcdEndpoints] });
  const loaded = await loadTopology(etcd, config.topologyKey);
  let current = loaded.topology;
  const topologyState = { revision: loaded.revision, loadedAt: Date.now() };
  log('topology_loaded', { revision: loaded.revision, hosts: Object.keys(current.doc.hosts).length, openShards: current.openShardCount });

  const cacheTimeoutMs = opts.cacheTimeoutMs ?? 150;
  // Both clients reconnect by themselves; while a cache is down, reads go to MySQL.
  const redis = new Redis({
    host: config.redis.host,
    port: config.redis.port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: 1000,
    commandTimeout: cacheTimeoutMs * 2,
    retryStrategy: (times) => Math.min(50 * times, 1000),
  });
  redis.on('error', () => undefined);
  await redis.connect().catch(() => log('redis_unavailable', {}));
  const memcached = memjs.Client.create(config.memcached.servers, {
    timeout: cacheTimeoutMs / 1000,
    conntimeout: 1,
    retries: 0,
    failover: false,
    logger: { log: () => undefined },
  } as memjs.ClientOptions);
  const metrics = new GatewayMetrics();
  const caching = opts.caching ?? true;
  const storage = createStorage({
    topology: () => current,
    credentials: config.mysql,
    ...(caching
      ? { cache: { objects: new MemcachedObjects({ client: memcached, timeoutMs: cacheTimeoutMs }), lists: new RedisLists({ redis, timeoutMs: cacheTimeoutMs }) } }
      : {}),
    onInvalidationError: (layer, err) => log('cache_invalidation_failed', { layer, error: err instanceof Error ? err.message : String(err) }),
  });
  metrics.topologyRevision.set(Number(loaded.revision));
  const writes = new ProductWrites({ storage, topology: () => current });
  const trusted = config.trustedDocuments ? loadManifest(config.trustedDocuments) : undefined;
  if (trusted) log('trusted_documents', { operations: trusted.size });

  const apollo = createApolloServer({
    development,
    apqCache: new RedisKeyValueCache(redis),
    log,
    onResponse: (seconds, failed, ctx) => metrics.recordRequest(seconds, failed, ctx.op.stats, ctx.op.cache),
  });
  await apollo.start();

  const context = async (req: IncomingMessage): Promise<GatewayContext & { showCost: boolean }> => {
    // A bad token refuses the whole request (401, UNAUTHENTICATED): never silently anonymous.
    const viewerId = await viewerFromAuthorization(config.jwtSecret, req.headers.authorization);
    const op = { stats: new SqlStats(), cache: new CacheStats() };
    return {
      viewerId,
      loaders: createLoaders(storage, op, { batch: opts.batching ?? true }),
      writes,
      op,
      topology: current,
      mintToken: (userId) => mintToken(config.jwtSecret, userId, 30 * 24 * 3600),
      showCost: development || req.headers['x-shardql-cost'] === '1',
    };
  };

  const handler = createHandler({
    apollo,
    context,
    trusted,
    graphiql: development ? { defaultQuery: opts.defaultQuery ?? SAMPLE_QUERY, ...(opts.graphiqlToken ? { defaultHeaders: { Authorization: `Bearer ${opts.graphiqlToken}` } } : {}) } : undefined,
    ready: async () => {
      const hosts: Record<string, string> = {};
      await Promise.all(Object.keys(current.doc.hosts).map(async (h) => {
        try {
          await storage.router.ping(h);
          hosts[h] = 'ok';
        } catch {
          hosts[h] = 'unavailable';
        }
      }));
      const ok = Object.values(hosts).every((s) => s === 'ok');
      return { ok, details: { topology: { revision: topologyState.revision, ageMs: Date.now() - topologyState.loadedAt }, hosts } };
    },
    metrics: async () => {
      metrics.topologyAge.set((Date.now() - topologyState.loadedAt) / 1000);
      return { contentType: metrics.registry.contentType, body: await metrics.registry.metrics() };
    },
    log,
  });

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
      server.close();
      server.closeIdleConnections();
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          drained = resolve;
          setTimeout(resolve, graceMs).unref();
        });
      }
      server.closeAllConnections();
      await apollo.stop();
      await storage.close();
      redis.disconnect();
      memcached.close();
      etcd.close();
      log('stopped', {});
    },
  };
}
