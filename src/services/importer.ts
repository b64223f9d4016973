/**
 * `shardql import`: one chunk of an unsharded source database moved into the shards, placed as the
 * gateway places new objects (docs/operations.md "Importing an unsharded database"):
 *   - a user on an open shard picked uniformly (a hash of the source and the old ID, so a re-run
 *     picks the same one), their boards and pins on the user's shard, a comment on its pin's shard,
 *     a repin (a pin on the repinner's board) on its board's shard;
 *   - objects as JSON blobs, both directions of every relation, counts equal to rows, usernames and
 *     emails claimed in the mod shard;
 *   - the old ID → new ID map in each object's shard (`import_ids`, written with the object) and
 *     indexed in the mod shard (lookup namespace `import:<type>`, key `<label>:<old id>`), which is
 *     how references resolve across chunks and how an imported object is found by its old ID.
 * Every step is idempotent, so a chunk interrupted anywhere is simply run again, and a second pass
 * over an unchanged source writes nothing.
 */
import { createHash } from 'node:crypto';
import { groupBy } from '../core/groupBy.ts';
import { formatId, shardOf } from '../core/ids.ts';
import {
  buildBlob,
  blobText,
  importKey,
  importNamespace,
  importedUsername,
  jsonObject,
  oldIdOf,
  placeUser,
  timeOf,
  type DeleteTable,
  OBJECT_SOURCES,
  type KeyRange,
  type ObjectColumns,
  type ObjectSource,
  type SourceSchema,
  type SourceTable,
} from '../core/importSchema.ts';
import { LISTINGS, listedEdges, listingsOf, viewerRelationTo, type Listing } from '../core/listings.ts';
import type { MappingTable } from '../core/mappings.ts';
import { servedModel } from '../core/model/served.ts';
import { decodeRefs } from '../core/objectRefs.ts';
import type { ObjectType } from '../core/objectTypes.ts';
import type { ImportObject, NewEdge } from '../storage/importStore.ts';
import type { ImportSource, SourceRow } from '../storage/importSource.ts';
import type { Storage } from '../storage/index.ts';
import { listCacheKey } from '../storage/mappingStore.ts';
import type { OpContext } from '../storage/sqlStats.ts';
import { isShardqlError } from '../core/errors.ts';
import { isActive, type StoredObject } from '../storage/objectStore.ts';
import { listingStep } from './cascade.ts';
import { runStep } from './writeExecutor.ts';

/** What every chunk of one pass shares: recorded once in the ledger (`import_runs.plan`). */
export interface ImportPlan {
  readonly version: 1;
  /** The source label (default: the source database's name). */
  readonly source: string;
  /** mysql://user@host:port/db (no password). */
  readonly url: string;
  readonly schema: SourceSchema;
  /** The open shards when the pass was planned: users are placed over these, whatever opens later. */
  readonly openShards: readonly number[];
  /** Only rows created or changed at or after this time (epoch ms); null: every row. */
  readonly since: number | null;
  readonly chunks: { readonly [T in SourceTable]?: readonly { readonly range: KeyRange; readonly rows: number }[] };
  /** `--deletes`: key ranges of the deletes pass that follows the import phases (whole tables, whatever `since`). */
  readonly deletes?: { readonly [T in DeleteTable]?: readonly { readonly range: KeyRange; readonly rows: number }[] };
}

/** A plan read back from the ledger. */
export function parsePlan(text: string): ImportPlan {
  const plan = JSON.parse(text) as ImportPlan;
  if (plan.version !== 1 || !Array.isArray(plan.openShards) || typeof plan.chunks !== 'object') throw new Error('an import plan of an unknown version: run this import again with this version of shardql');
  return plan;
}

export interface ChunkOutcome {
  readonly read: number;
  readonly written: number;
  /** Source rows of which nothing is in the shards. */
  readonly rejected: number;
  /**
   * The first rows rejected (`rejected: …`) or imported with something of theirs left out
   * (`imported: …`), one line each, naming the source's old IDs and spellings.
   */
  readonly notes: string[];
}

export interface ImportDeps {
  readonly storage: Storage;
  readonly source: ImportSource;
  readonly plan: ImportPlan;
  readonly ctx?: OpContext;
}

const MAX_NOTES = 20;

/** The viewer's type: the `from` side of every relation a viewer writes. */
const DECLARED_VIEWER = servedModel().viewer as ObjectType;

/**
 * What each relation table of the source relates the viewer's type to; its mapping tables are the
 * model's relation the viewer writes to that type (`@relate`), then its mirror.
 */
