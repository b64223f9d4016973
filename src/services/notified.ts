/**
 * Whose cached notification pages an edge change may change. A notification event shows only while
 * its edge stands (`STORED_KINDS[kind].edge`: a like while `pin_liked_by_users(pin → liker)` does,
 * …), and those lists belong to the notified user's things: a pin's pinner, a board's owner, the
 * followed user. A write that adds or removes such an edge without appending an event (an unlike, a
 * deleted repin, an account's cascade, the repair pass finishing one) drops those pages, as an
 * append does.
 */
import { STORED_KINDS } from '../core/events.ts';
import { type MappingTable, mappingSpec } from '../core/mappings.ts';
import { notificationsCacheKey } from '../storage/eventStore.ts';
import type { Storage } from '../storage/index.ts';
import type { OpContext } from '../storage/sqlStats.ts';

/** Lists whose edges decide whether a notification shows. */
const NOTIFYING: ReadonlySet<MappingTable> = new Set(
  Object.values(STORED_KINDS).flatMap((k) => (k.side === 'notifications' && k.edge ? [k.edge.table as MappingTable] : [])),
);

/** Whether edges of `table` decide whether a notification shows (a pin's comments do; a user's pins do not). */
export function notifies(table: MappingTable): boolean {
  return NOTIFYING.has(table);
}

/**
 * The notification cache keys of the owners of these lists (`from` of a notifying table): a user's
 * own, or read from the pin or board (one cache read, usually L1). Lists of other tables name nobody.
 */
export async function notifiedKeys(storage: Storage, lists: readonly { readonly table: MappingTable; readonly from: bigint }[], ctx: OpContext = {}): Promise<string[]> {
  const owners = new Set<bigint>();
  const things: bigint[] = [];
  for (const l of lists) {
    if (!NOTIFYING.has(l.table)) continue;
    if (mappingSpec(l.table).from === 'user') owners.add(l.from);
    else things.push(l.from);
  }
  if (things.length > 0) {
    const objects = await storage.objects.getMany([...new Set(things)], ctx);
    for (const o of objects.values()) {
      const owner = o.type === 'pin' ? o.refs.pinner : o.refs.owner;
      if (owner !== undefined) owners.add(owner);
    }
  }
  return [...owners].map(notificationsCacheKey);
}

/** Drops the notification pages `lists`' changes may have changed (every layer). Throws only if the pins or boards cannot be read (a step is then run again). */
export async function dropNotified(storage: Storage, lists: readonly { readonly table: MappingTable; readonly from: bigint }[], ctx: OpContext = {}): Promise<void> {
  const keys = await notifiedKeys(storage, lists, ctx);
  if (keys.length > 0) await storage.events.invalidate(keys, ctx);
}
