import { encodeCursor, decodeCursor } from '../core/cursor.ts';
import { ShardqlError } from '../core/errors.ts';
import { groupBy } from '../core/groupBy.ts';
import { shardOf } from '../core/ids.ts';
import { isMirror, type MappingTable, mappingSpec } from '../core/mappings.ts';
import { shardDatabase } from '../core/topology.ts';
import { affectedRows, batchOf, type BatchPart, type Row, type ShardRouter, type SqlCondition, type SqlValue, type Statement, type Tx } from './shardRouter.ts';
import { activeGuardStatement } from './objectStore.ts';
import type { OpContext } from './sqlStats.ts';
import type { ListField, ListToken, RedisLists } from '../cache/redisLists.ts';
import { cacheCall, type LookAside } from './lookAside.ts';

/** Room left between neighbours in the owner's order, so a move rarely renumbers anything. */
export const POSITION_GAP = 1024;

export interface EdgeChange {
  readonly op: 'add' | 'remove';
  readonly table: MappingTable;
  readonly from: bigint;
  readonly to: bigint;
  /** Order key; default: now in ms. */
  readonly sequence?: number;
}

/** One edge as it stands: present with its order key, or absent. */
export type EdgeState = { readonly sequence: number } | undefined;

/** A session variable the statements of `changePart` leave at 1 when their edge changed a row, else 0. */
const EDGE_CHANGED = '@shardql_edge_changed';
/** Set by an add's guard: whether the list's owner is active. */
const OWNER_ACTIVE = '@shardql_owner_active';

export type ListOrder = 'time' | 'owner';

export interface PageRequest {
  readonly table: MappingTable;
  readonly from: bigint;
  /** Page size, already bounded by the caller: the first N after `after`, or with `backward` the last N before `before`. */
  readonly first: number;
  readonly after?: string | null;
  /**
   * The page nearest the end of the list (Relay's `last`): the same index read the other way, so a
   * backward page costs what a forward one costs.
   */
  readonly backward?: boolean;
  /** Only items before this cursor's (Relay's `before`); with `after`, the range between the two. */
  readonly before?: string | null;
  /**
   * Start after this raw keyset position instead of a cursor: for merges across lists (the home
   * feed), whose own cursor is not any one list's.
   */
  readonly startAfter?: { readonly key: bigint; readonly id: bigint };
  /** `time`: newest first by sequence (default). `owner`: the owner's order (ordered lists only). */
  readonly order?: ListOrder;
  /** Time range on the sequence (ms): since inclusive, until exclusive. Time order only. */
  readonly since?: number | null;
  readonly until?: number | null;
}

export interface PageEdge {
  readonly to: bigint;
  readonly sequence: number;
  readonly cursor: string;
}

/** A page as Relay's PageInfo tells it: each `has…Page` is computed for the direction the page was read in, false for the other. */
export interface Page {
  readonly edges: PageEdge[];
  readonly hasNextPage: boolean;
  readonly hasPreviousPage: boolean;
  readonly startCursor: string | null;
  readonly endCursor: string | null;
}

export interface CountKey {
  readonly id: bigint;
  readonly kind: MappingTable;
}

export const countKey = (id: bigint, kind: string): string => `${id}:${kind}`;

function table(shard: number, name: string): string {
  return `${shardDatabase(shard)}.${name}`;
}

function listTag(req: PageRequest): string {
  return `${req.table}:${req.from}:${req.order === 'owner' ? 'o' : 't'}`;
}

/** The cache key of one list (one direction of one mapping, for one `from`): pages and count live in it. */
export const listCacheKey = (tableName: MappingTable, from: bigint): string => `l:${tableName}:${from}`;

/** The in-process cache's namespace of a mapping's lists (their IDs are the `from` of each). */
const LIST_NAMESPACES = new Map<string, string>();
const listNamespace = (tableName: MappingTable): string => {
  let ns = LIST_NAMESPACES.get(tableName);
  if (ns === undefined) LIST_NAMESPACES.set(tableName, (ns = `l:${tableName}`));
  return ns;
};

interface PageRow {
  readonly to: bigint;
  readonly sequence: number;
  readonly k: bigint;
}

/** One read of a level: a page or a count. */
type ListItem = { readonly plan: PagePlan; readonly count?: undefined } | { readonly count: CountKey; readonly plan?: undefined };

