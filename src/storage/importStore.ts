/**
 * The shard side of `shardql import`: batches of imported objects and edges written the way the
 * product's writes leave them (objects as JSON blobs with `active: true`, each containment edge in
 * the same local transaction as its object, both directions of every relation, counts equal to
 * rows), the old-ID → new-ID map, and the import ledger.
 *
 * Idempotent by construction, so a batch interrupted anywhere (a SIGKILLed worker) is simply run
 * again: an object is made in the same transaction as its row in `import_ids` (found again by a
 * re-run), an edge is `INSERT IGNORE … RETURNING` and only the rows it returns are counted, and the
 * mod-shard lookups are `INSERT IGNORE` of a value derived from the shard's own map.
 */
import { groupBy } from '../core/groupBy.ts';
import { decodeId, encodeId, MAX_LOCAL_ID, shardOf } from '../core/ids.ts';
import { containersOf } from '../core/listings.ts';
import { type MappingTable, mappingSpec } from '../core/mappings.ts';
import { modShardOf, normalizeLookupKey } from '../core/modShard.ts';
import { typeName, type ObjectType, typeNumberOf, objectTableOf } from '../core/objectTypes.ts';
import { blobText, type KeyRange } from '../core/importSchema.ts';
import { modShardDatabase, shardDatabase } from '../core/topology.ts';
import { sqlString, statementsOf } from './bulkSql.ts';
import { POSITION_GAP } from './mappingStore.ts';
import { affectedRows, type Row, type ShardRouter, type Statement, type StatementResult } from './shardRouter.ts';
import type { OpContext } from './sqlStats.ts';

/** Rows per multi-row INSERT statement. */
const ROWS_PER_STATEMENT = 1000;
/** SQL that holds for an active object row (as in objectStore.ts). */
const ACTIVE_SQL = "COALESCE(JSON_EXTRACT(data, '$.active'), 'true') <> 'false'";

/** One object to import onto a shard. */
export interface ImportObject {
  readonly oldId: string;
  /** The blob without `active` (keys sorted: `buildBlob`). */
  readonly data: Record<string, unknown>;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** The lists on this shard that hold it (user_has_boards of its owner, …); each owner must be active. */
  readonly parents: readonly { readonly table: MappingTable; readonly from: bigint }[];
}

export interface PlacedObjects {
  /** Old ID → new ID of every object of the batch that exists now (made now or before). */
  readonly ids: Map<string, bigint>;
  readonly created: number;
  /** Existing objects whose blob changed in the source: rewritten (their caches must be invalidated). */
  readonly updated: bigint[];
  /** Refused: a parent missing or deleted in the shards (old IDs). */
  readonly refused: string[];
  /** Existing objects whose source row now names another parent: left where they are (old IDs). */
  readonly moved: string[];
  /** Objects this source made that are deleted in the shards: left deleted (old IDs). */
  readonly inactive: string[];
  /** Lists that gained an edge (for cache invalidation). */
  readonly lists: { readonly table: MappingTable; readonly from: bigint }[];
  /** Rows inserted or changed: objects, map rows, edges, counts. */
  readonly written: number;
}

export interface NewEdge {
  readonly from: bigint;
  readonly to: bigint;
  readonly sequence: number;
}

export interface AddedEdges {
  /** Edges inserted now (not there before). */
  readonly inserted: NewEdge[];
  /** Edges not added because their list's owner is missing or deleted. */
  readonly refused: NewEdge[];
  readonly written: number;
}

export interface ImportRun {
  readonly source: string;
  readonly run: number;
  readonly since: number | null;
  readonly sourceClock: number;
  readonly plan: string;
  readonly startedAt: number;
  readonly finishedAt: number | null;
}

export interface ChunkRecord {
  readonly chunk: string;
  readonly rowsRead: number;
  readonly rowsWritten: number;
  readonly rejected: number;
  readonly notes: string;
  readonly worker: string;
  readonly startedAt: number;
  readonly finishedAt: number;
}

const SEL = (results: readonly StatementResult[], i: number): Row[] => results[i] as Row[];

