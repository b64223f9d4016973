import { decodeCursor, encodeCursor } from '../core/cursor.ts';
import type { Feed, FeedSource } from '../core/feedSpec.ts';
import type { FeedEntry, FeedPosition, FeedRead, RedisFeeds } from '../cache/redisFeeds.ts';
import type { BackgroundJobs } from '../services/backgroundJobs.ts';
import { mergeAbove, visibleIn, type FeedOptions, type Follows } from '../services/feeds.ts';
import type { Storage } from '../storage/index.ts';
import type { PageEdge } from '../storage/mappingStore.ts';
import type { StoredObject } from '../storage/objectStore.ts';
import type { OpContext } from '../storage/sqlStats.ts';
import type { Loaders } from './loaders.ts';

/** Follows read per page: every follow is read, a page of this many at a time. */
export const FEED_MAX_SOURCES = 1000;

/**
 * Follows made this long before a feed's build began count as made after it: merged at read time
 * (the build may have read the follow lists before such a follow committed; gateways' clocks differ).
 */
export const FOLLOW_SKEW_MS = 60_000;
/** More follows than this since a feed was built, and the next read builds it again rather than merge them all. */
export const MAX_RECENT_FOLLOWS = 50;
/** A build reads at most this many rounds of source pages; below what it reached, readers merge from MySQL. */
const BUILD_ROUNDS = 8;

/**
 * Sources a read merges beside its stored feed, as the cost model charges it: the big ones (not
 * fanned out) and those followed since the feed was built (at most MAX_RECENT_FOLLOWS, beyond which
 * the feed is built again).
 */
export const FEED_COST_SOURCES = MAX_RECENT_FOLLOWS;

/**
 * What the cost model (graphql/cost.ts `FeedCost`) charges a read of `feed`: its Query field, its
 * kinds of source, the follows read per page and the sources merged beside the stored page.
 */
export function feedCost(feed: Feed): { field: string; sources: number; followsPerPage: number; mergedSources: number } {
  return { field: feed.field, sources: feed.sources.length, followsPerPage: FEED_MAX_SOURCES, mergedSources: FEED_COST_SOURCES };
}

/** A page of the feed, read forward only: whether items precede it is not computed (false). */
export interface FeedPage {
  readonly edges: { cursor: string; node: StoredObject }[];
  readonly hasNextPage: boolean;
  readonly hasPreviousPage: false;
  readonly startCursor: string | null;
  readonly endCursor: string | null;
}

/** A followed source, of which kind (the feed's source it is), and when it was followed (ms). */
interface Source {
  readonly kind: FeedSource;
  readonly from: bigint;
  readonly followedAt: number;
}

/** (time, id) descending: negative when `a` comes first (is newer). */
function newestFirst(a: FeedPosition, b: FeedPosition): number {
  return b.time - a.time || (b.id > a.id ? 1 : b.id < a.id ? -1 : 0);
}

const above = (a: FeedPosition, b: FeedPosition): boolean => newestFirst(a, b) < 0;

export interface HomeFeedsOptions {
  /** The feed the served product declares, resolved against the model. */
  readonly feed: Feed;
  readonly storage: Storage;
  /** Stored feeds; undefined: every read merges from MySQL. */
  readonly feeds?: RedisFeeds | undefined;
  readonly options: FeedOptions;
  /** Where a read sends the stored items it found it must not show, to be removed (`feed.clean`). */
  readonly jobs?: BackgroundJobs | undefined;
  readonly now?: () => number;
  readonly log?: (event: string, fields?: Record<string, unknown>) => void;
}

/**
 * The home feed: the items of the sources the viewer follows, newest first (ties: higher item ID
 * first), keyset-paged by a cursor of (time, item ID) — one cursor format whether a page comes from a
 * stored feed or from a merge of the sources, so a client pages across both without noticing.
 *
 * A read:
 *   1. the viewer's follows (every page) and the stored page after the cursor, at once (L1 /
 *      one Redis call), then the follower count of every followed source (L1 when warm);
 *   2. a missing feed is built (`#build`: marked first, so fan-outs landing meanwhile are kept) and
 *      stored; a feed being built by another request is read around (merged, not stored);
 *   3. sources merged at read time: big ones (not fanned out) and those followed since the build;
 *   4. below the stored feed's horizon, or without a stored feed, the page is a merge of every
 *      source's page after the cursor (one round trip per host);
 *   5. the window's items, then their sources (one level each, L1 when warm); an item shows only
 *      if it and every source it names are active and the viewer still follows one of them.
 *      Stored items that fail are handed to a `feed.clean` job.
 * A warm read costs two Redis round trips (the read barrier, the stored page) and no SQL.
 */
