/**
 * The write side of materialized home feeds (the read side, and builds, are src/loaders/feed.ts):
 * fan-out of a new pin to its audience's stored feeds, removal of a deleted pin from them, and the
 * cleaning of one viewer's feed. Background jobs run these (src/jobs/kinds/feed.ts); every one is
 * idempotent, so a job that ran partly (its worker killed) and runs again takes effect once.
 *
 * A pin's audience: the followers of its pinner and of its board. A source with more followers
 * than `fanoutMaxFollowers` is not fanned out (one pin must not cost a million writes): readers
 * merge its recent pins in at read time instead, from `mergeAbove` followers on (half the
 * threshold, so a source whose follower count wobbles around the threshold is covered both ways).
 */
import type { MappingTable } from '../core/mappings.ts';
import type { FeedEntry, RedisFeeds } from '../cache/redisFeeds.ts';
import type { Storage } from '../storage/index.ts';
import { isActive, type StoredObject } from '../storage/objectStore.ts';
import type { OpContext } from '../storage/sqlStats.ts';

export interface FeedOptions {
  /** Most pins a stored feed keeps (SHARDQL_FEED_SIZE). Default 1000. */
  readonly size: number;
  /** A pinner or board with more followers than this is merged at read time, not fanned out (SHARDQL_FEED_FANOUT_MAX_FOLLOWERS). Default 10000. */
  readonly fanoutMaxFollowers: number;
}

export const DEFAULT_FEED_OPTIONS: FeedOptions = { size: 1000, fanoutMaxFollowers: 10_000 };

/** Followers read per page (and feeds written per batch) while fanning out. */
export const FANOUT_PAGE = 1000;

/** From how many followers on a source is merged at read time: half the fan-out threshold. */
export function mergeAbove(opts: FeedOptions): number {
  return Math.floor(opts.fanoutMaxFollowers / 2);
}

/** A pin as fan-out sees it: who made it, where, and when (its time in every list). */
export interface FeedPin {
  readonly id: bigint;
  readonly pinner: bigint;
  readonly board: bigint;
  readonly time: number;
}

/** The two audiences of a pin: [source, the list of its followers]. */
function audiences(pin: Pick<FeedPin, 'pinner' | 'board'>): [bigint, MappingTable][] {
  return [
    [pin.pinner, 'user_followed_by_users'],
    [pin.board, 'board_followed_by_users'],
  ];
}

/** What the viewer follows, for deciding what a feed may show. */
export interface Follows {
  readonly users: ReadonlySet<bigint>;
  readonly boards: ReadonlySet<bigint>;
}

/**
 * Whether a pin may show in a viewer's feed now: it is active, its pinner and its board are
 * active, and the viewer follows its pinner or its board. `objects` holds the pin's pinner and
 * board as loaded (null: missing or deleted).
 */
export function visibleIn(follows: Follows, pin: StoredObject | null | undefined, objects: (id: bigint) => StoredObject | null | undefined): boolean {
  if (!pin || pin.type !== 'pin' || !isActive(pin)) return false;
  const { pinner, board } = pin.refs;
  if (pinner === undefined || board === undefined) return false;
  if (!follows.users.has(pinner) && !follows.boards.has(board)) return false;
  const p = objects(pinner);
  const b = objects(board);
  return !!p && isActive(p) && !!b && isActive(b);
}

export interface FanoutReport {
  readonly followers: number;
  /** Feeds the pin was added to; feeds that held it already (a re-run); feeds that do not exist (left absent). */
  readonly added: number;
  readonly present: number;
  readonly missing: number;
  /** Feeds whose stored window ends above the pin (it is read from MySQL there). */
  readonly belowHorizon: number;
  /** Sources skipped for having too many followers (merged at read time). */
  readonly bigSources: number;
  /** The pin was deleted before its fan-out: nothing done. */
  readonly gone: boolean;
}

export interface FanoutTuning {
  /** Followers per page (and feeds per batch of appends). Default FANOUT_PAGE. */
  readonly pageSize?: number;
  /** Awaited before each page of followers but the first (tests hold a fan-out midway with it). */
  readonly beforePage?: () => Promise<void>;
}

export class FeedWrites {
  readonly #storage: Storage;
  readonly #feeds: RedisFeeds;
  readonly #opts: FeedOptions;
  readonly #pageSize: number;
  readonly #beforePage: (() => Promise<void>) | undefined;

