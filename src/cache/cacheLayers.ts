import { Redis } from 'ioredis';
import memjs from 'memjs';
import { InvalidationLog } from './invalidationLog.ts';
import { MemcachedObjects } from './memcachedObjects.ts';
import { RedisLists } from './redisLists.ts';

export interface CacheLayersOptions {
  readonly redis: { readonly host: string; readonly port: number };
  /** `host:port[,host:port]`. */
  readonly memcached: string;
  /** A cache call not answered within this many ms counts as a miss. Default 500. */
  readonly timeoutMs?: number;
  /** Keys of the in-process cache (L1); 0: none, but writes still append to the invalidation log. Default 200000. */
  readonly nearEntries?: number;
}

/** The caches of one process, ready for createStorage({ cache }), and their clients. */
export interface CacheLayers {
  readonly redis: Redis;
  readonly objects: MemcachedObjects;
  readonly lists: RedisLists;
  readonly near: InvalidationLog;
  close(): void;
}

/**
 * The clients and layers every process that reads or writes shard data uses — the gateway, and
 * the CLI's repair and reconcile — so a fix made outside a gateway invalidates memcached, Redis and
 * every gateway's L1 like any write. Both clients reconnect by themselves; while a cache is down,
 * reads go to MySQL.
 */
export async function createCacheLayers(opts: CacheLayersOptions): Promise<CacheLayers & { readonly redisReachable: boolean }> {
  const timeoutMs = opts.timeoutMs ?? 500;
  const redis = new Redis({
    host: opts.redis.host,
    port: opts.redis.port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: 1000,
    commandTimeout: timeoutMs * 2,
    retryStrategy: (times) => Math.min(50 * times, 1000),
  });
  redis.on('error', () => undefined);
  const redisReachable = await redis.connect().then(
    () => true,
    () => false,
  );
  const memcached = memjs.Client.create(opts.memcached, {
    timeout: timeoutMs / 1000,
    conntimeout: 1,
    retries: 0,
    failover: false,
    logger: { log: () => undefined },
  } as memjs.ClientOptions);
  // With no L1 entries the log is still written (other processes' L1s obey it); this one reads none.
  const near = new InvalidationLog({ redis, timeoutMs, near: { maxEntries: Math.max(1, opts.nearEntries ?? 200_000) } });
  return {
    redis,
    redisReachable,
    objects: new MemcachedObjects({ client: memcached, timeoutMs }),
    lists: new RedisLists({ redis, timeoutMs }),
    near,
    close() {
      redis.disconnect();
      memcached.close();
    },
  };
}
