/**
 * Activity and notifications of the served product's EventSpec (core/events.ts), for the product's
 * own resolvers to serve: a user's events, their newest per kind, their grouped notifications,
 * and the fields every event and group has. The product passes its spec and adds the fields that
 * name its things (which object an event is about).
 */
import { ShardqlError } from '../core/errors.ts';
import { storedKindSpec, storedKindsOf, type ActivityKind, type EventSpec, type SequenceEvent, type StoredKind } from '../core/events.ts';
import { checkPageSize, checkTimeRange } from '../core/validate.ts';
import type { NotificationGroup } from '../storage/eventStore.ts';
import type { StoredObject } from '../storage/objectStore.ts';
import { forwardPageInfo } from './connections.ts';
import type { GatewayContext } from './context.ts';

type Args = Record<string, unknown>;

/** An event with the objects it shows, each active (an event missing one is not shown). */
export interface ShownEvent {
  readonly event: SequenceEvent;
  readonly actor: StoredObject;
  readonly object: StoredObject;
  readonly detail: StoredObject | null;
}

/** A notification group with its target (one of the user's things, or the user themself) and its actors still there. */
export interface ShownGroup {
  readonly group: NotificationGroup;
  readonly target: StoredObject;
  readonly actors: StoredObject[];
}

/** Most recent distinct actors a notification shows. */
export const GROUP_ACTORS = 3;

export function kindsArg(spec: EventSpec, value: unknown): ActivityKind[] | null {
  if (value === null || value === undefined) return null;
  const list = value as unknown[];
  for (const k of list) {
    if (!(spec.activityKinds as readonly unknown[]).includes(k)) throw new ShardqlError('INVALID_ARGUMENT', `Expected kinds among ${spec.activityKinds.join(', ')}`, { argument: 'kinds' });
  }
  return list as ActivityKind[];
}

function range(a: Args): { since: number | null; until: number | null } {
  return checkTimeRange(a.since as string | null | undefined, a.until as string | null | undefined);
}

/** Active objects by ID, from the request's L1 view when there, else one batch through the loader. */
async function objectsOf(ctx: GatewayContext, ids: Iterable<bigint>): Promise<Map<bigint, StoredObject>> {
  const out = new Map<bigint, StoredObject>();
  const missing: bigint[] = [];
  for (const id of new Set(ids)) {
    const known = ctx.loaders.peek.object(id);
    if (known === undefined) missing.push(id);
    else if (known) out.set(id, known);
  }
  if (missing.length > 0) {
    const loaded = await ctx.loaders.objects.loadMany(missing);
    loaded.forEach((o, i) => {
      if (o && !(o instanceof Error)) out.set(missing[i]!, o);
    });
  }
  return out;
}

/** Events whose actor, object and detail are all still there (a deleted comment, pin or account hides its events). */
async function shown(ctx: GatewayContext, events: readonly SequenceEvent[]): Promise<(ShownEvent | null)[]> {
  const objects = await objectsOf(
    ctx,
    events.flatMap((e) => [e.actor, e.object, ...(e.detail !== null ? [e.detail] : [])]),
  );
  return events.map((event) => {
    const actor = objects.get(event.actor);
    const object = objects.get(event.object);
    const detail = event.detail === null ? null : objects.get(event.detail);
    return actor && object && detail !== undefined ? { event, actor, object, detail } : null;
  });
}

export async function activityConnection(ctx: GatewayContext, spec: EventSpec, user: bigint, a: Args) {
  const first = checkPageSize(a.first as number | null | undefined);
  const page = await ctx.loaders.events.page({
    user,
    kinds: storedKindsOf(spec, 'activity', kindsArg(spec, a.kinds)),
    first,
    after: (a.after as string | null | undefined) ?? null,
    ...range(a),
  });
  // A hidden event still advances the cursor, so pages never repeat (as lists skip deleted objects).
  const nodes = await shown(
    ctx,
    page.edges.map((e) => e.event),
  );
  const edges = page.edges.flatMap((e, i) => (nodes[i] ? [{ cursor: e.cursor, node: nodes[i] }] : []));
  return { edges, pageInfo: forwardPageInfo(page, page.edges[0]?.cursor ?? null) };
}

