import DataLoader from 'dataloader';
import { groupBy } from '../core/groupBy.ts';
import type { MappingTable } from '../core/mappings.ts';
import type { Storage } from '../storage/index.ts';
import { countKey, type CountKey, type Page, type PageRequest } from '../storage/mappingStore.ts';
import { isActive, type StoredObject } from '../storage/objectStore.ts';
import type { OpContext } from '../storage/sqlStats.ts';
import type { EventPage, EventPageRequest, LatestEventsRequest, NotificationPage, NotificationPageRequest } from '../storage/eventStore.ts';
import type { SequenceEvent, StoredKind } from '../core/events.ts';

/**
 * Per-request loaders. Every key asked for at one level of a query is batched into one call of
 * the store, which sends one round trip per host. Make a new set for every request: they cache
 * what they load, and a cache shared across requests would serve other viewers' stale reads.
 */
/** A unique value in its lookup namespace (the model's `@stored(unique:)`). */
export interface LookupKey {
  readonly namespace: string;
  readonly key: string;
}

export interface Loaders {
  /** Active objects by ID; null when missing or soft-deleted. */
  readonly objects: DataLoader<bigint, StoredObject | null>;
  readonly pages: Reader<PageRequest, Page>;
  readonly counts: Reader<CountKey, number>;
  /** Whether an edge exists (e.g. whether the viewer liked a pin). */
  readonly edges: DataLoader<{ table: MappingTable; from: bigint; to: bigint }, boolean, string>;
  /** IDs by a unique value, through the mod shard: `{ namespace: 'username', key: 'ann' }` (keys as claimed, lower-case). */
  readonly lookups: DataLoader<LookupKey, bigint | null, string>;
  /** A user's event sequence: one round trip to their shard each (a request reads few sequences; no batching across users). */
  readonly events: {
    page(req: EventPageRequest): Promise<EventPage>;
    latest(req: LatestEventsRequest): Promise<Map<StoredKind, SequenceEvent[]>>;
    /** Grouped; the first page from the caches when they have it. */
    notifications(req: NotificationPageRequest): Promise<NotificationPage>;
  };
  /**
   * What this request's L1 view already holds, without a promise (undefined: ask the loader).
   * A value this request's loaders were given by a write (`replace`) is never shadowed: the write
   * dropped the key from L1 first.
   */
  readonly peek: {
    object(id: bigint): StoredObject | null | undefined;
    page(req: PageRequest): Page | undefined;
    count(key: CountKey): number | undefined;
  };
}

/** The read side of a loader. */
export interface Reader<K, V> {
  load(key: K): Promise<V>;
  /** Replaces what this request would read for `key` (a write that knows the new value). */
  replace(key: K, value: V): void;
}

function pageKey(r: PageRequest): string {
  return `${r.table}|${r.from}|${r.backward ? 'last' : 'first'}|${r.first}|${r.after ?? ''}|${r.before ?? ''}|${r.startAfter ? `${r.startAfter.key}:${r.startAfter.id}` : ''}|${r.order ?? 'time'}|${r.since ?? ''}|${r.until ?? ''}`;
}

export interface LoaderOptions {
  /**
   * Batch keys of one level into one call (default true). False turns every load into its own
   * round trip: the N+1 baseline the benchmark compares against, never a production setting.
   */
  readonly batch?: boolean;
}

type ListRead = { readonly req: PageRequest; readonly count?: undefined } | { readonly count: CountKey; readonly req?: undefined };

/**
 * One level of one loader: under a span `loader <name>` when the operation is traced, whose
 * children are then the store's cache and SQL calls; just the call when it is not.
 */
async function level<T>(ctx: OpContext, name: string, keys: number, run: (ctx: OpContext) => Promise<T>): Promise<T> {
  if (ctx.trace === undefined) return run(ctx);
  const span = ctx.trace.begin(`loader ${name}`, { 'shardql.keys': keys });
  try {
    const out = await run({ ...ctx, trace: span.children });
    span.end();
    return out;
  } catch (err) {
    span.end(undefined, err);
    throw err;
  }
}