interface PagePlan {
  readonly req: PageRequest;
  readonly i: number;
  readonly owner: boolean;
  /** Read from the end (`last`). */
  readonly backward: boolean;
  /** Items strictly after this position in the list's order (`after`, or the feed's `startAfter`). */
  readonly start: { readonly key: bigint; readonly id: bigint } | undefined;
  /** Items strictly before this position (`before`). */
  readonly end: { readonly key: bigint; readonly id: bigint } | undefined;
  readonly cacheField: ListField;
  readonly nearNs: string;
}

/** First pages of plain lists (`first: N`, no cursor, no time range) are most reads: their field names are made once. */
const FIRST_PAGE_FIELDS = new Map<number, string>();

type Position = { readonly key: bigint; readonly id: bigint };

/**
 * The page's identity inside its list: order and direction (`b`: from the end), size, start
 * position, time range, then the end position when there is one.
 */
function pageField(
  owner: boolean,
  backward: boolean,
  first: number,
  start: Position | undefined,
  since: number | null | undefined,
  until: number | null | undefined,
  end: Position | undefined,
): string {
  if (!owner && !backward && start === undefined && since == null && until == null && end === undefined) {
    let f = FIRST_PAGE_FIELDS.get(first);
    if (f === undefined) FIRST_PAGE_FIELDS.set(first, (f = `p:t:${first}:::`)); // the general form below, with nothing after the size
    return f;
  }
  const at = (p: Position | undefined): string => (p ? `${p.key}:${p.id}` : '');
  return `p:${owner ? 'o' : 't'}${backward ? 'b' : ''}:${first}:${at(start)}:${since ?? ''}:${until ?? ''}${end ? `:${at(end)}` : ''}`;
}

function planPage(req: PageRequest, i: number): PagePlan {
  const owner = req.order === 'owner';
  if (owner && !('ordered' in mappingSpec(req.table))) {
    throw new ShardqlError('INVALID_ARGUMENT', `Expected order TIME for ${req.table}, which has no owner order, got OWNER`);
  }
  const backward = req.backward === true;
  const start = req.after != null ? decodeCursor(req.after, listTag(req)) : req.startAfter;
  const end = req.before != null ? decodeCursor(req.before, listTag(req)) : undefined;
  const field = pageField(owner, backward, req.first, start, req.since, req.until, end);
  return {
    req,
    i,
    owner,
    backward,
    start: start ? { key: start.key, id: start.id } : undefined,
    end: end ? { key: end.key, id: end.id } : undefined,
    cacheField: { list: listCacheKey(req.table, req.from), field },
    nearNs: listNamespace(req.table),
  };
}

/**
 * The page's rows in the list's order (UNION ALL promises none across parts), then edges with
 * cursors. The read asked one row more than the page holds, on the far side from where it began:
 * that row tells whether the list goes on (past the end of a forward page, before the start of a
 * backward one).
 */
function buildPage(p: PagePlan, rows: readonly PageRow[]): Page {
  const sorted = [...rows].sort((a, b) => {
    const byKey = a.k === b.k ? (a.to < b.to ? -1 : a.to > b.to ? 1 : 0) : a.k < b.k ? -1 : 1;
    return p.owner ? byKey : -byKey;
  });
  const tag = listTag(p.req);
  const more = sorted.length > p.req.first;
  const kept = p.backward ? sorted.slice(Math.max(0, sorted.length - p.req.first)) : sorted.slice(0, p.req.first);
  const edges = kept.map((r) => ({ to: r.to, sequence: r.sequence, cursor: encodeCursor({ list: tag, key: r.k, id: r.to }) }));
  return {
    edges,
    hasNextPage: !p.backward && more,
    hasPreviousPage: p.backward && more,
    startCursor: edges[0]?.cursor ?? null,
    endCursor: edges.at(-1)?.cursor ?? null,
  };
}

function encodeRows(rows: readonly PageRow[]): string {
  return JSON.stringify(rows.map((r) => [`${r.to}`, r.sequence, `${r.k}`]));
}

function decodeRows(text: string): PageRow[] | undefined {
  try {
    const v = JSON.parse(text) as [string, number, string][];
    return v.map(([to, sequence, k]) => ({ to: BigInt(to), sequence, k: BigInt(k) }));
  } catch {
    return undefined;
  }
}

/**
 * Mapping tables: edges `(from_id, to_id, sequence)` on the shard of `from_id`, and the counts
 * beside them. An edge and its count change in one local transaction. Pages are keyset pages on
 * `(sequence, to_id)`: page 1000 costs what page 1 costs.
 */
