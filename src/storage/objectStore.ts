import { ShardqlError } from '../core/errors.ts';
import { decodeId, encodeId, MAX_LOCAL_ID, shardOf, typeOf } from '../core/ids.ts';
import { typeName, type ObjectType, typeNumberOf, objectTableOf } from '../core/objectTypes.ts';
import { decodeRefs, type ObjectRefs } from '../core/objectRefs.ts';
import { objectFields, type ObjectFields } from '../core/objectFields.ts';
import { shardDatabase } from '../core/topology.ts';
import type { BatchPart, ShardRouter, Row, SqlCondition, SqlValue, Statement, Tx } from './shardRouter.ts';
import type { OpContext } from './sqlStats.ts';
import type { FillToken, MemcachedObjects } from '../cache/memcachedObjects.ts';
import { cacheCall, type LookAside } from './lookAside.ts';

/** The cache key of an object: `o:<id>` (namespace 'o' of the in-process cache, see lookAside.ts). */
export const objectCacheKey = (id: bigint): string => `o:${id}`;

function encodeCached(o: StoredObject): Buffer {
  return Buffer.from(JSON.stringify({ d: o.data, c: o.createdAt, u: o.updatedAt }));
}

function decodeCached(id: bigint, raw: Buffer): StoredObject | undefined {
  const type = typeOf(id);
  if (type === undefined) return undefined;
  try {
    const v = JSON.parse(raw.toString('utf8')) as { d: ObjectData; c: number; u: number };
    return storedObject(id, type, v.d, v.c, v.u);
  } catch {
    return undefined;
  }
}

export type ObjectData = Record<string, unknown>;

/**
 * An object as decoded once on read: its blob, the IDs it points at, and (as own properties beside
 * these, named by the served model, for the executor to read without a resolver) its shown fields
 * (core/objectFields.ts). Code reads a field from `data`; only the executor reads those properties.
 */
export interface StoredObject {
  readonly id: bigint;
  readonly type: ObjectType;
  /** The JSON blob. IDs inside it are decimal strings. `active: false` marks a soft delete. */
  readonly data: ObjectData;
  /** The IDs the blob points at, decoded once on read. */
  readonly refs: ObjectRefs;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** `data.active` is not false (false only after a soft delete); read on every hit, so not from the blob. */
  readonly active: boolean;
}

/** The one way a StoredObject is made: refs and shown fields decoded from the blob here, once. */
export function storedObject(id: bigint, type: ObjectType, data: ObjectData, createdAt: number, updatedAt: number): StoredObject {
  return { id, type, data, refs: decodeRefs(data), createdAt, updatedAt, active: data.active !== false, ...objectFields(type, data) };
}

export function isActive(o: StoredObject): boolean {
  return o.active;
}

export interface ObjectStoreOptions {
  readonly router: ShardRouter;
  /** Look-aside cache of object rows (memcached). Without it every read goes to MySQL. */
  readonly cache?: MemcachedObjects | undefined;
  /** The in-process layer above memcached and the invalidation of both. */
  readonly lookAside: LookAside;
  /** Clock, ms. Default Date.now. */
  readonly now?: () => number;
}

function parseData(raw: unknown): ObjectData {
  const value = typeof raw === 'string' ? JSON.parse(raw) : raw;
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as ObjectData) : {};
}

function rowToObject(row: Row, type: ObjectType, shard: number): StoredObject {
  const id = encodeId({ shard, type: typeNumberOf(type), local: BigInt(row.local_id as string) });
  return storedObject(id, type, parseData(row.data), Number(row.created_at), Number(row.updated_at));
}

function tableOf(id: bigint): { type: ObjectType; table: string } {
  const type = typeOf(id);
  if (type === undefined) throw new ShardqlError('INVALID_ID', `Expected an ID of a known type, got ${id}`, { reason: 'unknown_type' });
  return { type, table: objectTableOf(type) };
}

/** SQL that holds for an object row that is active (`active` is false only after a soft delete). */
const ACTIVE_SQL = "COALESCE(JSON_EXTRACT(data, '$.active'), 'true') <> 'false'";

/**
 * A statement for a batch inside a transaction on the shard of `id`: its one row's `active` (and the
 * user variable `variable`, when later statements test it) is 1 if the object exists and is active,
 * else 0, under a shared lock on its row (held until commit), so a soft delete of the object waits
 * for this transaction and cannot slip in between. A soft delete is final: once a transaction sees
 * the object inactive, it stays so. One statement where it was three (set to 0, select into, select
 * back): each statement of a write's batch is parsed and run on its own.
 */
export function activeGuardStatement(id: bigint, variable?: string): Statement {
  const { table } = tableOf(id);
  const { shard, local } = decodeId(id);
  return { sql: `SELECT ${variable ? `${variable} := ` : ''}COUNT(*) AS active FROM ${shardDatabase(shard)}.${table} WHERE local_id = ? AND ${ACTIVE_SQL} LOCK IN SHARE MODE`, values: [local] };
}

