/**
 * `shardql import`: one chunk of an unsharded source database moved into the shards, placed as the
 * gateway places new objects (docs/operations.md "Importing an unsharded database"); what the
 * tables are and what each row becomes is the import spec's (core/importSpec.ts, from the model):
 *   - an object with no `placeWith` (a user) on an open shard picked uniformly (a hash of the source
 *     and the old ID, so a re-run picks the same one), any other on the shard of the object its
 *     `placeWith` reference names (a board on its owner's, a comment on its pin's);
 *   - objects as JSON blobs, both directions of every relation, counts equal to rows, unique values
 *     (usernames) and the product's credentials (emails) claimed in the mod shard;
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
  importedUnique,
  jsonObject,
  oldIdOf,
  placeOnOpenShard,
  roleOf,
  timeOf,
  type KeyRange,
  type SourceColumns,
  type SourceSchema,
} from '../core/importSchema.ts';
import { objectSourceOf, sourceOf, type ImportSpec, type ObjectSource, type RelationSource, type SelfRefPass } from '../core/importSpec.ts';
import { LISTINGS, listedEdges, listingFor, type Listing } from '../core/listings.ts';
import type { MappingTable } from '../core/mappings.ts';
import { decodeRefs, type ObjectRefs } from '../core/objectRefs.ts';
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
  readonly version: 2;
  /** The source label (default: the source database's name). */
  readonly source: string;
  /** mysql://user@host:port/db (no password). */
  readonly url: string;
  readonly schema: SourceSchema;
  /** The open shards when the pass was planned: users are placed over these, whatever opens later. */
  readonly openShards: readonly number[];
  /** Only rows created or changed at or after this time (epoch ms); null: every row. */
  readonly since: number | null;
  /** Key ranges by source table (ImportSpec `sources`: `pins`, `repins`, `likes`). */
  readonly chunks: { readonly [table: string]: readonly { readonly range: KeyRange; readonly rows: number }[] | undefined };
  /** `--deletes`: key ranges of the deletes pass that follows the import phases (whole tables, whatever `since`). */
  readonly deletes?: { readonly [table: string]: readonly { readonly range: KeyRange; readonly rows: number }[] | undefined };
}

/** A plan read back from the ledger. */
export function parsePlan(text: string): ImportPlan {
  const plan = JSON.parse(text) as ImportPlan;
  if (plan.version !== 2 || !Array.isArray(plan.openShards) || typeof plan.chunks !== 'object' || typeof plan.schema?.tables !== 'object') throw new Error('an import plan of an unknown version: run this import again with this version of shardql');
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
  /** The source tables and what their rows become (product/served.ts `servedImportSpec`). */
  readonly spec: ImportSpec;
  readonly storage: Storage;
  readonly source: ImportSource;
  readonly plan: ImportPlan;
  readonly ctx?: OpContext;
}

const MAX_NOTES = 20;

/**
 * The lists that contain an object of `type` with blob `data` placed on `shard` (its
 * `@ref(onDelete: DELETE, listedIn:)`): those on its shard, written with it in its transaction,
 * and those elsewhere (a comment's author's), written after it on their own shards.
 */
