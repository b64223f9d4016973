import { checkPageSize, checkTime } from '../core/validate.ts';
import type { MappingTable } from '../core/mappings.ts';
import type { ObjectType } from '../core/objectTypes.ts';
import type { Loaders } from '../loaders/loaders.ts';
import type { ListOrder } from '../storage/mappingStore.ts';
import type { StoredObject } from '../storage/objectStore.ts';

export interface ConnectionArgs {
  readonly first?: number | null;
  readonly after?: string | null;
  readonly since?: string | null;
  readonly until?: string | null;
}

export interface Connection {
  readonly edges: { cursor: string; node: StoredObject }[];
  readonly pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/**
 * A Relay connection over one mapping list: a page of edges, then their objects, both through the
 * request's loaders (so sibling lists at one level share round trips). Objects that are gone or
 * soft-deleted are skipped; the cursor still advances past them, so pages never repeat.
 */
export async function listConnection(
  loaders: Loaders,
  table: MappingTable,
  from: bigint,
  nodeType: ObjectType,
  args: ConnectionArgs,
  order: ListOrder = 'time',
): Promise<Connection> {
  const first = checkPageSize(args.first);
  const since = checkTime(args.since, 'since');
  const until = checkTime(args.until, 'until');
  const page = await loaders.pages.load({ table, from, first, after: args.after ?? null, order, since, until });
  // A warm page's objects are all in the request's L1 view: no promise per node then.
  const known = page.edges.map((e) => loaders.peek.object(e.to));
  const missing = page.edges.filter((_e, i) => known[i] === undefined).map((e) => e.to);
  const loaded = missing.length > 0 ? await loaders.objects.loadMany(missing) : [];
  let next = 0;
  const nodes = known.map((k) => (k !== undefined ? k : loaded[next++]));
  const edges: Connection['edges'] = [];
  page.edges.forEach((e, i) => {
    const node = nodes[i];
    if (node && !(node instanceof Error) && node.type === nodeType) edges.push({ cursor: e.cursor, node });
  });
  return { edges, pageInfo: { hasNextPage: page.hasNextPage, endCursor: page.endCursor } };
}
