import { formatId, shardOf } from '../core/ids.ts';
import { groupBy } from '../core/groupBy.ts';
import { CONTAINMENT_TABLES, LISTINGS, listedEdges } from '../core/listings.ts';
import { AUTHORITATIVE_TABLES, MAPPING_TABLES, reverseOf, type MappingTable } from '../core/mappings.ts';
import type { Topology } from '../core/topology.ts';
import type { Storage } from '../storage/index.ts';
import type { IntentStep } from '../storage/intentLog.ts';
import { listCacheKey } from '../storage/mappingStore.ts';
import { ShardScan, type ObjectState } from '../storage/shardScan.ts';
import type { OpContext } from '../storage/sqlStats.ts';
import type { BackgroundJobs } from './backgroundJobs.ts';
import { deleteObject, listingStep, parentEdges, purge } from './cascade.ts';
import { WriteExecutor, completeIntent, finishSteps, runStep } from './writeExecutor.ts';

export interface RepairReport {
  readonly completed: number;
  readonly failed: number;
}

/** Every shard in a range of the topology: where intents may be. */
export function allShards(topology: Topology): number[] {
  return [...topology.shardsByHost().values()].flat().sort((a, b) => a - b);
}

/**
 * The repair pass: completes intents older than `minAgeMs` (writes interrupted after their first
 * transaction). Steps are idempotent, so an intent whose writer is merely slow is harmless to
 * finish twice. Runs in the gateway every few seconds and as `shardql repair`.
 */