const RELATION_TARGETS = { likes: 'pin', follows: 'user', boardFollows: 'board' } as const satisfies Record<string, ObjectType>;
type RelationSource = keyof typeof RELATION_TARGETS;

function relationOf(table: RelationSource): { forward: MappingTable; reverse: MappingTable; to: ObjectType } {
  const to = RELATION_TARGETS[table];
  const r = viewerRelationTo(to);
  if (!r) throw new Error(`the model declares no single two-sided relation a viewer writes to ${to}: the import cannot place ${table}`);
  return { ...r, to };
}

/** The list a pin's `via` writes (an original's repins): where the repins phase lists each repin. */
function repinListing(): Listing {
  const l = listingsOf('pin').find((x) => x.field === 'via');
  if (!l) throw new Error('the model lists no pin under the pin its via names: the import cannot place repins');
  return l;
}

/**
 * The lists that contain an object of `type` with blob `data` placed on `shard` (its
 * `@ref(onDelete: DELETE, listedIn:)`): those on its shard, written with it in its transaction,
 * and those elsewhere (a comment's author's), written after it on their own shards.
 */
function containment(type: ObjectType, data: Readonly<Record<string, unknown>>, shard: number): Pick<Prepared, 'elsewhere'> & { parents: ImportObject['parents'] } {
  const edges = listedEdges(type, decodeRefs(data), 'DELETE');
  return {
    parents: edges.filter((e) => shardOf(e.from) === shard).map((e) => ({ table: e.table, from: e.from })),
    elsewhere: edges.filter((e) => shardOf(e.from) !== shard).map((e) => ({ listing: e.listing, from: e.from })),
  };
}

class Outcome {
  read = 0;
  written = 0;
  rejected = 0;
  readonly notes: string[] = [];
  /** Rows not imported at all: counted, and noted. */
  reject(n: number, why: string): void {
    this.rejected += n;
    this.#note(`rejected: ${why}`);
  }
  /** A row imported, but without something the source gives it (a repin's original, a username): noted, not counted as rejected. */
  imported(why: string): void {
    this.#note(`imported: ${why}`);
  }
  #note(line: string): void {
    if (this.notes.length < MAX_NOTES) this.notes.push(line);
  }
  result(): ChunkOutcome {
    return { read: this.read, written: this.written, rejected: this.rejected, notes: this.notes };
  }
}

/** Resolves old IDs of one type to new IDs through the mod shard, once per chunk. */
async function resolve(deps: ImportDeps, type: ObjectType, oldIds: Iterable<string>): Promise<Map<string, bigint>> {
  const label = deps.plan.source;
  const keys = [...new Set(oldIds)];
  if (keys.length === 0) return new Map();
  const found = await deps.storage.imports.lookup(importNamespace(type), keys.map((k) => importKey(label, k)), deps.ctx);
  const out = new Map<string, bigint>();
  for (const k of keys) {
    const id = found.get(importKey(label, k));
    if (id !== undefined) out.set(k, id);
  }
  return out;
}

function fieldsOf(cols: ObjectColumns, row: SourceRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  Object.keys(cols.fields).forEach((field, i) => (out[field] = row[`f${i}`]));
  return out;
}

function times(schema: SourceSchema, row: SourceRow): { createdAt: number; updatedAt: number } {
  const createdAt = timeOf(row.created_at, schema.timeUnit);
  return { createdAt, updatedAt: row.updated_at == null ? createdAt : timeOf(row.updated_at, schema.timeUnit) };
}

/** An object ready to place: where, and what the shards should hold for it. */
interface Prepared {
  readonly shard: number;
  readonly item: ImportObject;
  /** A repin's original (new ID), for the repin edge, and its old ID (for notes). */
  readonly via?: bigint;
  readonly viaOld?: string;
  readonly username?: string;
  readonly email?: string;
  /** Lists on other shards that contain it (its author's comments): written after it is placed. */
  readonly elsewhere?: readonly { readonly listing: Listing; readonly from: bigint }[];
}

/**
 * Source rows of an object table → the objects as the shards should hold them, with the rows that
 * cannot be imported rejected (a parent missing, a pin not its board owner's). Shared by the import
 * and by `--verify`, so both build the same blobs.
 */
