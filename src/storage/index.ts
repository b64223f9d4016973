import type { Topology } from '../core/topology.ts';
import { MappingStore } from './mappingStore.ts';
import { ModShardStore } from './modShardStore.ts';
import { ObjectStore } from './objectStore.ts';
import { ShardRouter, type MysqlCredentials } from './shardRouter.ts';

export interface Storage {
  readonly router: ShardRouter;
  readonly objects: ObjectStore;
  readonly mappings: MappingStore;
  readonly lookups: ModShardStore;
  close(): Promise<void>;
}

export interface StorageOptions {
  readonly topology: () => Topology;
  readonly credentials: MysqlCredentials;
  readonly poolSize?: number;
  readonly queryTimeoutMs?: number;
  readonly now?: () => number;
}

/** Wires the stores over one router. Creates no connection until the first query. */
export function createStorage(opts: StorageOptions): Storage {
  const router = new ShardRouter({
    topology: opts.topology,
    credentials: opts.credentials,
    ...(opts.poolSize !== undefined ? { poolSize: opts.poolSize } : {}),
    ...(opts.queryTimeoutMs !== undefined ? { queryTimeoutMs: opts.queryTimeoutMs } : {}),
  });
  const clock = opts.now ? { now: opts.now } : {};
  return {
    router,
    objects: new ObjectStore({ router, ...clock }),
    mappings: new MappingStore({ router, ...clock }),
    lookups: new ModShardStore({ router, ...clock }),
    close: () => router.close(),
  };
}
