import { groupBy } from '../core/groupBy.ts';
import { shardOf } from '../core/ids.ts';
import type { Topology } from '../core/topology.ts';
import { MappingStore } from './mappingStore.ts';
import { ModShardStore } from './modShardStore.ts';
import { ObjectStore } from './objectStore.ts';
import { IntentLog } from './intentLog.ts';
import { EventStore } from './eventStore.ts';
import type { EventSettings } from '../core/events.ts';
import { ImportStore } from './importStore.ts';
import { LookAside } from './lookAside.ts';
import { ShardRouter, type MysqlCredentials } from './shardRouter.ts';
import type { MemcachedObjects } from '../cache/memcachedObjects.ts';
import type { RedisLists } from '../cache/redisLists.ts';
import type { InvalidationLog } from '../cache/invalidationLog.ts';
import type { OpContext } from './sqlStats.ts';

export interface Storage {
  readonly router: ShardRouter;
  readonly objects: ObjectStore;
  readonly mappings: MappingStore;
  readonly lookups: ModShardStore;
  readonly intents: IntentLog;
  /** Per-user event sequences (activity, notifications) of the served product's kinds; none declared: an inert store. */
  readonly events: EventStore;
  /** `shardql import`: batches of imported objects and edges, the old → new ID map, the ledger. */
  readonly imports: ImportStore;
  /**
   * Invalidates cache keys (`o:<id>`, `l:<table>:<from>`) in every layer and the log; throws if any
   * layer fails. The repair pass's replay of an `invalidate` intent.
   */
  replayInvalidation(keys: readonly string[], ctx?: OpContext): Promise<void>;
  close(): Promise<void>;
}

/** The object or list owner a cache key is about: its shard is where a failed invalidation is recorded. */
function idOfCacheKey(key: string): bigint {
  return BigInt(key.slice(key.lastIndexOf(':') + 1));
}

export interface StorageOptions {
  readonly topology: () => Topology;
  readonly credentials: MysqlCredentials;
  readonly poolSize?: number;
  readonly queryTimeoutMs?: number;
  readonly now?: () => number;
  /** Look-aside caches: objects in memcached, mapping pages and counts in Redis. Each optional. */
  readonly cache?: { readonly objects?: MemcachedObjects; readonly lists?: RedisLists; readonly near?: InvalidationLog };
  /** A cache invalidation (or its durable record, 'mysql') failed after a commit. */
  readonly onInvalidationError?: (layer: 'memcached' | 'redis' | 'mysql', err: unknown) => void;
  /** A host refused a write because it is read-only (a demoted primary): re-read the topology. */
  readonly onReadOnly?: (host: string) => void;
  /**
   * Event sequences, when an attached product declares them (core/events.ts `eventSettings`): its
   * kinds, what each keeps and the notification grouping window (default 1 day). `null`: no kinds,
   * and the store reads, writes and sweeps nothing — for tools that only provision, copy or inspect.
   * Required, so that a storage that runs the product's writes or repairs cannot be made without
   * its events by omission: that failed only at run time, on the first event appended.
   */
  readonly events: EventSettings | null;
}

/** Wires the stores over one router. Creates no connection until the first query. */
export function createStorage(opts: StorageOptions): Storage {
  const router = new ShardRouter({
    topology: opts.topology,
    credentials: opts.credentials,
    ...(opts.poolSize !== undefined ? { poolSize: opts.poolSize } : {}),
    ...(opts.queryTimeoutMs !== undefined ? { queryTimeoutMs: opts.queryTimeoutMs } : {}),
    ...(opts.onReadOnly ? { onReadOnly: opts.onReadOnly } : {}),
  });
  const clock = opts.now ? { now: opts.now } : {};
  const intents = new IntentLog({ router, ...clock });
  const lookAside = new LookAside({
    log: opts.cache?.near,
    onInvalidationError: (layer, e) => opts.onInvalidationError?.(layer === 'memcached' || layer === 'mysql' ? layer : 'redis', e),
    // Failed and not recorded in Redis: an intent on the shard of each key (where its write committed).
    outbox: async (keys, ctx) => {
      const byShard = groupBy(keys, (k) => shardOf(idOfCacheKey(k)));
      await Promise.all([...byShard].map(([shard, list]) => intents.recordInvalidation(shard, list, ctx)));
    },
  });
  const objects = new ObjectStore({ router, ...clock, cache: opts.cache?.objects, lookAside });
  const mappings = new MappingStore({ router, ...clock, cache: opts.cache?.lists, lookAside });
  return {
    router,
    objects,
    mappings,
    lookups: new ModShardStore({ router, ...clock }),
    intents,
    events: new EventStore({
      router,
      lookAside,
      cache: opts.cache?.lists,
      ...clock,
      ...(opts.events ? { spec: opts.events.spec, retention: opts.events.retention } : {}),
      ...(opts.events?.windowMs !== undefined ? { windowMs: opts.events.windowMs } : {}),
    }),
    imports: new ImportStore({ router, ...clock }),
    async replayInvalidation(keys, ctx = {}) {
      await Promise.all([
        objects.replayInvalidation(keys.filter((k) => k.startsWith('o:')).map(idOfCacheKey), ctx),
        mappings.replayInvalidation(keys.filter((k) => k.startsWith('l:')), ctx),
      ]);
    },
    close: () => router.close(),
  };
}
