import memjs from 'memjs';
import { createRedisClient, type RedisClient, type RedisTarget } from '../redis/redisClient.ts';
import { outdatedRedisServers } from '../redis/redisVersion.ts';
import { InvalidationLog } from './invalidationLog.ts';
import { MemcachedObjects } from './memcachedObjects.ts';
import { RedisLists } from './redisLists.ts';
import { RedisFeeds } from './redisFeeds.ts';

/** The memcached servers of the object cache (`host:port[,host:port]`) and the SASL login, if they require one. */
export interface MemcachedTarget {
  readonly servers: string;
  /** SASL PLAIN, sent by memjs on every new connection before any request. */
  readonly sasl?: { readonly username: string; readonly password: string };
}

export interface CacheLayersOptions {
  /** One Redis, or a Redis Cluster. */
  readonly redis: RedisTarget;
  readonly memcached: MemcachedTarget;
  /** A cache call not answered within this many ms counts as a miss. Default 500. */
  readonly timeoutMs?: number;
  /** Keys of the in-process cache (L1); 0: none, but writes still append to the invalidation log. Default 200000. */
  readonly nearEntries?: number;
  /** Most pins a stored home feed keeps. Default 1000. */
  readonly feedSize?: number;
}

/** The caches of one process, ready for createStorage({ cache }), and their clients. */
export interface CacheLayers {
  /** The `cache`-role client the layers share; others (persisted queries, rate limits, feeds) may use it too. */
  readonly redis: RedisClient;
  readonly objects: MemcachedObjects;
  readonly lists: RedisLists;
  readonly near: InvalidationLog;
  /** Stored home feeds. */
  readonly feeds: RedisFeeds;
  /**
   * One pass of the sweep (any gateway, in the background): invalidates in memcached and Redis the
   * keys writers recorded as not invalidated there, then forgets the records. Returns how many;
   * throws (keeping them) if a layer fails.
   */
  sweepUnshared(): Promise<number>;
  close(): void;
}

/** Cache keys by the shared layer that holds them: objects (`o:…`) in memcached, lists (`l:…`) in Redis. */
function byLayer(keys: readonly string[]): { objects: string[]; lists: string[] } {
  return { objects: keys.filter((k) => k.startsWith('o:')), lists: keys.filter((k) => k.startsWith('l:')) };
}

/**
 * The clients and layers every process that reads or writes shard data uses — the gateway, and
 * the CLI's repair and reconcile — so a fix made outside a gateway invalidates memcached, Redis and
 * every gateway's L1 like any write. Both clients reconnect by themselves; while a cache is down,
 * reads go to MySQL.
 */
export async function createCacheLayers(
  opts: CacheLayersOptions,
): Promise<
  CacheLayers & {
    readonly redisReachable: boolean;
    /** Why Redis did not answer at start (e.g. `WRONGPASS …`, a certificate error, `connect ECONNREFUSED …`). */
    readonly redisError: string | undefined;
    /** Why a memcached server did not answer at start (e.g. `authentication failed`, `connect ECONNREFUSED …`). */
    readonly memcachedError: string | undefined;
    /** Servers older than the scripts need (`host:port version`), if Redis answered. */
    readonly redisOutdated: readonly string[];
  }
> {
  const timeoutMs = opts.timeoutMs ?? 500;
  const redis = createRedisClient(opts.redis, { role: 'cache', name: 'shardql-cache', timeoutMs });
  // A refused login or handshake ends in "Connection is closed."; the client's first error says why.
  let firstError: string | undefined;
  const onError = (err: Error): void => void (firstError ??= err.message);
  redis.on('error', onError);
  const redisReachable = await redis.connect().then(
    () => true,
    (err: unknown) => {
      firstError ??= err instanceof Error ? err.message : String(err);
      return false;
    },
  );
  redis.off('error', onError);
  const redisOutdated = redisReachable ? await outdatedRedisServers(redis).catch(() => []) : [];
  const memcached = memjs.Client.create(opts.memcached.servers, {
    timeout: timeoutMs / 1000,
    conntimeout: 1,
    retries: 0,
    failover: false,
    logger: { log: () => undefined },
  } as memjs.ClientOptions);
  const objects = new MemcachedObjects({ client: memcached, timeoutMs, sasl: opts.memcached.sasl });
  const memcachedError = await objects.check();
  const lists = new RedisLists({ redis, timeoutMs });
  // With no L1 entries the log is still written (other processes' L1s obey it); this one reads none.
  const near = new InvalidationLog({
    redis,
    timeoutMs,
    near: { maxEntries: opts.nearEntries ?? 200_000 },
    // Another writer could not reach a shared layer: invalidate there before reading it again.
    onUnshared: (keys) => {
      const k = byLayer(keys);
      if (k.objects.length > 0) objects.invalidateBeforeNextRead(k.objects);
      if (k.lists.length > 0) lists.invalidateBeforeNextRead(k.lists);
    },
  });
  const feeds = new RedisFeeds({ redis, timeoutMs, ...(opts.feedSize !== undefined ? { cap: opts.feedSize } : {}) });
  return {
    redis,
    redisReachable,
    redisError: redisReachable ? undefined : firstError,
    redisOutdated,
    memcachedError,
    objects,
    lists,
    near,
    feeds,
    sweepUnshared: () =>
      near.sweepUnshared(async (keys) => {
        const k = byLayer(keys);
        await Promise.all([k.objects.length > 0 && objects.invalidate(k.objects), k.lists.length > 0 && lists.invalidate(k.lists)]);
      }),
    close() {
      redis.disconnect();
      memcached.close();
    },
  };
}