export async function repairIntents(
  storage: Storage,
  topology: Topology,
  opts: { minAgeMs: number; limit?: number; log?: (line: string) => void; jobs?: BackgroundJobs | undefined },
  ctx: OpContext = {},
): Promise<RepairReport> {
  let completed = 0;
  let failed = 0;
  const shards = allShards(topology);
  for (let i = 0; i < shards.length; i += 512) {
    const pending = await storage.intents.pending(shards.slice(i, i + 512), opts.minAgeMs, opts.limit ?? 1000, ctx);
    for (const intent of pending) {
      try {
        await storage.intents.noteAttempt(intent.shard, intent.id, ctx);
        await finishSteps(storage, intent.steps, ctx, { jobs: opts.jobs });
        await storage.intents.complete(intent.shard, intent.id, ctx);
        completed++;
        opts.log?.(`completed ${intent.kind} intent ${intent.id} on shard ${intent.shard} (${intent.steps.length} steps, attempt ${intent.attempts + 1})`);
      } catch (err) {
        failed++;
        opts.log?.(`could not complete ${intent.kind} intent ${intent.id} on shard ${intent.shard}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
  return { completed, failed };
}

/** What reconcile found and fixed, by kind. */
export type FixKind =
  /** An intent older than the horizon whose writer is gone: its steps were run to the end. */
  | 'intent'
  /** A deleted (or missing) object whose lists were not empty: its cascade was run to the end. */
  | 'cascade'
  /** An active object a `@ref(onDelete: DELETE)` of which names a deleted or missing object: deleted with its cascade. */
  | 'orphan'
  /** An active object missing from a list its `@ref(onDelete: DELETE, listedIn:)` names (a pin from its board's, a comment from its author's): put back. */
  | 'unlisted'
  /** A list edge to an object that is deleted, missing, or names another parent: removed. */
  | 'dangling'
  /** A relation whose two sides disagree: the reverse made to mirror the side written first. */
  | 'reverse'
  /** An edge of a list an `@ref(onDelete: UNLINK, listedIn:)` writes (an original's repins) that disagrees with the object (or with the one it names being deleted). */
  | 'repin'
  /** A count that differs from its rows: set to the rows. */
  | 'count';

export const FIX_KINDS: readonly FixKind[] = ['intent', 'cascade', 'orphan', 'unlisted', 'dangling', 'reverse', 'repin', 'count'];

export interface Fix {
  readonly kind: FixKind;
  readonly shard: number;
  readonly text: string;
}

export interface ReconcileReport {
  readonly fixes: Fix[];
  /** Fixes per kind (every kind present, 0 when none). */
  readonly byKind: Record<FixKind, number>;
}

/** The reverse side of each two-sided relation (a mirror of the side written first) and its truth. */
/** Each mirror table → the authoritative table it mirrors (a relation with one side only has none). */
const MIRRORS: ReadonlyMap<MappingTable, MappingTable> = new Map(
  AUTHORITATIVE_TABLES.flatMap((t) => {
    const r = reverseOf(t);
    return r === undefined ? [] : [[r, t] as const];
  }),
);

/**
 * Checks a range of shards against every rule the writes keep, and repairs what differs, printing
 * each fix through `log`:
 *   - intents older than `intentAgeMs` (their writer is gone): completed;
 *   - a deleted or missing object that still has edges in its lists: its cascade run to the end;
 *   - an active object whose `@ref(onDelete: DELETE)` names a gone object (a pin's board, a
 *     comment's author): deleted as that object's delete would; one missing from a list such a ref
 *     names (`listedIn`, on this shard or another: a comment in its author's): put back;
 *   - an edge to a deleted or missing object, or a containment edge to a child that names another
 *     parent: removed (a relation through its own sync step, so both sides go);
 *   - both sides of every relation: the reverse mirrors the side written first (by the same
 *     convergent step the writes use, so a write racing with reconcile is not undone);
 *   - edges of lists an `@ref(onDelete: UNLINK)` writes (an original's repins): present exactly
 *     for active objects naming an active object;
 *   - every count equals its rows: each list on these shards, and each list a fix wrote elsewhere.
 * Every rule reads the declared model (core/listings.ts), never a table's name. Reads the truth
 * from the primaries (never a cache), shard by shard; fixes go through the same idempotent steps
 * as writes, and invalidate what they change.
 */
export async function reconcile(
  storage: Storage,
  shards: readonly number[],
  opts: { log?: (line: string) => void; intentAgeMs?: number; jobs?: BackgroundJobs | undefined } = {},
  ctx: OpContext = {},
): Promise<ReconcileReport> {
  const fixes: Fix[] = [];
  const note = (kind: FixKind, shard: number, text: string): void => {
    fixes.push({ kind, shard, text });
    opts.log?.(`${kind}: ${text} (shard ${shard})`);
  };
  const scan = new ShardScan(storage.router);
  /** Sets a list's count to its rows; a count that differed is a fix. */
  const recount = async (table: MappingTable, id: bigint): Promise<void> => {
    const m = await scan.recount(shardOf(id), table, id, ctx);
    if (m.actual === m.counted) return;
    await storage.mappings.invalidate([listCacheKey(table, id)], ctx);
    note('count', shardOf(id), `set ${table} count of ${id} to ${m.actual} (was ${m.counted})`);
  };

  for (const shard of shards) {
    // A step writes with the writes' own count arithmetic (+1 for a row it adds), right only on a
    // count that was right. A list it writes on another shard is recounted at once: that shard's
    // count pass may be outside `shards`, or over already (this shard's comes after its fixes).
    const fix = async (step: IntentStep): Promise<void> => {
      await runStep(storage, step, ctx);
      for (const l of listsWrittenBy(step)) if (shardOf(l.from) !== shard) await recount(l.table, l.from);
    };

    // Writes whose writer is gone first: finishing them settles much of what follows.
    for (const intent of await storage.intents.pending([shard], opts.intentAgeMs ?? 60_000, 10_000, ctx)) {
      if (await completeIntent(storage, shard, intent.id, ctx, { jobs: opts.jobs })) note('intent', shard, `completed ${intent.kind} intent ${intent.id} (${intent.steps.length} steps)`);
    }

    // Deleted owners with non-empty lists; live children of dead parents.
    let objects = await scan.objectsOn(shard, ctx);
    const tables = new Map<MappingTable, Edge[]>();
    for (const t of MAPPING_TABLES) tables.set(t, await scan.edges(shard, t, ctx));
    const owners = new Set([...tables.values()].flatMap((es) => es.map((e) => e.from)));
    for (const id of owners) {
      const o = objects.get(id);
      if (o?.active) continue;
      await purge(storage, id, () => new WriteExecutor(storage), ctx);
      note('cascade', shard, `${o ? 'deleted' : 'missing'} ${o?.type ?? 'object'} ${id} still had list edges: cascade finished`);
    }
    const parents = await scan.objectStates(
      [...objects.values()].flatMap((o) => (o.active ? parentRefs(o) : [])),
      ctx,
    );
    for (const [id, o] of objects) {
      if (!o.active) continue;
      const gone = parentRefs(o).filter((p) => !parents.get(p)?.active);
      if (gone.length === 0) continue;
      await deleteObject(storage, id, new WriteExecutor(storage), ctx);
      note('orphan', shard, `${o.type} ${id} belongs to ${gone.join(', ')}, deleted or missing: deleted with its cascade`);
    }

    // The edges as they are now, against the objects as they are now.
    objects = await scan.objectsOn(shard, ctx);
    for (const t of MAPPING_TABLES) tables.set(t, await scan.edges(shard, t, ctx));
    const elsewhere = await scan.objectStates(
      [...tables.values()].flatMap((es) => es.map((e) => e.to)).filter((id) => shardOf(id) !== shard),
      ctx,
    );
    const stateOf = (id: bigint): ObjectState | undefined => objects.get(id) ?? elsewhere.get(id);
    const alive = (id: bigint): boolean => stateOf(id)?.active === true;

    // Active objects missing from the lists that contain them: here, or (a comment's author's) elsewhere.
    const listed = new Set(CONTAINMENT_TABLES.flatMap((t) => tables.get(t)!.map((e) => `${t}:${e.from}:${e.to}`)));
    const away: { table: MappingTable; from: bigint; to: bigint; o: ObjectState; step: IntentStep }[] = [];
    for (const [id, o] of objects) {
      if (!o.active) continue;
      for (const p of listedEdges(o.type, o.refs, 'DELETE')) {
        if (shardOf(p.from) !== shard) {
          away.push({ table: p.table, from: p.from, to: id, o, step: listingStep(p.listing, p.from, id) });
          continue;
        }
        if (listed.has(`${p.table}:${p.from}:${id}`)) continue;
        await storage.mappings.apply([{ op: 'add', table: p.table, from: p.from, to: id, sequence: o.createdAt }], ctx);
        note('unlisted', shard, `${o.type} ${id} was missing from ${p.table} of ${p.from}: put back`);
      }
    }
    for (const [table, list] of groupBy(away, (a) => a.table)) {
      const have = await storage.mappings.existing(table, list, ctx);
      for (const a of list) {
        if (have.has(`${a.from}:${a.to}`)) continue;
        // The convergent step the writes use: it adds under the object's lock, so a delete racing
        // with reconcile is not undone (and an owner deleted meanwhile takes the object with it).
        await fix(a.step);
        note('unlisted', shard, `${a.o.type} ${a.to} was missing from ${table} of ${a.from}: put back`);
      }
    }
    // Containment edges to gone children, or to children that name another parent.
    for (const t of CONTAINMENT_TABLES) {
      for (const e of tables.get(t)!) {
        const child = stateOf(e.to);
        if (child?.active && parentEdges(child).some((p) => p.table === t && p.from === e.from)) continue;
        await storage.mappings.apply([{ op: 'remove', table: t, from: e.from, to: e.to }], ctx);
        note('dangling', shard, `removed ${t}(${e.from} → ${e.to}): the ${child ? (child.active ? 'object names another parent' : 'object is deleted') : 'object is missing'}`);
      }
    }

    // Relations: both sides, and neither pointing at a gone object.
    for (const forward of AUTHORITATIVE_TABLES) {
      const reverse = reverseOf(forward);
      const fwd = tables.get(forward)!;
      if (reverse === undefined) {
        // One side only (a reading list): its edges to deleted objects, which no cascade can find.
        for (const e of fwd.filter((x) => !alive(x.to))) {
          await storage.mappings.apply([{ op: 'remove', table: forward, from: e.from, to: e.to }], ctx);
          note('dangling', shard, `removed ${forward}(${e.from} → ${e.to}): the object is ${stateOf(e.to) ? 'deleted' : 'missing'}`);
        }
        continue;
      }
      const mirrored = await storage.mappings.sequences(reverse, fwd.map((e) => ({ from: e.to, to: e.from })), ctx);
      for (const e of fwd) {
        const ok = alive(e.to);
        const seq = mirrored.get(`${e.to}:${e.from}`);
        if (ok && seq === e.sequence) continue;
        await fix({ kind: 'syncReverse', table: forward, from: formatId(e.from), to: formatId(e.to) });
        const what = !ok
          ? `removed ${forward}(${e.from} → ${e.to}) and its reverse: the object is ${stateOf(e.to) ? 'deleted' : 'missing'}`
          : seq === undefined
            ? `added ${reverse}(${e.to} → ${e.from}) mirroring ${forward}`
            : `set the sequence of ${reverse}(${e.to} → ${e.from}) to ${forward}'s (${e.sequence}, was ${seq})`;
        note(ok ? 'reverse' : 'dangling', shard, what);
      }
    }
    for (const [reverse, forward] of MIRRORS) {
      const rev = tables.get(reverse)!;
      const backed = await storage.mappings.existing(forward, rev.map((e) => ({ from: e.to, to: e.from })), ctx);
      for (const e of rev) {
        const ok = alive(e.to);
        if (ok && backed.has(`${e.to}:${e.from}`)) continue;
        await fix({ kind: 'syncReverse', table: forward, from: formatId(e.to), to: formatId(e.from) });
        note(ok ? 'reverse' : 'dangling', shard, ok ? `removed ${reverse}(${e.from} → ${e.to}): no ${forward} edge backs it` : `removed ${reverse}(${e.from} → ${e.to}): the object is ${stateOf(e.to) ? 'deleted' : 'missing'}`);
      }
    }

    // Lists that only link (an original's repins): an edge iff the object is active, names the
    // list's owner, and that owner is active.
    for (const l of LISTINGS.filter((x) => x.onDelete === 'UNLINK')) {
      for (const e of tables.get(l.table)!) {
        const r = stateOf(e.to);
        if (r?.active && r.type === l.type && r.refs[l.field] === e.from && alive(e.from)) continue;
        await fix(listingStep(l, e.from, e.to));
        note('repin', shard, `removed ${l.table}(${e.from} → ${e.to}): the ${l.type} or its ${l.field} is gone`);
      }
      const linked = [...objects].filter(([, o]) => o.type === l.type && o.active && o.refs[l.field] !== undefined);
      const targets = await scan.objectStates(
        linked.map(([, o]) => o.refs[l.field]!),
        ctx,
      );
      const want = linked.filter(([, o]) => targets.get(o.refs[l.field]!)?.active).map(([id, o]) => ({ from: o.refs[l.field]!, to: id }));
      const have = await storage.mappings.existing(l.table, want, ctx);
      for (const e of want) {
        if (have.has(`${e.from}:${e.to}`)) continue;
        await fix(listingStep(l, e.from, e.to));
        note('repin', shard, `added ${l.table}(${e.from} → ${e.to}) for the ${l.type}`);
      }
    }

    // Counts equal to rows, for every list on this shard.
    for (const table of MAPPING_TABLES) {
      for (const m of await scan.countMismatches(shard, table, ctx)) await recount(table, m.id);
    }
  }
  const byKind = Object.fromEntries(FIX_KINDS.map((k) => [k, fixes.filter((f) => f.kind === k).length])) as Record<FixKind, number>;
  return { fixes, byKind };
}

type Edge = { from: bigint; to: bigint; sequence: number };

/** The lists a relation's or a listing's step writes: `syncReverse` both sides, `syncListing` the listing's. */
function listsWrittenBy(step: IntentStep): { table: MappingTable; from: bigint }[] {
  if (step.kind === 'syncReverse') {
    const table = step.table as MappingTable;
    return [{ table, from: BigInt(step.from) }, { table: reverseOf(table)!, from: BigInt(step.to) }];
  }
  return step.kind === 'syncListing' ? [{ table: step.table as MappingTable, from: BigInt(step.from) }] : [];
}

/** The objects an object's `@ref(onDelete: DELETE)` refs name (board → owner; pin → board, pinner; comment → pin, author). */
function parentRefs(o: ObjectState): bigint[] {
  return parentEdges(o).map((p) => p.from);
}