  constructor(storage: Storage, feeds: RedisFeeds, opts: FeedOptions, tuning: FanoutTuning = {}) {
    this.#storage = storage;
    this.#feeds = feeds;
    this.#opts = opts;
    this.#pageSize = tuning.pageSize ?? FANOUT_PAGE;
    this.#beforePage = tuning.beforePage;
  }

  /**
   * Adds a new pin to the stored feed of every follower of its pinner and of its board that has
   * one (the append rule). Pages through each follower list; `checkpoint` runs between pages (a
   * stopping worker throws there and the job runs again later: every add is idempotent).
   */
  async fanOut(pin: FeedPin, checkpoint: () => void = () => undefined, ctx: OpContext = {}): Promise<FanoutReport> {
    const report = { followers: 0, added: 0, present: 0, missing: 0, belowHorizon: 0, bigSources: 0, gone: false };
    const current = await this.#storage.objects.get(pin.id, ctx);
    if (!current || !isActive(current)) return { ...report, gone: true };
    const entry: FeedEntry = { id: pin.id, time: pin.time };
    await this.#eachAudience(pin, checkpoint, ctx, async (viewers) => {
      const out = await this.#feeds.append(viewers, entry);
      report.followers += viewers.length;
      report.added += out.added;
      report.present += out.present;
      report.missing += out.missing;
      report.belowHorizon += out['below-horizon'];
    }, () => report.bigSources++);
    return report;
  }

  /** Removes a deleted pin from the stored feeds of its audience. Returns how many held it. */
  async retract(pin: Pick<FeedPin, 'id' | 'pinner' | 'board'>, checkpoint: () => void = () => undefined, ctx: OpContext = {}): Promise<{ followers: number; removed: number }> {
    let followers = 0;
    let removed = 0;
    // Big sources included: a feed may hold the pin from when its source was small.
    await this.#eachAudience(pin, checkpoint, ctx, async (viewers) => {
      followers += viewers.length;
      removed += await this.#feeds.removeFromMany(viewers, pin.id);
    });
    return { followers, removed };
  }

  /**
   * Removes from one viewer's stored feed the pins it must no longer show (deleted, of a deleted
   * pinner or board, of a source no longer followed): `pins` (what a reader found), or every pin
   * it holds. Each is checked again here against the current state first.
   */
  async clean(viewer: bigint, pins: readonly bigint[] | 'all', ctx: OpContext = {}): Promise<{ checked: number; removed: number }> {
    const candidates = pins === 'all' ? await this.#storedPins(viewer) : pins;
    if (candidates.length === 0) return { checked: 0, removed: 0 };
    const [follows, objects] = await Promise.all([this.follows(viewer, ctx), this.#storage.objects.getMany(candidates, ctx)]);
    const refs = new Set<bigint>();
    for (const o of objects.values()) {
      if (o.refs.pinner !== undefined) refs.add(o.refs.pinner);
      if (o.refs.board !== undefined) refs.add(o.refs.board);
    }
    const parents = await this.#storage.objects.getMany([...refs], ctx);
    const gone = candidates.filter((id) => !visibleIn(follows, objects.get(id), (r) => parents.get(r)));
    return { checked: candidates.length, removed: await this.#feeds.remove(viewer, gone) };
  }

  /** Adds to the counters of feed work /metrics shows (see RedisFeeds.count). */
  count(work: Readonly<Record<string, number>>): Promise<void> {
    return this.#feeds.count(work);
  }

  /** Every pinner and board the viewer follows: all of them, page by page. */
  async follows(viewer: bigint, ctx: OpContext = {}): Promise<Follows> {
    const [users, boards] = await Promise.all([this.#all('user_follows_users', viewer, ctx), this.#all('user_follows_boards', viewer, ctx)]);
    return { users: new Set(users), boards: new Set(boards) };
  }

  async #storedPins(viewer: bigint): Promise<bigint[]> {
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
   * Calls `each` with every page of followers of the pin's pinner and of its board, skipping (and
   * reporting to `big`) a source over the fan-out threshold. A follower of both is in two pages.
   */
  async #eachAudience(
    pin: Pick<FeedPin, 'pinner' | 'board'>,
    checkpoint: () => void,
    ctx: OpContext,
    each: (viewers: bigint[]) => Promise<void>,
    big?: () => void,
  ): Promise<void> {
    const sources = audiences(pin);
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
