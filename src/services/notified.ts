/**
 * Whose cached notification pages an edge change may change. A notification event shows only while
 * its edge stands (the served EventSpec's edge of its kind: Pinterest's like while
 * `pin_liked_by_users(pin → liker)` does, …), and those lists belong to the notified user's things:
 * the `from` object's owner (core/model `@ref(owner: true)`), or the user themself for a list of
 * the viewer's type. A write that adds or removes such an edge without appending an event (an
 * unlike, a deleted repin, an account's cascade, the repair pass finishing one) drops those pages,
 * as an append does. Which tables notify is the event store's (`storage.events.notifies`): none
 * when no product declares events.
 */
import { type MappingTable, mappingSpec } from '../core/mappings.ts';
import { servedModel } from '../core/model/served.ts';
import { notificationsCacheKey } from '../storage/eventStore.ts';
import type { Storage } from '../storage/index.ts';
import type { OpContext } from '../storage/sqlStats.ts';
import { ownerOf } from './writePlans.ts';

/** Whether edges of `table` decide whether a notification shows (Pinterest: a pin's comments do; a user's pins do not). */
export function notifies(storage: Storage, table: MappingTable): boolean {
  return storage.events.notifies(table);
}

/**
 * The notification cache keys of the owners of these lists (`from` of a notifying table): a user's
 * own, or read from the owned object (one cache read, usually L1). Lists of other tables name nobody.
 */
export async function notifiedKeys(storage: Storage, lists: readonly { readonly table: MappingTable; readonly from: bigint }[], ctx: OpContext = {}): Promise<string[]> {
  const model = servedModel();
  const owners = new Set<bigint>();
  const things: bigint[] = [];
  for (const l of lists) {
    if (!storage.events.notifies(l.table)) continue;
    if (mappingSpec(l.table).from === model.viewer) owners.add(l.from);
    else things.push(l.from);
  }
  if (things.length > 0) {
    const objects = await storage.objects.getMany([...new Set(things)], ctx);
    for (const o of objects.values()) {
      const owner = ownerOf(model, o);
      if (owner !== undefined) owners.add(owner);
    }
  }
  return [...owners].map(notificationsCacheKey);
}

/** Drops the notification pages `lists`' changes may have changed (every layer). Throws only if the owned objects cannot be read (a step is then run again). */
export async function dropNotified(storage: Storage, lists: readonly { readonly table: MappingTable; readonly from: bigint }[], ctx: OpContext = {}): Promise<void> {
  const keys = await notifiedKeys(storage, lists, ctx);
  if (keys.length > 0) await storage.events.invalidate(keys, ctx);
}