function containment(type: ObjectType, data: Readonly<Record<string, unknown>>, shard: number): Pick<Prepared, 'elsewhere' | 'links'> & { parents: ImportObject['parents'] } {
  const refs = decodeRefs(data);
  const edges = listedEdges(type, refs, 'DELETE');
  return {
    parents: edges.filter((e) => shardOf(e.from) === shard).map((e) => ({ table: e.table, from: e.from })),
    elsewhere: edges.filter((e) => shardOf(e.from) !== shard).map((e) => ({ listing: e.listing, from: e.from })),
    // Lists an UNLINK reference to another type writes (a question under its tag); a reference to its own type is its last pass's.
    links: listedEdges(type, refs, 'UNLINK').filter((e) => e.listing.to !== type).map((e) => ({ listing: e.listing, from: e.from })),
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
async function resolve(deps: ImportDeps, type: string, oldIds: Iterable<string>): Promise<Map<string, bigint>> {
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

function fieldsOf(cols: SourceColumns, row: SourceRow): Record<string, unknown> {
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
  /** Its reference to its own type resolved (a repin's original, new ID), for the last pass's edge, and its old ID (for notes). */
  readonly self?: { readonly id: bigint; readonly old: string };
  /** Unique values and credentials to claim in the mod shard (a username, an email), by role. */
  readonly claims: readonly { readonly role: string; readonly namespace: string; readonly value: string }[];
  /** Lists on other shards that contain it (its author's comments): written after it is placed. */
  readonly elsewhere?: readonly { readonly listing: Listing; readonly from: bigint }[];
  /** Lists that only link it (an UNLINK reference's: a question under its tag): written after it is placed. */
  readonly links?: readonly { readonly listing: Listing; readonly from: bigint }[];
}

/** A reference's cell of a row (`r_pinner`). */
const refCell = (row: SourceRow, role: string): unknown => row[`r_${role}`];

/**
 * Source rows of an object table → the objects as the shards should hold them, with the rows that
 * cannot be imported rejected (a required reference not imported, a pin not its board owner's).
 * Shared by the import and by `--verify`, so both build the same blobs. `pass`: the object's last
 * pass (its reference to its own type), which notes a reference it cannot resolve.
 */
async function prepareObjects(deps: ImportDeps, object: ObjectSource, rows: readonly SourceRow[], out: Outcome, pass: SelfRefPass | null): Promise<Prepared[]> {
  const { schema, source: label, openShards } = deps.plan;
  const cols = schema.tables[object.alias]!;
  const resolved = new Map(
    await Promise.all(
      object.refs.map(async (r) => {
        const olds = r.optional ? rows.filter((row) => refCell(row, r.field) != null) : rows;
        return [r.field, await resolve(deps, r.to, olds.map((row) => oldIdOf(refCell(row, r.field))))] as const;
      }),
    ),
  );
  const prepared: Prepared[] = [];
  rows: for (const row of rows) {
    const oldId = oldIdOf(row.id);
    const data = jsonObject(row.data);
    const claims: { role: string; namespace: string; value: string }[] = [];
    const set: Record<string, string | undefined> = {};
    for (const u of object.unique) {
      const value = importedUnique(u.key, String(refCell(row, u.role) ?? ''), data);
      if (value === '') {
        if (!u.required) continue;
        out.reject(1, `${object.type} ${oldId}: no ${u.role}`);
        continue rows;
      }
      claims.push({ role: u.role, namespace: u.namespace, value });
      set[u.key] = value;
    }
    for (const c of object.credentials) {
      const v = refCell(row, c.role);
      if (typeof v !== 'string' || v === '') continue;
      claims.push({ role: c.role, namespace: c.namespace, value: v });
      set[c.role] = v;
    }
    const ids = new Map<string, bigint>();
    let missing: string | undefined;
    let self: Prepared['self'];
    const notes: string[] = [];
    for (const r of object.refs) {
      const cell = refCell(row, r.field);
      if (cell == null && r.optional) continue;
      const old = oldIdOf(cell);
      const id = resolved.get(r.field)!.get(old);
      if (id !== undefined) {
        ids.set(r.field, id);
        if (r.self) self = { id, old };
      } else if (!r.optional) missing ??= `${r.field} ${old}`;
      // The object pass made it already (as a plain pin): it stays one.
      else if (r.self && pass) notes.push(pass.wording.notImported(oldId, old));
      else if (!r.self) notes.push(`${object.type} ${oldId}: its ${r.field} ${old} was not imported, so it is imported without it (${r.field}: null)`);
    }
    if (missing !== undefined) {
      out.reject(1, `${object.type} ${oldId}: its ${missing} was not imported`);
      continue;
    }
    if (object.sameOwner) {
      const { owner, refused } = object.sameOwner;
      if (row.parent_owner == null || oldIdOf(row.parent_owner) !== oldIdOf(refCell(row, owner))) {
        out.reject(1, refused(oldId, oldIdOf(refCell(row, owner)), oldIdOf(refCell(row, object.placeWith!))));
        continue;
      }
    }
    for (const note of notes) out.imported(note);
    for (const r of object.refs) set[r.key] = ids.has(r.field) ? formatId(ids.get(r.field)!) : undefined;
    const blob = buildBlob(data, fieldsOf(cols, row), set, object.reserved);
    const shard = object.placeWith === null ? openShards[placeOnOpenShard(label, oldId, openShards.length)]! : shardOf(ids.get(object.placeWith)!);
    const { parents, elsewhere, links } = containment(object.type as ObjectType, blob, shard);
    prepared.push({ shard, item: { oldId, data: blob, ...times(schema, row), parents }, elsewhere, links, claims, ...(self ? { self } : {}) });
  }
  return prepared;
}

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
  await addListed(deps, prepared, ids, skipped, (p) => p.elsewhere, out, async (listing, refused, oldIds) => {
    for (const e of refused) await runStep(storage, listingStep(listing, e.from, e.to), ctx);
    out.reject(refused.length, `${type} ${listed(oldIds)}: its ${listing.field} is deleted in the shards`);
  });
  // The object stays (its reference only links it), as one made through the gateway outlives what it names.
  await addListed(deps, prepared, ids, skipped, (p) => p.links, out, async (listing, _refused, oldIds) =>
    out.imported(`${type} ${listed(oldIds)}: its ${listing.field} is deleted in the shards, so it is not listed under it`),
  );
}

/**
 * The placed objects' edges of one kind (`elsewhere` or `links`), listing by listing: added with
 * `INSERT IGNORE`, the lists that gained one invalidated, and the edges refused (their list owner is
 * deleted in the shards) handed to `refused` with the objects' old IDs.
 */
async function addListed(
  deps: ImportDeps,
  prepared: readonly Prepared[],
  ids: ReadonlyMap<string, bigint>,
  skipped: ReadonlySet<string>,
  edgesOf: (p: Prepared) => Prepared['links'],
  out: Outcome,
  refused: (listing: Listing, edges: readonly NewEdge[], oldIds: string[]) => Promise<void>,
): Promise<void> {
  const { storage, ctx } = deps;
  const wanted = prepared.flatMap((p) => {
    const id = ids.get(p.item.oldId);
    if (id === undefined || skipped.has(p.item.oldId)) return [];
    return (edgesOf(p) ?? []).map((e) => ({ listing: e.listing, edge: { from: e.from, to: id, sequence: p.item.createdAt }, oldId: p.item.oldId }));
  });
  for (const [listing, list] of groupBy(wanted, (w) => w.listing)) {
    const added = await storage.imports.addEdges(listing.table, list.map((w) => w.edge), ctx);
    out.written += added.written;
    const lists = [...new Set(added.inserted.map((e) => listCacheKey(listing.table, e.from)))];
    if (lists.length > 0) await storage.mappings.invalidate(lists, ctx);
    if (added.refused.length === 0) continue;
    const oldOf = new Map(list.map((w) => [w.edge.to, w.oldId]));
    await refused(listing, added.refused, added.refused.map((e) => oldOf.get(e.to)!));
  }
}

/** The first few of a list of old IDs or edges, and how many more: `3, 5, 8, 13, 21 and 4 more`. */
function listed(items: readonly string[]): string {
  return items.length <= 5 ? items.join(', ') : `${items.slice(0, 5).join(', ')} and ${items.length - 5} more`;
}

/**
 * Unique values (usernames) and credentials (emails) claimed for imported objects. A value someone
 * else holds is not taken: the object is imported without it (the value does not lead to it), and
 * the note names the source's row and spelling and the holder (by its old ID when this source made
 * it), so the operator can fix the source.
 */
async function claimNames(deps: ImportDeps, object: ObjectSource, prepared: readonly Prepared[], ids: ReadonlyMap<string, bigint>, out: Outcome): Promise<void> {
  const type = object.type;
  for (const { role, namespace } of [...object.unique, ...object.credentials]) {
    const entries = prepared.flatMap((p) => {
      const key = p.claims.find((c) => c.role === role)?.value;
      const id = ids.get(p.item.oldId);
      return key !== undefined && id !== undefined ? [{ key, id, createdAt: p.item.createdAt, p }] : [];
    });
    if (entries.length === 0) continue;
    const r = await deps.storage.imports.putLookups(namespace, entries, deps.ctx);
    out.written += r.inserted;
    if (r.conflicts.length === 0) continue;
    const byId = new Map(entries.map((e) => [e.id, e]));
    const holders = await deps.storage.imports.oldIdsOf(deps.plan.source, type as ObjectType, r.conflicts.map((c) => c.holder), deps.ctx);
    for (const c of r.conflicts) {
      const e = byId.get(c.wanted)!;
      const holderOld = holders.get(c.holder);
      const holder = holderOld !== undefined ? `${type} ${holderOld} of this source` : `${type} ${c.holder}, not imported from this source`;
      out.imported(`${type} ${e.p.item.oldId}: the ${role} ${JSON.stringify(e.key)} is taken by ${holder}, so it does not lead to this ${type}`);
    }
  }
}

/**
 * Edges of one relation, both directions (one for a relation without inverse); a pair whose other
 * side is deleted is undone as the product's writes undo it. `names`: each edge (`from:to`, new IDs)
 * as the source names it (`3 → 8`).
 */
async function relate(deps: ImportDeps, rel: RelationSource, edges: readonly NewEdge[], names: ReadonlyMap<string, string>, out: Outcome): Promise<void> {
  const { storage, ctx } = deps;
  const forward = rel.relation as MappingTable;
  const named = (list: readonly NewEdge[]): string => listed(list.map((e) => names.get(`${e.from}:${e.to}`)!));
  const fwd = await storage.imports.addEdges(forward, edges, ctx);
  const refusedFrom = new Set(fwd.refused.map((e) => `${e.from}:${e.to}`));
  if (fwd.refused.length > 0) out.reject(fwd.refused.length, `${rel.alias} ${named(fwd.refused)}: the ${rel.from} is deleted in the shards`);
  out.written += fwd.written;
  const lists = fwd.inserted.map((e) => listCacheKey(forward, e.from));
  if (rel.inverse !== null) {
    const reverse = rel.inverse as MappingTable;
    const rev = await storage.imports.addEdges(
      reverse,
      edges.filter((e) => !refusedFrom.has(`${e.from}:${e.to}`)).map((e) => ({ from: e.to, to: e.from, sequence: e.sequence })),
      ctx,
    );
    for (const e of rev.refused) await runStep(storage, { kind: 'syncReverse', table: forward, from: formatId(e.to), to: formatId(e.from) }, ctx);
    if (rev.refused.length > 0) out.reject(rev.refused.length, `${rel.alias} ${named(rev.refused.map((e) => ({ from: e.to, to: e.from, sequence: e.sequence })))}: the ${rel.to} is deleted in the shards`);
    out.written += rev.written;
    lists.push(...rev.inserted.map((e) => listCacheKey(reverse, e.from)));
  }
  const changed = [...new Set(lists)];
  if (changed.length > 0) await storage.mappings.invalidate(changed, ctx);
}

/** Imports one chunk: the rows of source table `table` (`pins`) in `range` (created or changed since the plan's `since`). */
export async function importChunk(deps: ImportDeps, table: string, range: KeyRange): Promise<ChunkOutcome> {
  const out = new Outcome();
  const source = sourceOf(deps.spec, table);
  const rows = await deps.source.rows(deps.spec, deps.plan.schema, source, range, deps.plan.since);
  out.read = rows.length;
  if (rows.length === 0) return out.result();
  switch (source.kind) {
    case 'object': {
      const prepared = await prepareObjects(deps, source, rows, out, null);
      const ids = await placeAll(deps, source.type as ObjectType, prepared, out);
      await claimNames(deps, source, prepared, ids, out);
      break;
    }
    case 'selfRef': {
      // Every object of the source went through its object pass, which made it or reported why not
      // (a row is read again only to be given its own type's reference: the blob names it, and the
      // referenced object lists it).
      const object = objectSourceOf(deps.spec, source.type)!;
      const made = await resolve(deps, source.type, rows.map((r) => oldIdOf(r.id)));
      const prepared = await prepareObjects(deps, object, rows.filter((r) => made.has(oldIdOf(r.id))), out, source);
      const ids = await placeAll(deps, source.type as ObjectType, prepared, out);
      const edges = prepared.flatMap((p) => {
        const id = ids.get(p.item.oldId);
        return id !== undefined && p.self !== undefined ? [{ from: p.self.id, to: id, sequence: p.item.createdAt }] : [];
      });
      const listing = listingFor(source.listing).table;
      const added = await deps.storage.imports.addEdges(listing, edges, deps.ctx);
      out.written += added.written;
      // It stays, naming what it referenced, as one made through the gateway does once that is deleted.
      const byId = new Map(prepared.map((p) => [ids.get(p.item.oldId), p]));
      for (const e of added.refused) {
        const p = byId.get(e.to)!;
        out.imported(source.wording.deleted(p.item.oldId, p.self!.old));
      }
      const lists = [...new Set(added.inserted.map((e) => listCacheKey(listing, e.from)))];
      if (lists.length > 0) await deps.storage.mappings.invalidate(lists, deps.ctx);
      break;
    }
    case 'relation': {
      const [froms, tos] = await Promise.all([resolve(deps, source.from, rows.map((r) => oldIdOf(r.f))), resolve(deps, source.to, rows.map((r) => oldIdOf(r.t)))]);
      const edges: NewEdge[] = [];
      const names = new Map<string, string>();
      for (const row of rows) {
        const f = froms.get(oldIdOf(row.f));
        const t = tos.get(oldIdOf(row.t));
        if (f === undefined || t === undefined) {
          out.reject(1, `${table} ${oldIdOf(row.f)} → ${oldIdOf(row.t)}: the ${f === undefined ? source.from : source.to} was not imported`);
          continue;
        }
        if (f === t && source.noSelfEdge) {
          out.reject(1, source.noSelfEdge(oldIdOf(row.f)));
          continue;
        }
        edges.push({ from: f, to: t, sequence: timeOf(row.created_at, deps.plan.schema.timeUnit) });
        names.set(`${f}:${t}`, `${oldIdOf(row.f)} → ${oldIdOf(row.t)}`);
      }
      await relate(deps, source, edges, names, out);
      break;
    }
  }
  return out.result();
}

// --verify

/** One difference between the source and the shards. */
export interface Difference {
  /** The source table (`users`). */
  readonly table: string;
  readonly oldId: string;
  readonly text: string;
}

/**
 * The counts compared per object: source table and column → the shards' list. From the model: each
 * list a reference writes counts the rows of the referencing type's table by that reference's
 * column (a user's boards: boards by owner; a user's comments: comments by author), and each
 * relation counts the rows of its source table by its side's column (a user's likes: likes by user).
 */
function countSpecs(spec: ImportSpec, schema: SourceSchema, type: string): { list: MappingTable; table: string; column: string }[] {
  const out: { list: MappingTable; table: string; column: string }[] = [];
  for (const l of LISTINGS) {
    const source = objectSourceOf(spec, l.type);
    const cols = source === undefined ? null : (schema.tables[source.alias] ?? null);
    const column = cols === null ? null : roleOf(cols, l.field);
    if (l.to === type && cols && column !== null) out.push({ list: l.table, table: cols.table, column });
  }
  for (const rel of spec.tables) {
    if (rel.kind !== 'relation') continue;
    const cols = schema.tables[rel.alias];
    if (!cols) continue;
    if (type === rel.from) out.push({ list: rel.relation as MappingTable, table: cols.table, column: roleOf(cols, 'from')! });
    if (type === rel.to && rel.inverse !== null) out.push({ list: rel.inverse as MappingTable, table: cols.table, column: roleOf(cols, 'to')! });
  }
  return out;
}

const checksum = (text: string): string => createHash('sha1').update(text).digest('hex').slice(0, 12);

/**
 * Compares one chunk of an object table the spec verifies (`verified`: users, boards, pins) between
 * the source and the shards: that each was imported, its blob (a checksum of the data the import
 * would write, against what the shards hold), every count beside it against the source's rows, and
 * its unique values' lookups (a user's username).
 */
export async function verifyChunk(deps: ImportDeps, table: string, range: KeyRange): Promise<{ checked: number; differences: Difference[] }> {
  const { storage, source, plan, ctx } = deps;
  const object = sourceOf(deps.spec, table);
  if (object.kind !== 'object') throw new Error(`${table} is no object table: --verify compares objects`);
  const rows = await source.rows(deps.spec, plan.schema, object, range, null);
  const out = new Outcome();
  const prepared = await prepareObjects(deps, object, rows, out, null);
  const type = object.type as ObjectType;
  const ids = await resolve(deps, type, rows.map((r) => oldIdOf(r.id)));
  const differences: Difference[] = [];
  const differ = (oldId: string, text: string): void => void differences.push({ table, oldId, text });
  const expected = new Map(prepared.map((p) => [p.item.oldId, p]));
  const stored = await storage.objects.getMany([...ids.values()], ctx);
  const specs = countSpecs(deps.spec, plan.schema, type);
  const oldIds = rows.map((r) => oldIdOf(r.id));
  const sourceCounts = await Promise.all(specs.map((s) => source.countsBy(s.table, s.column, oldIds)));
  const keys = specs.flatMap((s) => [...ids.values()].map((id) => ({ id, kind: s.list })));
  const shardCounts = await storage.mappings.counts(keys, ctx);
  const lookups = await Promise.all(
    object.unique.map(async (u) => ({ role: u.role, found: await storage.lookups.lookup(u.namespace, prepared.flatMap((p) => p.claims.filter((c) => c.role === u.role).map((c) => c.value)), ctx) })),
  );
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
      for (const { role, found } of lookups) {
        const value = want.claims.find((c) => c.role === role)?.value;
        if (value !== undefined && found.get(value) !== id) differ(oldId, `${type} ${oldId} (${id}): ${role} ${JSON.stringify(value)} does not lead to it`);
      }
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

/**
 * The product's deletes a deletes pass carries out, as the gateway's writes do them (jobs/kinds/import.ts
 * builds them from the served writes): named here so that this service needs no product module.
 */
export interface ImportDeletes {
  /** Deletes `object` as `actor` would (its type's `@delete`; the viewer's own account for the viewer's type). */
  deleteObject(actor: bigint | undefined, object: StoredObject, ctx: OpContext): Promise<boolean>;
  /** Undoes the viewer `actor`'s edge of `relation` to `to` (its `@unrelate`: an unlike, an unfollow). */
  unrelate(relation: string, actor: bigint | undefined, to: bigint, ctx: OpContext): Promise<unknown>;
}

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
export async function deleteChunk(deps: ImportDeps & { readonly writes: ImportDeletes }, table: string, range: KeyRange): Promise<ChunkOutcome> {
  const { storage, source, plan, writes } = deps;
  const ctx = deps.ctx ?? {};
  const out = new Outcome();
  const gone = (err: unknown): boolean => isShardqlError(err) && (err.code === 'NOT_FOUND' || err.code === 'UNAUTHENTICATED');
  const spec = sourceOf(deps.spec, table);
  if (spec.kind === 'selfRef') throw new Error(`${table} is a last pass, not a table a deletes pass walks`);
  if (spec.kind === 'object') {
    const type = spec.type as ObjectType;
    const [kept, imported] = await Promise.all([source.keys(plan.schema, spec, range), storage.imports.importedInRange(plan.source, type, range, ctx)]);
    out.read = kept.size;
    const doomed = [...imported].filter(([oldId]) => !kept.has(oldId)).map(([, id]) => id);
    const objects = await storage.objects.getMany(doomed, ctx);
    for (const id of doomed) {
      const o = objects.get(id);
      if (!o || !isActive(o)) continue; // deleted already (by an earlier run, or a parent's cascade)
      try {
        if (await writes.deleteObject(await deleterOf(deps, o, ctx), o, ctx)) out.written++;
      } catch (err) {
        if (!gone(err)) throw err;
      }
    }
    return out.result();
  }
  const forward = spec.relation as MappingTable;
  const [counts, froms] = await Promise.all([source.relationCounts(plan.schema, spec, range), storage.imports.importedInRange(plan.source, spec.from as ObjectType, range, ctx)]);
  out.read = [...counts.values()].reduce((a, b) => a + b, 0);
  const active = await storage.objects.getMany([...froms.values()], ctx);
  const live = [...froms].filter(([, id]) => { const u = active.get(id); return u !== undefined && isActive(u); });
  const held = await storage.mappings.counts(live.map(([, id]) => ({ id, kind: forward })), ctx);
  const differing = live.filter(([oldId, id]) => (held.get(`${id}:${forward}`) ?? 0) !== (counts.get(oldId) ?? 0));
  if (differing.length === 0) return out.result();
  const [targets, lists] = await Promise.all([
    source.relationTargets(plan.schema, spec, differing.map(([oldId]) => oldId)),
    storage.imports.edgesFrom(forward, differing.map(([, id]) => id), ctx),
  ]);
  const mapped = await resolve(deps, spec.to, [...targets.values()].flat());
  for (const [oldId, id] of differing) {
    const want = new Set((targets.get(oldId) ?? []).flatMap((t) => { const n = mapped.get(t); return n === undefined ? [] : [n]; }));
    for (const to of lists.get(id) ?? []) {
      if (want.has(to)) continue;
      try {
        await writes.unrelate(spec.relation, id, to, ctx);
        out.written++;
      } catch (err) {
        if (!gone(err)) throw err;
      }
    }
  }
  return out.result();
}

/**
 * Who deletes an object: its owner (`@ref(owner: true)`: a board's owner, a comment's author), or,
 * once the owner is gone, the owner of the object it is placed with (a comment's pin's pinner); an
 * object of a type with no owner (the viewer's) deletes itself (a user's own account).
 */
async function deleterOf(deps: ImportDeps, o: StoredObject, ctx: OpContext): Promise<bigint | undefined> {
  const object = objectSourceOf(deps.spec, o.type);
  const ownerRef = (type: string): string | undefined => deps.spec.owners.get(type);
  const mine = ownerRef(o.type);
  if (!object || mine === undefined) return o.id;
  const owner = o.refs[mine];
  const found = owner === undefined ? undefined : await deps.storage.objects.get(owner, ctx);
  if ((found && isActive(found)) || object.placeWith === null) return owner;
  const parentId = o.refs[object.placeWith];
  const parent = parentId === undefined ? undefined : await deps.storage.objects.get(parentId, ctx);
  const parentOwner = parent === undefined ? undefined : ownerRef(parent.type);
  return parent && parentOwner !== undefined ? parent.refs[parentOwner] : owner;
}
