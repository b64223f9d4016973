/**
 * The write side of materialized home feeds (the read side, and builds, are src/loaders/feed.ts),
 * generic over the feed a product declares (core/feedSpec.ts): fan-out of a new item to its
 * audience's stored feeds, removal of a deleted item from them, and the cleaning of one viewer's
 * feed. Background jobs run these (src/jobs/kinds/feed.ts); every one is idempotent, so a job that
 * ran partly (its worker killed) and runs again takes effect once.
 *
 * An item's audience: the followers of each of its sources (the references the feed names). A source
 * with more followers than `fanoutMaxFollowers` is not fanned out (one item must not cost a million
 * writes): readers merge its recent items in at read time instead, from `mergeAbove` followers on
 * (half the threshold, so a source whose follower count wobbles around the threshold is covered
 * both ways).
 */
import { sourcesOf, type Feed } from '../core/feedSpec.ts';
import type { MappingTable } from '../core/mappings.ts';
import type { FeedEntry, RedisFeeds } from '../cache/redisFeeds.ts';
import type { Storage } from '../storage/index.ts';
import { isActive, type StoredObject } from '../storage/objectStore.ts';
import type { OpContext } from '../storage/sqlStats.ts';

export interface FeedOptions {
  /** Most items a stored feed keeps (SHARDQL_FEED_SIZE). Default 1000. */
  readonly size: number;
  /** A source with more followers than this is merged at read time, not fanned out (SHARDQL_FEED_FANOUT_MAX_FOLLOWERS). Default 10000. */
  readonly fanoutMaxFollowers: number;
}

export const DEFAULT_FEED_OPTIONS: FeedOptions = { size: 1000, fanoutMaxFollowers: 10_000 };

/** Followers read per page (and feeds written per batch) while fanning out. */
export const FANOUT_PAGE = 1000;

/** From how many followers on a source is merged at read time: half the fan-out threshold. */
export function mergeAbove(opts: FeedOptions): number {
  return Math.floor(opts.fanoutMaxFollowers / 2);
}

/** An item as fan-out sees it: its ID, when it was made (its time in every list), and its sources' IDs by reference. */
export interface FeedItem {
  readonly id: bigint;
  /** One ID per source the feed declares, by the item's reference naming it (`{ <ref>: id, … }`). */
  readonly sources: Readonly<Record<string, bigint>>;
  readonly time: number;
}

/** The audiences of an item: [source, the list of its followers], in the feed's order of sources. */
function audiences(feed: Feed, item: Pick<FeedItem, 'sources'>): [bigint, MappingTable][] {
  return feed.sources.map((s) => {
    const id = item.sources[s.ref];
    if (id === undefined) throw new Error(`a ${feed.item} of the feed ${feed.field} without its ${s.ref}`);
    return [id, s.followers];
  });
}

/** What the viewer follows, by source reference (each of the feed's `ref` → the IDs followed), for deciding what a feed may show. */
export type Follows = ReadonlyMap<string, ReadonlySet<bigint>>;

/**
 * Whether an item may show in a viewer's feed now: it is active, every source it names is active,
 * and the viewer follows one of them. `objects` holds the item's sources as loaded (null: missing
 * or deleted).
 */
export function visibleIn(
  feed: Feed,
  follows: Follows,
  item: StoredObject | null | undefined,
  objects: (id: bigint) => StoredObject | null | undefined,
): boolean {
  if (!item || item.type !== feed.item || !isActive(item)) return false;
  const ids = sourcesOf(feed, item.refs as Readonly<Record<string, bigint | undefined>>);
  if (!ids) return false;
  if (!feed.sources.some((s) => follows.get(s.ref)?.has(ids[s.ref]!))) return false;
  return feed.sources.every((s) => {
    const o = objects(ids[s.ref]!);
    return !!o && isActive(o);
  });
}

export interface FanoutReport {
  readonly followers: number;
  /** Feeds the item was added to; feeds that held it already (a re-run); feeds that do not exist (left absent). */
  readonly added: number;
  readonly present: number;
  readonly missing: number;
  /** Feeds whose stored window ends above the item (it is read from MySQL there). */
  readonly belowHorizon: number;
  /** Sources skipped for having too many followers (merged at read time). */
  readonly bigSources: number;
  /** The item was deleted before its fan-out: nothing done. */
  readonly gone: boolean;
}

export interface FanoutTuning {
  /** Followers per page (and feeds per batch of appends). Default FANOUT_PAGE. */
  readonly pageSize?: number;
  /** Awaited before each page of followers but the first (tests hold a fan-out midway with it). */
  readonly beforePage?: () => Promise<void>;
}

export interface FeedWritesOptions {
  /** The feed the served product declares, resolved against the model. */
  readonly feed: Feed;
  readonly storage: Storage;
  readonly feeds: RedisFeeds;
  readonly options: FeedOptions;
  readonly tuning?: FanoutTuning;
}

export class FeedWrites {
  readonly feed: Feed;
  readonly #storage: Storage;
  readonly #feeds: RedisFeeds;
  readonly #opts: FeedOptions;
  readonly #pageSize: number;
  readonly #beforePage: (() => Promise<void>) | undefined;

  constructor(opts: FeedWritesOptions) {
    this.feed = opts.feed;
    this.#storage = opts.storage;
    this.#feeds = opts.feeds;
    this.#opts = opts.options;
    this.#pageSize = opts.tuning?.pageSize ?? FANOUT_PAGE;
    this.#beforePage = opts.tuning?.beforePage;
  }