/**
 * The blob keys naming the objects that contain one of `type` (`@ref(onDelete: DELETE)`: a pin's
 * board and pinner, a comment's pin and author): a source row naming another one would move it.
 */
function containerKeys(type: ObjectType): readonly string[] {
  return containersOf(type).map((l) => l.key);
}

export class ImportStore {
  readonly #router: ShardRouter;
  readonly #now: () => number;

  constructor(opts: { router: ShardRouter; now?: () => number }) {
    this.#router = opts.router;
    this.#now = opts.now ?? Date.now;
  }

  /**
   * Makes (or finds) a batch of objects of one type on one shard, in ONE local transaction with
   * their map rows, the containment edges that list them and those lists' counts; rewrites the
   * blobs of objects the source changed. Three round trips.
   */
  async placeObjects(req: { source: string; type: ObjectType; shard: number; items: readonly ImportObject[] }, ctx: OpContext = {}): Promise<PlacedObjects> {
    const { source, type, shard } = req;
    const db = shardDatabase(shard);
    const table = `${db}.${objectTableOf(type)}`;
    const typeNo = typeNumberOf(type);
    const items = [...new Map(req.items.map((i) => [i.oldId, i])).values()];
    if (items.length === 0) return { ids: new Map(), created: 0, updated: [], refused: [], moved: [], inactive: [], lists: [], written: 0 };
    const owners = [...new Set(items.flatMap((i) => i.parents.map((p) => p.from)))];
    for (const o of owners) if (shardOf(o) !== shard) throw new Error(`list owner ${o} is not on shard ${shard}: containment edges live on their object's shard`);
    return this.#router.transaction(
      shard,
      async (tx) => {
        // 1. What this source already made here (locked: a concurrent run of the same batch waits), and which owners are active.
        const first: Statement[] = [
          {
            // Columns qualified by their database (the router's SQL guard reads `x.y` as a database name).
            sql: `SELECT ${db}.import_ids.old_id, ${db}.import_ids.new_id, ${table}.data FROM ${db}.import_ids LEFT JOIN ${table} ON ${table}.local_id = (${db}.import_ids.new_id & ${MAX_LOCAL_ID}) WHERE ${db}.import_ids.source = ? AND ${db}.import_ids.type = ? AND ${db}.import_ids.old_id IN (${integerList(items.map((i) => i.oldId))}) FOR UPDATE`,
            values: [source, typeNo],
          },
        ];
        const ownerTypes = groupBy(owners, (id) => typeName(decodeId(id).type)!);
        for (const [ownerType, ids] of ownerTypes) {
          first.push({
            sql: `SELECT ${typeNumberOf(ownerType)} AS type, local_id FROM ${db}.${objectTableOf(ownerType)} WHERE local_id IN (${integerList(ids.map((id) => decodeId(id).local))}) AND ${ACTIVE_SQL} LOCK IN SHARE MODE`,
          });
        }
        const r1 = await tx.batch(first);
        const existing = new Map<string, { id: bigint; data: Record<string, unknown> | undefined }>();
        for (const row of SEL(r1, 0)) {
          existing.set(String(row.old_id), { id: BigInt(row.new_id as string), data: row.data == null ? undefined : (JSON.parse(String(row.data)) as Record<string, unknown>) });
        }
        const activeOwners = new Set<bigint>();
        for (let i = 1; i < r1.length; i++) {
          for (const row of SEL(r1, i)) activeOwners.add(encodeId({ shard, type: Number(row.type), local: BigInt(row.local_id as string) }));
        }

        const ids = new Map<string, bigint>();
        const refused: string[] = [];
        const moved: string[] = [];
        const inactive: string[] = [];
        const updated: { id: bigint; item: ImportObject; data: Record<string, unknown> }[] = [];
        const fresh: ImportObject[] = [];
        for (const item of items) {
          const found = existing.get(item.oldId);
          if (found) {
            ids.set(item.oldId, found.id);
            const cur = found.data;
            // A deleted object stays deleted; one the source moved to another parent stays put (reported).
            if (!cur || cur.active === false) {
              inactive.push(item.oldId);
              continue;
            }
            if (containerKeys(type).some((f) => cur[f] !== item.data[f])) {
              moved.push(item.oldId);
              continue;
            }
            if (blobText(cur) !== blobText(item.data)) updated.push({ id: found.id, item, data: cur });
            continue;
          }
          if (item.parents.some((p) => !activeOwners.has(p.from))) refused.push(item.oldId);
          else fresh.push(item);
        }

        // 2. The new objects; RETURNING gives their local IDs in VALUES order.
        let written = 0;
        if (fresh.length > 0) {
          const locals: bigint[] = [];
          for (const st of statementsOf(
            [
              {
                table,
                columns: ['data', 'created_at', 'updated_at'],
                rows: fresh.length,
                returning: 'local_id',
                *values() {
                  for (const f of fresh) yield `(${sqlString(JSON.stringify({ ...f.data, active: true }))},${f.createdAt},${f.updatedAt})`;
                },
              },
            ],
            ROWS_PER_STATEMENT,
          )) {
            const rows = await tx.query(st.sql);
            for (const r of rows) locals.push(BigInt(r.local_id as string));
          }
          if (locals.length !== fresh.length) throw new Error(`inserted ${fresh.length} ${type} objects on shard ${shard} but got ${locals.length} IDs back`);
          fresh.forEach((f, i) => {
            if (locals[i]! > MAX_LOCAL_ID) throw new Error(`shard ${shard} has no local IDs left for ${type} objects (2^36 used)`);
            ids.set(f.oldId, encodeId({ shard, type: typeNo, local: locals[i]! }));
          });
          written += fresh.length;
        }

        // 3. Map rows, containment edges, counts and rewritten blobs, then COMMIT: one round trip.
        const last: Statement[] = [];
        const lists: { table: MappingTable; from: bigint }[] = [];
        if (fresh.length > 0) {
          for (const st of statementsOf(
            [
              {
                table: `${db}.import_ids`,
                columns: ['source', 'type', 'old_id', 'new_id'],
                rows: fresh.length,
                *values() {
                  for (const f of fresh) yield `(${sqlString(source)},${typeNo},${f.oldId},${ids.get(f.oldId)!})`;
                },
              },
            ],
            ROWS_PER_STATEMENT,
          ))
            last.push({ sql: st.sql });
          written += fresh.length;
          const edges = groupBy(
            fresh.flatMap((f) => f.parents.map((p) => ({ table: p.table, from: p.from, to: ids.get(f.oldId)!, sequence: f.createdAt }))),
            (e) => e.table,
          );
          for (const [t, list] of edges) {
            // Plain INSERT: the objects are new, so their edges cannot exist; if one did, fail loudly rather than miscount.
            last.push(...edgeInserts(db, t, list, false).map((sql) => ({ sql })));
            written += list.length;
            const perOwner = countBy(list.map((e) => e.from));
            last.push(countIncrements(db, t, perOwner));
            written += perOwner.size;
            for (const from of perOwner.keys()) lists.push({ table: t, from });
          }
        }
        for (const u of updated) {
          last.push({ sql: `UPDATE ${table} SET data = ?, updated_at = ? WHERE local_id = ?`, values: [JSON.stringify({ ...u.item.data, active: true }), u.item.updatedAt, decodeId(u.id).local] });
          written++;
        }
        if (last.length > 0) await tx.commitWith(last);
        return { ids, created: fresh.length, updated: updated.map((u) => u.id), refused, moved, inactive, lists, written };
      },
      ctx,
    );
  }

  /**
   * Adds edges of one mapping table, one local transaction per shard of `from` (three round trips):
   * the owners' active check under a shared lock (an add is refused unless the list's owner is
   * active, as the product's writes refuse it), `INSERT IGNORE … RETURNING`, then each list's count
   * raised by exactly the rows that came back. Running it twice changes nothing the second time.
   */
  async addEdges(table: MappingTable, edges: readonly NewEdge[], ctx: OpContext = {}): Promise<AddedEdges> {
    const inserted: NewEdge[] = [];
    const refused: NewEdge[] = [];
    let written = 0;
    const ownerType = mappingSpec(table).from;
    const unique = [...new Map(edges.map((e) => [`${e.from}:${e.to}`, e])).values()];
    await Promise.all(
      [...groupBy(unique, (e) => shardOf(e.from))].map(async ([shard, list]) => {
        const db = shardDatabase(shard);
        const owners = [...new Set(list.map((e) => e.from))];
        await this.#router.transaction(
          shard,
          async (tx) => {
            const active = new Set(
              (
                await tx.query(`SELECT local_id FROM ${db}.${objectTableOf(ownerType)} WHERE local_id IN (${integerList(owners.map((o) => decodeId(o).local))}) AND ${ACTIVE_SQL} LOCK IN SHARE MODE`)
              ).map((r) => encodeId({ shard, type: typeNumberOf(ownerType), local: BigInt(r.local_id as string) })),
            );
            const ok = list.filter((e) => active.has(e.from));
            const here: NewEdge[] = [];
            const bySeq = new Map(ok.map((e) => [`${e.from}:${e.to}`, e]));
            for (const sql of edgeInserts(db, table, ok, true)) {
              for (const r of await tx.query(sql)) here.push(bySeq.get(`${r.from_id}:${r.to_id}`)!);
            }
            if (here.length > 0) await tx.commitWith([countIncrements(db, table, countBy(here.map((e) => e.from)))]);
            // The transaction may be retried (deadlock): only its last run's outcome counts.
            return { here, refusedHere: list.filter((e) => !active.has(e.from)) };
          },
          ctx,
        ).then(({ here, refusedHere }) => {
          inserted.push(...here);
          refused.push(...refusedHere);
          written += here.length + new Set(here.map((e) => e.from)).size;
        });
      }),
    );
    return { inserted, refused, written };
  }

  /**
   * Records mod-shard lookups (`INSERT IGNORE`, one round trip per host) and returns how many rows
   * were new and the keys already held by another ID (a username taken, …). Two entries of one key
   * (`alice` and `ALICE`): the first is inserted, and the other is a conflict like any other.
   */
  async putLookups(namespace: string, entries: readonly { key: string; id: bigint; createdAt: number }[], ctx: OpContext = {}): Promise<{ inserted: number; conflicts: { key: string; holder: bigint; wanted: bigint }[] }> {
    const count = this.#router.topology.doc.modShard.count;
    const located = entries.map((e) => ({ ...e, key: normalizeLookupKey(e.key), mod: modShardOf(normalizeLookupKey(e.key), count) }));
    let inserted = 0;
    const conflicts: { key: string; holder: bigint; wanted: bigint }[] = [];
    await Promise.all(
      [...groupBy(located, (e) => this.#router.writableHostOfModShard(e.mod))].map(async ([host, list]) => {
        const firsts = [...new Map([...list].reverse().map((e) => [e.key, e])).values()];
        const byMod = groupBy(firsts, (e) => e.mod);
        const statements: Statement[] = [];
        for (const [mod, es] of byMod) {
          for (const st of statementsOf(
            [
              {
                table: `${modShardDatabase(mod)}.lookups`,
                columns: ['namespace', 'lookup_key', 'id', 'created_at'],
                rows: es.length,
                ignore: true,
                *values() {
                  for (const e of es) yield `(${sqlString(namespace)},${sqlString(e.key)},${e.id},${e.createdAt})`;
                },
              },
            ],
            ROWS_PER_STATEMENT,
          ))
            statements.push({ sql: st.sql });
        }
        const results = await this.#router.transactionOnHost(host, [], (tx) => tx.commitWith(statements), ctx);
        const n = results.reduce((s, r) => s + affectedRows(r), 0);
        inserted += n;
        if (n < list.length) {
          const held = await this.#lookupOnHost(host, namespace, list, ctx);
          for (const e of list) {
            const h = held.get(e.key);
            if (h !== undefined && h !== e.id) conflicts.push({ key: e.key, holder: h, wanted: e.id });
          }
        }
      }),
    );
    return { inserted, conflicts };
  }

  /** Mod-shard lookups of many keys of one namespace: one round trip per host. Missing keys are absent. */
  async lookup(namespace: string, keys: readonly string[], ctx: OpContext = {}): Promise<Map<string, bigint>> {
    const count = this.#router.topology.doc.modShard.count;
    const located = [...new Set(keys.map(normalizeLookupKey))].map((key) => ({ key, mod: modShardOf(key, count) }));
    const out = new Map<string, bigint>();
    await Promise.all(
      [...groupBy(located, (e) => this.#router.hostOfModShard(e.mod))].map(async ([host, list]) => {
        for (const [k, v] of await this.#lookupOnHost(host, namespace, list, ctx)) out.set(k, v);
      }),
    );
    return out;
  }

  async #lookupOnHost(host: string, namespace: string, list: readonly { key: string; mod: number }[], ctx: OpContext): Promise<Map<string, bigint>> {
    const out = new Map<string, bigint>();
    const parts: string[] = [];
    // Keys inlined as escaped literals: thousands of `?` made formatting the statement a tenth of an import worker's CPU.
    for (const [mod, es] of groupBy(list, (e) => e.mod)) {
      parts.push(`SELECT lookup_key, id FROM ${modShardDatabase(mod)}.lookups WHERE namespace = ${sqlString(namespace)} AND lookup_key IN (${es.map((e) => sqlString(e.key)).join(',')})`);
    }
    for (const r of await this.#router.query(host, [], parts.join('\nUNION ALL\n'), [], ctx)) out.set(String(r.lookup_key), BigInt(r.id as string));
    return out;
  }

  /** The shard-local map of one source's objects on `shard` (old → new), for checks and tests. */
  async mapOn(shard: number, source: string, type: ObjectType, ctx: OpContext = {}): Promise<Map<string, bigint>> {
    const rows = await this.#router.query(
      this.#router.writableHostOfShard(shard),
      [shard],
      `SELECT old_id, new_id FROM ${shardDatabase(shard)}.import_ids WHERE source = ? AND type = ?`,
      [source, typeNumberOf(type)],
      ctx,
    );
    return new Map(rows.map((r) => [String(r.old_id), BigInt(r.new_id as string)]));
  }

  /**
   * The old IDs of objects of one source and type by their new IDs (new → old), from the shards' own
   * maps; an ID the source did not make is absent. For notes that must name the source's rows: rare,
   * so a scan of the source's rows of that type on each shard asked is acceptable.
   */
  async oldIdsOf(source: string, type: ObjectType, ids: readonly bigint[], ctx: OpContext = {}): Promise<Map<bigint, string>> {
    const out = new Map<bigint, string>();
    await Promise.all(
      [...groupBy([...new Set(ids)], (id) => shardOf(id))].map(async ([shard, list]) => {
        const rows = await this.#router.query(
          this.#router.writableHostOfShard(shard),
          [shard],
          `SELECT old_id, new_id FROM ${shardDatabase(shard)}.import_ids WHERE source = ? AND type = ? AND new_id IN (${integerList(list)})`,
          [source, typeNumberOf(type)],
          ctx,
        );
        for (const r of rows) out.set(BigInt(r.new_id as string), String(r.old_id));
      }),
    );
    return out;
  }

  /**
   * Every object of one source and type the import made whose old ID is in `range` (old → new), from
   * the shards' own maps: one statement per host over all its shards. What a deletes pass compares
   * with the keys the source still has (objects made through the gateway are never in it).
   */
  async importedInRange(source: string, type: ObjectType, range: KeyRange, ctx: OpContext = {}): Promise<Map<string, bigint>> {
    const where = [`source = ${sqlString(source)}`, `type = ${typeNumberOf(type)}`];
    if (range.after !== null) where.push(`old_id > ${integerList([range.after])}`);
    if (range.upTo !== null) where.push(`old_id <= ${integerList([range.upTo])}`);
    const out = new Map<string, bigint>();
    await Promise.all(
      [...this.#router.topology.shardsByHost()].map(async ([host, shards]) => {
        const sql = shards.map((s) => `SELECT old_id, new_id FROM ${shardDatabase(s)}.import_ids WHERE ${where.join(' AND ')}`).join('\nUNION ALL\n');
        for (const r of await this.#router.query(host, shards, sql, [], ctx)) out.set(String(r.old_id), BigInt(r.new_id as string));
      }),
    );
    return out;
  }

  /** The whole lists `table` of the given owners (from → to), read from the shards. */
  async edgesFrom(table: MappingTable, froms: readonly bigint[], ctx: OpContext = {}): Promise<Map<bigint, bigint[]>> {
    const out = new Map<bigint, bigint[]>();
    await Promise.all(
      [...groupBy(froms, (f) => shardOf(f))].map(async ([shard, list]) => {
        const rows = await this.#router.query(
          this.#router.writableHostOfShard(shard),
          [shard],
          `SELECT from_id, to_id FROM ${shardDatabase(shard)}.${table} WHERE from_id IN (${integerList(list)})`,
          [],
          ctx,
        );
        for (const [from, edges] of groupBy(rows, (r) => BigInt(r.from_id as string))) out.set(from, edges.map((r) => BigInt(r.to_id as string)));
      }),
    );
    return out;
  }

  // The ledger: in the mod shard of the source label.

  /** `write`: the host for a write, refused (WRITES_PAUSED) while a move pauses the ledger's mod shard. */
  #ledger(source: string, write = false): { host: string; db: string } {
    const mod = modShardOf(`import:${source}`, this.#router.topology.doc.modShard.count);
    return { host: write ? this.#router.writableHostOfModShard(mod) : this.#router.hostOfModShard(mod), db: modShardDatabase(mod) };
  }

  async latestRun(source: string, ctx: OpContext = {}): Promise<ImportRun | undefined> {
    const { host, db } = this.#ledger(source);
    const rows = await this.#router.query(host, [], `SELECT * FROM ${db}.import_runs WHERE source = ? ORDER BY run DESC LIMIT 1`, [source], ctx);
    return rows[0] ? runOf(rows[0]) : undefined;
  }

  async run(source: string, run: number, ctx: OpContext = {}): Promise<ImportRun | undefined> {
    const { host, db } = this.#ledger(source);
    const rows = await this.#router.query(host, [], `SELECT * FROM ${db}.import_runs WHERE source = ? AND run = ?`, [source, run], ctx);
    return rows[0] ? runOf(rows[0]) : undefined;
  }

  /** The newest finished pass: its source clock is the next delta pass's high-water mark. */
  async lastFinishedRun(source: string, ctx: OpContext = {}): Promise<ImportRun | undefined> {
    const { host, db } = this.#ledger(source);
    const rows = await this.#router.query(host, [], `SELECT * FROM ${db}.import_runs WHERE source = ? AND finished_at IS NOT NULL ORDER BY run DESC LIMIT 1`, [source], ctx);
    return rows[0] ? runOf(rows[0]) : undefined;
  }

  /** Records a new pass as `run`; false if another process recorded that run first. */
  async startRun(r: Omit<ImportRun, 'finishedAt'>, ctx: OpContext = {}): Promise<boolean> {
    const { host, db } = this.#ledger(r.source, true);
    const res = await this.#router.query(
      host,
      [],
      `INSERT IGNORE INTO ${db}.import_runs (source, run, since, source_clock, plan, started_at) VALUES (?, ?, ?, ?, ?, ?)`,
      [r.source, r.run, r.since, r.sourceClock, r.plan, r.startedAt],
      ctx,
    );
    return affectedRows(res as unknown as StatementResult) === 1;
  }

  async finishRun(source: string, run: number, ctx: OpContext = {}): Promise<void> {
    const { host, db } = this.#ledger(source, true);
    await this.#router.query(host, [], `UPDATE ${db}.import_runs SET finished_at = ? WHERE source = ? AND run = ? AND finished_at IS NULL`, [this.#now(), source, run], ctx);
  }

  /** Marks a chunk done (a second record of it, by a job run twice, keeps the first). */
  async chunkDone(source: string, run: number, c: ChunkRecord, ctx: OpContext = {}): Promise<void> {
    const { host, db } = this.#ledger(source, true);
    await this.#router.query(
      host,
      [],
      `INSERT IGNORE INTO ${db}.import_chunks (source, run, chunk, rows_read, rows_written, rejected, notes, worker, started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [source, run, c.chunk, c.rowsRead, c.rowsWritten, c.rejected, c.notes.slice(0, 60_000), c.worker.slice(0, 128), c.startedAt, c.finishedAt],
      ctx,
    );
  }

  async chunkRecord(source: string, run: number, chunk: string, ctx: OpContext = {}): Promise<boolean> {
    const { host, db } = this.#ledger(source);
    const rows = await this.#router.query(host, [], `SELECT 1 AS done FROM ${db}.import_chunks WHERE source = ? AND run = ? AND chunk = ?`, [source, run, chunk], ctx);
    return rows.length > 0;
  }

  async chunks(source: string, run: number, ctx: OpContext = {}): Promise<Map<string, ChunkRecord>> {
    const { host, db } = this.#ledger(source);
    const rows = await this.#router.query(host, [], `SELECT * FROM ${db}.import_chunks WHERE source = ? AND run = ?`, [source, run], ctx);
    return new Map(
      rows.map((r) => [
        String(r.chunk),
        {
          chunk: String(r.chunk),
          rowsRead: Number(r.rows_read),
          rowsWritten: Number(r.rows_written),
          rejected: Number(r.rejected),
          notes: String(r.notes),
          worker: String(r.worker),
          startedAt: Number(r.started_at),
          finishedAt: Number(r.finished_at),
        },
      ]),
    );
  }
}

function runOf(r: Row): ImportRun {
  return {
    source: String(r.source),
    run: Number(r.run),
    since: r.since == null ? null : Number(r.since),
    sourceClock: Number(r.source_clock),
    plan: String(r.plan),
    startedAt: Number(r.started_at),
    finishedAt: r.finished_at == null ? null : Number(r.finished_at),
  };
}

/**
 * Integers as an SQL list, inlined rather than bound: a batch's IN lists hold thousands of keys, and
 * formatting that many `?` walks the whole statement once per value. Refuses anything not an integer.
 */
function integerList(values: readonly (bigint | string)[]): string {
  for (const v of values) if (typeof v !== 'bigint' && !/^(0|[1-9][0-9]{0,19})$/.test(v)) throw new Error(`not an integer key: ${JSON.stringify(v)}`);
  return values.join(',');
}

function countBy(ids: readonly bigint[]): Map<bigint, number> {
  const out = new Map<bigint, number>();
  for (const id of ids) out.set(id, (out.get(id) ?? 0) + 1);
  return out;
}

/** Multi-row edge INSERTs (with IGNORE: returning the rows inserted). Ordered lists get the product's default position. */
function edgeInserts(db: string, table: MappingTable, edges: readonly NewEdge[], ignore: boolean): string[] {
  if (edges.length === 0) return [];
  const ordered = 'ordered' in mappingSpec(table);
  return [
    ...statementsOf(
      [
        {
          table: `${db}.${table}`,
          columns: ['from_id', 'to_id', 'sequence', 'position'],
          rows: edges.length,
          ignore,
          ...(ignore ? { returning: 'from_id, to_id' } : {}),
          *values() {
            for (const e of edges) yield `(${e.from},${e.to},${e.sequence},${ordered ? -e.sequence * POSITION_GAP : 'NULL'})`;
          },
        },
      ],
      ROWS_PER_STATEMENT,
    ),
  ].map((s) => s.sql);
}

/** Raises each list's count by the edges it gained (a count row appears with its list's first edge). */
function countIncrements(db: string, table: MappingTable, perOwner: ReadonlyMap<bigint, number>): Statement {
  return {
    sql: `INSERT INTO ${db}.counts (id, kind, n) VALUES ${[...perOwner].map(([id, n]) => `(${id},${sqlString(table)},${n})`).join(',')} ON DUPLICATE KEY UPDATE n = n + VALUES(n)`,
  };
}
