/**
 * Baseline (c): the same data in ONE unsharded MariaDB database (src/bulk/flat.ts), answering the
 * same queries with SQL JOINs behind the same schema. Per request, one query per level of the
 * query: a list and its objects come back from one JOIN (the likers of 250 pins are one UNION ALL
 * of 250 indexed JOINs), counts are columns of the rows, and the home feed is one query joining
 * the follow tables to pins, deduplicated and sorted in the database. Notifications are one
 * GROUP BY over the user's events (retention per kind by a window function, "still stands" by
 * primary-key lookups in the relation tables), grouped and ordered as the gateway's event store
 * does. The database has no cache in front of it (its own buffer pool only).
 */
import DataLoader from 'dataloader';
import { createPool, type Pool, type PoolConnection, type RowDataPacket, type ResultSetHeader } from 'mysql2/promise';
import type { MappingTable } from '../../src/core/mappings.ts';
import type { ObjectType } from '../../src/core/objectTypes.ts';
import { typeOf } from '../../src/core/ids.ts';
import { storedObject } from '../../src/storage/objectStore.ts';
import type { Endpoint } from '../../src/core/topology.ts';
import { DEFAULT_NOTIFICATION_WINDOW_MS, defaultEventRetention, type EventRetention, type KindRetention, type StoredKind } from '../../src/core/events.ts';
import { PINTEREST_EVENTS } from '../../src/product/pinterest/events.ts';
import { decodeGroupCursor, encodeGroupCursor, type NotificationPage, type NotificationPageRequest } from '../../src/storage/eventStore.ts';
import type { Page, PageRequest } from '../../src/storage/mappingStore.ts';
import type { EventSettings } from './memory.ts';
import { decodeCursor, encodeCursor, listTag, type FeedPage, type Obj, type Source, type SourceContext } from './source.ts';

type Row = RowDataPacket;
type Value = string | number | bigint | null;

/** Columns of each object table, and which count each count column is. */
type FlatType = 'user' | 'board' | 'pin';
const OBJECTS: Record<FlatType, { table: string; counts: [string, MappingTable][] }> = {
  user: {
    table: 'users',
    counts: [
      ['board_count', 'user_has_boards'], ['pin_count', 'user_has_pins'], ['like_count', 'user_likes_pins'],
      ['follower_count', 'user_followed_by_users'], ['following_count', 'user_follows_users'], ['followed_board_count', 'user_follows_boards'],
    ],
  },
  board: { table: 'boards', counts: [['pin_count', 'board_has_pins'], ['follower_count', 'board_followed_by_users']] },
  pin: { table: 'pins', counts: [['like_count', 'pin_liked_by_users'], ['repin_count', 'pin_repinned_as_pins'], ['comment_count', 'pin_has_comments']] },
};

function columns(type: keyof typeof OBJECTS, alias = 'o'): string {
  return [`${alias}.id`, `${alias}.data`, `${alias}.created_at`, `${alias}.updated_at`, ...OBJECTS[type].counts.map(([c]) => `${alias}.${c}`)].join(', ');
}

function toObj(type: keyof typeof OBJECTS, row: Row): Obj | null {
  const data = JSON.parse(String(row.data)) as Record<string, unknown>;
  if (data.active === false) return null;
  const counts: Partial<Record<MappingTable, number>> = {};
  for (const [col, kind] of OBJECTS[type].counts) counts[kind] = Number(row[col]);
  return { ...storedObject(BigInt(String(row.id)), type, data, Number(row.created_at), Number(row.updated_at)), counts };
}

/** How one mapping list reads in the flat schema: a FROM/JOIN, the owner column, order key, target. */
interface ListSql {
  readonly type: keyof typeof OBJECTS;
  readonly from: string;
  readonly owner: string;
  readonly seq: string;
  readonly to: string;
  /** Owner order (board_has_pins only). */
  readonly position?: string;
}

