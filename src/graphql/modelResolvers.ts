/**
 * The resolvers of every declared object type, derived from the model: a reference loads the
 * object it names, a count reads the count kept beside its list, a viewer flag checks one edge, and
 * a list is a connection over its mapping table. Product behaviour that is not generic (activity,
 * notifications, the home feed) is added beside these in resolvers.ts.
 */
import { ShardqlError } from '../core/errors.ts';
import type { MappingTable } from '../core/mappings.ts';
import type { ModelData, ObjectDef, RelationDef } from '../core/model/model.ts';
import type { ObjectType } from '../core/objectTypes.ts';
import type { StoredObject } from '../storage/objectStore.ts';
import { listConnection, type ConnectionArgs } from './connections.ts';
import type { GatewayContext } from './context.ts';

type Args = Record<string, unknown>;
export type ObjectResolver = (parent: StoredObject, args: Args, ctx: GatewayContext) => unknown;

/** An object by ID, of the expected type: from this request's L1 view at once when it is there. */
export function load(ctx: GatewayContext, objectId: bigint | null | undefined, type: ObjectType): StoredObject | null | Promise<StoredObject | null> {
  if (objectId == null) return null;
  const ofType = (o: StoredObject | null): StoredObject | null => (o && o.type === type ? o : null);
  const known = ctx.loaders.peek.object(objectId);
  return known !== undefined ? ofType(known) : ctx.loaders.objects.load(objectId).then(ofType);
}

/**
 * `createdAt` as ISO 8601, formatted once per object: the near cache shares objects across
 * requests, and formatting (~1 µs) on every read was 3% of a feed page's CPU (20 per page).
 */
const isoOf = new WeakMap<StoredObject, string>();
const iso = (o: StoredObject): string => {
  let text = isoOf.get(o);
  if (text === undefined) isoOf.set(o, (text = new Date(o.createdAt).toISOString()));
  return text;
};

const count =
  (relation: MappingTable): ObjectResolver =>
  (o, _args, ctx) => {
    const key = { id: o.id, kind: relation };
    return ctx.loaders.peek.count(key) ?? ctx.loaders.counts.load(key);
  };

const viewerEdge =
  (relation: MappingTable): ObjectResolver =>
  (o, _args, ctx) =>
    ctx.viewerId === undefined ? false : ctx.loaders.edges.load({ table: relation, from: ctx.viewerId, to: o.id });

/**
 * A list over its mapping table. A list with an owner's order takes `order: OWNER` for it (time
 * order otherwise), or is in the owner's order only when its field has no `order` argument; `since`/`until` bound the time, so they do not go with the owner's order.
 */
function list(r: RelationDef): ObjectResolver {
  const table = r.table as MappingTable;
  const to = r.to as ObjectType;
  if (r.order !== 'OWNER') return (o, a, ctx) => listConnection(ctx.loaders, table, o.id, to, a as ConnectionArgs);
  return (o, a, ctx) => {
    // A field without an `order` argument has the owner's order only (a reading list).
    const owner = a.order === 'OWNER' || a.order === undefined;
    if (owner && (a.since != null || a.until != null)) {
      throw new ShardqlError('INVALID_ARGUMENT', 'Expected since/until only with order NEWEST, got order OWNER', { argument: 'order' });
    }
    return listConnection(ctx.loaders, table, o.id, to, a as ConnectionArgs, owner ? 'owner' : 'time');
  };
}

function resolversOf(model: ModelData, o: ObjectDef): Record<string, ObjectResolver> {
  const out: Record<string, ObjectResolver> = { createdAt: iso };
  for (const ref of o.refs) out[ref.field] = (obj, _a, ctx) => load(ctx, obj.refs[ref.field as keyof StoredObject['refs']], ref.to as ObjectType);
  for (const c of o.counts) out[c.field] = count(c.relation as MappingTable);
  for (const e of o.viewerEdges) out[e.field] = viewerEdge(e.relation as MappingTable);
  for (const r of model.relations) if (r.from === o.key && r.field !== null) out[r.field] = list(r);
  return out;
}

/** Resolvers of each declared type, by GraphQL type name. Stored scalars need none (core/objectFields.ts). */
export function objectResolvers(model: ModelData): Record<string, Record<string, ObjectResolver>> {
  return Object.fromEntries(model.objects.map((o) => [o.name, resolversOf(model, o)]));
}

/** The GraphQL type of each object type, for `Node.__resolveType`. */
export function graphqlTypeNames(model: ModelData): ReadonlyMap<string, string> {
  return new Map(model.objects.map((o) => [o.key, o.name]));
}