async function prepareObjects(deps: ImportDeps, table: 'users' | 'boards' | 'pins' | 'repins' | 'comments', rows: readonly SourceRow[], out: Outcome): Promise<Prepared[]> {
  const { schema, source: label, openShards } = deps.plan;
  const prepared: Prepared[] = [];
  switch (table) {
    case 'users': {
      for (const row of rows) {
        const oldId = oldIdOf(row.id);
        const data = jsonObject(row.data);
        const username = importedUsername(String(row.username ?? ''), data);
        if (username === '') {
          out.reject(1, `user ${oldId}: no username`);
          continue;
        }
        const email = typeof row.email === 'string' && row.email !== '' ? row.email : undefined;
        prepared.push({
          shard: openShards[placeUser(label, oldId, openShards.length)]!,
          item: { oldId, data: buildBlob(data, fieldsOf(schema.users, row), { username, email }), ...times(schema, row), parents: [] },
          username,
          ...(email !== undefined ? { email } : {}),
        });
      }
      return prepared;
    }
    case 'boards': {
      const owners = await resolve(deps, 'user', rows.map((r) => oldIdOf(r.owner)));
      for (const row of rows) {
        const oldId = oldIdOf(row.id);
        const owner = owners.get(oldIdOf(row.owner));
        if (owner === undefined) {
          out.reject(1, `board ${oldId}: its owner ${oldIdOf(row.owner)} was not imported`);
          continue;
        }
        const data = buildBlob(jsonObject(row.data), fieldsOf(schema.boards, row), { owner_id: formatId(owner) });
        const { parents, elsewhere } = containment('board', data, shardOf(owner));
        prepared.push({ shard: shardOf(owner), item: { oldId, data, ...times(schema, row), parents }, elsewhere });
      }
      return prepared;
    }
    case 'pins':
    case 'repins': {
      const [boards, pinners, originals] = await Promise.all([
        resolve(deps, 'board', rows.map((r) => oldIdOf(r.board))),
        resolve(deps, 'user', rows.map((r) => oldIdOf(r.pinner))),
        resolve(deps, 'pin', rows.filter((r) => r.via != null).map((r) => oldIdOf(r.via))),
      ]);
      for (const row of rows) {
        const oldId = oldIdOf(row.id);
        const board = boards.get(oldIdOf(row.board));
        const pinner = pinners.get(oldIdOf(row.pinner));
        if (board === undefined || pinner === undefined) {
          out.reject(1, `pin ${oldId}: its ${board === undefined ? `board ${oldIdOf(row.board)}` : `pinner ${oldIdOf(row.pinner)}`} was not imported`);
          continue;
        }
        if (row.board_owner == null || oldIdOf(row.board_owner) !== oldIdOf(row.pinner)) {
          out.reject(1, `pin ${oldId}: pinned by ${oldIdOf(row.pinner)} on board ${oldIdOf(row.board)} of another user (a pin lives with its board's owner)`);
          continue;
        }
        const viaOld = row.via == null ? undefined : oldIdOf(row.via);
        const via = viaOld === undefined ? undefined : originals.get(viaOld);
        // The pins phase made it already (a pin of its pinner, on their board, in their counts): it stays a plain pin.
        if (table === 'repins' && via === undefined) out.imported(`repin ${oldId}: its original ${viaOld} was not imported, so it is a plain pin (via: null)`);
        const refs = { board_id: formatId(board), pinner_id: formatId(pinner), via_pin_id: via === undefined ? undefined : formatId(via) };
        const data = buildBlob(jsonObject(row.data), fieldsOf(schema.pins, row), refs);
        const { parents, elsewhere } = containment('pin', data, shardOf(board));
        prepared.push({
          shard: shardOf(board),
          item: { oldId, data, ...times(schema, row), parents },
          elsewhere,
          ...(via !== undefined ? { via, viaOld } : {}),
        });
      }
      return prepared;
    }
    case 'comments': {
      const cols = schema.comments!;
      const [pins, authors] = await Promise.all([resolve(deps, 'pin', rows.map((r) => oldIdOf(r.pin))), resolve(deps, 'user', rows.map((r) => oldIdOf(r.author)))]);
      for (const row of rows) {
        const oldId = oldIdOf(row.id);
        const pin = pins.get(oldIdOf(row.pin));
        const author = authors.get(oldIdOf(row.author));
        if (pin === undefined || author === undefined) {
          out.reject(1, `comment ${oldId}: its ${pin === undefined ? `pin ${oldIdOf(row.pin)}` : `author ${oldIdOf(row.author)}`} was not imported`);
          continue;
        }
        const data = buildBlob(jsonObject(row.data), fieldsOf(cols, row), { pin_id: formatId(pin), author_id: formatId(author) });
        const { parents, elsewhere } = containment('comment', data, shardOf(pin));
        prepared.push({ shard: shardOf(pin), item: { oldId, data, ...times(schema, row), parents }, elsewhere });
      }
      return prepared;
    }
  }
}

