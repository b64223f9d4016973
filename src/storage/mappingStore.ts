import { encodeCursor, decodeCursor } from '../core/cursor.ts';
import { ShardqlError } from '../core/errors.ts';
import { shardOf } from '../core/ids.ts';
import { MAPPINGS, type MappingTable } from '../core/mappings.ts';
import { shardDatabase } from '../core/topology.ts';
import type { ShardRouter, SqlValue, Tx } from './shardRouter.ts';
import type { OpContext } from './sqlStats.ts';

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

export type ListOrder = 'time' | 'owner';

export interface PageRequest {
  readonly table: MappingTable;
  readonly from: bigint;
  /** Page size, already bounded by the caller. */
  readonly first: number;
  readonly after?: string | null;
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

export interface Page {
  readonly edges: PageEdge[];
  readonly hasNextPage: boolean;
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

/**
 * Mapping tables: edges `(from_id, to_id, sequence)` on the shard of `from_id`, and the counts
 * beside them. An edge and its count change in one local transaction. Pages are keyset pages on
 * `(sequence, to_id)`: page 1000 costs what page 1 costs.
 */
export class MappingStore {
  readonly #router: ShardRouter;
  readonly #now: () => number;

  constructor(opts: { router: ShardRouter; now?: () => number }) {
    this.#router = opts.router;
    this.#now = opts.now ?? Date.now;
  }

  /**
   * Applies edge changes, one local transaction per shard of `from` (so the edges of one write that
   * live on one shard commit together). Adding an existing edge or removing a missing one changes
   * nothing, counts included. Returns, per change, whether it changed a row. Shards are written in
   * the order their first change appears.
   */
  async apply(changes: readonly EdgeChange[], ctx: OpContext = {}): Promise<boolean[]> {
    const results: boolean[] = new Array<boolean>(changes.length).fill(false);
    const byShard = new Map<number, number[]>();
    changes.forEach((c, i) => {
      const s = shardOf(c.from);
      byShard.set(s, [...(byShard.get(s) ?? []), i]);
    });
    for (const shard of byShard.keys()) {
      // Validate up front so no transaction starts for a write that would be refused.
      this.#router.writableHostOfShard(shard);
    }
    for (const [shard, indexes] of byShard) {
      await this.#router.transaction(
        shard,
        async (tx) => {
          for (const i of indexes) results[i] = await this.#applyOne(tx, shard, changes[i]!);
        },
        ctx,
      );
    }
    return results;
  }

  async #applyOne(tx: Tx, shard: number, c: EdgeChange): Promise<boolean> {
    const t = table(shard, c.table);
    let changed: boolean;
    if (c.op === 'add') {
      const sequence = c.sequence ?? this.#now();
      // In the owner's order a new pin goes first, like the newest in time order.
      const position = 'ordered' in MAPPINGS[c.table] ? -sequence * POSITION_GAP : null;
      const res = await tx.execute(`INSERT IGNORE INTO ${t} (from_id, to_id, sequence, position) VALUES (?, ?, ?, ?)`, [c.from, c.to, sequence, position]);
      changed = res.affectedRows === 1;
    } else {
      const res = await tx.execute(`DELETE FROM ${t} WHERE from_id = ? AND to_id = ?`, [c.from, c.to]);
      changed = res.affectedRows === 1;
    }
    if (changed) {
      await tx.execute(`INSERT INTO ${table(shard, 'counts')} (id, kind, n) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE n = n + VALUES(n)`, [
        c.from,
        c.table,
        c.op === 'add' ? 1 : -1,
      ]);
    }
    return changed;
  }

  /** Many pages in one round trip per host: each page is one indexed subquery of a UNION ALL. */
  async pages(reqs: readonly PageRequest[], ctx: OpContext = {}): Promise<Page[]> {
    const settled = await this.pagesSettled(reqs, ctx);
    for (const p of settled) if (p instanceof Error) throw p;
    return settled as Page[];
  }

