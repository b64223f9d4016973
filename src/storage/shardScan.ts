import { groupBy } from '../core/groupBy.ts';
import { decodeId, encodeId, shardOf } from '../core/ids.ts';
import type { MappingTable } from '../core/mappings.ts';
import { decodeRefs, type ObjectRefs } from '../core/objectRefs.ts';
import { OBJECT_TABLES, typeName, type ObjectType, typeNumberOf, objectTableOf } from '../core/objectTypes.ts';
import { shardDatabase } from '../core/topology.ts';
import type { Row, ShardRouter } from './shardRouter.ts';
import type { OpContext } from './sqlStats.ts';

/** An object as reconciliation needs it: its type, whether it is active, what it points at. */
export interface ObjectState {
  readonly type: ObjectType;
  readonly active: boolean;
  readonly refs: ObjectRefs;
  readonly createdAt: number;
}

function stateOf(row: Row, type: ObjectType): ObjectState {
  const raw = row.data;
  const data = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Record<string, unknown>;
  return { type, active: data.active !== false, refs: decodeRefs(data), createdAt: Number(row.created_at) };
}

/**
 * Whole-shard reads and fixes for reconciliation (offline tooling, not the request path): every
 * edge of a mapping on a shard, the repins on a shard, counts that disagree with their rows.
 */
export class ShardScan {
  readonly #router: ShardRouter;

  constructor(router: ShardRouter) {
    this.#router = router;
  }

  async edges(shard: number, table: MappingTable, ctx: OpContext = {}): Promise<{ from: bigint; to: bigint; sequence: number }[]> {
    const rows = await this.#router.query(
      this.#router.hostOfShard(shard),
      [shard],
      `SELECT from_id, to_id, sequence FROM ${shardDatabase(shard)}.${table}`,
      [],
      ctx,
    );
    return rows.map((r) => ({ from: BigInt(r.from_id as string), to: BigInt(r.to_id as string), sequence: Number(r.sequence) }));
  }

  /** Every object on a shard, read from its primary (no cache). */
  async objectsOn(shard: number, ctx: OpContext = {}): Promise<Map<bigint, ObjectState>> {
    const db = shardDatabase(shard);
    const types = Object.keys(OBJECT_TABLES) as ObjectType[];
    const rows = await this.#router.query(
      this.#router.writableHostOfShard(shard),
      [shard],
      types.map((t) => `SELECT ${typeNumberOf(t)} AS type, local_id, data, created_at FROM ${db}.${objectTableOf(t)}`).join('\nUNION ALL\n'),
      [],
      ctx,
    );
    const out = new Map<bigint, ObjectState>();
    for (const r of rows) {
      const type = typeName(Number(r.type))!;
      out.set(encodeId({ shard, type: typeNumberOf(type), local: BigInt(r.local_id as string) }), stateOf(r, type));
    }
    return out;
  }

  /** The given objects as their primaries hold them (missing ones are absent): one round trip per shard. */
  async objectStates(ids: Iterable<bigint>, ctx: OpContext = {}): Promise<Map<bigint, ObjectState>> {
    const out = new Map<bigint, ObjectState>();
    for (const [shard, list] of groupBy([...new Set(ids)], shardOf)) {
      const db = shardDatabase(shard);
      const byType = groupBy(list, (id) => typeName(decodeId(id).type)!);
      const parts: string[] = [];
      const values: bigint[] = [];
      for (const [type, of] of byType) {
        parts.push(`SELECT ${typeNumberOf(type)} AS type, local_id, data, created_at FROM ${db}.${objectTableOf(type)} WHERE local_id IN (${of.map(() => '?').join(', ')})`);
        for (const id of of) values.push(decodeId(id).local);
      }
      const rows = await this.#router.query(this.#router.writableHostOfShard(shard), [shard], parts.join('\nUNION ALL\n'), values, ctx);
      for (const r of rows) {
        const type = typeName(Number(r.type))!;
        out.set(encodeId({ shard, type: typeNumberOf(type), local: BigInt(r.local_id as string) }), stateOf(r, type));
      }
    }
    return out;
  }

  /** Lists of `table` on `shard` whose count differs from their rows: [id, rows, counted]. */
  async countMismatches(shard: number, table: MappingTable, ctx: OpContext = {}): Promise<{ id: bigint; actual: number; counted: number }[]> {
    const db = shardDatabase(shard);
    const rows = await this.#router.query(
      this.#router.hostOfShard(shard),
      [shard],
      `SELECT id, SUM(actual) AS actual, SUM(counted) AS counted FROM (
         SELECT from_id AS id, COUNT(*) AS actual, 0 AS counted FROM ${db}.${table} GROUP BY from_id
         UNION ALL
         SELECT id, 0 AS actual, n AS counted FROM ${db}.counts WHERE kind = ?
       ) lists GROUP BY id HAVING actual <> counted`,
      [table],
      ctx,
    );
    return rows.map((r) => ({ id: BigInt(r.id as string), actual: Number(r.actual), counted: Number(r.counted) }));
  }

  /**
   * Sets one list's count to its number of rows, counting under the rows' locks and the count's.
   * Returns both as they were: `{ actual: 3, counted: 4 }` set 4 to 3; equal ones changed nothing.
   */
  async recount(shard: number, table: MappingTable, id: bigint, ctx: OpContext = {}): Promise<{ actual: number; counted: number }> {
    const db = shardDatabase(shard);
    return this.#router.transaction(
      shard,
      async (tx) => {
        // The rows first, as a write takes them (its edge, then its count): no lock order to deadlock on.
        const [rows] = await tx.query(`SELECT COUNT(*) AS n FROM ${db}.${table} WHERE from_id = ? LOCK IN SHARE MODE`, [id]);
        const [counted] = await tx.query(`SELECT n FROM ${db}.counts WHERE id = ? AND kind = ? FOR UPDATE`, [id, table]);
        const out = { actual: Number(rows?.n ?? 0), counted: Number(counted?.n ?? 0) };
        if (out.actual !== out.counted) {
          await tx.execute(`INSERT INTO ${db}.counts (id, kind, n) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE n = VALUES(n)`, [id, table, out.actual]);
        }
        return out;
      },
      ctx,
    );
  }
}
