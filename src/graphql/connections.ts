import { checkPageArgs, checkTimeRange } from '../core/validate.ts';
import type { MappingTable } from '../core/mappings.ts';
import type { ObjectType } from '../core/objectTypes.ts';
import type { Loaders } from '../loaders/loaders.ts';
import type { ListOrder, Page, PageRequest } from '../storage/mappingStore.ts';
import type { StoredObject } from '../storage/objectStore.ts';

export interface ConnectionArgs {
  readonly first?: number | null;
  readonly after?: string | null;
  readonly last?: number | null;
  readonly before?: string | null;
  readonly since?: string | null;
  readonly until?: string | null;
}

/** Relay's PageInfo. */
export interface PageInfo {
  readonly hasNextPage: boolean;
  readonly hasPreviousPage: boolean;
  readonly startCursor: string | null;
  readonly endCursor: string | null;
}

export interface Connection {
  readonly edges: { cursor: string; node: StoredObject }[];
  readonly pageInfo: PageInfo;
}

/**
 * A Relay connection over one mapping list: a page of edges, then their objects, both through the
 * request's loaders (so sibling lists at one level share round trips). Objects that are gone or
 * soft-deleted are skipped; the start and end cursors still cover them, so pages never repeat,
 * forward or backward.
 */
export function listConnection(
  loaders: Loaders,
  table: MappingTable,
  from: bigint,
  nodeType: ObjectType,
  args: ConnectionArgs,
  order: ListOrder = 'time',
): Connection | Promise<Connection> {
  const { size, backward } = checkPageArgs(args);
  const { since, until } = checkTimeRange(args.since, args.until);
  const req: PageRequest = { table, from, first: size, backward, after: args.after ?? null, before: args.before ?? null, order, since, until };
  // A warm first page whose objects are all in the request's L1 view is answered at once: no
  // loader, no promise (a profile's 250 likers lists are that).
  const known = loaders.peek.page(req);
  if (known !== undefined) {
    const nodes: (StoredObject | null)[] = new Array(known.edges.length);
    for (let i = 0; i < known.edges.length; i++) {
      const node = loaders.peek.object(known.edges[i]!.to);
      if (node === undefined) return connectionOf(loaders, known, nodeType);
      nodes[i] = node;
    }
    return edgesOf(known, nodes, nodeType);
  }
  return loaders.pages.load(req).then((page) => connectionOf(loaders, page, nodeType));
}

async function connectionOf(loaders: Loaders, page: Page, nodeType: ObjectType): Promise<Connection> {
  // A warm page's objects are all in the request's L1 view: no promise per node then.
  const known = page.edges.map((e) => loaders.peek.object(e.to));
  const missing: bigint[] = [];
  known.forEach((k, i) => {
    if (k === undefined) missing.push(page.edges[i]!.to);
  });
  const loaded = missing.length > 0 ? await loaders.objects.loadMany(missing) : [];
  let next = 0;
  return edgesOf(page, known.map((k) => (k !== undefined ? k : loaded[next++]!)), nodeType);
}

/** The connection of a page, given each edge's object (null or an error: gone, and skipped). */
function edgesOf(page: Page, nodes: readonly (StoredObject | null | Error)[], nodeType: ObjectType): Connection {
  const edges: Connection['edges'] = [];
  for (let i = 0; i < page.edges.length; i++) {
    const node = nodes[i];
    if (node && !(node instanceof Error) && node.type === nodeType) edges.push({ cursor: page.edges[i]!.cursor, node });
  }
  return { edges, pageInfo: pageInfoOf(page) };
}

/** A page's PageInfo: its cursors are its first and last rows', shown or not. */
export function pageInfoOf(page: PageInfo): PageInfo {
  return { hasNextPage: page.hasNextPage, hasPreviousPage: page.hasPreviousPage, startCursor: page.startCursor, endCursor: page.endCursor };
}

/**
 * The PageInfo of a list read forward only (`first`/`after`): `startCursor` is the first row's,
 * shown or not, and whether rows precede it is not computed (false, as the specification allows).
 */
export function forwardPageInfo(page: { readonly hasNextPage: boolean; readonly endCursor: string | null }, startCursor: string | null): PageInfo {
  return { hasNextPage: page.hasNextPage, hasPreviousPage: false, startCursor, endCursor: page.endCursor };
}