const TYPE_OF: Record<'users' | 'boards' | 'pins' | 'repins' | 'comments', ObjectType> = { users: 'user', boards: 'board', pins: 'pin', repins: 'pin', comments: 'comment' };

/** Places prepared objects shard by shard (one transaction each), then indexes them in the mod shard. */
async function placeAll(deps: ImportDeps, type: ObjectType, prepared: readonly Prepared[], out: Outcome): Promise<Map<string, bigint>> {
  const { storage, plan, ctx } = deps;
  const byShard = groupBy(prepared, (p) => p.shard);
  const ids = new Map<string, bigint>();
  const updated: bigint[] = [];
  const lists: string[] = [];
  const skipped = new Set<string>();
  await Promise.all(
    [...byShard].map(async ([shard, list]) => {
      const r = await storage.imports.placeObjects({ source: plan.source, type, shard, items: list.map((p) => p.item) }, ctx);
      for (const [k, v] of r.ids) ids.set(k, v);
      out.written += r.written;
      updated.push(...r.updated);
      lists.push(...r.lists.map((l) => listCacheKey(l.table, l.from)));
      if (r.refused.length > 0) out.reject(r.refused.length, `${type} ${listed(r.refused)}: a parent is deleted in the shards`);
      for (const oldId of [...r.moved, ...r.inactive]) skipped.add(oldId);
      if (r.moved.length > 0) out.imported(`${type} ${listed(r.moved)}: the source moved it to another parent since it was imported, so it is left where it is, as it was`);
    }),
  );
  const createdAt = new Map(prepared.map((p) => [p.item.oldId, p.item.createdAt]));
  const put = await storage.imports.putLookups(
    importNamespace(type),
    [...ids].map(([oldId, id]) => ({ key: importKey(plan.source, oldId), id, createdAt: createdAt.get(oldId)! })),
    ctx,
  );
  out.written += put.inserted;
  if (put.conflicts.length > 0) throw new Error(`the mod shard maps ${put.conflicts[0]!.key} to ${put.conflicts[0]!.holder}, but the shards made ${put.conflicts[0]!.wanted}: the ID map is inconsistent`);
  if (updated.length > 0) await storage.objects.invalidate(updated, ctx);
  if (lists.length > 0) await storage.mappings.invalidate(lists, ctx);
  await listElsewhere(deps, type, prepared, ids, skipped, out);
  return ids;
}

/**
 * Lists the placed objects in the lists on other shards that contain them (a comment in its
 * author's `user_wrote_comments`), as the product's create does by a step: `INSERT IGNORE`, so a
 * re-run adds nothing twice and counts stay equal to rows. An object whose list owner is deleted in
 * the shards goes, as a create racing with that owner's delete would (the owner's cascade cannot
 * find it): rejected. `skipped`: old IDs left as they were (deleted, or moved in the source).
 */
async function listElsewhere(deps: ImportDeps, type: ObjectType, prepared: readonly Prepared[], ids: ReadonlyMap<string, bigint>, skipped: ReadonlySet<string>, out: Outcome): Promise<void> {
  const { storage, ctx } = deps;
  const wanted = prepared.flatMap((p) => {
    const id = ids.get(p.item.oldId);
    if (id === undefined || skipped.has(p.item.oldId)) return [];
    return (p.elsewhere ?? []).map((e) => ({ listing: e.listing, edge: { from: e.from, to: id, sequence: p.item.createdAt }, oldId: p.item.oldId }));
  });
  for (const [listing, list] of groupBy(wanted, (w) => w.listing)) {
    const added = await storage.imports.addEdges(listing.table, list.map((w) => w.edge), ctx);
    out.written += added.written;
    const lists = [...new Set(added.inserted.map((e) => listCacheKey(listing.table, e.from)))];
    if (lists.length > 0) await storage.mappings.invalidate(lists, ctx);
    if (added.refused.length === 0) continue;
    for (const e of added.refused) await runStep(storage, listingStep(listing, e.from, e.to), ctx);
    const oldOf = new Map(list.map((w) => [w.edge.to, w.oldId]));
    out.reject(added.refused.length, `${type} ${listed(added.refused.map((e) => oldOf.get(e.to)!))}: its ${listing.field} is deleted in the shards`);
  }
}

/** The first few of a list of old IDs or edges, and how many more: `3, 5, 8, 13, 21 and 4 more`. */
function listed(items: readonly string[]): string {
  return items.length <= 5 ? items.join(', ') : `${items.slice(0, 5).join(', ')} and ${items.length - 5} more`;
}

/**
 * Usernames and emails claimed for imported users. A name someone else holds is not taken: the user
 * is imported without it (the name does not lead to them), and the note names the source's row and
 * spelling and the holder (by its old ID when this source made it), so the operator can fix the source.
 */
