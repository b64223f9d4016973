import { formatId, shardOf, typeOf } from '../core/ids.ts';
import { containersOf, listRole, listedEdges, listingOf, ownedLists, type Listing } from '../core/listings.ts';
import { reverseOf, type MappingTable } from '../core/mappings.ts';
import type { Storage } from '../storage/index.ts';
import type { IntentStep } from '../storage/intentLog.ts';
import { listCacheKey, type EdgeChange } from '../storage/mappingStore.ts';
import { isActive, type StoredObject } from '../storage/objectStore.ts';
import type { OpContext } from '../storage/sqlStats.ts';
import { dropNotified, notifies } from './notified.ts';

/**
 * Deletes that cascade, as the declared model says (core/listings.ts): an object is deleted with
 * each object its `@ref(onDelete: DELETE)` names, and leaves the lists those refs write. Deleting
 * an object is a multi-shard write like any other:
 *   1. one local transaction on its shard takes it off the lists that contain it there, soft-deletes
 *      it and records the intent: a step per list elsewhere (a comment's author's), a step per list
 *      that only links it (`UNLINK`: an original's repins), and `purge`;
 *   2. `purge` empties every list the object owns: a relation's other side first (on the other
 *      object's shard), then its own row; a child (a user's board, a board's pin, a pin's comment,
 *      a user's comment) is deleted the same way: those on the owner's shard one page per local
 *      transaction with an intent of its own, those elsewhere (a user's comments on other users'
 *      pins) one object per local transaction on its own shard; each purged in turn.
 * Every step is idempotent and re-reads what is left, so the repair pass (or a retry) finishes a
 * cascade interrupted anywhere. Nothing can be added to the list of a deleted object meanwhile (an
 * add is refused unless the list's owner is active, under a lock: `changeOutcomePart`), and a
 * relation whose other side is deleted is undone by its own intent (`syncReverse`); so once every
 * intent is done, no edge points from or at a deleted object and every count equals its list.
 */

/**
 * What the cascade does inside a write's first transaction: the part of a `LocalWrite`
 * (src/services/writeExecutor.ts) it uses. Named here, with `CascadeWriter`, so that the executor,
 * whose `purge` step runs the cascade, imports the cascade and not the other way round.
 */
export interface CascadeWrite {
  /** The shard of the transaction. */
  readonly shard: number;
  /** The object (any state), locked until commit. */
  lock(id: bigint): Promise<StoredObject | undefined>;
  softDelete(id: bigint): Promise<boolean>;
  edges(changes: readonly EdgeChange[]): Promise<boolean[]>;
}

/**
 * Runs the write that deletes a page of children, and the steps it records: a `WriteExecutor` of
 * the cascade's own, so that every completion it defers is the cascade's to wait for (`settled`).
 */
export interface CascadeWriter {
  run(
    plan: {
      readonly kind: string;
      readonly shard: number;
      readonly args: unknown;
      readonly first: (w: CascadeWrite) => Promise<{ result: boolean; steps: IntentStep[] }>;
      readonly toRecord: (result: boolean) => Record<string, unknown>;
      readonly fromRecord: (record: Record<string, unknown>, ctx: OpContext) => Promise<boolean>;
    },
    idem: undefined,
    ctx: OpContext,
  ): Promise<boolean>;
  settled(): Promise<void>;
}

/**
 * The list edges that hold an object in the lists that contain it (`@ref(onDelete: DELETE,
 * listedIn:)`: a board in its owner's, a pin in its board's and pinner's, a comment in its pin's
 * and its author's), wherever those lists live: on the object's own shard, or (a comment's author)
 * on another.
 */
export function parentEdges(o: Pick<StoredObject, 'type' | 'refs'>): { table: MappingTable; from: bigint }[] {
  return listedEdges(o.type, o.refs, 'DELETE').map((e) => ({ table: e.table, from: e.from }));
}

/**
 * Deletes `o` inside a write's first transaction on its shard (step 1 above). Returns whether it
 * was active and the steps that finish the cascade, to be recorded as the write's intent.
 */
export async function deleteInTx(w: CascadeWrite, o: StoredObject): Promise<{ deleted: boolean; steps: IntentStep[] }> {
  const containers = listedEdges(o.type, o.refs, 'DELETE');
  // Lists on this shard lose it in this transaction; a list elsewhere (a comment's author's) by a step.
  const here = containers.filter((p) => shardOf(p.from) === w.shard);
  await w.edges(here.map((p): EdgeChange => ({ op: 'remove', table: p.table, from: p.from, to: o.id })));
  const deleted = await w.softDelete(o.id);
  const steps: IntentStep[] = containers.filter((p) => shardOf(p.from) !== w.shard).map((p) => listingStep(p.listing, p.from, o.id));
  // A list that only links it (an original's repins) is always left by its step: the step also
  // drops what counted the edge, and decides from the object's state under its lock.
  steps.push(...listedEdges(o.type, o.refs, 'UNLINK').map((p) => listingStep(p.listing, p.from, o.id)));
  if (ownedLists(o.type).length > 0) steps.push({ kind: 'purge', id: formatId(o.id) });
  return { deleted, steps };
}

/**
 * The step that makes `listing.table(from → id)` agree with the object `id` (present iff it is
 * active and names `from`): the executor's convergent `syncListing`, which reads from the model
 * what a refused add means (`DELETE`: the object goes with `from`; `UNLINK`: it stays).
 * `created`: the step of the write that created the object (a link refused undoes that write).
 */