/**
 * Objects: JSON blobs in per-type tables, addressed by the 64-bit ID. Reads batch by host: one
 * round trip per host however many shards, types and IDs are asked for (a UNION ALL over the
 * host's databases). Writes are local transactions on the object's shard.
 */
export class ObjectStore {
  readonly #router: ShardRouter;
  readonly #now: () => number;
  readonly #cache: MemcachedObjects | undefined;
  readonly #lookAside: LookAside;

  constructor(opts: ObjectStoreOptions) {
    this.#router = opts.router;
    this.#now = opts.now ?? Date.now;
    this.#cache = opts.cache;
    this.#lookAside = opts.lookAside;
  }

  /** Tombstones the cached copies after a commit (memcached, then the invalidation log). Never throws. */
  async #invalidate(ids: readonly bigint[], ctx: OpContext, strict = false): Promise<void> {
    const cache = this.#cache;
    await this.#lookAside.invalidate(
      ctx,
      ids.map(objectCacheKey),
      cache ? { layer: 'memcached', run: (keys) => cache.invalidate(keys, ctx.cache) } : undefined,
      strict,
    );
  }

  /**
   * Inserts a new object on `shard` and returns it with its ID. The local ID comes from the
   * table's auto-increment; one past 2^36-1 would not fit the ID, so the insert is rolled back.
   */
  async create(type: ObjectType, shard: number, data: ObjectData, ctx: OpContext = {}): Promise<StoredObject> {
    return this.#router.transaction(shard, (tx) => this.insertInTx(tx, type, shard, data), ctx);
  }

  /** Inserts an object inside a caller's transaction on `shard` (a write whose steps commit together). */
  async insertInTx(tx: Tx, type: ObjectType, shard: number, data: ObjectData): Promise<StoredObject> {
    const table = `${shardDatabase(shard)}.${objectTableOf(type)}`;
    const now = this.#now();
    const stored: ObjectData = { ...data, active: true };
    const res = await tx.execute(`INSERT INTO ${table} (data, created_at, updated_at) VALUES (?, ?, ?)`, [JSON.stringify(stored), now, now]);
    const local = BigInt(res.insertId);
    if (local > MAX_LOCAL_ID) {
      throw new ShardqlError('LOCAL_ID_OVERFLOW', `Shard ${shard} has no local IDs left for ${type} objects (2^36 used)`, { shard, type });
    }
    return storedObject(encodeId({ shard, type: typeNumberOf(type), local }), type, stored, now, now);
  }

  /**
   * Reads one object under a row lock inside a caller's transaction: the state a write on that
   * shard decides on cannot change until it commits.
   */
  async lockInTx(tx: Tx, id: bigint): Promise<StoredObject | undefined> {
    const { type, table } = tableOf(id);
    const { shard, local } = decodeId(id);
    const rows = await tx.query(`SELECT local_id, data, created_at, updated_at FROM ${shardDatabase(shard)}.${table} WHERE local_id = ? FOR UPDATE`, [local]);
    return rows[0] ? rowToObject(rows[0], type, shard) : undefined;
  }

  /**
   * Holds (in a statement on the object's shard) while `id` is active and its reference `key` (in
   * the blob) is `value` (`present`), or while it is not (missing, inactive, or naming another):
   * the state the listing of that reference mirrors (core/listings.ts).
   */
  activeRefIs(id: bigint, key: string, value: string, present: boolean): SqlCondition {
    const { shard, local } = decodeId(id);
    // isActive(): `active` is false only after a soft delete. (JSON_EXTRACT gives the JSON text
    // 'false'; JSON_VALUE would give '0' on MariaDB and 'false' elsewhere.)
    if (!/^[a-z][a-z0-9_]*$/.test(key)) throw new Error(`not a reference key: ${key}`);
    const exists = `EXISTS (SELECT 1 FROM ${shardDatabase(shard)}.${tableOf(id).table} WHERE local_id = ? AND ${ACTIVE_SQL} AND JSON_VALUE(data, '$.${key}') = ?)`;
    return { sql: present ? exists : `NOT ${exists}`, values: [local, value] };
  }

  /** Whether the object exists and is active, as a locking read for a batch on its shard (see activeGuardStatement). */
  activePart(id: bigint): BatchPart<boolean> {
    return {
      statements: [activeGuardStatement(id)],
      read: (results) => Number((results[0] as Row[])[0]?.active ?? 0) === 1,
    };
  }

  /** Holds (in a statement on the object's shard) while the object exists and is active. */
  activeIs(id: bigint): SqlCondition {
    const { shard, local } = decodeId(id);
    return { sql: `EXISTS (SELECT 1 FROM ${shardDatabase(shard)}.${tableOf(id).table} WHERE local_id = ? AND ${ACTIVE_SQL})`, values: [local] };
  }

  /** Soft-deletes inside a caller's transaction; returns false if it was not active. Invalidate after commit. */
  async softDeleteInTx(tx: Tx, id: bigint): Promise<boolean> {
    const current = await this.lockInTx(tx, id);
    if (!current || !isActive(current)) return false;
    const { shard, local } = decodeId(id);
    await tx.execute(`UPDATE ${shardDatabase(shard)}.${tableOf(id).table} SET data = ?, updated_at = ? WHERE local_id = ?`, [
      JSON.stringify({ ...current.data, active: false }),
      this.#now(),
      local,
    ]);
    return true;
  }

  /** Tombstones cached copies after a caller's transaction committed. Never throws. */
  async invalidate(ids: readonly bigint[], ctx: OpContext = {}): Promise<void> {
    await this.#invalidate(ids, ctx);
  }

  /** Replays an invalidation recorded as failed (the repair pass): throws if a layer fails. */
  async replayInvalidation(ids: readonly bigint[], ctx: OpContext = {}): Promise<void> {
    await this.#invalidate(ids, ctx, true);
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
    const found = new Map<bigint, StoredObject>();
    let failed = new Map<bigint, unknown>();
    await this.#lookAside.read<bigint, StoredObject>(
      ctx,
      [...new Set(ids)],
      (id) => ({ ns: 'o', id, field: 'o' }),
      (id, o) => found.set(id, o),
      async (misses, fill) => {
        const shared = await this.#getManyShared(misses, ctx);
        for (const [id, o] of shared.found) {
          found.set(id, o);
          fill(id, o);
        }
        failed = shared.failed;
      },
    );
    return { found, failed };
  }

  /** The object if this operation's L1 view already holds it (no promise); see LookAside.peek. */
  peek(id: bigint, ctx: OpContext): StoredObject | undefined {
    return this.#lookAside.peek(ctx, { ns: 'o', id, field: 'o' }) as StoredObject | undefined;
  }

  /** memcached, then MySQL for its misses (filled back): the shared layers under L1. */
  async #getManyShared(unique: readonly bigint[], ctx: OpContext): Promise<{ found: Map<bigint, StoredObject>; failed: Map<bigint, unknown> }> {
    if (!this.#cache || unique.length === 0) return this.#fetchSettled(unique, ctx);
    // Look-aside: one multi-get per memcached server; misses from MySQL (one round trip per host),
    // filled back under the tokens the probe returned.
    const cache = this.#cache;
    const probe = await cacheCall(ctx, 'memcached', 'get', unique.length, () => cache.probe(unique.map(objectCacheKey), ctx.cache));
    const found = new Map<bigint, StoredObject>();
    const misses: bigint[] = [];
    for (const id of unique) {
      const raw = probe.values.get(objectCacheKey(id));
      const cached = raw ? decodeCached(id, raw) : undefined;
      if (cached) found.set(id, cached);
      else misses.push(id);
    }
    if (misses.length === 0) return { found, failed: new Map() };
    const fromDb = await this.#fetchSettled(misses, ctx);
    const fills: { key: string; value: Buffer; token: FillToken }[] = [];
    for (const [id, o] of fromDb.found) {
      found.set(id, o);
      const key = objectCacheKey(id);
      const token = probe.tokens.get(key);
      if (token !== undefined) fills.push({ key, value: encodeCached(o), token });
    }
    if (fills.length > 0) await cacheCall(ctx, 'memcached', 'fill', fills.length, () => cache.fill(fills, ctx.cache));
    return { found, failed: fromDb.failed };
  }

  /** Reads rows from MySQL only: one round trip per host. */
  async #fetchSettled(unique: readonly bigint[], ctx: OpContext): Promise<{ found: Map<bigint, StoredObject>; failed: Map<bigint, unknown> }> {
    const out = new Map<bigint, StoredObject>();
    const failed = new Map<bigint, unknown>();
    const byHost = this.#router.groupByHost(unique, shardOf, ctx);
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
              `SELECT ${g.shard} AS shard, ${typeNumberOf(g.type)} AS type, local_id, data, created_at, updated_at FROM ${shardDatabase(g.shard)}.${objectTableOf(g.type)} WHERE local_id IN (${g.locals.map(() => '?').join(',')})`,
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
    const updated = await this.#router.transaction(
      shard,
      async (tx) => {
        const rows = await tx.query(`SELECT local_id, data, created_at, updated_at FROM ${qualified} WHERE local_id = ? FOR UPDATE`, [local]);
        const row = rows[0];
        const current = row ? rowToObject(row, type, shard) : undefined;
        if (!current || !isActive(current)) throw new ShardqlError('NOT_FOUND', `No ${type} with ID ${id}`, { id: `${id}` });
        const next: ObjectData = { ...mutate(current), active: true };
        const now = this.#now();
        await tx.execute(`UPDATE ${qualified} SET data = ?, updated_at = ? WHERE local_id = ?`, [JSON.stringify(next), now, local]);
        return storedObject(current.id, current.type, next, current.createdAt, now);
      },
      ctx,
    );
    await this.#invalidate([id], ctx);
    return updated;
  }

  /** Soft delete: `active: false`, filtered on read. Idempotent; returns false if it was not active. */
  async softDelete(id: bigint, ctx: OpContext = {}): Promise<boolean> {
    const changed = await this.#router.transaction(shardOf(id), (tx) => this.softDeleteInTx(tx, id), ctx);
    if (changed) await this.#invalidate([id], ctx);
    return changed;
  }
}
