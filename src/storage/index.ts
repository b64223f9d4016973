import type { Topology } from '../core/topology.ts';
import { MappingStore } from './mappingStore.ts';
import { ModShardStore } from './modShardStore.ts';
import { ObjectStore } from './objectStore.ts';
import { IntentLog } from './intentLog.ts';
import { LookAside } from './lookAside.ts';
import { ShardRouter, type MysqlCredentials } from './shardRouter.ts';
import type { MemcachedObjects } from '../cache/memcachedObjects.ts';
import type { RedisLists } from '../cache/redisLists.ts';
import type { InvalidationLog } from '../cache/invalidationLog.ts';

export interface Storage {
  readonly router: ShardRouter;
  readonly objects: ObjectStore;
  readonly mappings: MappingStore;
  readonly lookups: ModShardStore;
  readonly intents: IntentLog;
  close(): Promise<void>;
}

export interface StorageOptions {
  readonly topology: () => Topology;
  readonly credentials: MysqlCredentials;
  readonly poolSize?: number;
  readonly queryTimeoutMs?: number;
  readonly now?: () => number;
  /** Look-aside caches: objects in memcached, mapping pages and counts in Redis. Each optional. */
  readonly cache?: { readonly objects?: MemcachedObjects; readonly lists?: RedisLists; readonly near?: InvalidationLog };
  /** A cache invalidation failed after a commit: the stale entry lives until its TTL. */
  readonly onInvalidationError?: (layer: 'memcached' | 'redis', err: unknown) => void;
  /** A host refused a write because it is read-only (a demoted primary): re-read the topology. */
  readonly onReadOnly?: (host: string) => void;
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
  const lookAside = new LookAside({
    log: opts.cache?.near,
    onInvalidationError: (layer, e) => opts.onInvalidationError?.(layer === 'memcached' ? 'memcached' : 'redis', e),
  });
  return {
    router,
    objects: new ObjectStore({ router, ...clock, cache: opts.cache?.objects, lookAside }),
    mappings: new MappingStore({ router, ...clock, cache: opts.cache?.lists, lookAside }),
    lookups: new ModShardStore({ router, ...clock }),
    intents: new IntentLog({ router, ...clock }),
    close: () => router.close(),
  };
}