const LISTS: Partial<Record<MappingTable, ListSql>> = {
  user_has_boards: { type: 'board', from: 'boards o', owner: 'o.owner_id', seq: 'o.created_at', to: 'o.id' },
  user_has_pins: { type: 'pin', from: 'pins o', owner: 'o.pinner_id', seq: 'o.created_at', to: 'o.id' },
  board_has_pins: { type: 'pin', from: 'pins o', owner: 'o.board_id', seq: 'o.created_at', to: 'o.id', position: 'o.position' },
  pin_repinned_as_pins: { type: 'pin', from: 'pins o', owner: 'o.via_pin_id', seq: 'o.created_at', to: 'o.id' },
  user_likes_pins: { type: 'pin', from: 'likes r JOIN pins o ON o.id = r.pin_id', owner: 'r.user_id', seq: 'r.created_at', to: 'r.pin_id' },
  pin_liked_by_users: { type: 'user', from: 'likes r JOIN users o ON o.id = r.user_id', owner: 'r.pin_id', seq: 'r.created_at', to: 'r.user_id' },
  user_follows_users: { type: 'user', from: 'follows r JOIN users o ON o.id = r.followee_id', owner: 'r.follower_id', seq: 'r.created_at', to: 'r.followee_id' },
  user_followed_by_users: { type: 'user', from: 'follows r JOIN users o ON o.id = r.follower_id', owner: 'r.followee_id', seq: 'r.created_at', to: 'r.follower_id' },
  user_follows_boards: { type: 'board', from: 'board_follows r JOIN boards o ON o.id = r.board_id', owner: 'r.user_id', seq: 'r.created_at', to: 'r.board_id' },
  board_followed_by_users: { type: 'user', from: 'board_follows r JOIN users o ON o.id = r.user_id', owner: 'r.board_id', seq: 'r.created_at', to: 'r.user_id' },
};

/** Edge existence: the relation table and its (from, to) columns. */
const EDGES: Partial<Record<MappingTable, [string, string, string]>> = {
  user_likes_pins: ['likes', 'user_id', 'pin_id'],
  pin_liked_by_users: ['likes', 'pin_id', 'user_id'],
  user_follows_users: ['follows', 'follower_id', 'followee_id'],
  user_followed_by_users: ['follows', 'followee_id', 'follower_id'],
  user_follows_boards: ['board_follows', 'user_id', 'board_id'],
  board_followed_by_users: ['board_follows', 'board_id', 'user_id'],
};

const pageKey = (r: PageRequest): string => `${r.table}|${r.from}|${r.first}|${r.after ?? ''}|${r.startAfter ? `${r.startAfter.key}:${r.startAfter.id}` : ''}|${r.order ?? 'time'}|${r.since ?? ''}|${r.until ?? ''}`;

/**
 * Whether a notification's relation still stands, per stored kind: the relation row with the event's
 * time (a primary-key lookup each). The flat data set has no comments, so a `pin_commented` event
 * (none is loaded) would not show.
 */
const STANDS: Partial<Record<StoredKind, string>> = {
  pin_liked: 'EXISTS (SELECT 1 FROM likes r WHERE r.user_id = k.actor_id AND r.pin_id = k.object_id AND r.created_at = k.ts)',
  pin_repinned: 'EXISTS (SELECT 1 FROM pins r WHERE r.id = k.detail_id AND r.via_pin_id = k.object_id AND r.created_at = k.ts)',
  user_followed: 'EXISTS (SELECT 1 FROM follows r WHERE r.follower_id = k.actor_id AND r.followee_id = k.user_id AND r.created_at = k.ts)',
  board_followed: 'EXISTS (SELECT 1 FROM board_follows r WHERE r.user_id = k.actor_id AND r.board_id = k.object_id AND r.created_at = k.ts)',
};

export class FlatDb {
  readonly pool: Pool;
  readonly events: { readonly retention: EventRetention; readonly windowMs: number };
  constructor(endpoint: Endpoint, credentials: { user: string; password: string }, database: string, events: EventSettings = {}, poolSize = 10) {
    this.events = { retention: events.retention ?? defaultEventRetention(PINTEREST_EVENTS), windowMs: events.windowMs ?? DEFAULT_NOTIFICATION_WINDOW_MS };
    this.pool = createPool({
      host: endpoint.host,
      port: endpoint.port,
      user: credentials.user,
      password: credentials.password,
      database,
      connectionLimit: poolSize,
      supportBigNumbers: true,
      bigNumberStrings: true,
      jsonStrings: true,
      charset: 'utf8mb4_bin',
      enableKeepAlive: true,
    });
  }
  close(): Promise<void> {
    return this.pool.end();
  }
}

