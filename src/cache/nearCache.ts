/**
 * The gateway's in-process cache (L1) of decoded objects, pages and counts, above memcached and
 * Redis (L2). Pure bookkeeping, no I/O: what may be read and filled is decided by positions in
 * the shared invalidation log (invalidationLog.ts), which every write appends to after it has
 * invalidated L2 and before it is acknowledged.
 *
 * A request reads L1 through a view: the log position a read barrier returned after the request
 * began, with every invalidation up to it applied. Two rules keep a view from ever seeing data
 * older than a write acknowledged before the request began:
 *   - `advance` drops every key the log names before a view at that position is handed out;
 *   - a fill made under view position s is refused for a key invalidated at a position above s
 *     (the value may have been read before that write), or when s is below the floor (a position
 *     before which this cache forgot which keys were invalidated).
 *
 *   const c = new NearCache();
 *   c.advance({ epoch: 'e1', seq: 7 });                 // view { seq: 7 }
 *   c.fill({ seq: 7, at }, 'o:42', 'o', obj);           // true
 *   c.advance({ epoch: 'e1', seq: 8, keys: ['o:42'] }); // o:42 dropped
 *   c.fill({ seq: 7, at }, 'o:42', 'o', old);           // false: invalidated at 8 > 7
 */

/** A request's read position: the log position its barrier returned, and when (ms). */
export interface NearView {
  readonly seq: number;
  readonly at: number;
}

/** What one read barrier returned: the log's epoch and position, and the keys invalidated since the last one. */
export interface BarrierResult {
  readonly epoch: string;
  readonly seq: number;
  /** Keys of the entries after the position asked from, oldest first; undefined = gap (forget everything). */
  readonly keys: readonly string[] | undefined;
}

export interface NearCacheOptions {
  /** Most keys held (objects and lists); the oldest filled go first. Default 200,000. */
  readonly maxEntries?: number;
  /**
   * Longest an entry is served, ms: the backstop for a write whose log append failed for good.
   * Default 60,000.
   */
  readonly maxAgeMs?: number;
  /** How long the cache remembers which keys were invalidated, ms (fills of older views are refused). Default 60,000. */
  readonly memoryMs?: number;
  /** Most invalidated keys remembered; beyond it the floor rises. Default 200,000. */
  readonly maxRemembered?: number;
  /** Clock, ms. Default Date.now. */
  readonly now?: () => number;
}

interface Entry {
  readonly at: number;
  readonly fields: Map<string, unknown>;
}

export class NearCache {
  readonly #entries = new Map<string, Entry>();
  /** Key → log position of its latest invalidation, in the order they happened (oldest first). */
  readonly #invalidated = new Map<string, { seq: number; at: number }>();
  readonly #maxEntries: number;
  readonly #maxAgeMs: number;
  readonly #memoryMs: number;
  readonly #maxRemembered: number;
  readonly #now: () => number;
  #epoch: string | undefined;
  #applied = 0;
  /** Views below this position may not fill: the cache no longer knows what they missed. */
  #floor = Number.POSITIVE_INFINITY;

  constructor(opts: NearCacheOptions = {}) {
    this.#maxEntries = opts.maxEntries ?? 200_000;
    this.#maxAgeMs = opts.maxAgeMs ?? 60_000;
    this.#memoryMs = opts.memoryMs ?? 60_000;
    this.#maxRemembered = opts.maxRemembered ?? 200_000;
    this.#now = opts.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The position every invalidation up to which has been applied. */
  get applied(): number {
    return this.#applied;
  }

  /**
   * Applies a barrier's result and returns the view a request may read with. A new epoch (the log
   * was flushed) or a gap (this gateway fell behind the log's retained window) empties the cache.
   */
  advance(r: BarrierResult): NearView {
    const at = this.#now();
    if (r.epoch !== this.#epoch || r.keys === undefined || r.seq < this.#applied) {
      this.clear();
      this.#epoch = r.epoch;
      this.#applied = r.seq;
      this.#floor = r.seq;
      return { seq: r.seq, at };
    }
    if (r.keys.length > 0) this.#drop(r.keys, r.seq, at);
    this.#applied = Math.max(this.#applied, r.seq);
    return { seq: r.seq, at };
  }

  /**
   * Drops keys this gateway just invalidated itself, at log position `seq` (what its append
   * returned), so its own next reads miss them even before its next barrier. With no position
   * (the append failed) nothing may fill until a barrier says where the log is.
   */
  invalidateLocal(keys: readonly string[], seq: number | undefined): void {
    if (seq === undefined) {
      // Forget the epoch too: the next barrier (after the failed append is replayed) starts afresh.
      this.clear();
      this.#epoch = undefined;
      this.#floor = Number.POSITIVE_INFINITY;
      return;
    }
    this.#drop(keys, seq, this.#now());
  }

  /** Forgets every entry (fills stay refused below the floor). */
  clear(): void {
    this.#entries.clear();
    this.#invalidated.clear();
  }

  /** A field of a key, or undefined when absent or too old. */
  get(view: NearView, key: string, field: string): unknown {
    const e = this.#entries.get(key);
    if (e === undefined) return undefined;
    if (view.at - e.at > this.#maxAgeMs) {
      this.#entries.delete(key);
      return undefined;
    }
    return e.fields.get(field);
  }

  /** Stores a field read under `view`, unless the key was invalidated after the view's position. Returns whether it was stored. */
  fill(view: NearView, key: string, field: string, value: unknown): boolean {
    if (view.seq < this.#floor) return false;
    const inv = this.#invalidated.get(key);
    if (inv !== undefined && inv.seq > view.seq) return false;
    const now = this.#now();
    // A view older than what the cache remembers could miss an invalidation it forgot.
    if (now - view.at > this.#memoryMs / 2) return false;
    let e = this.#entries.get(key);
    if (e === undefined) {
      e = { at: now, fields: new Map() };
      this.#entries.set(key, e);
      if (this.#entries.size > this.#maxEntries) this.#evict();
    }
    e.fields.set(field, value);
    return true;
  }

  #drop(keys: readonly string[], seq: number, at: number): void {
    for (const k of keys) {
      this.#entries.delete(k);
      // Re-inserted at the end: the map stays in invalidation order for pruning.
      this.#invalidated.delete(k);
      this.#invalidated.set(k, { seq, at });
    }
    this.#prune(at);
  }

  /** Forgets invalidations older than the memory window (or beyond its size), raising the floor past them. */
  #prune(now: number): void {
    for (const [k, inv] of this.#invalidated) {
      if (now - inv.at <= this.#memoryMs && this.#invalidated.size <= this.#maxRemembered) break;
      this.#invalidated.delete(k);
      this.#floor = Math.max(this.#floor, inv.seq);
    }
  }

  #evict(): void {
    const excess = this.#entries.size - this.#maxEntries;
    let i = 0;
    for (const k of this.#entries.keys()) {
      if (i++ >= excess) break;
      this.#entries.delete(k);
    }
  }
}