async function claimNames(deps: ImportDeps, prepared: readonly Prepared[], ids: ReadonlyMap<string, bigint>, out: Outcome): Promise<void> {
  for (const ns of ['username', 'email'] as const) {
    const entries = prepared.flatMap((p) => {
      const key = ns === 'username' ? p.username : p.email;
      const id = ids.get(p.item.oldId);
      return key !== undefined && id !== undefined ? [{ key, id, createdAt: p.item.createdAt, p }] : [];
    });
    if (entries.length === 0) continue;
    const r = await deps.storage.imports.putLookups(ns, entries, deps.ctx);
    out.written += r.inserted;
    if (r.conflicts.length === 0) continue;
    const byId = new Map(entries.map((e) => [e.id, e.p]));
    const holders = await deps.storage.imports.oldIdsOf(deps.plan.source, 'user', r.conflicts.map((c) => c.holder), deps.ctx);
    for (const c of r.conflicts) {
      const p = byId.get(c.wanted)!;
      const holderOld = holders.get(c.holder);
      const holder = holderOld !== undefined ? `user ${holderOld} of this source` : `user ${c.holder}, not imported from this source`;
      out.imported(`user ${p.item.oldId}: the ${ns} ${JSON.stringify(ns === 'username' ? p.username : p.email)} is taken by ${holder}, so it does not lead to this user`);
    }
  }
}

/**
 * Edges of one relation, both directions; a pair whose other side is deleted is undone as the
 * product's writes undo it. `names`: each edge (`from:to`, new IDs) as the source names it (`3 → 8`).
 */
async function relate(deps: ImportDeps, table: RelationSource, edges: readonly NewEdge[], names: ReadonlyMap<string, string>, out: Outcome): Promise<void> {
  const { storage, ctx } = deps;
  const rel = relationOf(table);
  const named = (list: readonly NewEdge[]): string => listed(list.map((e) => names.get(`${e.from}:${e.to}`)!));
  const fwd = await storage.imports.addEdges(rel.forward, edges, ctx);
  const refusedFrom = new Set(fwd.refused.map((e) => `${e.from}:${e.to}`));
  if (fwd.refused.length > 0) out.reject(fwd.refused.length, `${table} ${named(fwd.refused)}: the user is deleted in the shards`);
  const rev = await storage.imports.addEdges(
    rel.reverse,
    edges.filter((e) => !refusedFrom.has(`${e.from}:${e.to}`)).map((e) => ({ from: e.to, to: e.from, sequence: e.sequence })),
    ctx,
  );
  for (const e of rev.refused) await runStep(storage, { kind: 'syncReverse', table: rel.forward, from: formatId(e.to), to: formatId(e.from) }, ctx);
  if (rev.refused.length > 0) out.reject(rev.refused.length, `${table} ${named(rev.refused.map((e) => ({ from: e.to, to: e.from, sequence: e.sequence })))}: the ${rel.to} is deleted in the shards`);
  out.written += fwd.written + rev.written;
  const lists = [...new Set([...fwd.inserted.map((e) => listCacheKey(rel.forward, e.from)), ...rev.inserted.map((e) => listCacheKey(rel.reverse, e.from))])];
  if (lists.length > 0) await storage.mappings.invalidate(lists, ctx);
}

