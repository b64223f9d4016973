import type { CacheLayer } from '../core/cacheStats.ts';
import type { InvalidationLog } from '../cache/invalidationLog.ts';
import type { OpContext } from './sqlStats.ts';

/**
 * One call to a cache layer (a probe, a fill, an invalidation: one round trip per server) under a
 * span of its own when the operation is traced; just the call when it is not.
 */
export async function cacheCall<T>(ctx: OpContext, layer: CacheLayer, operation: string, keys: number, run: () => Promise<T>): Promise<T> {
  if (ctx.trace === undefined) return run();
  const span = ctx.trace.begin(`cache ${layer} ${operation}`, { 'db.system.name': layer, 'db.operation.name': operation, 'shardql.keys': keys }, 'client');
  try {
    const out = await run();
    span.end();
    return out;
  } catch (err) {
    span.end(undefined, err);
    throw err;
  }
}

/**
 * Where an item lives in the in-process cache: the namespace and ID of its invalidation key
 * (`o:42` → 'o', 42n; `l:board_has_pins:7` → 'l:board_has_pins', 7n) and a field inside it.
 */
export interface NearSlot {
  readonly ns: string;
  readonly id: bigint;
  readonly field: string;
}

/**
 * The look-aside both stores share: the in-process layer (L1) in front of a shared layer
 * (memcached for objects, Redis for pages and counts) in front of MySQL, and the invalidation
 * that keeps all of them true after a write. A store says where an item lives and how to read
 * misses below L1; this class does the probe, the fill and the invalidation order.
 */
export class LookAside {
  readonly #log: InvalidationLog | undefined;
  readonly #onInvalidationError: (layer: CacheLayer | 'mysql', err: unknown) => void;
  readonly #outbox: ((keys: readonly string[], ctx: OpContext) => Promise<void>) | undefined;

  constructor(opts: {
    log?: InvalidationLog | undefined;
    onInvalidationError?: (layer: CacheLayer | 'mysql', err: unknown) => void;
    /** Records keys whose invalidation failed and could not be recorded in Redis, in MySQL (see `invalidate`). */
    outbox?: (keys: readonly string[], ctx: OpContext) => Promise<void>;
  }) {
    this.#log = opts.log;
    this.#onInvalidationError = opts.onInvalidationError ?? (() => undefined);
    this.#outbox = opts.outbox;
  }

  /**
   * Reads items through L1: those found are handed to `found`; the rest go to `below` (the shared
   * layer and MySQL), whose answers it passes to `fill` to be stored in L1 under the operation's
   * view. Without a view (no L1, or Redis cannot give one) every item goes below.
   */
  async read<T, V>(
    ctx: OpContext,
    items: readonly T[],
    slot: (item: T) => NearSlot,
    found: (item: T, value: V) => void,
    below: (misses: readonly T[], fill: (item: T, value: V) => void) => Promise<void>,
  ): Promise<void> {
    const log = this.#log;
    const view = log && ctx.near && items.length > 0 ? await (ctx.near.view ??= cacheCall(ctx, 'redis', 'barrier', 0, () => log.view(ctx.cache))) : undefined;
    if (!view) return below(items, () => undefined);
    ctx.near!.current = view;
    const near = this.#log!.near;
    const misses: T[] = [];
    for (const item of items) {
      const s = slot(item);
      const v = near.get(view, s.ns, s.id, s.field);
      if (v !== undefined) found(item, v as V);
      else misses.push(item);
    }
    ctx.cache?.hits('local', items.length - misses.length);
    ctx.cache?.misses('local', misses.length);
    if (misses.length === 0) return;
    await below(misses, (item, value) => {
      const s = slot(item);
      near.fill(view, s.ns, s.id, s.field, value);
    });
  }