export function listingStep(listing: Pick<Listing, 'table'>, from: bigint, id: bigint, created = false): IntentStep {
  return { kind: 'syncListing', table: listing.table, from: formatId(from), object: formatId(id), ...(created ? { created } : {}) };
}

/** Edges read per list and round trip while purging. */
const EDGE_PAGE = 100;

/**
 * Step 2: empties every list of the deleted object `id`. Each round re-reads what is left of all
 * its lists from the primary (one round trip), so a purge that stopped anywhere carries on.
 * `newWriter` makes the executor each page of children is deleted with.
 */
export async function purge(storage: Storage, id: bigint, newWriter: () => CascadeWriter, ctx: OpContext = {}): Promise<void> {
  const type = typeOf(id);
  if (type === undefined) throw new Error(`cannot purge ${id}: not an object ID`);
  const lists = ownedLists(type);
  for (;;) {
    const left = await storage.mappings.firstEdges(id, lists, EDGE_PAGE, ctx);
    if (left.size === 0) return;
    for (const [table, targets] of left) {
      const role = listRole(table);
      if (role === 'relation') {
        // The other side first: while this side stands, a rerun finds the pair again.
        const reverse = reverseOf(table)!;
        const changed = await storage.mappings.apply(
          targets.map((to): EdgeChange => ({ op: 'remove', table: reverse, from: to, to: id })),
          ctx,
        );
        // A rerun finds a removal done but maybe not yet dropped from the caches (its writer died
        // between the commit and that): drop those lists here, as `apply` did for what it changed.
        await storage.mappings.invalidate(
          targets.filter((_, i) => !changed[i]).map((to) => listCacheKey(reverse, to)),
          ctx,
        );
        // A deleted account's likes and follows no longer count in their owners' notifications.
        await dropNotified(storage, targets.map((to) => ({ table: reverse, from: to })), ctx);
      } else if (role === 'child') {
        // Children on this shard (a user's boards and pins) go in one local transaction; those
        // elsewhere (a user's comments, on their pins' shards) one at a time on their own shard.
        const local = targets.filter((to) => shardOf(to) === shardOf(id));
        const remote = targets.filter((to) => shardOf(to) !== shardOf(id));
        if (local.length > 0) await deleteChildren(storage, newWriter(), table, id, local, ctx);
        for (const to of remote) await deleteObject(storage, to, newWriter(), ctx);
        await dropOtherContainers(storage, table, targets, ctx);
      }
      // A child deleted above already left this list; what remains (a child already gone, or one
      // that names another parent) is only unlinked.
      await storage.mappings.apply(
        targets.map((to): EdgeChange => ({ op: 'remove', table, from: id, to })),
        ctx,
      );
    }
  }
}

/**
 * Children deleted through `table` also left their other containers (a user's comment, its pin's
 * comments): the notification pages that counted them there (the pin owner's) are dropped.
 */
async function dropOtherContainers(storage: Storage, table: MappingTable, children: readonly bigint[], ctx: OpContext): Promise<void> {
  const childType = listingOf(table)?.type;
  const others = childType === undefined ? [] : containersOf(childType).filter((l) => l.table !== table && notifies(storage, l.table));
  if (others.length === 0) return; // nothing else counted them (a board's pins in their pinner's list)
  const objects = await storage.objects.getMany(children, ctx);
  const lists = [...objects.values()].flatMap((o) => others.flatMap((l) => (o.refs[l.field] !== undefined ? [{ table: l.table, from: o.refs[l.field]! }] : [])));
  await dropNotified(storage, lists, ctx);
}

/** Deletes the children of `parent` listed in `table` in one local transaction, then finishes their cascades. */
async function deleteChildren(storage: Storage, exec: CascadeWriter, table: MappingTable, parent: bigint, children: readonly bigint[], ctx: OpContext): Promise<void> {
  await exec.run(
    {
      kind: `cascade:${table}`,
      shard: shardOf(parent),
      args: { parent: formatId(parent) },
      first: async (w) => {
        const steps: IntentStep[] = [];
        for (const id of children) {
          const child = await w.lock(id);
          if (!child || !isActive(child)) continue;
          if (!parentEdges(child).some((p) => p.table === table && p.from === parent)) continue;
          steps.push(...(await deleteInTx(w, child)).steps);
        }
        return { result: true, steps };
      },
      toRecord: () => ({}),
      fromRecord: async () => true,
    },
    undefined,
    ctx,
  );
  // A child repin's intent is completed after its run (deferred, as a writer's is): this executor
  // is the cascade's own, so nothing else would wait for it; the cascade step does.
  await exec.settled();
}

/**
 * Deletes one object as its parent's cascade would (a local transaction, then its own cascade):
 * an orphan reconcile found, a repin whose original was deleted before the repin took effect.
 */
export async function deleteObject(storage: Storage, id: bigint, exec: CascadeWriter, ctx: OpContext): Promise<void> {
  await exec.run(
    {
      kind: 'cascade:delete',
      shard: shardOf(id),
      args: { id: formatId(id) },
      first: async (w) => {
        const o = await w.lock(id);
        return o && isActive(o) ? { result: true, steps: (await deleteInTx(w, o)).steps } : { result: false, steps: [] };
      },
      toRecord: () => ({}),
      fromRecord: async () => true,
    },
    undefined,
    ctx,
  );
  await exec.settled(); // a repin's intent completion is deferred; this executor is ours alone
}