  /** Like pages, but a failing host fails only its own pages (returned as the error in their place). */
  async pagesSettled(reqs: readonly PageRequest[], ctx: OpContext = {}): Promise<(Page | Error)[]> {
    const out: (Page | Error)[] = new Array<Page | Error>(reqs.length);
    const indexed = reqs.map((req, i) => ({ req, i }));
    const byHost = this.#router.groupByHost(indexed, (x) => shardOf(x.req.from));
    await Promise.all(
      [...byHost.entries()].map(async ([host, items]) => {
        try {
          const parts: string[] = [];
          const values: SqlValue[] = [];
          for (const { req, i } of items) {
            const shard = shardOf(req.from);
            const owner = req.order === 'owner';
            if (owner && !('ordered' in MAPPINGS[req.table])) {
              throw new ShardqlError('INVALID_ARGUMENT', `Expected order TIME for ${req.table}, which has no owner order, got OWNER`);
            }
            const keyCol = owner ? 'position' : 'sequence';
            const cmp = owner ? '>' : '<';
            const dir = owner ? 'ASC' : 'DESC';
            const where = ['from_id = ?'];
            const v: SqlValue[] = [i, req.from];
            if (!owner && req.since != null) (where.push('sequence >= ?'), v.push(req.since));
            if (!owner && req.until != null) (where.push('sequence < ?'), v.push(req.until));
            const c = req.after != null ? decodeCursor(req.after, listTag(req)) : req.startAfter;
            if (c !== undefined) {
              where.push(`(${keyCol} ${cmp} ? OR (${keyCol} = ? AND to_id ${cmp} ?))`);
              v.push(c.key, c.key, c.id);
            }
            v.push(req.first + 1);
            parts.push(
              `(SELECT ? AS req, to_id, sequence, ${keyCol} AS k FROM ${table(shard, req.table)} FORCE INDEX (${owner ? 'by_position' : 'by_sequence'}) WHERE ${where.join(' AND ')} ORDER BY ${keyCol} ${dir}, to_id ${dir} LIMIT ?)`,
            );
            values.push(...v);
          }
          const shards = [...new Set(items.map((x) => shardOf(x.req.from)))];
          const rows = await this.#router.query(host, shards, parts.join('\nUNION ALL\n'), values, ctx);
          const grouped = new Map<number, { to: bigint; sequence: number; k: bigint }[]>();
          for (const row of rows) {
            const i = Number(row.req);
            const list = grouped.get(i) ?? [];
            list.push({ to: BigInt(row.to_id as string), sequence: Number(row.sequence), k: BigInt(row.k as string) });
            grouped.set(i, list);
          }
          for (const { req, i } of items) {
            const owner = req.order === 'owner';
            // UNION ALL promises no order across parts: restore the page's own order.
            const rowsOf = (grouped.get(i) ?? []).sort((a, b) => {
              const byKey = a.k === b.k ? (a.to < b.to ? -1 : a.to > b.to ? 1 : 0) : a.k < b.k ? -1 : 1;
              return owner ? byKey : -byKey;
            });
            const tag = listTag(req);
            const edges = rowsOf.slice(0, req.first).map((r) => ({ to: r.to, sequence: r.sequence, cursor: encodeCursor({ list: tag, key: r.k, id: r.to }) }));
            out[i] = { edges, hasNextPage: rowsOf.length > req.first, endCursor: edges.at(-1)?.cursor ?? null };
          }
        } catch (err) {
          for (const { i } of items) out[i] = err instanceof Error ? err : new Error(String(err));
        }
      }),
    );
    return out;
  }

  /** Counts in one round trip per host. Missing counts are 0. */
  async counts(keys: readonly CountKey[], ctx: OpContext = {}): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const k of keys) out.set(countKey(k.id, k.kind), 0);
    const byHost = this.#router.groupByHost(keys, (k) => shardOf(k.id));
    await Promise.all(
      [...byHost.entries()].map(async ([host, hostKeys]) => {
        const byShard = new Map<number, CountKey[]>();
        for (const k of hostKeys) byShard.set(shardOf(k.id), [...(byShard.get(shardOf(k.id)) ?? []), k]);
        const parts: string[] = [];
        const values: SqlValue[] = [];
        for (const [shard, ks] of byShard) {
          parts.push(`SELECT id, kind, n FROM ${table(shard, 'counts')} WHERE (id, kind) IN (${ks.map(() => '(?, ?)').join(', ')})`);
          for (const k of ks) values.push(k.id, k.kind);
        }
        const rows = await this.#router.query(host, [...byShard.keys()], parts.join('\nUNION ALL\n'), values, ctx);
        for (const r of rows) out.set(countKey(BigInt(r.id as string), String(r.kind)), Number(r.n));
      }),
    );
    return out;
  }

  /** Which of the given edges exist, in one round trip per host. Returns `from:to` keys. */
  async existing(tableName: MappingTable, pairs: readonly { from: bigint; to: bigint }[], ctx: OpContext = {}): Promise<Set<string>> {
    const out = new Set<string>();
    const byHost = this.#router.groupByHost(pairs, (p) => shardOf(p.from));
    await Promise.all(
      [...byHost.entries()].map(async ([host, ps]) => {
        const byShard = new Map<number, { from: bigint; to: bigint }[]>();
        for (const p of ps) byShard.set(shardOf(p.from), [...(byShard.get(shardOf(p.from)) ?? []), p]);
        const parts: string[] = [];
        const values: SqlValue[] = [];
        for (const [shard, list] of byShard) {
          parts.push(`SELECT from_id, to_id FROM ${table(shard, tableName)} WHERE (from_id, to_id) IN (${list.map(() => '(?, ?)').join(', ')})`);
          for (const p of list) values.push(p.from, p.to);
        }
        const rows = await this.#router.query(host, [...byShard.keys()], parts.join('\nUNION ALL\n'), values, ctx);
        for (const r of rows) out.add(`${r.from_id}:${r.to_id}`);
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
    if (!('ordered' in MAPPINGS[tableName])) throw new ShardqlError('INVALID_ARGUMENT', `${tableName} has no owner order`);
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
  }
}