  /**
   * An item already in L1 under the operation's view, without a promise: for resolvers of a warm
   * request, where a DataLoader round through the microtask queue for every count and object cost
   * more than the lookup. Undefined when the operation has no view yet or L1 lacks the item.
   */
  peek(ctx: OpContext, slot: NearSlot): unknown {
    const view = ctx.near?.current;
    if (view === undefined || !this.#log) return undefined;
    const v = this.#log.near.get(view, slot.ns, slot.id, slot.field);
    if (v !== undefined) ctx.cache?.hits('local', 1);
    return v;
  }

  /**
   * After a commit: the shared layer first, then the log every gateway's L1 obeys — in that order,
   * so no gateway refills its L1 from a stale shared copy. Never fails the committed write; a
   * failure is reported, and made durable before the write is acknowledged:
   *   - the shared layer failed (memcached unreachable from here): the log entry says so and Redis
   *     records the keys, so every gateway invalidates them in the shared layer before it next
   *     reads them, and any gateway's sweep does (`CacheLayers.sweepUnshared`);
   *   - the log could not be written either (Redis unreachable from here too), or there is no log:
   *     `outbox` records the keys in MySQL (an intent on each key's shard), and any gateway's
   *     repair pass invalidates every layer and appends to the log for them.
   * Nothing extra is sent when every layer answered.
   *
   * `strict` (the repair pass replaying such a record): throws if any layer fails, records nothing.
   */
  async invalidate(
    ctx: OpContext,
    keys: readonly string[],
    shared?: {
      readonly layer: CacheLayer;
      readonly run: (keys: readonly string[]) => Promise<void>;
      /** The shared layer's invalidation and the log's append as one call, where the layer can (see RedisLists.loggedInvalidation). */
      readonly logged?: (log: InvalidationLog) => ((keys: readonly string[]) => Promise<void>) | undefined;
    },
    strict = false,
  ): Promise<void> {
    if (keys.length === 0) return;
    // A process without the shared layer cannot do a replay's work: leave the record to one that has it.
    if (strict && !shared) throw new Error('no shared cache layer here to replay an invalidation');
    let sharedDone = true;
    let failure: unknown;
    const logged = this.#log && !strict ? shared?.logged?.(this.#log) : undefined;
    if (logged) {
      // The shared layer lives in the log's Redis: deleted and logged in one round trip (one
      // script). On failure neither is known done: recorded in MySQL as when both calls fail below.
      ctx.cache?.roundTrip('redis');
      try {
        await cacheCall(ctx, 'redis', 'invalidate', keys.length, () => logged(keys));
        return;
      } catch (err) {
        ctx.cache?.error('redis');
        this.#onInvalidationError('redis', err);
        return this.#outboxed(keys, ctx);
      }
    }
    if (shared) {
      try {
        await cacheCall(ctx, shared.layer, 'invalidate', keys.length, () => shared.run(keys));
      } catch (err) {
        sharedDone = false;
        failure = err;
        ctx.cache?.error(shared.layer);
        this.#onInvalidationError(shared.layer, err);
      }
    }
    let appended = false;
    if (this.#log) {
      ctx.cache?.roundTrip('redis');
      try {
        const log = this.#log;
        await cacheCall(ctx, 'redis', 'log', keys.length, () => log.append(keys, sharedDone ? [] : keys));
        appended = true;
      } catch (err) {
        failure = err;
        ctx.cache?.error('redis');
        this.#onInvalidationError('redis', err);
      }
    }
    if (strict) {
      if (failure !== undefined) throw failure instanceof Error ? failure : new Error(String(failure));
      return;
    }
    // Recorded in Redis (or nothing failed, or nothing else is stale: no log and no failure).
    if (appended || (sharedDone && !this.#log)) return;
    await this.#outboxed(keys, ctx);
  }

  /** Keys no layer could record as invalidated: into the outbox (MySQL), if there is one. Never throws. */
  async #outboxed(keys: readonly string[], ctx: OpContext): Promise<void> {
    if (!this.#outbox) return;
    try {
      await this.#outbox(keys, ctx);
    } catch (err) {
      this.#onInvalidationError('mysql', err);
    }
  }
}
