import { decodeCursor, encodeCursor } from '../core/cursor.ts';
import { ShardqlError, describeValue } from '../core/errors.ts';
import {
  DEFAULT_NOTIFICATION_WINDOW_MS,
  MAX_EVENT_TS,
  NO_EVENTS,
  defaultEventRetention,
  isStoredKind,
  notifyingRelations,
  storedKindNames,
  storedKindSpec,
  unknownEventKind,
  type EventRetention,
  type EventSpec,
  type KindRetention,
  type SequenceEvent,
  type StoredKind,
} from '../core/events.ts';
import { groupBy } from '../core/groupBy.ts';
import { shardOf } from '../core/ids.ts';
import { shardDatabase } from '../core/topology.ts';
import type { ListToken, RedisLists } from '../cache/redisLists.ts';
import type { LookAside } from './lookAside.ts';
import { affectedRows, type BatchPart, type Row, type ShardRouter, type SqlCondition, type SqlValue } from './shardRouter.ts';
import type { OpContext } from './sqlStats.ts';

/**
 * The cache key of a user's notifications (Redis hash + L1 namespace `l:notifications`): one key,
 * so every command on it is single-key (Redis Cluster needs no hash tag). Appends drop it.
 */
export const notificationsCacheKey = (user: bigint): string => `l:notifications:${user}`;
const NOTIFICATIONS_NS = 'l:notifications';

export interface EventPageRequest {
  readonly user: bigint;
  /** Stored kinds to read (one side's). */
  readonly kinds: readonly StoredKind[];
  readonly first: number;
  readonly after?: string | null;
  /** ms; since inclusive, until exclusive. */
  readonly since?: number | null;
  readonly until?: number | null;
}

/** The newest `perKind` shown events of each of `kinds`; of a kind in `before`, only those older than that event. */
export interface LatestEventsRequest {
  readonly user: bigint;
  readonly kinds: readonly StoredKind[];
  readonly perKind: number;
  /** Per kind, the last event already read (newest-first order): the read goes on past it. */
  readonly before?: ReadonlyMap<StoredKind, Pick<SequenceEvent, 'ts' | 'id'>>;
}

export interface EventPage {
  readonly edges: { readonly event: SequenceEvent; readonly cursor: string }[];
  readonly hasNextPage: boolean;
  readonly endCursor: string | null;
}

/** A group of notifications: one kind on one target within one window ("X and 2 others liked your pin"). */
export interface NotificationGroup {
  readonly kind: StoredKind;
  readonly object: bigint;
  /** Visible events in the group, and their distinct actors. */
  readonly count: number;
  readonly actorCount: number;
  /** Up to `actors` distinct actors, most recent first. */
  readonly actors: readonly bigint[];
  /** Newest and oldest visible event. */
  readonly latest: number;
  readonly earliest: number;
  readonly cursor: string;
}

export interface NotificationPage {
  readonly groups: NotificationGroup[];
  readonly hasNextPage: boolean;
  readonly endCursor: string | null;
}

export interface NotificationPageRequest extends EventPageRequest {
  /** Most recent distinct actors kept per group. */
  readonly actors: number;
}

export interface SweepReport {
  /** Events older than their kind's TTL, deleted. */
  readonly expired: number;
  /** Events beyond their kind's newest `versions`, deleted. */
  readonly trimmed: number;
}

const EVENT_COLUMNS = 'kind, ts, event_id, actor_id, object_id, detail_id';

function rowToEvent(spec: EventSpec, user: bigint, r: Row): SequenceEvent {
  const kind = String(r.kind);
  if (!isStoredKind(spec, kind)) throw new Error(`unknown event kind ${kind} in the events table`);
  const detail = BigInt(r.detail_id as string);
  return {
    user,
    kind,
    id: BigInt(r.event_id as string),
    ts: Number(r.ts),
    actor: BigInt(r.actor_id as string),
    object: BigInt(r.object_id as string),
    detail: detail === 0n ? null : detail,
  };
}

/** Newest first; ties by event ID, higher first. */
function newerFirst(a: { ts: number; id: bigint }, b: { ts: number; id: bigint }): number {
  return a.ts !== b.ts ? b.ts - a.ts : a.id === b.id ? 0 : a.id < b.id ? 1 : -1;
}