export function createLoaders(storage: Storage, ctx: OpContext, opts: LoaderOptions = {}): Loaders {
  const batch = opts.batch ?? true;
  // Pages and counts asked at one level share one batch: one cache probe, then one query of each
  // kind per host for the misses. One loader, so each read is one promise, not two.
  const lists = new DataLoader<ListRead, Page | number, string>(
    async (reads) => {
      const reqs: PageRequest[] = [];
      const counts: CountKey[] = [];
      for (const r of reads) r.req ? reqs.push(r.req) : counts.push(r.count!);
      const out = await level(ctx, 'lists', reads.length, (c) => storage.mappings.readLists(reqs, counts, c));
      let p = 0;
      return reads.map((r) => (r.req ? out.pages[p++]! : (out.counts.get(countKey(r.count!.id, r.count!.kind)) ?? 0)));
    },
    { batch, maxBatchSize: 5000, cacheKeyFn: (r) => (r.req ? pageKey(r.req) : countKey(r.count!.id, r.count!.kind)) },
  );
  return {
    objects: new DataLoader(
      async (ids) => {
        const { found, failed } = await level(ctx, 'objects', ids.length, (c) => storage.objects.getManySettled(ids, c));
        return ids.map((id) => {
          const err = failed.get(id);
          if (err !== undefined) return err instanceof Error ? err : new Error(String(err));
          const o = found.get(id);
          return o && isActive(o) ? o : null;
        });
      },
      { batch, cacheKeyFn: (id) => id, maxBatchSize: 5000 },
    ),

    pages: { load: (req) => lists.load({ req }) as Promise<Page>, replace: (req, page) => void lists.clear({ req }).prime({ req }, page) },
    counts: { load: (count) => lists.load({ count }) as Promise<number>, replace: (count, n) => void lists.clear({ count }).prime({ count }, n) },

    edges: new DataLoader(
      async (keys) => {
        const byTable = groupBy(keys, (k) => k.table);
        const found = new Set<string>();
        await level(ctx, 'edges', keys.length, (c) =>
          Promise.all(
            [...byTable.entries()].map(async ([table, pairs]) => {
              for (const key of await storage.mappings.existing(table, pairs, c)) found.add(`${table}:${key}`);
            }),
          ),
        );
        return keys.map((k) => found.has(`${k.table}:${k.from}:${k.to}`));
      },
      { batch, cacheKeyFn: (k) => `${k.table}:${k.from}:${k.to}` },
    ),

    events: {
      page: (req) => storage.events.page(req, ctx),
      latest: (req) => storage.events.latest(req, ctx),
      notifications: (req) => storage.events.notifications(req, ctx),
    },

    peek: {
      object: (id) => {
        if (!batch) return undefined;
        const o = storage.objects.peek(id, ctx);
        return o === undefined ? undefined : isActive(o) ? o : null;
      },
      page: (req) => (batch ? storage.mappings.peekPage(req, ctx) : undefined),
      count: (key) => (batch ? storage.mappings.peekCount(key, ctx) : undefined),
    },

    lookups: new DataLoader(
      async (keys) => {
        // One lookup per namespace a batch names (a request names one or two).
        const byNamespace = new Map<string, string[]>();
        for (const k of keys) byNamespace.set(k.namespace, [...(byNamespace.get(k.namespace) ?? []), k.key]);
        const found = new Map<string, Map<string, bigint>>();
        await Promise.all(
          [...byNamespace].map(async ([ns, names]) => found.set(ns, await level(ctx, `lookups ${ns}`, names.length, (c) => storage.lookups.lookup(ns, names, c)))),
        );
        return keys.map((k) => found.get(k.namespace)?.get(k.key) ?? null);
      },
      { batch, cacheKeyFn: (k) => `${k.namespace}\u0000${k.key}` },
    ),
  };
}
