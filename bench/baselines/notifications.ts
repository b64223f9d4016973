/**
 * The floor's notifications: a user's whole event sequence in memory, grouped per request with the
 * rules of `EventStore.notifications` (src/storage/eventStore.ts) so the answers are the same,
 * cursors included:
 *
 *   - shown kinds: the request's; per kind, only the newest `versions` events (of all stored) younger
 *     than its TTL count at all (kept);
 *   - kept events with `since <= ts < upper` (upper: the snapshot `asOf + 1`, `until`, and the end of
 *     the cursor's window) are grouped per window `floor(ts / windowMs)`, kind and target;
 *   - a group places by its newest kept event, shown or not; it counts only events whose relation
 *     stands (`standing`, recorded from the shards), and is left out when it counts none;
 *   - order: window newest first, the group's newest event, kind ascending, target ID descending;
 *     the actors: the shown events' actors newest first (ties: event ID), the first 64, distinct,
 *     the first `actors` of them.
 *
 * Instead of grouping everything and sorting (what the SQL does), the walk goes newest first from
 * the upper bound window by window and stops once the page is full: windows are the first sort key.
 */
import type { EventRetention, KindRetention, StoredKind } from '../../src/core/events.ts';
import { decodeGroupCursor, encodeGroupCursor, type NotificationGroup, type NotificationPage, type NotificationPageRequest } from '../../src/storage/eventStore.ts';

export interface FloorEvent {
  readonly kind: StoredKind;
  readonly ts: number;
  readonly id: bigint;
  readonly actor: bigint;
  readonly object: bigint;
  /** Whether the relation that made it still stands (what the store checks in SQL). */
  readonly standing: boolean;
}

/** One user's sequence: newest first (ties: event ID, higher first), each event's rank within its kind. */
export class EventSequence {
  readonly events: readonly FloorEvent[];
  readonly rank: Int32Array;
  constructor(events: readonly FloorEvent[]) {
    this.events = [...events].sort((a, b) => (a.ts !== b.ts ? b.ts - a.ts : a.id === b.id ? 0 : a.id < b.id ? 1 : -1));
    this.rank = new Int32Array(this.events.length);
    const seen = new Map<StoredKind, number>();
    this.events.forEach((e, i) => {
      const r = seen.get(e.kind) ?? 0;
      this.rank[i] = r;
      seen.set(e.kind, r + 1);
    });
  }

  /** First index whose event is older than `ts` (ts < bound). */
  #firstBelow(bound: number): number {
    let lo = 0;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.events[mid]!.ts >= bound) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  page(req: NotificationPageRequest, opts: { now: number; retention: EventRetention; windowMs: number }): NotificationPage {
    const kinds = [...req.kinds].sort();
    const tag = `${req.user}|${kinds.join(',')}`;
    const cursor = req.after != null ? decodeGroupCursor(req.after, tag) : undefined;
    if (req.kinds.length === 0) return { groups: [], hasNextPage: false, endCursor: null };
    const asOf = cursor?.asOf ?? opts.now;
    const w = opts.windowMs;
    let upper = asOf + 1;
    if (req.until != null) upper = Math.min(upper, req.until);
    if (cursor) upper = Math.min(upper, (cursor.bucket + 1) * w);
    const keep = (k: StoredKind): KindRetention => {
      const r = opts.retention[k];
      if (!r) throw new Error(`no retention for event kind ${k}`);
      return r;
    };
    const cut = new Map<StoredKind, { ts: number; versions: number }>(req.kinds.map((k) => [k, { ts: opts.now - keep(k).ttlMs, versions: keep(k).versions }]));

    interface Acc {
      kind: StoredKind;
      object: bigint;
      newest: number;
      n: number;
      actors: Set<bigint>;
      recent: bigint[];
      earliest: number;
      latest: number;
    }
    const out: { bucket: number; g: Acc }[] = [];
    let bucket: number | undefined;
    let groups = new Map<string, Acc>();
    const finish = (): void => {
      if (bucket === undefined) return;
      const b = bucket;
      const list = [...groups.values()].filter(
        (g) =>
          g.n > 0 &&
          (!cursor ||
            b < cursor.bucket ||
            (b === cursor.bucket && (g.newest < cursor.newest || (g.newest === cursor.newest && (g.kind > cursor.kind || (g.kind === cursor.kind && g.object < cursor.object)))))),
      );
      list.sort((x, y) => (x.newest !== y.newest ? y.newest - x.newest : x.kind !== y.kind ? (x.kind < y.kind ? -1 : 1) : x.object === y.object ? 0 : x.object < y.object ? 1 : -1));
      for (const g of list) out.push({ bucket: b, g });
    };
    for (let i = this.#firstBelow(upper); i < this.events.length && out.length <= req.first; i++) {
      const e = this.events[i]!;
      if (req.since != null && e.ts < req.since) break;
      const c = cut.get(e.kind);
      if (!c || e.ts < c.ts || this.rank[i]! >= c.versions) continue;
      const b = Math.floor(e.ts / w);
      if (b !== bucket) {
        finish();
        if (out.length > req.first) break;
        bucket = b;
        groups = new Map();
      }
      const key = `${e.kind}|${e.object}`;
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { kind: e.kind, object: e.object, newest: e.ts, n: 0, actors: new Set(), recent: [], earliest: e.ts, latest: e.ts }));
      if (!e.standing) continue;
      if (g.n === 0) g.latest = e.ts;
      g.n++;
      g.earliest = e.ts;
      g.actors.add(e.actor);
      if (g.recent.length < 64) g.recent.push(e.actor);
    }
    if (out.length <= req.first) finish();
    const page: NotificationGroup[] = out.slice(0, req.first).map(({ bucket: b, g }) => ({
      kind: g.kind,
      object: g.object,
      count: g.n,
      actorCount: g.actors.size,
      actors: [...new Set(g.recent)].slice(0, req.actors),
      latest: g.latest,
      earliest: g.earliest,
      cursor: encodeGroupCursor(tag, { asOf, bucket: b, newest: g.newest, kind: g.kind, object: g.object }),
    }));
    return { groups: page, hasNextPage: out.length > req.first, endCursor: page.at(-1)?.cursor ?? null };
  }
}