export class HomeFeeds {
  readonly feed: Feed;
  /** What the cost model charges a read of this feed. */
  readonly cost: ReturnType<typeof feedCost>;
  readonly #storage: Storage;
  readonly #feeds: RedisFeeds | undefined;
  readonly #opts: FeedOptions;
  readonly #jobs: BackgroundJobs | undefined;
  readonly #now: () => number;
  readonly #log: (event: string, fields?: Record<string, unknown>) => void;

  constructor(opts: HomeFeedsOptions) {
    this.feed = opts.feed;
    this.cost = feedCost(opts.feed);
    this.#storage = opts.storage;
    this.#feeds = opts.feeds;
    this.#opts = opts.options;
    this.#jobs = opts.jobs;
    this.#now = opts.now ?? Date.now;
    this.#log = opts.log ?? (() => undefined);
  }

  async page(loaders: Loaders, op: OpContext, viewer: bigint, first: number, after: string | null): Promise<FeedPage> {
    const list = `feed:${viewer}`;
    // An empty cursor is a bad cursor, as in every other list, not "from the start".
    const start = after !== null ? decodeCursor(after, list) : undefined;
    const pos: FeedPosition | undefined = start ? { time: Number(start.key), id: start.id } : undefined;
    const nothingAfter = pos !== undefined && pos.time < 0;
    const [sources, stored] = await Promise.all([
      this.#sources(loaders, viewer),
      this.#feeds && !nothingAfter ? this.#feeds.read(viewer, pos, first + 1, op.cache) : Promise.resolve<FeedRead>({ state: 'missing' }),
    ]);
    const counts = await this.#followerCounts(loaders, sources);
    const big = sources.filter((s, i) => counts[i]! > mergeAbove(this.#opts));

    // What the stored feed (or a build) gives, and which sources to merge in beside it.
    let feed: { entries: FeedEntry[]; horizon: FeedPosition | undefined; readTime: Source[] } | undefined;
    let rebuild = false;
    if (stored.state === 'stored') {
      const recent = sources.filter((s) => s.followedAt > stored.builtAt - FOLLOW_SKEW_MS);
      if (recent.length > MAX_RECENT_FOLLOWS) rebuild = true;
      else feed = { entries: stored.entries, horizon: stored.horizon, readTime: union(big, recent) };
    }
    if (this.#feeds && !nothingAfter && (stored.state === 'missing' || rebuild)) {
      const fannedOut = sources.filter((_s, i) => counts[i]! <= this.#opts.fanoutMaxFollowers);
      const built = await this.#buildAndStore(op, viewer, fannedOut, rebuild);
      if (built) {
        const entries = built.entries.filter((e) => !pos || above(e, pos)).slice(0, first + 1);
        const recent = sources.filter((s) => s.followedAt > built.builtAt - FOLLOW_SKEW_MS);
        feed = { entries, horizon: built.horizon, readTime: union(big, recent) };
      }
    }

    let window: FeedEntry[] | undefined;
    const storedIds = new Set<bigint>();
    if (feed) {
      for (const e of feed.entries) storedIds.add(e.id);
      const merged = dedupe([...feed.entries, ...(await this.#sourcePages(loaders, feed.readTime, first, pos))]);
      const exact = feed.horizon ? merged.filter((e) => above(e, feed.horizon!)) : merged;
      // Short above the horizon: the stored feed cannot say what comes next; merge every source.
      if (exact.length > first || !feed.horizon) window = exact.slice(0, first + 1);
    }
    window ??= nothingAfter ? [] : dedupe(await this.#sourcePages(loaders, sources, first, pos)).slice(0, first + 1);

    const shown = window.slice(0, first);
    const follows: Follows = new Map(this.feed.sources.map((k) => [k.ref, new Set(sources.filter((s) => s.kind === k).map((s) => s.from))]));
    const items = await objectsOf(loaders, shown.map((e) => e.id));
    const parentIds = new Set<bigint>();
    for (const item of items) {
      if (!item) continue;
      const refs = item.refs as Readonly<Record<string, bigint | undefined>>;
      for (const k of this.feed.sources) if (refs[k.ref] !== undefined) parentIds.add(refs[k.ref]!);
    }
    const parentList = [...parentIds];
    const parentObjects = await objectsOf(loaders, parentList);
    const parents = new Map(parentList.map((id, i) => [id, parentObjects[i]]));
    const edges: FeedPage['edges'] = [];
    const unwanted: bigint[] = [];
    shown.forEach((e, i) => {
      const item = items[i];
      if (item && visibleIn(this.feed, follows, item, (id) => parents.get(id))) edges.push({ cursor: encodeCursor({ list, key: BigInt(e.time), id: e.id }), node: item });
      else if (storedIds.has(e.id)) unwanted.push(e.id);
    });
    if (unwanted.length > 0) this.#clean(viewer, unwanted);
    const cursorOf = (e: FeedEntry | undefined): string | null => (e ? encodeCursor({ list, key: BigInt(e.time), id: e.id }) : null);
    return {
      edges,
      hasNextPage: window.length > first,
      hasPreviousPage: false,
      startCursor: cursorOf(shown[0]),
      endCursor: cursorOf(shown.at(-1)),
    };
  }

  /** Every source the viewer follows, with when: all of them, a page at a time, in the feed's order of sources. */
  async #sources(loaders: Loaders, viewer: bigint): Promise<Source[]> {
    const all = async (kind: FeedSource): Promise<Source[]> => {
      const out: Source[] = [];
      let after: string | null = null;
      for (;;) {
        const page = await loaders.pages.load({ table: kind.follows, from: viewer, first: FEED_MAX_SOURCES, after });
        for (const e of page.edges) out.push({ kind, from: e.to, followedAt: e.sequence });
        if (!page.hasNextPage || page.endCursor === null) return out;
        after = page.endCursor;
      }
    };
    return (await Promise.all(this.feed.sources.map(all))).flat();
  }

  /** Followers of each source (L1 first: no promise per source when warm). */
  async #followerCounts(loaders: Loaders, sources: readonly Source[]): Promise<number[]> {
    const keys = sources.map((s) => ({ id: s.from, kind: s.kind.followers }));
    const known = keys.map((k) => loaders.peek.count(k));
    if (known.every((n) => n !== undefined)) return known as number[];
    return Promise.all(keys.map((k, i) => known[i] ?? loaders.counts.load(k)));
  }

  /** `first + 1` items of each source after the position: one batch (a round trip per host, or L1). */
  async #sourcePages(loaders: Loaders, sources: readonly Source[], first: number, pos: FeedPosition | undefined): Promise<FeedEntry[]> {
    const startAfter = pos ? { startAfter: { key: BigInt(pos.time), id: pos.id } } : {};
    const pages = await Promise.all(sources.map((s) => loaders.pages.load({ table: s.kind.items, from: s.from, first: first + 1, ...startAfter })));
    return pages.flatMap((p) => p.edges.map(entryOf));
  }

  /**
   * Builds a missing feed (or replaces one, `replace`) and stores it: marks the key first (from
   * then on every fan-out appends to it), then reads the sources — past the request's L1, whose
   * view may predate an item whose fan-out found no feed — and commits what it read on top of what
   * was appended meanwhile. Undefined when another request holds the mark, or Redis fails: the
   * caller merges instead.
   */
  async #buildAndStore(
    op: OpContext,
    viewer: bigint,
    sources: readonly Source[],
    replace: boolean,
  ): Promise<{ entries: FeedEntry[]; horizon: FeedPosition | undefined; builtAt: number } | undefined> {
    const feeds = this.#feeds!;
    const builtAt = this.#now();
    let token: string | undefined;
    try {
      token = await feeds.mark(viewer, builtAt, { replace }, op.cache);
    } catch (err) {
      op.cache?.error('redis');
      this.#log('feed_build_failed', { viewer: `${viewer}`, error: err instanceof Error ? err.message : String(err) });
      return undefined;
    }
    if (token === undefined) return undefined;
    const { near: _near, ...rest } = op;
    const built = await this.#build(rest, sources);
    try {
      if (!(await feeds.commit(viewer, token, built.entries, built.horizon, op.cache))) return undefined;
    } catch (err) {
      op.cache?.error('redis');
      this.#log('feed_build_failed', { viewer: `${viewer}`, error: err instanceof Error ? err.message : String(err) });
      return undefined;
    }
    return { ...built, builtAt };
  }

  /**
   * The newest `cap` items over the sources: rounds of a page from every source that may still
   * hold one of them (a page after the last it gave), at most BUILD_ROUNDS. The horizon is the
   * highest position below which something may be missing: the last item read of a source not
   * read to its end, or the first item beyond the cap.
   */
  async #build(ctx: OpContext, sources: readonly Source[]): Promise<{ entries: FeedEntry[]; horizon: FeedPosition | undefined }> {
    const cap = this.#feeds!.cap;
    const state = sources.map((s) => ({ s, last: undefined as FeedPosition | undefined, done: false }));
    const collected = new Map<bigint, number>();
    let per = Math.min(100, Math.max(10, Math.ceil((2 * cap) / Math.max(1, sources.length))));
    let sorted: FeedEntry[] = [];
    for (let round = 0; round < BUILD_ROUNDS; round++) {
      const nth = sorted.length >= cap ? sorted[cap - 1] : undefined;
      const needing = state.filter((x) => !x.done && (nth === undefined || x.last === undefined || above(x.last, nth)));
      if (needing.length === 0) break;
      const pages = await this.#storage.mappings.pages(
        needing.map((x) => ({
          table: x.s.kind.items,
          from: x.s.from,
          first: per,
          ...(x.last ? { startAfter: { key: BigInt(x.last.time), id: x.last.id } } : {}),
        })),
        ctx,
      );
      pages.forEach((page, i) => {
        const x = needing[i]!;
        for (const e of page.edges) collected.set(e.to, e.sequence);
        const last = page.edges.at(-1);
        if (last) x.last = entryOf(last);
        x.done = !page.hasNextPage;
      });
      sorted = [...collected].map(([id, time]) => ({ id, time })).sort(newestFirst);
      per = Math.min(per * 2, 200);
    }
    let horizon: FeedPosition | undefined = sorted[cap];
    for (const x of state) if (!x.done && x.last && (!horizon || above(x.last, horizon))) horizon = x.last;
    const entries = (horizon ? sorted.filter((e) => above(e, horizon)) : sorted).slice(0, cap);
    return { entries, horizon };
  }

  /** Hands stored items a read must not show to a `feed.clean` job (never fails the read). */
  #clean(viewer: bigint, items: bigint[]): void {
    if (!this.#jobs) return;
    this.#jobs.enqueue('feed.clean', { viewer, items }).catch((err: unknown) =>
      this.#log('feed_clean_enqueue_failed', { viewer: `${viewer}`, error: err instanceof Error ? err.message : String(err) }),
    );
  }
}