/**
 * A group cursor: the snapshot it pages (`asOf`) and the last group's sort key, bound to the user
 * and kinds (tag `<user>|<sorted kinds>`). Exported for the benchmark's baselines, which answer the
 * same cursors.
 */
export interface GroupCursor {
  readonly asOf: number;
  readonly bucket: number;
  readonly newest: number;
  readonly kind: string;
  readonly object: bigint;
}

const GROUP_CURSOR = /^g1\|([0-9]{1,20})\|([0-9a-z_,]{1,200})\|([0-9]{1,16})\|([0-9]{1,16})\|([0-9]{1,16})\|([a-z_]{1,32})\|([0-9]{1,20})$/;

export function encodeGroupCursor(tag: string, c: GroupCursor): string {
  return Buffer.from(`g1|${tag}|${c.asOf}|${c.bucket}|${c.newest}|${c.kind}|${c.object}`, 'utf8').toString('base64url');
}

export function decodeGroupCursor(cursor: unknown, tag: string): GroupCursor {
  const fail = (why: string): never => {
    throw new ShardqlError('INVALID_CURSOR', `Expected a cursor returned by this list (${why}), got ${describeValue(cursor)}`, { reason: why });
  };
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > 400 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return fail('malformed');
  const m = GROUP_CURSOR.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) return fail('malformed');
  if (`${m[1]}|${m[2]}` !== tag) return fail('from another list');
  const kind = m[6]!;
  // A group's kind is one of the kinds its list reads (the tag's).
  if (!m[2]!.split(',').includes(kind)) return fail('malformed');
  return { asOf: Number(m[3]), bucket: Number(m[4]), newest: Number(m[5]), kind, object: BigInt(m[7]!) };
}

/** A notifications page as cached: the page, and when its oldest counted event expires. */
interface CachedNotifications {
  readonly page: NotificationPage;
  readonly expiresAt: number;
}

function encodeCachedPage(c: CachedNotifications): string {
  return JSON.stringify({
    x: c.expiresAt,
    h: c.page.hasNextPage,
    e: c.page.endCursor,
    g: c.page.groups.map((g) => [g.kind, `${g.object}`, g.count, g.actorCount, g.actors.map(String), g.latest, g.earliest, g.cursor]),
  });
}

function decodeCachedPage(text: string): CachedNotifications | undefined {
  try {
    const v = JSON.parse(text) as { x: number; h: boolean; e: string | null; g: [StoredKind, string, number, number, string[], number, number, string][] };
    return {
      expiresAt: v.x,
      page: {
        hasNextPage: v.h,
        endCursor: v.e,
        groups: v.g.map(([kind, object, count, actorCount, actors, latest, earliest, cursor]) => ({
          kind,
          object: BigInt(object),
          count,
          actorCount,
          actors: actors.map((a) => BigInt(a)),
          latest,
          earliest,
          cursor,
        })),
      },
    };
  } catch {
    return undefined;
  }
}

/**
 * The `events` table of every shard: each user's sequence lives on the user's shard. Appends are
 * idempotent (`INSERT IGNORE` on the event's key); reads are keyset pages per kind (one indexed
 * subquery per kind in one UNION ALL, merged newest first), never OFFSET, and apply the retention
 * of each kind (an expired event, or one beyond the newest `versions`, is never returned) and hide
 * events whose relation is gone (the spec's edge of the kind). The sweep deletes what retention hides.
 * Its kinds are the served product's (`EventSpec`); with none (NO_EVENTS) it reads and sweeps nothing.
 */
export class EventStore {
  readonly #router: ShardRouter;
  readonly #spec: EventSpec;
  readonly #notifying: ReadonlySet<string>;
  readonly #now: () => number;
  readonly #retention: EventRetention;
  readonly #windowMs: number;
  readonly #lists: RedisLists | undefined;
  readonly #lookAside: LookAside;