  /**
   * Adds a new item to the stored feed of every follower of each of its sources that has one (the
   * append rule). Pages through each follower list; `checkpoint` runs between pages (a stopping
   * worker throws there and the job runs again later: every add is idempotent).
   */
  async fanOut(item: FeedItem, checkpoint: () => void = () => undefined, ctx: OpContext = {}): Promise<FanoutReport> {
    const report = { followers: 0, added: 0, present: 0, missing: 0, belowHorizon: 0, bigSources: 0, gone: false };
    const current = await this.#storage.objects.get(item.id, ctx);
    if (!current || !isActive(current)) return { ...report, gone: true };
    const entry: FeedEntry = { id: item.id, time: item.time };
    await this.#eachAudience(item, checkpoint, ctx, async (viewers) => {
      const out = await this.#feeds.append(viewers, entry);
      report.followers += viewers.length;
      report.added += out.added;
      report.present += out.present;
      report.missing += out.missing;
      report.belowHorizon += out['below-horizon'];
    }, () => report.bigSources++);
    return report;
  }

  /** Removes a deleted item from the stored feeds of its audience. Returns how many held it. */
  async retract(item: Pick<FeedItem, 'id' | 'sources'>, checkpoint: () => void = () => undefined, ctx: OpContext = {}): Promise<{ followers: number; removed: number }> {
    let followers = 0;
    let removed = 0;
    // Big sources included: a feed may hold the item from when its source was small.
    await this.#eachAudience(item, checkpoint, ctx, async (viewers) => {
      followers += viewers.length;
      removed += await this.#feeds.removeFromMany(viewers, item.id);
    });
    return { followers, removed };
  }

  /**
   * Removes from one viewer's stored feed the items it must no longer show (deleted, of a deleted
   * source, of a source no longer followed): `items` (what a reader found), or every item it
   * holds. Each is checked again here against the current state first.
   */
  async clean(viewer: bigint, items: readonly bigint[] | 'all', ctx: OpContext = {}): Promise<{ checked: number; removed: number }> {
    const candidates = items === 'all' ? await this.#storedItems(viewer) : items;
    if (candidates.length === 0) return { checked: 0, removed: 0 };
    const [follows, objects] = await Promise.all([this.follows(viewer, ctx), this.#storage.objects.getMany(candidates, ctx)]);
    const refs = new Set<bigint>();
    for (const o of objects.values()) {
      const named = o.refs as Readonly<Record<string, bigint | undefined>>;
      for (const s of this.feed.sources) if (named[s.ref] !== undefined) refs.add(named[s.ref]!);
    }
    const sources = await this.#storage.objects.getMany([...refs], ctx);
    const gone = candidates.filter((id) => !visibleIn(this.feed, follows, objects.get(id), (r) => sources.get(r)));
    return { checked: candidates.length, removed: await this.#feeds.remove(viewer, gone) };
  }

  /** Adds to the counters of feed work /metrics shows (see RedisFeeds.count). */
  count(work: Readonly<Record<string, number>>): Promise<void> {
    return this.#feeds.count(work);
  }

  /** Every source the viewer follows, by reference: all of them, page by page. */
  async follows(viewer: bigint, ctx: OpContext = {}): Promise<Follows> {
    const lists = await Promise.all(this.feed.sources.map((s) => this.#all(s.follows, viewer, ctx)));
    return new Map(this.feed.sources.map((s, i) => [s.ref, new Set(lists[i])]));
  }

  async #storedItems(viewer: bigint): Promise<bigint[]> {
    const read = await this.#feeds.read(viewer, undefined, this.#feeds.cap);
    return read.state === 'stored' ? read.entries.map((e) => e.id) : [];
  }

  async #all(table: MappingTable, from: bigint, ctx: OpContext): Promise<bigint[]> {
    const out: bigint[] = [];
    let after: string | null = null;
    for (;;) {
      const [page] = await this.#storage.mappings.pages([{ table, from, first: FANOUT_PAGE, after }], ctx);
      for (const e of page!.edges) out.push(e.to);
      if (!page!.hasNextPage || page!.endCursor === null) return out;
      after = page!.endCursor;
    }
  }

  /**
   * Calls `each` with every page of followers of each of the item's sources, skipping (and
   * reporting to `big`) a source over the fan-out threshold. A follower of two is in two pages.
   */
  async #eachAudience(
    item: Pick<FeedItem, 'sources'>,
    checkpoint: () => void,
    ctx: OpContext,
    each: (viewers: bigint[]) => Promise<void>,
    big?: () => void,
  ): Promise<void> {
    const sources = audiences(this.feed, item);
    const counts = big ? await this.#storage.mappings.counts(sources.map(([id, kind]) => ({ id, kind })), ctx) : undefined;
    for (const [source, table] of sources) {
      if (counts && (counts.get(`${source}:${table}`) ?? 0) > this.#opts.fanoutMaxFollowers) {
        big?.();
        continue;
      }
      let after: string | null = null;
      for (let n = 0; ; n++) {
        if (n > 0) await this.#beforePage?.();
        checkpoint();
        const [page] = await this.#storage.mappings.pages([{ table, from: source, first: this.#pageSize, after }], ctx);
        if (page!.edges.length > 0) await each(page!.edges.map((e) => e.to));
        if (!page!.hasNextPage || page!.endCursor === null) break;
        after = page!.endCursor;
      }
    }
  }
}
