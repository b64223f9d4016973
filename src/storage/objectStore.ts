import { ShardqlError } from '../core/errors.ts';
import { decodeId, encodeId, MAX_LOCAL_ID, shardOf, typeOf } from '../core/ids.ts';
import { OBJECT_TABLES, OBJECT_TYPES, typeName, type ObjectType } from '../core/objectTypes.ts';
import { shardDatabase } from '../core/topology.ts';
import type { ShardRouter, Row, SqlValue } from './shardRouter.ts';
import type { OpContext } from './sqlStats.ts';

export type ObjectData = Record<string, unknown>;

export interface StoredObject {
  readonly id: bigint;
  readonly type: ObjectType;
  /** The JSON blob. IDs inside it are decimal strings. `active: false` marks a soft delete. */
  readonly data: ObjectData;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export function isActive(o: StoredObject): boolean {
  return o.data.active !== false;
}

export interface ObjectStoreOptions {
  readonly router: ShardRouter;
  /** Clock, ms. Default Date.now. */
  readonly now?: () => number;
}

function parseData(raw: unknown): ObjectData {
  const value = typeof raw === 'string' ? JSON.parse(raw) : raw;
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as ObjectData) : {};
}

function rowToObject(row: Row, type: ObjectType, shard: number): StoredObject {
  return {
    id: encodeId({ shard, type: OBJECT_TYPES[type], local: BigInt(row.local_id as string) }),
    type,
    data: parseData(row.data),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

function tableOf(id: bigint): { type: ObjectType; table: string } {
  const type = typeOf(id);
  if (type === undefined) throw new ShardqlError('INVALID_ID', `Expected an ID of a known type, got ${id}`, { reason: 'unknown_type' });
  return { type, table: OBJECT_TABLES[type] };
}

/**
 * Objects: JSON blobs in per-type tables, addressed by the 64-bit ID. Reads batch by host: one
 * round trip per host however many shards, types and IDs are asked for (a UNION ALL over the
 * host's databases). Writes are local transactions on the object's shard.
 */
export class ObjectStore {
  readonly #router: ShardRouter;
  readonly #now: () => number;

  constructor(opts: ObjectStoreOptions) {
    this.#router = opts.router;
    this.#now = opts.now ?? Date.now;
  }

  /**
   * Inserts a new object on `shard` and returns it with its ID. The local ID comes from the
   * table's auto-increment; one past 2^36-1 would not fit the ID, so the insert is rolled back.
   */
  async create(type: ObjectType, shard: number, data: ObjectData, ctx: OpContext = {}): Promise<StoredObject> {
    const table = `${shardDatabase(shard)}.${OBJECT_TABLES[type]}`;
    const now = this.#now();
    const stored: ObjectData = { ...data, active: true };
    return this.#router.transaction(
      shard,
      async (tx) => {
        const res = await tx.execute(`INSERT INTO ${table} (data, created_at, updated_at) VALUES (?, ?, ?)`, [JSON.stringify(stored), now, now]);
        const local = BigInt(res.insertId);
        if (local > MAX_LOCAL_ID) {
          throw new ShardqlError('LOCAL_ID_OVERFLOW', `Shard ${shard} has no local IDs left for ${type} objects (2^36 used)`, { shard, type });
        }
        return { id: encodeId({ shard, type: OBJECT_TYPES[type], local }), type, data: stored, createdAt: now, updatedAt: now };
      },
      ctx,
    );
  }

  /**
   * Fetches many objects in one round trip per host. Returns every stored row found, active or
   * not; callers filter with `isActive`. Missing IDs are absent from the map.
   */
  async getMany(ids: readonly bigint[], ctx: OpContext = {}): Promise<Map<bigint, StoredObject>> {
    const { found, failed } = await this.getManySettled(ids, ctx);
    for (const err of failed.values()) throw err;
    return found;
  }

  /**
   * Like getMany, but a host that fails fails only its own IDs: they come back in `failed` with
   * the error, and the other hosts' objects in `found`. A slow or dead host costs only the fields
   * that need it.
   */
  async getManySettled(ids: readonly bigint[], ctx: OpContext = {}): Promise<{ found: Map<bigint, StoredObject>; failed: Map<bigint, unknown> }> {
    const unique = [...new Set(ids)];
    const out = new Map<bigint, StoredObject>();
    const failed = new Map<bigint, unknown>();
    const byHost = this.#router.groupByHost(unique, shardOf);
    await Promise.all(
      [...byHost.entries()].map(async ([host, hostIds]) => {
        try {
          // One SELECT per (shard, table), glued with UNION ALL: shard and type travel as literals.
          const groups = new Map<string, { shard: number; type: ObjectType; locals: bigint[] }>();
          for (const id of hostIds) {
            const { shard, type: typeNumber, local } = decodeId(id);
            const type = typeName(typeNumber);
            if (type === undefined) continue;
            const key = `${shard}:${type}`;
            const g = groups.get(key) ?? { shard, type, locals: [] };
            g.locals.push(local);
            groups.set(key, g);
          }
          if (groups.size === 0) return;
          const parts: string[] = [];
          const values: SqlValue[] = [];
          for (const g of groups.values()) {
            parts.push(
              `SELECT ${g.shard} AS shard, ${OBJECT_TYPES[g.type]} AS type, local_id, data, created_at, updated_at FROM ${shardDatabase(g.shard)}.${OBJECT_TABLES[g.type]} WHERE local_id IN (${g.locals.map(() => '?').join(',')})`,
            );
            values.push(...g.locals);
          }
          const shards = [...new Set([...groups.values()].map((g) => g.shard))];
          const rows = await this.#router.query(host, shards, parts.join('\nUNION ALL\n'), values, ctx);
          for (const row of rows) {
            const type = typeName(Number(row.type));
            if (type === undefined) continue;
            const obj = rowToObject(row, type, Number(row.shard));
            out.set(obj.id, obj);
          }
        } catch (err) {
          for (const id of hostIds) failed.set(id, err);
        }
      }),
    );
    return { found: out, failed };
  }

  async get(id: bigint, ctx: OpContext = {}): Promise<StoredObject | undefined> {
    return (await this.getMany([id], ctx)).get(id);
  }

  /**
   * Read-modify-write under `SELECT … FOR UPDATE`: concurrent edits of one object serialize on the
   * row lock, so none is lost. `mutate` sees the current data and returns the new data; it may
   * throw to abort (nothing is written). Refuses missing or soft-deleted objects with NOT_FOUND.
   */
  async update(id: bigint, mutate: (current: StoredObject) => ObjectData, ctx: OpContext = {}): Promise<StoredObject> {
    const { type, table } = tableOf(id);
    const { shard, local } = decodeId(id);
    const qualified = `${shardDatabase(shard)}.${table}`;
    return this.#router.transaction(
      shard,
      async (tx) => {
        const rows = await tx.query(`SELECT local_id, data, created_at, updated_at FROM ${qualified} WHERE local_id = ? FOR UPDATE`, [local]);
        const row = rows[0];
        const current = row ? rowToObject(row, type, shard) : undefined;
        if (!current || !isActive(current)) throw new ShardqlError('NOT_FOUND', `No ${type} with ID ${id}`, { id: `${id}` });
        const next: ObjectData = { ...mutate(current), active: true };
        const now = this.#now();
        await tx.execute(`UPDATE ${qualified} SET data = ?, updated_at = ? WHERE local_id = ?`, [JSON.stringify(next), now, local]);
        return { ...current, data: next, updatedAt: now };
      },
      ctx,
    );
  }

  /** Soft delete: `active: false`, filtered on read. Idempotent; returns false if it was not active. */
  async softDelete(id: bigint, ctx: OpContext = {}): Promise<boolean> {
    const { table } = tableOf(id);
    const { shard, local } = decodeId(id);
    const qualified = `${shardDatabase(shard)}.${table}`;
    return this.#router.transaction(
      shard,
      async (tx) => {
        const rows = await tx.query(`SELECT data FROM ${qualified} WHERE local_id = ? FOR UPDATE`, [local]);
        const row = rows[0];
        if (!row) return false;
        const data = parseData(row.data);
        if (data.active === false) return false;
        await tx.execute(`UPDATE ${qualified} SET data = ?, updated_at = ? WHERE local_id = ?`, [
          JSON.stringify({ ...data, active: false }),
          this.#now(),
          local,
        ]);
        return true;
      },
      ctx,
    );
  }
}