export class MappingStore {
  readonly #router: ShardRouter;
  readonly #now: () => number;
  readonly #lists: RedisLists | undefined;
  readonly #lookAside: LookAside;

  constructor(opts: {
    router: ShardRouter;
    now?: () => number;
    cache?: RedisLists | undefined;
    /** The in-process layer above Redis and the invalidation of both. */
    lookAside: LookAside;
  }) {
    this.#router = opts.router;
    this.#now = opts.now ?? Date.now;
    this.#lists = opts.cache;
    this.#lookAside = opts.lookAside;
  }

  /** Drops the cached pages and counts of lists after a commit (Redis, then the invalidation log). Never throws. */
  async #invalidate(lists: readonly string[], ctx: OpContext, strict = false): Promise<void> {
    const redis = this.#lists;
    await this.#lookAside.invalidate(
      ctx,
      lists,
      redis ? { layer: 'redis', run: (keys) => redis.invalidate(keys, ctx.cache), logged: (log) => redis.loggedInvalidation(log) } : undefined,
      strict,
    );
  }

  /**
   * Applies edge changes, one local transaction per shard of `from` (so the edges of one write that
   * live on one shard commit together), each transaction ONE round trip. Adding an existing edge or
   * removing a missing one changes nothing, counts included. Returns, per change, whether it
   * changed a row. Shards are written in the order their first change appears.
   */
  async apply(changes: readonly EdgeChange[], ctx: OpContext = {}): Promise<boolean[]> {
    const results: boolean[] = new Array<boolean>(changes.length).fill(false);
    const byShard = groupBy(changes.keys(), (i) => shardOf(changes[i]!.from));
    for (const shard of byShard.keys()) {
      // Validate up front so no transaction starts for a write that would be refused.
      this.#router.writableHostOfShard(shard);
    }
    for (const [shard, indexes] of byShard) {
      const part = batchOf(...indexes.map((i) => this.changePart(changes[i]!)));
      const changed = await this.#router.transaction(shard, async (tx) => part.read(await tx.commitWith(part.statements)), ctx);
      indexes.forEach((i, j) => (results[i] = changed[j]!));
      await this.#invalidate(
        indexes.filter((i) => results[i]).map((i) => listCacheKey(changes[i]!.table, changes[i]!.from)),
        ctx,
      );
    }
    return results;
  }

  /**
   * Applies one edge change (and its count) inside a caller's transaction on the shard of
   * `c.from`, in one round trip. Invalidate the list's cache after the commit (`invalidate`).
   */
  async applyInTx(tx: Tx, c: EdgeChange): Promise<boolean> {
    const part = this.changePart(c);
    return part.read(await tx.batch(part.statements));
  }

  /**
   * One edge change and its count as statements for a batch (inside a transaction on the shard of
   * `c.from`): the edge, then the count, changed only if the edge statement changed a row. SQL
   * decides that (ROW_COUNT()), so no round trip waits on the answer. Reads: whether it changed.
   */
  changePart(c: EdgeChange): BatchPart<boolean> {
    const part = this.changeOutcomePart(c);
    return { statements: part.statements, read: (results) => part.read(results).changed };
  }

  /**
   * As `changePart`, and also whether an add was refused: nothing is ever added to the list of an
   * object that is missing or soft-deleted. The add holds a shared lock on the list owner's row
   * (`activeGuardStatement`) until commit, so it and the owner's soft delete are ordered: an add
   * that commits first is seen by the delete's cascade (`purge`), one that comes after is refused.
   */
  changeOutcomePart(c: EdgeChange): BatchPart<{ changed: boolean; refused: boolean }> {
    const shard = shardOf(c.from);
    const t = table(shard, c.table);
    const guard: Statement[] = [];
    let edge: Statement;
    let resequence: Statement | undefined;
    if (c.op === 'add') {
      const sequence = c.sequence ?? this.#now();
      // In the owner's order a new pin goes first, like the newest in time order.
      const position = 'ordered' in mappingSpec(c.table) ? -sequence * POSITION_GAP : null;
      guard.push(activeGuardStatement(c.from, OWNER_ACTIVE));
      edge = {
        sql: `INSERT IGNORE INTO ${t} (from_id, to_id, sequence, position) SELECT ?, ?, ?, ? FROM DUAL WHERE ${OWNER_ACTIVE} = 1`,
        values: [c.from, c.to, sequence, position],
      };
      // A mirror copies its authoritative edge's sequence, also onto a row left by an earlier state
      // of the pair (an unlike interrupted before its mirror ran, then a like): its list's order
      // moves, its count does not. (A separate UPDATE: with the driver's found-rows flag an upsert's
      // row count cannot tell "inserted" from "already equal".)
      if (isMirror(c.table)) {
        resequence = {
          sql: `UPDATE ${t} SET sequence = ? WHERE from_id = ? AND to_id = ? AND sequence <> ? AND ${OWNER_ACTIVE} = 1`,
          values: [sequence, c.from, c.to, sequence],
        };
      }
    } else {
      edge = { sql: `DELETE FROM ${t} WHERE from_id = ? AND to_id = ?`, values: [c.from, c.to] };
    }
    const at = guard.length;
    const last = resequence ? at + 3 : -1;
    return {
      statements: [
        ...guard,
        edge,
        { sql: `SET ${EDGE_CHANGED} := ROW_COUNT()` },
        {
          sql: `INSERT INTO ${table(shard, 'counts')} (id, kind, n) SELECT ?, ?, ? FROM DUAL WHERE ${EDGE_CHANGED} = 1 ON DUPLICATE KEY UPDATE n = n + VALUES(n)`,
          values: [c.from, c.table, c.op === 'add' ? 1 : -1],
        },
        ...(resequence ? [resequence] : []),
      ],
      read: (results) => ({
        changed: affectedRows(results[at]!) === 1 || (last >= 0 && affectedRows(results[last]!) === 1),
        refused: at > 0 && Number((results[at - 1] as Row[])[0]?.active ?? 0) !== 1,
      }),
    };
  }

  /**
   * Applies one edge change in a transaction of its own and reads its list's count as that
   * transaction commits it: one round trip. Invalidate the list's cache after (`invalidate`).
   * `refused`: an add to the list of a missing or deleted object (see `changeOutcomePart`).
   */
  async applyCounting(c: EdgeChange, ctx: OpContext = {}, along: readonly Statement[] = []): Promise<{ changed: boolean; refused: boolean; count: number }> {
    const part = this.countingPart(c, along);
    return await this.#router.transaction(shardOf(c.from), async (tx) => part.read(await tx.commitWith(part.statements)), ctx);
  }

  /** `applyCounting`'s statements, for a batch inside a transaction on the shard of `c.from` that another caller commits. */
  countingPart(c: EdgeChange, along: readonly Statement[] = []): BatchPart<{ changed: boolean; refused: boolean; count: number }> {
    const part = batchOf(this.changeOutcomePart(c), this.countPart(c.from, c.table), { statements: along, read: () => undefined });
    return {
      statements: part.statements,
      read: (results) => {
        const [outcome, count] = part.read(results);
        return { ...outcome, count };
      },
    };
  }

  /**
   * As `applyOne`, with `along` (statements on the same shard, e.g. an event append) in the same
   * transaction and round trip; `alsoInvalidate` are cache keys those statements change.
   */
  async applyAlong(c: EdgeChange, along: readonly Statement[], alsoInvalidate: readonly string[], ctx: OpContext = {}): Promise<{ changed: boolean; refused: boolean }> {
    const part = batchOf(this.changeOutcomePart(c), { statements: along, read: () => undefined });
    const [outcome] = await this.#router.transaction(shardOf(c.from), async (tx) => part.read(await tx.commitWith(part.statements)), ctx);
    await this.#invalidate([...(outcome.changed ? [listCacheKey(c.table, c.from)] : []), ...alsoInvalidate], ctx);
    return outcome;
  }

  /** Holds, in a batch right after `changePart`'s statements, when that change changed a row (e.g. to append an event with a new edge only). */
  readonly edgeChanged: SqlCondition = { sql: `${EDGE_CHANGED} = 1`, values: [] };

  /** As `apply` for one change, telling also whether an add was refused (its list's owner is missing or deleted). */
  async applyOne(c: EdgeChange, ctx: OpContext = {}): Promise<{ changed: boolean; refused: boolean }> {
    const part = this.changeOutcomePart(c);
    const outcome = await this.#router.transaction(shardOf(c.from), async (tx) => part.read(await tx.commitWith(part.statements)), ctx);
    if (outcome.changed) await this.#invalidate([listCacheKey(c.table, c.from)], ctx);
    return outcome;
  }

  /**
   * Up to `limit` edges of each of several lists of one object, as they stand on its shard's
   * primary (no cache), in one round trip: what a cascade still has to undo. Lowest `to` first.
   */
  async firstEdges(from: bigint, tables: readonly MappingTable[], limit: number, ctx: OpContext = {}): Promise<Map<MappingTable, bigint[]>> {
    const shard = shardOf(from);
    const parts = tables.map((t, i) => `(SELECT ${i} AS t, to_id FROM ${table(shard, t)} WHERE from_id = ? ORDER BY to_id LIMIT ?)`);
    const rows = await this.#router.query(
      this.#router.writableHostOfShard(shard),
      [shard],
      parts.join('\nUNION ALL\n'),
      tables.flatMap(() => [from, limit]),
      ctx,
    );
    const out = new Map<MappingTable, bigint[]>();
    for (const r of rows) {
      const t = tables[Number(r.t)]!;
      let list = out.get(t);
      if (!list) out.set(t, (list = []));
      list.push(BigInt(r.to_id as string));
    }
    return out;
  }

  /** A list's count as a statement for a batch inside a transaction on the shard of `id` (0 if none). */
  countPart(id: bigint, kind: MappingTable): BatchPart<number> {
    return {
      statements: [{ sql: `SELECT n FROM ${table(shardOf(id), 'counts')} WHERE id = ? AND kind = ?`, values: [id, kind] }],
      read: (results) => Number((results[0] as Row[])[0]?.n ?? 0),
    };
  }

  /**
   * One edge as a statement for a batch inside a transaction on the shard of `from`: a locking
   * read, so it sees the newest committed state and, after this transaction's own change, what
   * the transaction will commit (its locks keep others from changing the edge until then).
   */
  edgePart(tableName: MappingTable, from: bigint, to: bigint): BatchPart<EdgeState> {
    return {
      statements: [{ sql: `SELECT sequence FROM ${table(shardOf(from), tableName)} WHERE from_id = ? AND to_id = ? LOCK IN SHARE MODE`, values: [from, to] }],
      read: (results) => {
        const row = (results[0] as Row[])[0];
        return row ? { sequence: Number(row.sequence) } : undefined;
      },
    };
  }

  /** Holds (in a statement on the shard of `from`) while the edge is in `state`: absent, or present with that sequence. */
  edgeIs(tableName: MappingTable, from: bigint, to: bigint, state: EdgeState): SqlCondition {
    const t = table(shardOf(from), tableName);
    return state === undefined
      ? { sql: `NOT EXISTS (SELECT 1 FROM ${t} WHERE from_id = ? AND to_id = ?)`, values: [from, to] }
      : { sql: `EXISTS (SELECT 1 FROM ${t} WHERE from_id = ? AND to_id = ? AND sequence = ?)`, values: [from, to, state.sequence] };
  }

  /** Drops the cached pages and counts of lists after a caller's transaction committed. Never throws. */
  async invalidate(lists: readonly string[], ctx: OpContext = {}): Promise<void> {
    await this.#invalidate(lists, ctx);
  }

  /** Replays an invalidation recorded as failed (the repair pass): throws if a layer fails. */
  async replayInvalidation(lists: readonly string[], ctx: OpContext = {}): Promise<void> {
    await this.#invalidate(lists, ctx, true);
  }

  /** Many pages in one round trip per host: each page is one indexed subquery of a UNION ALL. */
  async pages(reqs: readonly PageRequest[], ctx: OpContext = {}): Promise<Page[]> {
    const settled = await this.pagesSettled(reqs, ctx);
    for (const p of settled) if (p instanceof Error) throw p;
    return settled as Page[];
  }

  /** Like pages, but a failing host fails only its own pages (returned as the error in their place). */
  async pagesSettled(reqs: readonly PageRequest[], ctx: OpContext = {}): Promise<(Page | Error)[]> {
    return (await this.readLists(reqs, [], ctx)).pages;
  }

  /**
   * A time-ordered page read from its start (no cursor, no start position) if this operation's L1
   * view already holds it: no promise, no loader. Anything else, or a miss: undefined (load it).
   */
  peekPage(req: PageRequest, ctx: OpContext): Page | undefined {
    if (req.after != null || req.before != null || req.startAfter !== undefined || req.order === 'owner') return undefined;
    const field = pageField(false, req.backward === true, req.first, undefined, req.since, req.until, undefined);
    return this.#lookAside.peek(ctx, { ns: listNamespace(req.table), id: req.from, field }) as Page | undefined;
  }

  /** A count if this operation's L1 view already holds it (no promise); see LookAside.peek. */
  peekCount(key: CountKey, ctx: OpContext): number | undefined {
    return this.#lookAside.peek(ctx, { ns: listNamespace(key.kind), id: key.id, field: 'n' }) as number | undefined;
  }

  /** Counts, from the cache or one round trip per host. Missing counts are 0. */
  async counts(keys: readonly CountKey[], ctx: OpContext = {}): Promise<Map<string, number>> {
    const { counts } = await this.readLists([], keys, ctx);
    for (const v of counts.values()) if (v instanceof Error) throw v;
    return counts as Map<string, number>;
  }

  /**
   * Pages and counts of one level of a query together: one Redis pipeline for all of them, then
   * for the misses one UNION ALL of pages and one query of counts per host, then one pipeline of
   * fills. A failing host fails only its own pages and counts.
   */
  async readLists(
    reqs: readonly PageRequest[],
    countKeys: readonly CountKey[],
    ctx: OpContext = {},
  ): Promise<{ pages: (Page | Error)[]; counts: Map<string, number | Error> }> {
    const pages: (Page | Error)[] = new Array<Page | Error>(reqs.length);
    const counts = new Map<string, number | Error>();
    // 1. Plan: validate and decode every page request; a bad one fails alone.
    const plans: PagePlan[] = [];
    reqs.forEach((req, i) => {
      try {
        plans.push(planPage(req, i));
      } catch (err) {
        pages[i] = err instanceof Error ? err : new Error(String(err));
      }
    });
    // 2. L1 (built pages and counts in this process), then Redis and MySQL for what it lacks.
    const items: ListItem[] = [...plans.map((plan) => ({ plan })), ...countKeys.map((count) => ({ count }))];
    await this.#lookAside.read<ListItem, Page | number>(
      ctx,
      items,
      (it) =>
        it.plan
          ? { ns: it.plan.nearNs, id: it.plan.req.from, field: it.plan.cacheField.field }
          : { ns: listNamespace(it.count.kind), id: it.count.id, field: 'n' },
      (it, v) => (it.plan ? (pages[it.plan.i] = v as Page) : counts.set(countKey(it.count.id, it.count.kind), v as number)),
      async (misses, fill) => {
        const missedPlans: PagePlan[] = [];
        const missedCounts: CountKey[] = [];
        for (const it of misses) it.plan ? missedPlans.push(it.plan) : missedCounts.push(it.count);
        await this.#readShared(missedPlans, missedCounts, ctx, {
          page: (p, page) => {
            pages[p.i] = page;
            fill({ plan: p }, page);
          },
          count: (k, n) => {
            counts.set(countKey(k.id, k.kind), n);
            fill({ count: k }, n);
          },
          failed: (it, err) => (it.plan ? (pages[it.plan.i] = err) : counts.set(countKey(it.count.id, it.count.kind), err)),
        });
      },
    );
    return { pages, counts };
  }

  /**
   * Redis (one pipeline for every page and count asked), then MySQL for its misses (one UNION ALL of
   * pages and one query of counts per host, in parallel), then one pipeline of fills, each only if
   * its list did not change meanwhile.
   */
  async #readShared(
    plans: readonly PagePlan[],
    countKeys: readonly CountKey[],
    ctx: OpContext,
    to: { page(p: PagePlan, page: Page): void; count(k: CountKey, n: number): void; failed(it: ListItem, err: Error): void },
  ): Promise<void> {
    const countFields = countKeys.map((k) => ({ list: listCacheKey(k.kind, k.id), field: 'n' }));
    let pageMisses: readonly PagePlan[] = plans;
    let countMisses: readonly CountKey[] = countKeys;
    const lists = this.#lists;
    const probe = lists
      ? await cacheCall(ctx, 'redis', 'get', plans.length + countFields.length, () => lists.probe([...plans.map((p) => p.cacheField), ...countFields], ctx.cache))
      : undefined;
    if (probe) {
      const pm: PagePlan[] = [];
      plans.forEach((p, j) => {
        const cached = probe.values.get(j);
        const rows = cached === undefined ? undefined : decodeRows(cached);
        if (rows) to.page(p, buildPage(p, rows));
        else pm.push(p);
      });
      const cm: CountKey[] = [];
      countKeys.forEach((k, j) => {
        const v = probe.values.get(plans.length + j);
        if (v !== undefined && /^-?\d+$/.test(v)) to.count(k, Number(v));
        else cm.push(k);
      });
      pageMisses = pm;
      countMisses = cm;
    }
    const fills: { field: ListField; value: string; token: ListToken }[] = [];
    const tokenOfPlan = new Map(plans.map((p, j) => [p, probe?.tokens.get(j)]));
    const tokenOfCount = new Map(countKeys.map((k, j) => [countKey(k.id, k.kind), { field: countFields[j]!, token: probe?.tokens.get(plans.length + j) }]));
    const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));
    const pagesByHost = this.#router.groupByHost(pageMisses, (p) => shardOf(p.req.from), ctx);
    const countsByHost = this.#router.groupByHost(countMisses, (k) => shardOf(k.id), ctx);
    await Promise.all([
      ...[...pagesByHost.entries()].map(async ([host, items]) => {
        try {
          const rowsByPlan = await this.#fetchPages(host, items, ctx);
          for (const p of items) {
            const rows = rowsByPlan.get(p.i) ?? [];
            to.page(p, buildPage(p, rows));
            const token = tokenOfPlan.get(p);
            if (token !== undefined) fills.push({ field: p.cacheField, value: encodeRows(rows), token });
          }
        } catch (err) {
          for (const p of items) to.failed({ plan: p }, asError(err));
        }
      }),
      ...[...countsByHost.entries()].map(async ([host, keys]) => {
        try {
          const found = await this.#fetchCounts(host, keys, ctx);
          for (const k of keys) {
            const key = countKey(k.id, k.kind);
            const n = found.get(key) ?? 0;
            to.count(k, n);
            const t = tokenOfCount.get(key);
            if (t?.token !== undefined) fills.push({ field: t.field, value: String(n), token: t.token });
          }
        } catch (err) {
          for (const k of keys) to.failed({ count: k }, asError(err));
        }
      }),
    ]);
    if (lists && fills.length > 0) await cacheCall(ctx, 'redis', 'fill', fills.length, () => lists.fill(fills, ctx.cache));
  }

  async #fetchPages(host: string, items: readonly PagePlan[], ctx: OpContext): Promise<Map<number, PageRow[]>> {
    const parts: string[] = [];
    const values: SqlValue[] = [];
    for (const p of items) {
      const { req } = p;
      const shard = shardOf(req.from);
      const keyCol = p.owner ? 'position' : 'sequence';
      // The list's order: the owner's ascending, time descending. A backward page reads the same
      // index the other way, from the end (or `before`) towards the start.
      const later = p.owner ? '>' : '<';
      const earlier = p.owner ? '<' : '>';
      const dir = p.owner !== p.backward ? 'ASC' : 'DESC';
      const where = ['from_id = ?'];
      const v: SqlValue[] = [p.i, req.from];
      if (!p.owner && req.since != null) (where.push('sequence >= ?'), v.push(req.since));
      if (!p.owner && req.until != null) (where.push('sequence < ?'), v.push(req.until));
      for (const [at, cmp] of [[p.start, later], [p.end, earlier]] as const) {
        if (at === undefined) continue;
        where.push(`(${keyCol} ${cmp} ? OR (${keyCol} = ? AND to_id ${cmp} ?))`);
        v.push(at.key, at.key, at.id);
      }
      v.push(req.first + 1);
      parts.push(
        `(SELECT ? AS req, to_id, sequence, ${keyCol} AS k FROM ${table(shard, req.table)} FORCE INDEX (${p.owner ? 'by_position' : 'by_sequence'}) WHERE ${where.join(' AND ')} ORDER BY ${keyCol} ${dir}, to_id ${dir} LIMIT ?)`,
      );
      values.push(...v);
    }
    const shards = [...new Set(items.map((p) => shardOf(p.req.from)))];
    const rows = await this.#router.query(host, shards, parts.join('\nUNION ALL\n'), values, ctx);
    const grouped = new Map<number, PageRow[]>();
    for (const row of rows) {
      const i = Number(row.req);
      const list = grouped.get(i) ?? [];
      list.push({ to: BigInt(row.to_id as string), sequence: Number(row.sequence), k: BigInt(row.k as string) });
      grouped.set(i, list);
    }
    return grouped;
  }

  async #fetchCounts(host: string, keys: readonly CountKey[], ctx: OpContext): Promise<Map<string, number>> {
    const byShard = groupBy(keys, (k) => shardOf(k.id));
    const parts: string[] = [];
    const values: SqlValue[] = [];
    for (const [shard, ks] of byShard) {
      parts.push(`SELECT id, kind, n FROM ${table(shard, 'counts')} WHERE (id, kind) IN (${ks.map(() => '(?, ?)').join(', ')})`);
      for (const k of ks) values.push(k.id, k.kind);
    }
    const rows = await this.#router.query(host, [...byShard.keys()], parts.join('\nUNION ALL\n'), values, ctx);
    return new Map(rows.map((r) => [countKey(BigInt(r.id as string), String(r.kind)), Number(r.n)]));
  }

  /** Which of the given edges exist, in one round trip per host. Returns `from:to` keys. */
  async existing(tableName: MappingTable, pairs: readonly { from: bigint; to: bigint }[], ctx: OpContext = {}): Promise<Set<string>> {
    return new Set((await this.sequences(tableName, pairs, ctx)).keys());
  }

  /** The sequence of each of the given edges that exists, in one round trip per host, by `from:to` key. */
  async sequences(tableName: MappingTable, pairs: readonly { from: bigint; to: bigint }[], ctx: OpContext = {}): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const byHost = this.#router.groupByHost(pairs, (p) => shardOf(p.from), ctx);
    await Promise.all(
      [...byHost.entries()].map(async ([host, ps]) => {
        const byShard = groupBy(ps, (p) => shardOf(p.from));
        const parts: string[] = [];
        const values: SqlValue[] = [];
        for (const [shard, list] of byShard) {
          parts.push(`SELECT from_id, to_id, sequence FROM ${table(shard, tableName)} WHERE (from_id, to_id) IN (${list.map(() => '(?, ?)').join(', ')})`);
          for (const p of list) values.push(p.from, p.to);
        }
        const rows = await this.#router.query(host, [...byShard.keys()], parts.join('\nUNION ALL\n'), values, ctx);
        for (const r of rows) out.set(`${r.from_id}:${r.to_id}`, Number(r.sequence));
      }),
    );
    return out;
  }

  /**
   * Moves `to` in the owner's order of list `from`, right after `after` (or first when null). Only
   * the moved edge's position changes, unless its neighbours have no room left between them; then
   * the edges after `after` shift by one gap.
   */
  async move(tableName: MappingTable, from: bigint, to: bigint, after: bigint | null, ctx: OpContext = {}): Promise<void> {
    if (!('ordered' in mappingSpec(tableName))) throw new ShardqlError('INVALID_ARGUMENT', `${tableName} has no owner order`);
    const shard = shardOf(from);
    const t = table(shard, tableName);
    await this.#router.transaction(
      shard,
      async (tx) => {
        const posOf = async (id: bigint): Promise<bigint | undefined> => {
          const rows = await tx.query(`SELECT position FROM ${t} WHERE from_id = ? AND to_id = ? FOR UPDATE`, [from, id]);
          return rows[0] ? BigInt(rows[0].position as string) : undefined;
        };
        if ((await posOf(to)) === undefined) throw new ShardqlError('NOT_FOUND', `Item ${to} is not in list ${from}`);
        let target: bigint;
        if (after === null) {
          const rows = await tx.query(`SELECT MIN(position) AS p FROM ${t} WHERE from_id = ? AND to_id <> ?`, [from, to]);
          const min = rows[0]?.p;
          target = min == null ? 0n : BigInt(min as string) - BigInt(POSITION_GAP);
        } else {
          if (after === to) throw new ShardqlError('INVALID_ARGUMENT', 'Expected to move an item after another item, got the item itself');
          const pa = await posOf(after);
          if (pa === undefined) throw new ShardqlError('NOT_FOUND', `Item ${after} is not in list ${from}`);
          const rows = await tx.query(
            `SELECT position FROM ${t} FORCE INDEX (by_position) WHERE from_id = ? AND (position > ? OR (position = ? AND to_id > ?)) AND to_id <> ? ORDER BY position, to_id LIMIT 1`,
            [from, pa, pa, after, to],
          );
          const next = rows[0] ? BigInt(rows[0].position as string) : undefined;
          if (next === undefined) target = pa + BigInt(POSITION_GAP);
          else if (next - pa >= 2n) target = pa + (next - pa) / 2n;
          else {
            await tx.execute(`UPDATE ${t} SET position = position + ? WHERE from_id = ? AND (position > ? OR (position = ? AND to_id > ?)) AND to_id <> ?`, [
              2 * POSITION_GAP,
              from,
              pa,
              pa,
              after,
              to,
            ]);
            target = pa + BigInt(POSITION_GAP);
          }
        }
        await tx.execute(`UPDATE ${t} SET position = ? WHERE from_id = ? AND to_id = ?`, [target, from, to]);
      },
      ctx,
    );
    await this.#invalidate([listCacheKey(tableName, from)], ctx);
  }
}
