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
 *   const v7 = c.advance({ epoch: 'e1', seq: 7, keys: [] });
 *   c.fill(v7, 'o', 42n, 'o', obj);                       // true
 *   c.advance({ epoch: 'e1', seq: 8, keys: ['o:42'] });   // o:42 dropped
 *   c.fill(v7, 'o', 42n, 'o', old);                       // false: invalidated at 8 > 7
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
  /**
   * Most keys held (objects and lists); the oldest filled go first. Default 200,000. 0: a process
   * that reads no L1 (a worker, the CLI): it holds nothing, and so remembers no invalidation either
   * (they exist to refuse fills; an import's worker spent ~4% of its CPU recording them).
   */
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

/**
 * One key's fields. The first field filled is held inline (an object has only `o`; a list mostly
 * one page and `n`), the rest in a Map made when needed: a hit then reads no Map of its own. At
 * L1's size nearly every get misses the CPU cache, so each object left out of the way counts
 * (a get with a Map of fields took ~2× as long on 300,000 entries).
 */
class Entry {
  readonly at: number;
  readonly field: string;
  value: unknown;
  rest: Map<string, unknown> | undefined = undefined;
  constructor(at: number, field: string, value: unknown) {
    this.at = at;
    this.field = field;
    this.value = value;
  }
  get(field: string): unknown {
    return field === this.field ? this.value : this.rest?.get(field);
  }
  set(field: string, value: unknown): void {
    if (field === this.field) this.value = value;
    else (this.rest ??= new Map()).set(field, value);
  }
}

interface Invalidation {
  readonly ns: string;
  readonly id: bigint;
  readonly seq: number;
  readonly at: number;
}

/**
 * An invalidation key of the log as (namespace, ID): `o:42` → ('o', 42n), `l:board_has_pins:7` →
 * ('l:board_has_pins', 7n). Lookups are by bigint inside a namespace: a key string built per lookup
 * cost a concatenation, a flattening and a hash each time (4× a bigint lookup, and garbage).
 */
export function splitKey(key: string): { ns: string; id: bigint } | undefined {
  const i = key.lastIndexOf(':');
  const tail = key.slice(i + 1);
  if (i <= 0 || !/^[0-9]{1,20}$/.test(tail)) return undefined;
  return { ns: key.slice(0, i), id: BigInt(tail) };
}

export class NearCache {
  readonly #entries = new Map<string, Map<bigint, Entry>>();
  #size = 0;
  /** Latest invalidation of each key (namespace → ID → record), and all of them in order, for pruning. */
  readonly #invalidated = new Map<string, Map<bigint, Invalidation>>();
  #queue: Invalidation[] = [];
  #head = 0;
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
    return this.#size;
  }

  /** Invalidated keys remembered, to refuse the fills of views older than them. */
  get remembered(): number {
    return this.#queue.length - this.#head;
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
    this.#size = 0;
    this.#invalidated.clear();
    this.#queue = [];
    this.#head = 0;
  }

  /** A field of (namespace, id), or undefined when absent or too old. */
  get(view: NearView, ns: string, id: bigint, field: string): unknown {
    const byId = this.#entries.get(ns);
    const e = byId?.get(id);
    if (e === undefined) return undefined;
    if (view.at - e.at > this.#maxAgeMs) {
      byId!.delete(id);
      this.#size--;
      return undefined;
    }
    return e.get(field);
  }

  /** Stores a field read under `view`, unless the key was invalidated after the view's position. Returns whether it was stored. */
  fill(view: NearView, ns: string, id: bigint, field: string, value: unknown): boolean {
    if (this.#maxEntries === 0 || view.seq < this.#floor) return false;
    const inv = this.#invalidated.get(ns)?.get(id);
    if (inv !== undefined && inv.seq > view.seq) return false;
    const now = this.#now();
    // A view older than what the cache remembers could miss an invalidation it forgot.
    if (now - view.at > this.#memoryMs / 2) return false;
    let byId = this.#entries.get(ns);
    if (byId === undefined) this.#entries.set(ns, (byId = new Map()));
    const e = byId.get(id);
    if (e === undefined) {
      byId.set(id, new Entry(now, field, value));
      if (++this.#size > this.#maxEntries) this.#evict();
    } else e.set(field, value);
    return true;
  }

  #drop(keys: readonly string[], seq: number, at: number): void {
    if (this.#maxEntries === 0) return; // nothing held, nothing to refuse
    for (const k of keys) {
      const key = splitKey(k);
      if (key === undefined) continue;
      const { ns, id } = key;
      if (this.#entries.get(ns)?.delete(id)) this.#size--;
      let byId = this.#invalidated.get(ns);
      if (byId === undefined) this.#invalidated.set(ns, (byId = new Map()));
      const rec: Invalidation = { ns, id, seq, at };
      byId.set(id, rec);
      this.#queue.push(rec);
    }
    this.#prune(at);
  }

  /** Forgets invalidations older than the memory window (or beyond its size), raising the floor past them. */
  #prune(now: number): void {
    while (this.#head < this.#queue.length) {
      const rec = this.#queue[this.#head]!;
      if (now - rec.at <= this.#memoryMs && this.#queue.length - this.#head <= this.#maxRemembered) break;
      this.#head++;
      const byId = this.#invalidated.get(rec.ns);
      // A later invalidation of the same key has its own record further on: keep that one.
      if (byId?.get(rec.id) === rec) byId.delete(rec.id);
      this.#floor = Math.max(this.#floor, rec.seq);
    }
    if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      this.#queue = this.#queue.slice(this.#head);
      this.#head = 0;
    }
  }

  /** Drops the oldest filled entries of the largest namespaces until the cache fits. */
  #evict(): void {
    while (this.#size > this.#maxEntries) {
      let largest: Map<bigint, Entry> | undefined;
      for (const byId of this.#entries.values()) if (!largest || byId.size > largest.size) largest = byId;
      if (!largest) return;
      let excess = Math.max(1, Math.min(largest.size, this.#size - this.#maxEntries));
      for (const id of largest.keys()) {
        if (excess-- <= 0) break;
        largest.delete(id);
        this.#size--;
      }
    }
  }
}