/** Imports one chunk: the rows of `table` in `range` (created or changed since the plan's `since`). */
export async function importChunk(deps: ImportDeps, table: SourceTable, range: KeyRange): Promise<ChunkOutcome> {
  const out = new Outcome();
  const rows = await deps.source.rows(deps.plan.schema, table, range, deps.plan.since);
  out.read = rows.length;
  if (rows.length === 0) return out.result();
  switch (table) {
    case 'users': {
      const prepared = await prepareObjects(deps, table, rows, out);
      const ids = await placeAll(deps, 'user', prepared, out);
      await claimNames(deps, prepared, ids, out);
      break;
    }
    case 'boards':
    case 'pins':
    case 'comments':
      await placeAll(deps, TYPE_OF[table], await prepareObjects(deps, table, rows, out), out);
      break;
    case 'repins': {
      // Every pin of the source went through the pins phase, which made it or reported why not (a
      // repin is read again only to be given its original: the blob names it, and the original lists it).
      const made = await resolve(deps, 'pin', rows.map((r) => oldIdOf(r.id)));
      const prepared = await prepareObjects(deps, table, rows.filter((r) => made.has(oldIdOf(r.id))), out);
      const ids = await placeAll(deps, 'pin', prepared, out);
      const edges = prepared.flatMap((p) => {
        const pin = ids.get(p.item.oldId);
        return pin !== undefined && p.via !== undefined ? [{ from: p.via, to: pin, sequence: p.item.createdAt }] : [];
      });
      const repins = repinListing().table;
      const added = await deps.storage.imports.addEdges(repins, edges, deps.ctx);
      out.written += added.written;
      // The repin stays, naming its original as a repin made through the gateway does once its original is deleted.
      const byPin = new Map(prepared.map((p) => [ids.get(p.item.oldId), p]));
      for (const e of added.refused) {
        const p = byPin.get(e.to)!;
        out.imported(`repin ${p.item.oldId}: its original ${p.viaOld} is deleted in the shards, so it is not among the original's repins (via: null)`);
      }
      const lists = [...new Set(added.inserted.map((e) => listCacheKey(repins, e.from)))];
      if (lists.length > 0) await deps.storage.mappings.invalidate(lists, deps.ctx);
      break;
    }
    case 'likes':
    case 'follows':
    case 'boardFollows': {
      const rel = relationOf(table);
      const [froms, tos] = await Promise.all([resolve(deps, 'user', rows.map((r) => oldIdOf(r.f))), resolve(deps, rel.to, rows.map((r) => oldIdOf(r.t)))]);
      const edges: NewEdge[] = [];
      const names = new Map<string, string>();
      for (const row of rows) {
        const f = froms.get(oldIdOf(row.f));
        const t = tos.get(oldIdOf(row.t));
        if (f === undefined || t === undefined) {
          out.reject(1, `${table} ${oldIdOf(row.f)} → ${oldIdOf(row.t)}: ${f === undefined ? 'the user' : `the ${rel.to}`} was not imported`);
          continue;
        }
        if (f === t) {
          out.reject(1, `follows ${oldIdOf(row.f)} → itself: a user cannot follow themselves`);
          continue;
        }
        edges.push({ from: f, to: t, sequence: timeOf(row.created_at, deps.plan.schema.timeUnit) });
        names.set(`${f}:${t}`, `${oldIdOf(row.f)} → ${oldIdOf(row.t)}`);
      }
      await relate(deps, table, edges, names, out);
      break;
    }
  }
  return out.result();
}

// --verify

/** One difference between the source and the shards. */
export interface Difference {
  readonly table: 'users' | 'boards' | 'pins';
  readonly oldId: string;
  readonly text: string;
}

/** The source table each object type is read from. */
const SOURCE_OF: Partial<Record<ObjectType, ObjectSource>> = Object.fromEntries(Object.entries(OBJECT_SOURCES).map(([t, type]) => [type, t as ObjectSource]));

/**
 * The counts compared per object: source table and column → the shards' list. From the model: each
 * list a reference writes counts the rows of the referencing type's table by that reference's
 * column (a user's boards: boards by owner; a user's comments: comments by author), and each
 * relation counts the rows of its source table by its side's column (a user's likes: likes by user).
 */
function countSpecs(schema: SourceSchema, table: 'users' | 'boards' | 'pins'): { list: MappingTable; table: string; column: string }[] {
  const type = OBJECT_SOURCES[table];
  const out: { list: MappingTable; table: string; column: string }[] = [];
  for (const l of LISTINGS) {
    const source = SOURCE_OF[l.type];
    const cols = source === undefined ? null : (schema[source] as unknown as Readonly<Record<string, unknown>> | null);
    const column = cols?.[l.field];
    if (l.to === type && cols && typeof column === 'string') out.push({ list: l.table, table: String(cols.table), column });
  }
  for (const t of Object.keys(RELATION_TARGETS) as RelationSource[]) {
    const cols = schema[t];
    if (!cols) continue;
    const rel = relationOf(t);
    if (type === DECLARED_VIEWER) out.push({ list: rel.forward, table: cols.table, column: cols.from });
    if (type === rel.to) out.push({ list: rel.reverse, table: cols.table, column: cols.to });
  }
  return out;
}

const checksum = (text: string): string => createHash('sha1').update(text).digest('hex').slice(0, 12);

/**
 * Compares one chunk of users, boards or pins between the source and the shards: that each was
 * imported, its blob (a checksum of the data the import would write, against what the shards
 * hold), every count beside it against the source's rows, and a user's username lookup.
 */