/**
 * How many reads `latestActivity` makes at most: the first of `perKind` events a kind, then, for a
 * kind whose events were hidden (a deleted comment, pin or board: its store cannot see that), reads
 * on past the last one, twice as many each time. A column is full unless more than 15 × perKind of
 * its newest events are hidden.
 */
export const LATEST_ACTIVITY_READS = 4;

export async function activityColumns(ctx: GatewayContext, spec: EventSpec, user: bigint, a: Args) {
  const perKind = a.perKind as number | null | undefined;
  const n = checkPageSize(perKind, 5, 'perKind');
  const kinds = storedKindsOf(spec, 'activity', kindsArg(spec, a.kinds));
  const columns = new Map<StoredKind, ShownEvent[]>(kinds.map((k) => [k, []]));
  const before = new Map<StoredKind, SequenceEvent>();
  let short = kinds;
  for (let read = 0, batch = n; read < LATEST_ACTIVITY_READS && short.length > 0; read++, batch *= 2) {
    const got = await ctx.loaders.events.latest({ user, kinds: short, perKind: batch, before });
    const all = [...got.values()].flat();
    const nodes = await shown(ctx, all);
    const byEvent = new Map(all.map((e, i) => [e, nodes[i]]));
    short = short.filter((k) => {
      const events = got.get(k) ?? [];
      const column = columns.get(k)!;
      for (const e of events) {
        const node = byEvent.get(e);
        if (node && column.length < n) column.push(node);
      }
      // Read on only where something was hidden and the kind may hold more.
      if (column.length >= n || events.length < batch) return false;
      before.set(k, events.at(-1)!);
      return true;
    });
  }
  return kinds.map((k) => ({ kind: storedKindSpec(spec, k).kind, events: columns.get(k)! }));
}

export async function notificationConnection(ctx: GatewayContext, spec: EventSpec, user: bigint, a: Args) {
  const first = checkPageSize(a.first as number | null | undefined);
  const page = await ctx.loaders.events.notifications({
    user,
    kinds: storedKindsOf(spec, 'notifications', kindsArg(spec, a.kinds)),
    first,
    after: (a.after as string | null | undefined) ?? null,
    actors: GROUP_ACTORS,
    ...range(a),
  });
  const objects = await objectsOf(
    ctx,
    page.groups.flatMap((g) => [g.object, ...g.actors]),
  );
  const edges = page.groups.flatMap((group) => {
    const target = objects.get(group.object);
    const actors = group.actors.flatMap((id) => objects.get(id) ?? []);
    // The group of a deleted pin or board is not shown; one whose recent actors all left neither.
    return target && actors.length > 0 ? [{ cursor: group.cursor, node: { group, target, actors } satisfies ShownGroup }] : [];
  });
  return { edges, pageInfo: forwardPageInfo(page, page.groups[0]?.cursor ?? null) };
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The activity kind of a stored event (`liked_pin` → `LIKE`). */
export const activityKindOf = (spec: EventSpec, e: SequenceEvent): ActivityKind => storedKindSpec(spec, e.kind).kind;

/** The fields every event has; a product adds those naming its things. */
export function activityEventResolvers(spec: EventSpec) {
  return {
    id: (s: ShownEvent) => `${s.event.id}`,
    kind: (s: ShownEvent) => activityKindOf(spec, s.event),
    at: (s: ShownEvent) => iso(s.event.ts),
    actor: (s: ShownEvent) => s.actor,
  };
}

/** The fields every notification group has; a product adds those naming its things (the target). */
export function notificationResolvers(spec: EventSpec) {
  return {
    kind: (s: ShownGroup) => storedKindSpec(spec, s.group.kind).kind,
    count: (s: ShownGroup) => s.group.count,
    actorCount: (s: ShownGroup) => s.group.actorCount,
    actors: (s: ShownGroup) => s.actors,
    latestAt: (s: ShownGroup) => iso(s.group.latest),
    earliestAt: (s: ShownGroup) => iso(s.group.earliest),
  };
}