  constructor(opts: {
    router: ShardRouter;
    lookAside: LookAside;
    cache?: RedisLists | undefined;
    /** The served product's kinds. Default NO_EVENTS. */
    spec?: EventSpec;
    now?: () => number;
    /** Per kind of `spec`. Default: the spec's defaults (`defaultEventRetention`). */
    retention?: EventRetention;
    /** Notifications are grouped per kind and target within windows of this many ms. Default 1 day. */
    windowMs?: number;
  }) {
    this.#router = opts.router;
    this.#spec = opts.spec ?? NO_EVENTS;
    this.#notifying = notifyingRelations(this.#spec);
    this.#now = opts.now ?? Date.now;
    this.#retention = opts.retention ?? defaultEventRetention(this.#spec);
    for (const k of storedKindNames(this.#spec)) if (!Object.hasOwn(this.#retention, k)) throw new Error(`event retention: no retention for kind ${k}`);
    this.#windowMs = opts.windowMs ?? DEFAULT_NOTIFICATION_WINDOW_MS;
    this.#lists = opts.cache;
    this.#lookAside = opts.lookAside;
  }

  get retention(): EventRetention {
    return this.#retention;
  }

  /** The kinds this store keeps (the served product's). */
  get spec(): EventSpec {
    return this.#spec;
  }

  /** Whether edges of `table` decide whether a notification shows (a pin's likers do; a user's pins do not). */
  notifies(table: string): boolean {
    return this.#notifying.has(table);
  }

  #keep(kind: StoredKind): KindRetention {
    const r = Object.hasOwn(this.#retention, kind) ? this.#retention[kind] : undefined;
    if (!r) throw unknownEventKind(this.#spec, kind);
    return r;
  }

  /**
   * Appending one event as a statement for a batch inside a transaction on the user's shard.
   * `onlyIf`: a condition evaluated as it runs (e.g. that the write's edge changed).
   */
  appendPart(e: SequenceEvent, onlyIf?: SqlCondition): BatchPart<boolean> {
    checkEvent(e);
    return {
      statements: [
        {
          sql: `INSERT IGNORE INTO ${shardDatabase(shardOf(e.user))}.events (user_id, kind, ts, event_id, actor_id, object_id, detail_id, created_at) SELECT ?, ?, ?, ?, ?, ?, ?, ? FROM DUAL${onlyIf ? ` WHERE ${onlyIf.sql}` : ''}`,
          values: [e.user, e.kind, e.ts, e.id, e.actor, e.object, e.detail ?? 0n, this.#now(), ...(onlyIf?.values ?? [])],
        },
      ],
      read: (results) => affectedRows(results[0]!) === 1,
    };
  }

  /** The cache keys an append of these events changes: the notifications of each recipient. */
  keysOf(events: readonly SequenceEvent[]): string[] {
    return [...new Set(events.filter((e) => storedKindSpec(this.#spec, e.kind).side === 'notifications').map((e) => notificationsCacheKey(e.user)))];
  }

  /**
   * Appends events (any users, any timestamps: older ones are a backfill and land in order): one
   * transaction per shard, one round trip each, then the recipients' cached notifications are
   * dropped. Appending an event again adds nothing. Returns how many were new.
   */
  async append(events: readonly SequenceEvent[], ctx: OpContext = {}): Promise<number> {
    let added = 0;
    for (const [shard, list] of groupBy(events, (e) => shardOf(e.user))) {
      const statements = list.flatMap((e) => this.appendPart(e).statements);
      const results = await this.#router.transaction(shard, (tx) => tx.commitWith(statements), ctx);
      added += results.filter((r) => affectedRows(r) === 1).length;
    }
    await this.invalidate(this.keysOf(events), ctx);
    return added;
  }

  /** Drops cached notifications after a commit that changed them (every layer; never throws). */
  async invalidate(keys: readonly string[], ctx: OpContext = {}): Promise<void> {
    const redis = this.#lists;
    await this.#lookAside.invalidate(
      ctx,
      keys,
      redis ? { layer: 'redis', run: (k) => redis.invalidate(k, ctx.cache), logged: (log) => redis.loggedInvalidation(log) } : undefined,
    );
  }

  /** Whether an event is in its user's sequence (stored; retention and visibility aside). One round trip. */
  async exists(e: Pick<SequenceEvent, 'user' | 'kind' | 'ts' | 'id'>, ctx: OpContext = {}): Promise<boolean> {
    const shard = shardOf(e.user);
    const rows = await this.#router.query(
      this.#router.writableHostOfShard(shard),
      [shard],
      `SELECT 1 AS found FROM ${shardDatabase(shard)}.events WHERE user_id = ? AND kind = ? AND ts = ? AND event_id = ?`,
      [e.user, e.kind, e.ts, e.id],
      ctx,
    );
    return rows.length === 1;
  }

  /** Every stored event of a user (tests and tools: retention and visibility aside), newest first. */
  async stored(user: bigint, ctx: OpContext = {}): Promise<SequenceEvent[]> {
    const shard = shardOf(user);
    const rows = await this.#router.query(
      this.#router.hostOfShard(shard, ctx),
      [shard],
      `SELECT ${EVENT_COLUMNS} FROM ${shardDatabase(shard)}.events e WHERE user_id = ? ORDER BY ts DESC, event_id DESC`,
      [user],
      ctx,
    );
    return rows.map((r) => rowToEvent(this.#spec, user, r));
  }

  /**
   * What a read of `kind` shows, as SQL on the user's shard over the events row: `kept` — younger than
   * the kind's TTL and among its newest `versions` (two uncorrelated subqueries find the oldest
   * kept cell); `standing` — its relation still stands (the spec's edge of `kind`; no values).
   */
  #shown(shard: number, user: bigint, kind: StoredKind, now: number): { kept: SqlCondition; standing: string | null; sql: string; values: SqlValue[] } {
    const db = shardDatabase(shard);
    const { versions, ttlMs } = this.#keep(kind);
    const nth = (col: string) =>
      `(SELECT ${col} FROM ${db}.events WHERE user_id = ? AND kind = ? ORDER BY ts DESC, event_id DESC LIMIT 1 OFFSET ${versions - 1})`;
    const kept = {
      sql: `ts >= ? AND (ts > COALESCE(${nth('ts')}, -1) OR (ts = ${nth('ts')} AND event_id >= ${nth('event_id')}))`,
      values: [now - ttlMs, user, kind, user, kind, user, kind],
    };
    const edge = storedKindSpec(this.#spec, kind).edge;
    let standing: string | null = null;
    if (edge) {
      // Unqualified: inside the subquery these name the events row outside it (the mapping table has none of them).
      const col = { user: 'user_id', object: 'object_id', actor: 'actor_id', detail: 'detail_id' } as const;
      standing = `EXISTS (SELECT 1 FROM ${db}.${edge.table} WHERE from_id = ${col[edge.from]} AND to_id = ${col[edge.to]} AND sequence = ts)`;
    }
    return { kept, standing, sql: standing ? `${kept.sql} AND ${standing}` : kept.sql, values: kept.values };
  }

  /**
   * A keyset page of one user's events of the given kinds, newest first (ties: event ID), in one
   * round trip: per kind, an indexed subquery from the cursor on, of at most `first + 1` rows.
   */
  async page(req: EventPageRequest, ctx: OpContext = {}): Promise<EventPage> {
    const tag = `ev:${req.user}:${[...req.kinds].sort().join(',')}`;
    const start = req.after != null ? decodeCursor(req.after, tag) : undefined;
    if (req.kinds.length === 0) return { edges: [], hasNextPage: false, endCursor: null };
    const shard = shardOf(req.user);
    const db = shardDatabase(shard);
    const now = this.#now();
    const parts: string[] = [];
    const values: SqlValue[] = [];
    for (const kind of req.kinds) {
      const where = ['user_id = ?', 'kind = ?'];
      const v: SqlValue[] = [req.user, kind];
      if (req.since != null) (where.push('ts >= ?'), v.push(req.since));
      if (req.until != null) (where.push('ts < ?'), v.push(req.until));
      if (start) (where.push('(ts < ? OR (ts = ? AND event_id < ?))'), v.push(start.key, start.key, start.id));
      const shown = this.#shown(shard, req.user, kind, now);
      where.push(shown.sql);
      v.push(...shown.values, req.first + 1);
      parts.push(`(SELECT ${EVENT_COLUMNS} FROM ${db}.events WHERE ${where.join(' AND ')} ORDER BY ts DESC, event_id DESC LIMIT ?)`);
      values.push(...v);
    }
    const rows = await this.#router.query(this.#router.hostOfShard(shard, ctx), [shard], parts.join('\nUNION ALL\n'), values, ctx);
    const events = rows.map((r) => rowToEvent(this.#spec, req.user, r)).sort(newerFirst);
    const edges = events.slice(0, req.first).map((event) => ({ event, cursor: encodeCursor({ list: tag, key: BigInt(event.ts), id: event.id }) }));
    return { edges, hasNextPage: events.length > req.first, endCursor: edges.at(-1)?.cursor ?? null };
  }

  /**
   * The newest `perKind` events of each kind that the shard can tell are shown (the seeds' "latest N
   * per event type"), newest first; one round trip. An event whose objects are gone passes here and
   * is hidden by the reader, which then reads on past it with `before`.
   */
  async latest(req: LatestEventsRequest, ctx: OpContext = {}): Promise<Map<StoredKind, SequenceEvent[]>> {
    const { user, kinds, perKind } = req;
    const out = new Map<StoredKind, SequenceEvent[]>(kinds.map((k) => [k, []]));
    if (kinds.length === 0) return out;
    const shard = shardOf(user);
    const db = shardDatabase(shard);
    const now = this.#now();
    const parts: string[] = [];
    const values: SqlValue[] = [];
    for (const kind of kinds) {
      const shown = this.#shown(shard, user, kind, now);
      const where = ['user_id = ?', 'kind = ?', shown.sql];
      const v: SqlValue[] = [user, kind, ...shown.values];
      const last = req.before?.get(kind);
      if (last) (where.push('(ts < ? OR (ts = ? AND event_id < ?))'), v.push(last.ts, last.ts, last.id));
      parts.push(`(SELECT ${EVENT_COLUMNS} FROM ${db}.events WHERE ${where.join(' AND ')} ORDER BY ts DESC, event_id DESC LIMIT ?)`);
      values.push(...v, perKind);
    }
    const rows = await this.#router.query(this.#router.hostOfShard(shard, ctx), [shard], parts.join('\nUNION ALL\n'), values, ctx);
    for (const r of rows) {
      const e = rowToEvent(this.#spec, user, r);
      out.get(e.kind)?.push(e);
    }
    for (const list of out.values()) list.sort(newerFirst);
    return out;
  }

  /**
   * A page of a user's notifications, grouped per kind and target within windows of `windowMs`
   * ("X and 2 others liked your pin"), newest window first, then the group's newest event. The
   * first page asks as of now and its cursor carries that moment: every later page reads the same
   * snapshot, so events arriving meanwhile neither shift nor repeat groups (they are on the next
   * first page). A group's place uses its newest event whether shown or not, so an unlike between
   * two pages cannot move a group either. Pages are cached (L1 and Redis, one field per page of the
   * user's one key: the first page, and a later one per cursor), all dropped by every append to the
   * user's sequence and every change that hides or shows one of its events. A later page depends on
   * the cursor's snapshot and on what stands now, as the first does on now, so the same drops keep
   * it true; while the first page is cached its cursors do not change, so the fields stay few.
   */
  async notifications(req: NotificationPageRequest, ctx: OpContext = {}): Promise<NotificationPage> {
    const kinds = [...req.kinds].sort().join(',');
    const cursor = req.after != null ? decodeGroupCursor(req.after, `${req.user}|${kinds}`) : undefined;
    const cacheable = req.since == null && req.until == null;
    if (!cacheable) return (await this.#groups(req, cursor, ctx)).page;
    const at = cursor ? `:${cursor.asOf}:${cursor.bucket}:${cursor.newest}:${cursor.kind}:${cursor.object}` : '';
    const field = `g:${req.first}:${req.actors}:${kinds}${at}`;
    const key = notificationsCacheKey(req.user);
    let page: NotificationPage | undefined;
    let stale = false;
    await this.#lookAside.read<0, CachedNotifications>(
      ctx,
      [0],
      () => ({ ns: NOTIFICATIONS_NS, id: req.user, field }),
      (_i, cached) => {
        if (cached.expiresAt > this.#now()) page = cached.page;
        else stale = true;
      },
      async (_misses, fill) => {
        const probe = this.#lists ? await this.#lists.probe([{ list: key, field }], ctx.cache) : undefined;
        const hit = probe?.values.get(0);
        const cached = hit === undefined ? undefined : decodeCachedPage(hit);
        if (cached && cached.expiresAt > this.#now()) {
          page = cached.page;
          fill(0, cached);
          return;
        }
        if (cached) stale = true;
        const fresh = await this.#groups(req, cursor, ctx);
        page = fresh.page;
        const token: ListToken | undefined = probe?.tokens.get(0);
        if (!stale && token !== undefined && this.#lists) {
          await this.#lists.fill([{ field: { list: key, field }, value: encodeCachedPage(fresh), token }], ctx.cache);
          fill(0, fresh);
        }
      },
    );
    // A cached page whose oldest counted event has expired since: dropped like an append drops it.
    if (stale) await this.invalidate([key], ctx);
    if (page === undefined || stale) page = (await this.#groups(req, cursor, ctx)).page;
    return page;
  }

  /** A page of groups from SQL; `cursor` is `req.after` decoded. */
  async #groups(req: NotificationPageRequest, cursor: GroupCursor | undefined, ctx: OpContext): Promise<CachedNotifications> {
    const tag = `${req.user}|${[...req.kinds].sort().join(',')}`;
    const now = this.#now();
    if (req.kinds.length === 0) return { page: { groups: [], hasNextPage: false, endCursor: null }, expiresAt: Number.MAX_SAFE_INTEGER };
    const asOf = cursor?.asOf ?? now;
    const w = this.#windowMs;
    const shard = shardOf(req.user);
    const db = shardDatabase(shard);
    const values: SqlValue[] = [];
    // Each kind's retention, and whether each event shows (a hidden event still places its group).
    const kept: string[] = [];
    const shownCases: string[] = [];
    for (const kind of req.kinds) {
      const shown = this.#shown(shard, req.user, kind, now);
      kept.push(`(kind = ? AND ${shown.kept.sql})`);
      values.push(kind, ...shown.kept.values);
      shownCases.push(`WHEN ? THEN ${shown.standing ?? 'TRUE'}`);
    }
    const caseValues: SqlValue[] = [...req.kinds];
    let upper = asOf + 1;
    if (req.until != null) upper = Math.min(upper, req.until);
    if (cursor) upper = Math.min(upper, (cursor.bucket + 1) * w);
    const where = ['user_id = ?', `(${kept.join(' OR ')})`, 'ts < ?'];
    const whereValues: SqlValue[] = [req.user, ...values, upper];
    if (req.since != null) (where.push('ts >= ?'), whereValues.push(req.since));
    const having = ['n > 0'];
    const havingValues: SqlValue[] = [];
    if (cursor) {
      having.push('(bucket < ? OR (bucket = ? AND (newest < ? OR (newest = ? AND (kind > ? OR (kind = ? AND object_id < ?))))))');
      havingValues.push(cursor.bucket, cursor.bucket, cursor.newest, cursor.newest, cursor.kind, cursor.kind, cursor.object);
    }
    // derived_merge=off: merged into the outer query, `shown` (an EXISTS per event) would be evaluated
    // once per aggregate that reads it (5 times); materialized, once per event — about half the time
    // of the whole statement for a user with thousands of events (same rows).
    const sql = `SET STATEMENT optimizer_switch='derived_merge=off' FOR
SELECT kind, object_id, FLOOR(ts / ?) AS bucket, MAX(ts) AS newest, SUM(shown) AS n,
  COUNT(DISTINCT CASE WHEN shown = 1 THEN actor_id END) AS actors,
  MIN(CASE WHEN shown = 1 THEN ts END) AS earliest, MAX(CASE WHEN shown = 1 THEN ts END) AS latest,
  GROUP_CONCAT(CASE WHEN shown = 1 THEN actor_id END ORDER BY ts DESC, event_id DESC SEPARATOR ',' LIMIT 64) AS recent
FROM (SELECT kind, object_id, ts, event_id, actor_id, CASE kind ${shownCases.join(' ')} ELSE FALSE END AS shown
  FROM ${db}.events FORCE INDEX (by_time) WHERE ${where.join(' AND ')}) x
GROUP BY bucket, kind, object_id
HAVING ${having.join(' AND ')}
ORDER BY bucket DESC, newest DESC, kind ASC, object_id DESC
LIMIT ?`;
    const rows = await this.#router.query(
      this.#router.hostOfShard(shard, ctx),
      [shard],
      sql,
      [w, ...caseValues, ...whereValues, ...havingValues, req.first + 1],
      ctx,
    );
    let expiresAt = Number.MAX_SAFE_INTEGER;
    const groups: NotificationGroup[] = rows.map((r) => {
      const kind = String(r.kind) as StoredKind;
      const earliest = Number(r.earliest);
      expiresAt = Math.min(expiresAt, earliest + this.#keep(kind).ttlMs);
      const recent = String(r.recent ?? '')
        .split(',')
        .filter((s) => s !== '');
      const group = { asOf, bucket: Number(r.bucket), newest: Number(r.newest), kind, object: BigInt(r.object_id as string) };
      return {
        kind,
        object: group.object,
        count: Number(r.n),
        actorCount: Number(r.actors),
        actors: [...new Set(recent)].slice(0, req.actors).map((a) => BigInt(a)),
        latest: Number(r.latest),
        earliest,
        cursor: encodeGroupCursor(tag, group),
      };
    });
    const page = groups.slice(0, req.first);
    return { page: { groups: page, hasNextPage: groups.length > req.first, endCursor: page.at(-1)?.cursor ?? null }, expiresAt };
  }

  /**
   * The TTL sweep of some shards (the seeds' compaction): deletes events older than their kind's
   * TTL, then, per user and kind, events beyond the newest `versions`. Each is hidden from reads
   * already, so no cache changes. Deletes at most `batch` rows per statement.
   */
  async sweep(shards: readonly number[], opts: { batch?: number; stopping?: () => boolean } = {}, ctx: OpContext = {}): Promise<SweepReport> {
    const batch = opts.batch ?? 5000;
    const kinds = storedKindNames(this.#spec);
    if (kinds.length === 0) return { expired: 0, trimmed: 0 };
    let expired = 0;
    let trimmed = 0;
    for (const shard of shards) {
      if (opts.stopping?.()) break;
      const db = shardDatabase(shard);
      const host = (): string => this.#router.writableHostOfShard(shard);
      const now = this.#now();
      for (const kind of kinds) {
        for (;;) {
          const n = deleted(
            await this.#router.query(host(), [shard], `DELETE FROM ${db}.events WHERE kind = ? AND ts < ? LIMIT ${batch}`, [kind, now - this.#keep(kind).ttlMs], ctx),
          );
          expired += n;
          if (n < batch) break;
        }
      }
      const over = await this.#router.query(
        host(),
        [shard],
        `SELECT user_id, kind FROM ${db}.events GROUP BY user_id, kind HAVING COUNT(*) > CASE kind ${kinds.map(() => 'WHEN ? THEN ?').join(' ')} ELSE 2147483647 END`,
        kinds.flatMap((k) => [k, this.#keep(k).versions]),
        ctx,
      );
      for (const r of over) {
        const kind = String(r.kind);
        if (!isStoredKind(this.#spec, kind)) continue;
        const user = BigInt(r.user_id as string);
        const cut = await this.#router.query(
          host(),
          [shard],
          `SELECT ts, event_id FROM ${db}.events WHERE user_id = ? AND kind = ? ORDER BY ts DESC, event_id DESC LIMIT 1 OFFSET ${this.#keep(kind).versions - 1}`,
          [user, kind],
          ctx,
        );
        const c = cut[0];
        if (!c) continue;
        trimmed += deleted(
          await this.#router.query(
            host(),
            [shard],
            `DELETE FROM ${db}.events WHERE user_id = ? AND kind = ? AND (ts < ? OR (ts = ? AND event_id < ?))`,
            [user, kind, c.ts as string, c.ts as string, c.event_id as string],
            ctx,
          ),
        );
      }
    }
    return { expired, trimmed };
  }
}

/** Rows a DELETE sent through `ShardRouter.query` removed (mysql2 answers a header, not rows). */
function deleted(result: unknown): number {
  return Number((result as { affectedRows?: number }).affectedRows ?? 0);
}

function checkEvent(e: SequenceEvent): void {
  if (!Number.isSafeInteger(e.ts) || e.ts < 0 || e.ts > MAX_EVENT_TS) {
    throw new ShardqlError('INVALID_ARGUMENT', `Expected an event time in ms from 0 to ${MAX_EVENT_TS}, got ${describeValue(e.ts)}`, { argument: 'ts' });
  }
}

/** An event as it travels in an intent step (IDs as decimal strings). */
export interface EncodedEvent {
  readonly user: string;
  readonly kind: StoredKind;
  readonly id: string;
  readonly ts: number;
  readonly actor: string;
  readonly object: string;
  readonly detail: string | null;
}

export function encodeEvent(e: SequenceEvent): EncodedEvent {
  return { user: `${e.user}`, kind: e.kind, id: `${e.id}`, ts: e.ts, actor: `${e.actor}`, object: `${e.object}`, detail: e.detail === null ? null : `${e.detail}` };
}

export function decodeEvent(e: EncodedEvent): SequenceEvent {
  return { user: BigInt(e.user), kind: e.kind, id: BigInt(e.id), ts: e.ts, actor: BigInt(e.actor), object: BigInt(e.object), detail: e.detail === null ? null : BigInt(e.detail) };
}