export async function verifyChunk(deps: ImportDeps, table: 'users' | 'boards' | 'pins', range: KeyRange): Promise<{ checked: number; differences: Difference[] }> {
  const { storage, source, plan, ctx } = deps;
  const rows = await source.rows(plan.schema, table, range, null);
  const out = new Outcome();
  const prepared = await prepareObjects(deps, table, rows, out);
  const type = TYPE_OF[table];
  const ids = await resolve(deps, type, rows.map((r) => oldIdOf(r.id)));
  const differences: Difference[] = [];
  const differ = (oldId: string, text: string): void => void differences.push({ table, oldId, text });
  const expected = new Map(prepared.map((p) => [p.item.oldId, p]));
  const stored = await storage.objects.getMany([...ids.values()], ctx);
  const specs = countSpecs(plan.schema, table);
  const oldIds = rows.map((r) => oldIdOf(r.id));
  const sourceCounts = await Promise.all(specs.map((s) => source.countsBy(s.table, s.column, oldIds)));
  const keys = specs.flatMap((s) => [...ids.values()].map((id) => ({ id, kind: s.list })));
  const shardCounts = await storage.mappings.counts(keys, ctx);
  const usernames = table === 'users' ? await storage.lookups.lookup('username', prepared.flatMap((p) => (p.username ? [p.username] : [])), ctx) : new Map<string, bigint>();
  // Imported objects of the range the source no longer has (deleted there since: `--deletes` carries them).
  const inSource = new Set(oldIds);
  const imported = await storage.imports.importedInRange(plan.source, type, range, ctx);
  const extra = [...imported].filter(([oldId]) => !inSource.has(oldId));
  const extraObjects = await storage.objects.getMany(extra.map(([, id]) => id), ctx);
  for (const [oldId, id] of extra) {
    const o = extraObjects.get(id);
    if (o && isActive(o)) differ(oldId, `${type} ${oldId} (${id}) is in the shards but no longer in the source (run a pass with --deletes)`);
  }
  for (const oldId of oldIds) {
    const id = ids.get(oldId);
    const want = expected.get(oldId);
    if (id === undefined) {
      differ(oldId, `${type} ${oldId} is not in the shards${want ? '' : ' (rejected by the import)'}`);
      continue;
    }
    const o = stored.get(id);
    if (!o || o.data.active === false) {
      differ(oldId, `${type} ${oldId} (${id}) is ${o ? 'deleted' : 'missing'} in the shards`);
      continue;
    }
    if (want) {
      const a = checksum(blobText(want.item.data));
      const b = checksum(blobText(o.data));
      if (a !== b) differ(oldId, `${type} ${oldId} (${id}): object data differs (source checksum ${a}, shards ${b})`);
      if (want.username !== undefined && usernames.get(want.username) !== id) differ(oldId, `${type} ${oldId} (${id}): username ${JSON.stringify(want.username)} does not lead to it`);
    }
    specs.forEach((s, i) => {
      const a = sourceCounts[i]!.get(oldId) ?? 0;
      const b = shardCounts.get(`${id}:${s.list}`) ?? 0;
      if (a !== b) differ(oldId, `${type} ${oldId} (${id}): ${s.list} count ${b} in the shards, ${a} rows in the source`);
    });
  }
  return { checked: rows.length, differences };
}

// --deletes

/** The tables a deletes pass walks, in order: objects top-down (a user's delete takes their boards and pins with it), then relations. */
export const DELETE_PHASES: readonly (readonly DeleteTable[])[] = [['users'], ['boards'], ['pins'], ['comments', 'likes', 'follows', 'boardFollows']];

const DELETED_TYPE: Record<'users' | 'boards' | 'pins' | 'comments', ObjectType> = { users: 'user', boards: 'board', pins: 'pin', comments: 'comment' };

/**
 * Carries the source's deletes in one key range into the shards (`shardql import --deletes`), through
 * the product's own deletes, so cascades, both sides of relations, counts, caches, stored feeds and
 * the intent log behave as for a delete made through the gateway (and a worker killed midway leaves
 * intents the repair pass finishes; the chunk run again finds less to do):
 *   - an object the import made (in the shards' ID map) whose key the source no longer has is deleted
 *     as its owner would delete it (a comment by its author, or its pin's owner once the author is gone);
 *   - for each imported user of the range whose list of a relation holds more or fewer edges than the
 *     source's rows (the add phases of the same pass ran before), the edges whose other side the
 *     source no longer relates are undone (an unlike, an unfollow).
 * Edges made through the gateway to imported users' lists are not told apart from imported ones:
 * run it before the switch, while the gateway takes no writes (docs/operations.md "Cutover recipe").
 */
/**
 * The product's deletes a deletes pass carries out (the Pinterest product's writes have them):
 * named here so that this service needs no product module.
 */
