/**
 * The feed jobs, on the user-facing `feed` queue (services/feeds.ts does the work), for the home
 * feed the served product declares (core/feedSpec.ts):
 *   feed.fanout   a new item into the stored feeds of its sources' followers
 *   feed.retract  a deleted item out of them
 *   feed.clean    items one viewer's feed must no longer show (found by a read, or after an unfollow)
 * Each is idempotent: a job run again (a retry, a worker killed mid-job) adds or removes nothing twice.
 *
 * An item's payload names it in the feed's own words, so a fan-out a write recorded in its intent
 * reads the same whichever build enqueues it: the item's ID under its type's key, each source's
 * under the item's reference naming it, `{ "<item>": "…", "<ref>": "…", …, "time": 1764136800000 }`.
 */
import type { FeedSpec } from '../../core/feedSpec.ts';
import { defineJob, JobPayloadError, objectOf, stringField, throwIfStopping, type JobContext, type JobKind } from '../jobKind.ts';
import type { CleanPayload, FanoutPayload, RetractPayload } from '../../services/backgroundJobs.ts';
import type { FeedWrites } from '../../services/feeds.ts';

const DECIMAL_ID = /^[0-9]{1,19}$/;

function idField(o: Record<string, unknown>, field: string): bigint {
  return BigInt(stringField(o, field, DECIMAL_ID));
}

function feedsOf(ctx: JobContext): FeedWrites {
  // No feeds (a worker without Redis feeds configured): retried until one that has them runs it.
  if (!ctx.feeds) throw new Error('this worker has no stored feeds');
  return ctx.feeds;
}

/** The names an item's payload uses: the item's type and its sources' references. */
type FeedNames = Pick<FeedSpec, 'item' | 'sources'>;

/** An item and its sources as the queue carries them: `{ <item>: '…', <ref>: '…', … }`. */
function encodeItem(feed: FeedNames, item: bigint, sources: Readonly<Record<string, bigint>>): Record<string, string> {
  const out: Record<string, string> = { [feed.item]: `${item}` };
  for (const s of feed.sources) {
    const id = sources[s.ref];
    if (id === undefined) throw new JobPayloadError(`${s.ref}: expected the ID of the ${feed.item}'s ${s.ref}, got none`);
    out[s.ref] = `${id}`;
  }
  return out;
}

function decodeItem(feed: FeedNames, o: Record<string, unknown>): { item: bigint; sources: Record<string, bigint> } {
  return { item: idField(o, feed.item), sources: Object.fromEntries(feed.sources.map((s) => [s.ref, idField(o, s.ref)])) };
}

/**
 * The three feed kinds for the feed `feedOf` gives (read when a payload crosses the queue, so the
 * served model is chosen by then). Without a feed every payload is refused: no product of this
 * deployment declares one, so nothing enqueues them.
 */
export function feedJobs(feedOf: () => FeedNames | undefined): {
  readonly 'feed.fanout': JobKind<FanoutPayload>;
  readonly 'feed.retract': JobKind<RetractPayload>;
  readonly 'feed.clean': JobKind<CleanPayload>;
} {
  const names = (): FeedNames => {
    const feed = feedOf();
    if (!feed) throw new JobPayloadError('expected a home feed declared by an attached product, got none: this deployment has no feed jobs');
    return feed;
  };
  return {
    'feed.fanout': defineJob<FanoutPayload>({
      queue: 'feed',
      summary: 'add a new item to the stored feeds of its sources’ followers',
      encode: (p) => ({ ...encodeItem(names(), p.item, p.sources), time: p.time }),
      decode: (data) => {
        const o = objectOf(data, 'feed.fanout');
        const time = o.time;
        if (typeof time !== 'number' || !Number.isSafeInteger(time) || time < 0) throw new JobPayloadError(`time: expected ms since the epoch, got ${JSON.stringify(time)}`);
        return { ...decodeItem(names(), o), time };
      },
      // One fan-out per item, however often it is enqueued (a write retried with its idempotency key).
      jobId: (p) => `fanout-${p.item}`,
      async handle(p, ctx) {
        const feeds = feedsOf(ctx);
        const r = await feeds.fanOut({ id: p.item, sources: p.sources, time: p.time }, () => throwIfStopping(ctx));
        await feeds.count({ fanouts: 1, insertions: r.added, feedsAbsent: r.missing, bigSources: r.bigSources });
        return { ...r };
      },
    }),

    'feed.retract': defineJob<RetractPayload>({
      queue: 'feed',
      summary: 'remove a deleted item from the stored feeds of its audience',
      encode: (p) => encodeItem(names(), p.item, p.sources),
      decode: (data) => decodeItem(names(), objectOf(data, 'feed.retract')),
      jobId: (p) => `retract-${p.item}`,
      async handle(p, ctx) {
        const feeds = feedsOf(ctx);
        const r = await feeds.retract({ id: p.item, sources: p.sources }, () => throwIfStopping(ctx));
        await feeds.count({ retracts: 1, removals: r.removed });
        return r;
      },
    }),

    'feed.clean': defineJob<CleanPayload>({
      queue: 'feed',
      summary: 'remove from one viewer’s stored feed the items it must no longer show',
      encode: (p) => ({ viewer: `${p.viewer}`, ...(p.items ? { items: p.items.map((id) => `${id}`) } : {}) }),
      // Other fields are ignored: a clean without `items` checks every item the feed holds, which
      // covers any list a payload of another build named otherwise.
      decode: (data) => {
        const o = objectOf(data, 'feed.clean');
        const items = o.items;
        if (items !== undefined && (!Array.isArray(items) || items.length > 10_000 || !items.every((x) => typeof x === 'string' && DECIMAL_ID.test(x)))) {
          throw new JobPayloadError(`items: expected up to 10000 decimal IDs, got ${JSON.stringify(items).slice(0, 100)}`);
        }
        return { viewer: idField(o, 'viewer'), ...(items !== undefined ? { items: (items as string[]).map((x) => BigInt(x)) } : {}) };
      },
      async handle(p, ctx) {
        const feeds = feedsOf(ctx);
        const r = await feeds.clean(p.viewer, p.items ?? 'all');
        await feeds.count({ cleans: 1, removals: r.removed });
        return r;
      },
    }),
  };
}