function entryOf(e: PageEdge): FeedEntry {
  return { id: e.to, time: e.sequence };
}

/** Each item once (an item reachable through two sources has one time), newest first. */
function dedupe(entries: readonly FeedEntry[]): FeedEntry[] {
  const seen = new Map<bigint, FeedEntry>();
  for (const e of entries) if (!seen.has(e.id)) seen.set(e.id, e);
  return [...seen.values()].sort(newestFirst);
}

function union(a: readonly Source[], b: readonly Source[]): Source[] {
  const out = new Map<string, Source>();
  for (const s of [...a, ...b]) out.set(`${s.kind.items}:${s.from}`, s);
  return [...out.values()];
}

/** Active objects by ID (null: missing or deleted), from the request's L1 view without a promise when there. */
async function objectsOf(loaders: Loaders, ids: readonly bigint[]): Promise<(StoredObject | null)[]> {
  const known = ids.map((id) => loaders.peek.object(id));
  const missing = ids.filter((_id, i) => known[i] === undefined);
  const loaded = missing.length > 0 ? await loaders.objects.loadMany(missing) : [];
  let next = 0;
  return known.map((k) => {
    if (k !== undefined) return k;
    const o = loaded[next++];
    return o && !(o instanceof Error) ? o : null;
  });
}
