/**
 * The feed jobs, on the user-facing `feed` queue (services/feeds.ts does the work):
 *   feed.fanout   a new pin (or repin) into the stored feeds of its pinner's and board's followers
 *   feed.retract  a deleted pin out of them
 *   feed.clean    pins one viewer's feed must no longer show (found by a read, or after an unfollow)
 * Each is idempotent: a job run again (a retry, a worker killed mid-job) adds or removes nothing twice.
 */
import { defineJob, JobPayloadError, objectOf, stringField, throwIfStopping, type JobContext } from '../jobKind.ts';
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

export const feedFanout = defineJob<FanoutPayload>({
  queue: 'feed',
  summary: 'add a new pin to the stored feeds of its pinner’s and its board’s followers',
  encode: (p) => ({ pin: `${p.pin}`, pinner: `${p.pinner}`, board: `${p.board}`, time: p.time }),
  decode: (data) => {
    const o = objectOf(data, 'feed.fanout');
    const time = o.time;
    if (typeof time !== 'number' || !Number.isSafeInteger(time) || time < 0) throw new JobPayloadError(`time: expected ms since the epoch, got ${JSON.stringify(time)}`);
    return { pin: idField(o, 'pin'), pinner: idField(o, 'pinner'), board: idField(o, 'board'), time };
  },
  // One fan-out per pin, however often it is enqueued (a write retried with its idempotency key).
  jobId: (p) => `fanout-${p.pin}`,
  async handle(p, ctx) {
    const feeds = feedsOf(ctx);
    const r = await feeds.fanOut({ id: p.pin, pinner: p.pinner, board: p.board, time: p.time }, () => throwIfStopping(ctx));
    await feeds.count({ fanouts: 1, insertions: r.added, feedsAbsent: r.missing, bigSources: r.bigSources });
    return { ...r };
  },
});

export const feedRetract = defineJob<RetractPayload>({
  queue: 'feed',
  summary: 'remove a deleted pin from the stored feeds of its audience',
  encode: (p) => ({ pin: `${p.pin}`, pinner: `${p.pinner}`, board: `${p.board}` }),
  decode: (data) => {
    const o = objectOf(data, 'feed.retract');
    return { pin: idField(o, 'pin'), pinner: idField(o, 'pinner'), board: idField(o, 'board') };
  },
  jobId: (p) => `retract-${p.pin}`,
  async handle(p, ctx) {
    const feeds = feedsOf(ctx);
    const r = await feeds.retract({ id: p.pin, pinner: p.pinner, board: p.board }, () => throwIfStopping(ctx));
    await feeds.count({ retracts: 1, removals: r.removed });
    return r;
  },
});

export const feedClean = defineJob<CleanPayload>({
  queue: 'feed',
  summary: 'remove from one viewer’s stored feed the pins it must no longer show',
  encode: (p) => ({ viewer: `${p.viewer}`, ...(p.pins ? { pins: p.pins.map((id) => `${id}`) } : {}) }),
  decode: (data) => {
    const o = objectOf(data, 'feed.clean');
    const pins = o.pins;
    if (pins !== undefined && (!Array.isArray(pins) || pins.length > 10_000 || !pins.every((x) => typeof x === 'string' && DECIMAL_ID.test(x)))) {
      throw new JobPayloadError(`pins: expected up to 10000 decimal IDs, got ${JSON.stringify(pins).slice(0, 100)}`);
    }
    return { viewer: idField(o, 'viewer'), ...(pins !== undefined ? { pins: (pins as string[]).map((x) => BigInt(x)) } : {}) };
  },
  async handle(p, ctx) {
    const feeds = feedsOf(ctx);
    const r = await feeds.clean(p.viewer, p.pins ?? 'all');
    await feeds.count({ cleans: 1, removals: r.removed });
    return r;
  },
});