/** One request's view of the flat database: loaders batch each level into one query per table. */
export class FlatSource implements Source {
  readonly #db: FlatDb;
  readonly #ctx: SourceContext;
  readonly #objects: DataLoader<bigint, Obj | null>;
  readonly #pages: DataLoader<PageRequest, Page, string>;
  readonly #edges: DataLoader<{ table: MappingTable; from: bigint; to: bigint }, boolean, string>;
  readonly #usernames: DataLoader<string, bigint | null>;

  constructor(db: FlatDb, ctx: SourceContext) {
    this.#db = db;
    this.#ctx = ctx;
    this.#objects = new DataLoader((ids) => this.#loadObjects(ids), { cacheKeyFn: (k) => k, maxBatchSize: 5000 });
    this.#pages = new DataLoader((reqs) => this.#loadPages(reqs), { cacheKeyFn: pageKey, maxBatchSize: 2000 });
    this.#edges = new DataLoader((keys) => this.#loadEdges(keys), { cacheKeyFn: (k) => `${k.table}:${k.from}:${k.to}` });
    this.#usernames = new DataLoader(async (keys) => {
      const rows = await this.#q(`SELECT username, id FROM users WHERE username IN (${keys.map(() => '?').join(',')})`, [...keys]);
      const found = new Map(rows.map((r) => [String(r.username), BigInt(String(r.id))]));
      return keys.map((k) => found.get(k) ?? null);
    });
  }

  async #q(sql: string, values: Value[], conn?: PoolConnection): Promise<Row[]> {
    this.#ctx.sqlRoundTrips++;
    const [rows] = await (conn ?? this.#db.pool).query<Row[]>(sql, values);
    return rows;
  }

  async #loadObjects(ids: readonly bigint[]): Promise<(Obj | null)[]> {
    const byType = new Map<keyof typeof OBJECTS, bigint[]>();
    for (const id of ids) {
      const t = typeOf(id);
      if (t === 'user' || t === 'board' || t === 'pin') byType.set(t, [...(byType.get(t) ?? []), id]);
    }
    const found = new Map<bigint, Obj | null>();
    await Promise.all(
      [...byType.entries()].map(async ([type, list]) => {
        const rows = await this.#q(`SELECT ${columns(type)} FROM ${OBJECTS[type].table} o WHERE o.id IN (${list.map(() => '?').join(',')})`, list);
        for (const r of rows) found.set(BigInt(String(r.id)), toObj(type, r));
      }),
    );
    return ids.map((id) => found.get(id) ?? null);
  }

  async #loadPages(reqs: readonly PageRequest[]): Promise<Page[]> {
    const out: Page[] = reqs.map(() => ({ edges: [], hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null }));
    // One UNION ALL per object type: every list of this level whose targets are users, boards or pins.
    const byType = new Map<keyof typeof OBJECTS, number[]>();
    reqs.forEach((req, i) => {
      const spec = LISTS[req.table];
      if (spec) byType.set(spec.type, [...(byType.get(spec.type) ?? []), i]);
    });
    await Promise.all(
      [...byType.entries()].map(async ([type, indexes]) => {
        const parts: string[] = [];
        const values: Value[] = [];
        for (const i of indexes) {
          const req = reqs[i]!;
          const spec = LISTS[req.table]!;
          const owner = req.order === 'owner' && spec.position !== undefined;
          const key = owner ? spec.position! : spec.seq;
          const cmp = owner ? '>' : '<';
          const dir = owner ? 'ASC' : 'DESC';
          const where = [`${spec.owner} = ?`];
          const v: Value[] = [i, req.from];
          if (!owner && req.since != null) (where.push(`${spec.seq} >= ?`), v.push(req.since));
          if (!owner && req.until != null) (where.push(`${spec.seq} < ?`), v.push(req.until));
          const c = req.after != null ? decodeCursor(req.after, listTag(req)) : req.startAfter;
          if (c !== undefined) (where.push(`(${key} ${cmp} ? OR (${key} = ? AND ${spec.to} ${cmp} ?))`), v.push(c.key, c.key, c.id));
          v.push(req.first + 1);
          parts.push(`(SELECT ? AS req, ${spec.to} AS to_id, ${spec.seq} AS seq, ${key} AS k, ${columns(type)} FROM ${spec.from} WHERE ${where.join(' AND ')} ORDER BY ${key} ${dir}, ${spec.to} ${dir} LIMIT ?)`);
          values.push(...v);
        }
        const rows = await this.#q(parts.join('\nUNION ALL\n'), values);
        const grouped = new Map<number, Row[]>();
        for (const r of rows) {
          const i = Number(r.req);
          grouped.set(i, [...(grouped.get(i) ?? []), r]);
        }
        for (const i of indexes) {
          const req = reqs[i]!;
          const owner = req.order === 'owner' && LISTS[req.table]!.position !== undefined;
          const tag = listTag(req);
          const list = (grouped.get(i) ?? [])
            .map((r) => ({ r, k: BigInt(String(r.k)), to: BigInt(String(r.to_id)) }))
            .sort((a, b) => {
              const c = a.k === b.k ? (a.to < b.to ? -1 : a.to > b.to ? 1 : 0) : a.k < b.k ? -1 : 1;
              return owner ? c : -c;
            });
          const shown = list.slice(0, req.first);
          for (const { r, to } of shown) this.#objects.prime(to, toObj(type, r));
          const edges = shown.map(({ r, k, to }) => ({ to, sequence: Number(r.seq), cursor: encodeCursor({ list: tag, key: k, id: to }) }));
          out[i] = { edges, hasNextPage: list.length > req.first, hasPreviousPage: false, startCursor: edges[0]?.cursor ?? null, endCursor: edges.at(-1)?.cursor ?? null };
        }
      }),
    );
    return out;
  }

  async #loadEdges(keys: readonly { table: MappingTable; from: bigint; to: bigint }[]): Promise<boolean[]> {
    const byTable = new Map<MappingTable, { from: bigint; to: bigint }[]>();
    for (const k of keys) if (EDGES[k.table]) byTable.set(k.table, [...(byTable.get(k.table) ?? []), k]);
    const found = new Set<string>();
    await Promise.all(
      [...byTable.entries()].map(async ([table, pairs]) => {
        const [t, f, to] = EDGES[table]!;
        const rows = await this.#q(`SELECT ${f} AS f, ${to} AS t FROM ${t} WHERE (${f}, ${to}) IN (${pairs.map(() => '(?, ?)').join(', ')})`, pairs.flatMap((p) => [p.from, p.to]));
        for (const r of rows) found.add(`${table}:${r.f}:${r.t}`);
      }),
    );
    return keys.map((k) => found.has(`${k.table}:${k.from}:${k.to}`));
  }

  object(id: bigint): Promise<Obj | null> {
    return this.#objects.load(id);
  }
  page(req: PageRequest): Promise<Page> {
    return this.#pages.load(req);
  }
  /** Counts are columns of the row: free once the object is loaded (a write reloads it). */
  async count(o: Obj, kind: MappingTable): Promise<number> {
    const fresh = await this.#objects.load(o.id);
    return fresh?.counts?.[kind] ?? 0;
  }
  edge(table: MappingTable, from: bigint, to: bigint): Promise<boolean> {
    return this.#edges.load({ table, from, to });
  }
  username(key: string): Promise<bigint | null> {
    return this.#usernames.load(key);
  }

  /** Pins of followed users and boards, newest first: one JOIN over both follow tables, sorted by the database. */
  async feed(viewer: bigint, first: number, after: string | null): Promise<FeedPage> {
    const list = `feed:${viewer}`;
    const c = after ? decodeCursor(after, list) : undefined;
    const keyset = c ? ' AND (p.created_at < ? OR (p.created_at = ? AND p.id < ?))' : '';
    const kv: Value[] = c ? [c.key, c.key, c.id] : [];
    // Candidates from the covering (pinner_id | board_id, created_at, id) indexes, deduplicated and
    // cut to the page before the wide rows are joined in.
    const rows = await this.#q(
      `SELECT ${columns('pin')} FROM (
         SELECT id, created_at FROM (
           (SELECT p.id, p.created_at FROM follows f JOIN pins p ON p.pinner_id = f.followee_id WHERE f.follower_id = ?${keyset})
           UNION
           (SELECT p.id, p.created_at FROM board_follows bf JOIN pins p ON p.board_id = bf.board_id WHERE bf.user_id = ?${keyset})
         ) u ORDER BY created_at DESC, id DESC LIMIT ?
       ) t JOIN pins o ON o.id = t.id
       ORDER BY o.created_at DESC, o.id DESC`,
      [viewer, ...kv, viewer, ...kv, first + 1],
    );
    const objs = rows.map((r) => toObj('pin', r));
    const window = objs.slice(0, first);
    const edges: FeedPage['edges'] = [];
    for (const o of window) {
      if (!o) continue;
      this.#objects.prime(o.id, o);
      edges.push({ cursor: encodeCursor({ list, key: BigInt(o.createdAt), id: o.id }), node: o });
    }
    const last = rows[Math.min(rows.length, first) - 1];
    return {
      edges,
      hasNextPage: rows.length > first,
      endCursor: last ? encodeCursor({ list, key: BigInt(String(last.created_at)), id: BigInt(String(last.id)) }) : null,
    };
  }

  /**
   * A user's notification groups in one statement: the user's events of the asked kinds numbered per
   * kind newest first (retention: the newest `versions` younger than the TTL), those in the range
   * grouped per window, kind and target, each counting the events whose relation stands; the page
   * after the cursor's group, in the store's order. Cursors are the store's (same snapshot rules).
   */
  async notifications(req: NotificationPageRequest): Promise<NotificationPage> {
    const tag = `${req.user}|${[...req.kinds].sort().join(',')}`;
    const cursor = req.after != null ? decodeGroupCursor(req.after, tag) : undefined;
    if (req.kinds.length === 0) return { groups: [], hasNextPage: false, endCursor: null };
    const now = Date.now();
    const asOf = cursor?.asOf ?? now;
    const { retention, windowMs: w } = this.#db.events;
    let upper = asOf + 1;
    if (req.until != null) upper = Math.min(upper, req.until);
    if (cursor) upper = Math.min(upper, (cursor.bucket + 1) * w);
    const perKind = (f: (k: StoredKind) => number): { sql: string; values: Value[] } => ({
      sql: `CASE k.kind ${req.kinds.map(() => 'WHEN ? THEN ?').join(' ')} END`,
      values: req.kinds.flatMap((k) => [k, f(k)]),
    });
    const keep = (k: StoredKind): KindRetention => {
      const r = retention[k];
      if (!r) throw new Error(`no retention for event kind ${k}`);
      return r;
    };
    const versions = perKind((k) => keep(k).versions);
    const oldest = perKind((k) => now - keep(k).ttlMs);
    const where = [`k.nth <= ${versions.sql}`, `k.ts >= ${oldest.sql}`, 'k.ts < ?'];
    const whereValues: Value[] = [...versions.values, ...oldest.values, upper];
    if (req.since != null) (where.push('k.ts >= ?'), whereValues.push(req.since));
    const having = ['n > 0'];
    const havingValues: Value[] = [];
    if (cursor) {
      having.push('(bucket < ? OR (bucket = ? AND (newest < ? OR (newest = ? AND (kind > ? OR (kind = ? AND object_id < ?))))))');
      havingValues.push(cursor.bucket, cursor.bucket, cursor.newest, cursor.newest, cursor.kind, cursor.kind, cursor.object);
    }
    // derived_merge=off, as the gateway's store does: `shown` evaluated once per event, not once per aggregate.
    const rows = await this.#q(
      `SET STATEMENT optimizer_switch='derived_merge=off' FOR
SELECT kind, object_id, bucket, MAX(ts) AS newest, SUM(shown) AS n,
  COUNT(DISTINCT CASE WHEN shown = 1 THEN actor_id END) AS actors,
  MIN(CASE WHEN shown = 1 THEN ts END) AS earliest, MAX(CASE WHEN shown = 1 THEN ts END) AS latest,
  GROUP_CONCAT(CASE WHEN shown = 1 THEN actor_id END ORDER BY ts DESC, event_id DESC SEPARATOR ',' LIMIT 64) AS recent
FROM (
  SELECT k.kind, k.object_id, k.ts, k.event_id, k.actor_id, FLOOR(k.ts / ?) AS bucket,
    CASE k.kind ${req.kinds.map((kind) => `WHEN '${kind}' THEN ${STANDS[kind] ?? 'FALSE'}`).join(' ')} ELSE FALSE END AS shown
  FROM (
    SELECT e.user_id, e.kind, e.ts, e.event_id, e.actor_id, e.object_id, e.detail_id,
      ROW_NUMBER() OVER (PARTITION BY e.kind ORDER BY e.ts DESC, e.event_id DESC) AS nth
    FROM events e WHERE e.user_id = ? AND e.kind IN (${req.kinds.map(() => '?').join(', ')})
  ) k
  WHERE ${where.join(' AND ')}
) x
GROUP BY bucket, kind, object_id
HAVING ${having.join(' AND ')}
ORDER BY bucket DESC, newest DESC, kind ASC, object_id DESC
LIMIT ?`,
      [w, req.user, ...req.kinds, ...whereValues, ...havingValues, req.first + 1],
    );
    const groups = rows.map((r) => {
      const kind = String(r.kind) as StoredKind;
      const object = BigInt(String(r.object_id));
      const recent = String(r.recent ?? '')
        .split(',')
        .filter((x) => x !== '');
      return {
        kind,
        object,
        count: Number(r.n),
        actorCount: Number(r.actors),
        actors: [...new Set(recent)].slice(0, req.actors).map((x) => BigInt(x)),
        latest: Number(r.latest),
        earliest: Number(r.earliest),
        cursor: encodeGroupCursor(tag, { asOf, bucket: Number(r.bucket), newest: Number(r.newest), kind, object }),
      };
    });
    const page = groups.slice(0, req.first);
    return { groups: page, hasNextPage: groups.length > req.first, endCursor: page.at(-1)?.cursor ?? null };
  }

  /**
   * A like in one local transaction: the row and both counts together (what one database buys).
   * Concurrent likes of one pin can deadlock on its counter row: retried, as an application would.
   */
  async like(viewer: bigint, pin: bigint, add: boolean): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#likeOnce(viewer, pin, add);
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (attempt >= 5 || (code !== 'ER_LOCK_DEADLOCK' && code !== 'ER_LOCK_WAIT_TIMEOUT')) throw err;
      }
    }
  }

  async #likeOnce(viewer: bigint, pin: bigint, add: boolean): Promise<boolean> {
    const conn = await this.#db.pool.getConnection();
    let changed = false;
    try {
      await this.#q('BEGIN', [], conn);
      this.#ctx.sqlRoundTrips++;
      const [res] = add
        ? await conn.query<ResultSetHeader>('INSERT IGNORE INTO likes (user_id, pin_id, created_at) VALUES (?, ?, ?)', [viewer, pin, Date.now()])
        : await conn.query<ResultSetHeader>('DELETE FROM likes WHERE user_id = ? AND pin_id = ?', [viewer, pin]);
      changed = res.affectedRows === 1;
      if (changed) {
        const d = add ? 1 : -1;
        await this.#q('UPDATE pins SET like_count = like_count + ? WHERE id = ?', [d, pin], conn);
        await this.#q('UPDATE users SET like_count = like_count + ? WHERE id = ?', [d, viewer], conn);
      }
      await this.#q('COMMIT', [], conn);
    } catch (err) {
      await conn.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      conn.release();
    }
    this.#objects.clear(pin).clear(viewer);
    this.#edges.clear({ table: 'user_likes_pins', from: viewer, to: pin });
    return changed;
  }
}