export interface ImportDeletes {
  deleteViewer(viewer: bigint, ctx: OpContext): Promise<boolean>;
  deleteBoard(viewer: bigint | undefined, id: bigint, ctx: OpContext): Promise<boolean>;
  deletePin(viewer: bigint | undefined, id: bigint, ctx: OpContext): Promise<boolean>;
  deleteComment(viewer: bigint | undefined, id: bigint, ctx: OpContext): Promise<boolean>;
  unlikePin(viewer: bigint | undefined, pinId: bigint, ctx: OpContext): Promise<unknown>;
  unfollowUser(viewer: bigint | undefined, userId: bigint, ctx: OpContext): Promise<unknown>;
  unfollowBoard(viewer: bigint | undefined, boardId: bigint, ctx: OpContext): Promise<unknown>;
}

export async function deleteChunk(deps: ImportDeps & { readonly writes: ImportDeletes }, table: DeleteTable, range: KeyRange): Promise<ChunkOutcome> {
  const { storage, source, plan, writes } = deps;
  const ctx = deps.ctx ?? {};
  const out = new Outcome();
  const gone = (err: unknown): boolean => isShardqlError(err) && (err.code === 'NOT_FOUND' || err.code === 'UNAUTHENTICATED');
  if (table === 'users' || table === 'boards' || table === 'pins' || table === 'comments') {
    const type = DELETED_TYPE[table];
    const [kept, imported] = await Promise.all([source.keys(plan.schema, table, range), storage.imports.importedInRange(plan.source, type, range, ctx)]);
    out.read = kept.size;
    const doomed = [...imported].filter(([oldId]) => !kept.has(oldId)).map(([, id]) => id);
    const objects = await storage.objects.getMany(doomed, ctx);
    for (const id of doomed) {
      const o = objects.get(id);
      if (!o || !isActive(o)) continue; // deleted already (by an earlier run, or a parent's cascade)
      try {
        const done =
          type === 'user'
            ? await writes.deleteViewer(id, ctx)
            : type === 'board'
              ? await writes.deleteBoard(o.refs.owner, id, ctx)
              : type === 'pin'
                ? await writes.deletePin(o.refs.pinner, id, ctx)
                : await deleteComment(deps, o, ctx);
        if (done) out.written++;
      } catch (err) {
        if (!gone(err)) throw err;
      }
    }
    return out.result();
  }
  const rel = relationOf(table);
  const [counts, users] = await Promise.all([source.relationCounts(plan.schema, table, range), storage.imports.importedInRange(plan.source, 'user', range, ctx)]);
  out.read = [...counts.values()].reduce((a, b) => a + b, 0);
  const active = await storage.objects.getMany([...users.values()], ctx);
  const live = [...users].filter(([, id]) => { const u = active.get(id); return u !== undefined && isActive(u); });
  const held = await storage.mappings.counts(live.map(([, id]) => ({ id, kind: rel.forward })), ctx);
  const differing = live.filter(([oldId, id]) => (held.get(`${id}:${rel.forward}`) ?? 0) !== (counts.get(oldId) ?? 0));
  if (differing.length === 0) return out.result();
  const [targets, lists] = await Promise.all([
    source.relationTargets(plan.schema, table, differing.map(([oldId]) => oldId)),
    storage.imports.edgesFrom(rel.forward, differing.map(([, id]) => id), ctx),
  ]);
  const mapped = await resolve(deps, rel.to, [...targets.values()].flat());
  for (const [oldId, id] of differing) {
    const want = new Set((targets.get(oldId) ?? []).flatMap((t) => { const n = mapped.get(t); return n === undefined ? [] : [n]; }));
    for (const to of lists.get(id) ?? []) {
      if (want.has(to)) continue;
      try {
        if (table === 'likes') await writes.unlikePin(id, to, ctx);
        else if (table === 'follows') await writes.unfollowUser(id, to, ctx);
        else await writes.unfollowBoard(id, to, ctx);
        out.written++;
      } catch (err) {
        if (!gone(err)) throw err;
      }
    }
  }
  return out.result();
}

/** A comment deleted as its author would, or as its pin's owner once the author is gone. */
async function deleteComment(deps: ImportDeps & { readonly writes: ImportDeletes }, comment: StoredObject, ctx: OpContext): Promise<boolean> {
  const author = comment.refs.author;
  const a = author === undefined ? undefined : await deps.storage.objects.get(author, ctx);
  if (a && isActive(a)) return deps.writes.deleteComment(author, comment.id, ctx);
  const pin = comment.refs.pin === undefined ? undefined : await deps.storage.objects.get(comment.refs.pin, ctx);
  return deps.writes.deleteComment(pin?.refs.pinner, comment.id, ctx);
}
