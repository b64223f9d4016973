import { formatId, shardOf, typeOf } from '../core/ids.ts';
import { MAPPINGS, MAPPING_TABLES, reverseOf, type MappingTable } from '../core/mappings.ts';
import type { ObjectType } from '../core/objectTypes.ts';
import type { Storage } from '../storage/index.ts';
import type { IntentStep } from '../storage/intentLog.ts';
import { listCacheKey, type EdgeChange } from '../storage/mappingStore.ts';
import { isActive, type StoredObject } from '../storage/objectStore.ts';
import type { OpContext } from '../storage/sqlStats.ts';
import { dropNotified } from './notified.ts';

/**
 * Deletes that cascade. Deleting an object is a multi-shard write like any other:
 *   1. one local transaction on its shard takes it off its parents' lists (all on that shard),
 *      soft-deletes it and records the intent `purge` (with `syncRepin` for a repin);
 *   2. `purge` empties every list the object owns: a relation's other side first (on the other
 *      object's shard), then its own row; a child (a user's board, a board's pin, a pin's comment)
 *      is deleted the same way, one page of children per local transaction with an intent of its
 *      own, and purged in turn; what the object wrote elsewhere (a user's comments, each on its
 *      pin's shard) is deleted the same way, one object per local transaction on its own shard.
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

/** How an edge of a deleted object's list is undone. */
type Role = 'child' | 'authored' | 'relation' | 'link';

/** Lists whose `to` belongs to their `from`: deleting the owner deletes them. */
const CHILD_LISTS: ReadonlySet<MappingTable> = new Set<MappingTable>(['user_has_boards', 'user_has_pins', 'board_has_pins', 'pin_has_comments']);

/** Lists whose `to` the `from` made but which live elsewhere (a user's comments, on their pins' shards): deleting the owner deletes them, each on its own shard. */
const AUTHORED_LISTS: ReadonlySet<MappingTable> = new Set<MappingTable>(['user_wrote_comments']);

function roleOf(table: MappingTable): Role {
  if (CHILD_LISTS.has(table)) return 'child';
  if (AUTHORED_LISTS.has(table)) return 'authored';
  return reverseOf(table) ? 'relation' : 'link';
}

/** The lists an object of `type` owns, children first (a user's boards before their pins). */
const OWNED = new Map<ObjectType, MappingTable[]>();
function ownedLists(type: ObjectType): MappingTable[] {
  let lists = OWNED.get(type);
  if (!lists) {
    lists = MAPPING_TABLES.filter((t) => MAPPINGS[t].from === type).sort((a, b) => Number(CHILD_LISTS.has(b)) - Number(CHILD_LISTS.has(a)));
    OWNED.set(type, lists);
  }
  return lists;
}

/** The list edges that hold an object in its parents' lists (every one on the object's own shard). */
export function parentEdges(o: Pick<StoredObject, 'type' | 'refs'>): { table: MappingTable; from: bigint }[] {
  const r = o.refs;
  const out: { table: MappingTable; from: bigint }[] = [];
  if (o.type === 'board' && r.owner !== undefined) out.push({ table: 'user_has_boards', from: r.owner });
  if (o.type === 'pin' && r.board !== undefined) out.push({ table: 'board_has_pins', from: r.board });
  if (o.type === 'pin' && r.pinner !== undefined) out.push({ table: 'user_has_pins', from: r.pinner });
  if (o.type === 'comment' && r.pin !== undefined) out.push({ table: 'pin_has_comments', from: r.pin });
  return out;
}

/**
 * Deletes `o` inside a write's first transaction on its shard (step 1 above). Returns whether it
 * was active and the steps that finish the cascade, to be recorded as the write's intent.
 */
export async function deleteInTx(w: CascadeWrite, o: StoredObject): Promise<{ deleted: boolean; steps: IntentStep[] }> {
  await w.edges(parentEdges(o).map((p): EdgeChange => ({ op: 'remove', table: p.table, from: p.from, to: o.id })));
  const deleted = await w.softDelete(o.id);
  const steps: IntentStep[] = [];
  // A comment leaves its author's list: here if the author lives on this shard, else by a step.
  const author = o.type === 'comment' ? o.refs.author : undefined;
  if (author !== undefined && shardOf(author) === w.shard) await w.edges([{ op: 'remove', table: 'user_wrote_comments', from: author, to: o.id }]);
  else if (author !== undefined) steps.push({ kind: 'syncAuthored', author: formatId(author), comment: formatId(o.id) });
  if (o.type === 'pin' && o.refs.via !== undefined) steps.push({ kind: 'syncRepin', original: formatId(o.refs.via), pin: formatId(o.id) });
  if (ownedLists(o.type).length > 0) steps.push({ kind: 'purge', id: formatId(o.id) });
  return { deleted, steps };
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
      const role = roleOf(table);
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
        await deleteChildren(storage, newWriter(), table, id, targets, ctx);
      } else if (role === 'authored') {
        await deleteAuthored(storage, newWriter, targets, ctx);
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
 * Deletes what a deleted user wrote (comments, each on its pin's shard), as deleting each one would,
 * and drops the notification pages that counted them (their pins' owners').
 */
async function deleteAuthored(storage: Storage, newWriter: () => CascadeWriter, ids: readonly bigint[], ctx: OpContext): Promise<void> {
  for (const id of ids) await deleteObject(storage, id, newWriter(), ctx);
  const objects = await storage.objects.getMany(ids, ctx);
  const pins = [...objects.values()].flatMap((o) => (o.refs.pin !== undefined ? [o.refs.pin] : []));
  await dropNotified(storage, pins.map((from) => ({ table: 'pin_has_comments' as const, from })), ctx);
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
