import {
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  getNullableType,
  isInterfaceType,
  isListType,
  isObjectType,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';
import { ShardqlError } from '../core/errors.ts';
import { DEFAULT_EVENT_VERSIONS, type EventSpec } from '../core/events.ts';
import { servedModel } from '../core/model/served.ts';
import type { ObjectDef } from '../core/model/model.ts';
import { checkPageArgs, checkPageSize } from '../core/validate.ts';
import { GROUP_ACTORS, LATEST_ACTIVITY_READS } from './activity.ts';

/**
 * What an operation may cost before it runs, from its physical plan: every list field reads a
 * page of mapping rows (`first + 1`) and then `first` objects, and everything below it runs once
 * per object of the page, so page sizes multiply down a join chain. Counts, `viewer…` flags and
 * object references read one row per parent object.
 *
 * Round trips follow the loaders: every kind of load (lists and counts, objects, edge checks,
 * username lookups) at one level of the query is one batch, and a batch is at most one round trip
 * per host. So `roundTrips = levels × hosts` (plus a fixed allowance per mutation), never the
 * number of objects.
 *
 * Example (2 hosts): `{ user(id: …) { boards(first: 10) { edges { node { pins(first: 10) {
 * edges { node { title } } } } } } } }` → rows 1 + (11 + 10) + 10 × (11 + 10) = 232, levels 5
 * (user; boards page; boards; pins pages; pins), round trips 10.
 */
export interface CostEstimate {
  /** Upper bound of the rows read or written: mapping rows, objects, counts, edge checks, lookups. */
  readonly rows: number;
  /** Batched loads: each is at most one round trip per host. */
  readonly levels: number;
  /** levels × hosts, plus WRITE_ROUND_TRIPS per mutation field. */
  readonly roundTrips: number;
}

export interface CostBudget {
  /** Most rows an operation may touch. Default 50000 (SHARDQL_MAX_COST). */
  readonly rows: number;
  /** Most SQL round trips an operation may need. Default 500 (SHARDQL_MAX_ROUND_TRIPS). */
  readonly roundTrips: number;
}

export const DEFAULT_COST_BUDGET: CostBudget = { rows: 50_000, roundTrips: 500 };

/**
 * A product's home feed (core/feedSpec.ts), as the estimate charges a read of it (loaders/feed.ts
 * `feedCost` gives it): the stored path: the follow lists (a page of each kind of source), the
 * follower count of every source on them, the stored page, the pages of the sources merged beside
 * it, then the window's items and their sources. Not charged, because nothing before the read can
 * tell: a build (a missing feed), or a page beyond the stored window (past the newest
 * SHARDQL_FEED_SIZE items), which merge a page of every followed source, and follow lists longer
 * than one page.
 */
export interface FeedCost {
  /** The Query field that reads the feed (`homeFeed`). */
  readonly field: string;
  /** Kinds of source (follow lists read, and sources each item names). */
  readonly sources: number;
  /** Follows read per page of a follow list. */
  readonly followsPerPage: number;
  /** Sources whose pages a read merges beside the stored page. */
  readonly mergedSources: number;
}
/** Rows a mutation writes besides what its selection reads: object, edges both ways, counts, intents. */
export const WRITE_ROWS = 10;
/** Round trips a mutation takes besides its selection: lookups, locks, both halves of an edge. */
export const WRITE_ROUND_TRIPS = 8;

export interface EstimateInput {
  readonly schema: GraphQLSchema;
  readonly document: DocumentNode;
  readonly operation: OperationDefinitionNode;
  /** Coerced variable values (graphql-js `getVariableValues`). */
  readonly variables: Readonly<Record<string, unknown>>;
  /** Hosts of the topology in force: one batch is at most one round trip to each. */
  readonly hosts: number;
  /** The served product's feed, if one declares it; without one, no field is charged as a feed. */
  readonly feed?: FeedCost | undefined;
  /** The served product's event fields (`eventCost`); absent: none is charged as events. */
  readonly events?: EventCost;
}

/** How the served product's event fields read (graphql/activity.ts), for the estimate. */
export interface EventCost {
  /** Kinds a field reads when `kinds` is not given: every activity kind of the spec. */
  readonly kinds: number;
  /**
   * Events kept per kind (the most `versions` of SHARDQL_EVENT_RETENTION): what grouping a page of
   * notifications may read of each kind asked, whatever its page size.
   */
  readonly keptPerKind: number;
  /** `Type.field`s reading the newest `perKind` events of each kind asked. */
  readonly latest: ReadonlySet<string>;
  /** `Type.field`s grouping every kept event of the kinds asked. */
  readonly grouped: ReadonlySet<string>;
  /** `Type.field`s listing a group's actors (up to GROUP_ACTORS). */
  readonly groupActors: ReadonlySet<string>;
}

/** Events kept per kind by default (`defaultEventRetention`). */
export const DEFAULT_EVENTS_KEPT_PER_KIND = DEFAULT_EVENT_VERSIONS;

/** The cost of `spec`'s fields, with `keptPerKind` events kept per kind (default 1000). */
export function eventCost(spec: EventSpec, keptPerKind: number = DEFAULT_EVENTS_KEPT_PER_KIND): EventCost {
  const f = spec.fields ?? {};
  return { kinds: spec.activityKinds.length, keptPerKind, latest: new Set(f.latest), grouped: new Set(f.grouped), groupActors: new Set(f.groupActors) };
}

const NO_EVENT_FIELDS: EventCost = { kinds: 0, keptPerKind: 0, latest: new Set(), grouped: new Set(), groupActors: new Set() };

const isConnection = (t: GraphQLNamedType): boolean => isObjectType(t) && t.name.endsWith('Connection') && 'edges' in t.getFields();
const isEdge = (t: GraphQLNamedType): boolean => isObjectType(t) && t.name.endsWith('Edge') && 'node' in t.getFields();
/** `Type.field` of each declared count (`@count`), viewer flag (`@viewerEdge`) and unique field (`@stored(unique:)`). */
const fieldsOf = (pick: (o: ObjectDef) => readonly { readonly field: string }[]): ReadonlySet<string> =>
  new Set(servedModel().objects.flatMap((o) => pick(o).map((f) => `${o.name}.${f.field}`)));
const COUNT_FIELDS = fieldsOf((o) => o.counts);
const VIEWER_FLAGS = fieldsOf((o) => o.viewerEdges);
const UNIQUE_FIELDS = fieldsOf((o) => o.stored.filter((f) => f.uniqueIn !== null));

/** An object stored in a shard: the Node interface or a type implementing it. */
const isEntity = (t: GraphQLNamedType): boolean =>
  (isInterfaceType(t) && t.name === 'Node') || (isObjectType(t) && t.getInterfaces().some((i) => i.name === 'Node'));

/**
 * Estimates an operation's cost, or throws INVALID_ARGUMENT for a page size out of 1..100 or both
 * `first` and `last` — before any resolver, so a huge `first` or `last` deep in a query is refused
 * before its parents' SQL runs. A backward page (`last`) reads what a forward one of its size reads.
 */
export function estimateCost(input: EstimateInput): CostEstimate {
  const { schema, document, variables } = input;
  const events = input.events ?? NO_EVENT_FIELDS;
  /** Kinds an event field reads: those asked (once each), else all. */
  const kindsOf = (args: Record<string, unknown>): number => (Array.isArray(args.kinds) ? new Set(args.kinds).size : events.kinds);
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  let rows = 0;
  let fixedRoundTrips = 0;
  const levels = new Set<string>();

  const included = (node: SelectionNode): boolean => {
    try {
      if (getDirectiveValues(GraphQLSkipDirective, node, variables as Record<string, unknown>)?.if === true) return false;
      if (getDirectiveValues(GraphQLIncludeDirective, node, variables as Record<string, unknown>)?.if === false) return false;
    } catch {
      // A bad directive argument fails execution before any resolver; count the selection anyway.
    }
    return true;
  };

  const argsOf = (def: GraphQLField<unknown, unknown>, node: FieldNode): Record<string, unknown> => {
    try {
      return getArgumentValues(def, node, variables as Record<string, unknown>);
    } catch {
      // Bad argument values fail execution before any resolver runs; charge the largest page.
      return { first: null, __unreadable: true };
    }
  };

  /**
   * `mult`: how many parent objects this selection runs for. `level`: key of the batch that loads
   * these parents' dependents (queries: the depth; mutations: also which mutation, as they run one
   * after another). `perList`: the size of a plain list field below (a column of a `latest` event
   * field holds up to `perKind` events).
   */
  const walk = (set: SelectionSetNode, parent: GraphQLNamedType, mult: number, level: string, seen: ReadonlySet<string>, perList?: number): void => {
    for (const sel of set.selections) {
      if (!included(sel)) continue;
      if (sel.kind === Kind.INLINE_FRAGMENT) {
        const t = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : parent;
        if (t) walk(sel.selectionSet, t, mult, level, seen, perList);
        continue;
      }
      if (sel.kind === Kind.FRAGMENT_SPREAD) {
        const f = fragments.get(sel.name.value);
        if (!f || seen.has(f.name.value)) continue;
        const t = schema.getType(f.typeCondition.name.value);
        if (t) walk(f.selectionSet, t, mult, level, new Set([...seen, f.name.value]), perList);
        continue;
      }
      field(sel, parent, mult, level, seen, perList);
    }
  };

  const field = (node: FieldNode, parent: GraphQLNamedType, parentMult: number, level: string, seen: ReadonlySet<string>, perList?: number): void => {
    const name = node.name.value;
    if (name.startsWith('__') || !(isObjectType(parent) || isInterfaceType(parent))) return;
    const def = parent.getFields()[name];
    if (!def) return;
    const type = getNamedType(def.type);
    const args = argsOf(def, node);
    const below = (m: number, l: string, list?: number): void => {
      if (node.selectionSet) walk(node.selectionSet, type, m, l, seen, list);
    };
    // A plain list (not a connection) runs its selection once per item: a group's actors (up to
    // GROUP_ACTORS), a column's events (up to its perKind).
    const at = `${parent.name}.${name}`;
    const latest = events.latest.has(at);
    let mult = parentMult;
    if (isListType(getNullableType(def.type)) && !latest) mult *= events.groupActors.has(at) ? GROUP_ACTORS : (perList ?? 1);

    if (latest) {
      // The newest perKind events of each kind asked (one statement), then one column per kind.
      // At worst a kind reads on past hidden events LATEST_ACTIVITY_READS − 1 more times, twice as
      // many each time (perKind × (2^reads − 1) events in all), and each read after the first
      // checks its events' subjects (one object each) at a level of its own.
      const perKind = args.__unreadable ? 100 : checkPageSize(args.perKind as number | null | undefined, 5, 'perKind');
      const kinds = kindsOf(args);
      const readOn = 2 ** LATEST_ACTIVITY_READS - 2; // events read after the first perKind, per perKind
      rows += mult * kinds * perKind * (1 + 2 * readOn);
      levels.add(`${level}:events`);
      for (let read = 1; read < LATEST_ACTIVITY_READS; read++) levels.add(`${level}:events:${read}`).add(`${level}:subjects:${read}`);
      return below(mult * kinds, level, perKind);
    }
    if (events.grouped.has(at) && isConnection(type)) {
      // Grouping a page reads every kept event of the kinds asked, whatever the page's size.
      rows += mult * kindsOf(args) * events.keptPerKind;
      levels.add(`${level}:events`);
    }

    if (isConnection(type)) {
      const first = args.__unreadable ? 100 : checkPageArgs(args as { first?: number | null; last?: number | null }).size;
      const feed = input.feed;
      if (feed && parent === schema.getQueryType() && name === feed.field) {
        // Every follow list; the follower count of every source; the stored page and the sources
        // merged beside it; the window's items; their sources (see FeedCost).
        const s = feed.sources;
        rows += mult * (s * (feed.followsPerPage + 1) + s * feed.followsPerPage + (feed.mergedSources + 1) * (first + 1) + (1 + s) * first);
        levels.add(`${level}:lists`).add(`${level}:feed-counts`).add(`${level}:feed-sources`).add(`${level}:feed-items`).add(`${level}:feed-refs`);
      } else {
        rows += mult * (first + 1 + first);
        levels.add(`${level}:lists`).add(`${level}:page-objects`);
      }
      return below(mult * first, `${level}.`);
    }
    if (isEdge(parent) && name === 'node') return below(mult, level); // loaded with its page
    if (isEntity(type)) {
      rows += mult;
      levels.add(`${level}:objects`);
      // An object found by a unique field (`user(username:)`) reads its mod-shard lookup first.
      if (Object.entries(args).some(([arg, v]) => v != null && UNIQUE_FIELDS.has(`${type.name}.${arg}`))) {
        rows += mult;
        levels.add(`${level}:lookups`);
      }
      return below(mult, `${level}.`);
    }
    if (isObjectType(type)) return below(mult, level); // payloads, edges, page info: no load of their own
    if (COUNT_FIELDS.has(`${parent.name}.${name}`)) {
      rows += mult;
      levels.add(`${level}:lists`);
    } else if (VIEWER_FLAGS.has(`${parent.name}.${name}`)) {
      rows += mult;
      levels.add(`${level}:edges`);
    }
  };

  const kind = input.operation.operation;
  const root = kind === 'mutation' ? schema.getMutationType() : kind === 'query' ? schema.getQueryType() : schema.getSubscriptionType();
  if (root) {
    // Root fields through fragments: mutations run one after another, so each has its own levels
    // and a write of its own; query fields run side by side and share levels.
    const rootFields: FieldNode[] = [];
    const collect = (set: SelectionSetNode, seen: ReadonlySet<string>): void => {
      for (const sel of set.selections) {
        if (!included(sel)) continue;
        if (sel.kind === Kind.FIELD) rootFields.push(sel);
        else if (sel.kind === Kind.INLINE_FRAGMENT) collect(sel.selectionSet, seen);
        else {
          const f = fragments.get(sel.name.value);
          if (f && !seen.has(f.name.value)) collect(f.selectionSet, new Set([...seen, f.name.value]));
        }
      }
    };
    collect(input.operation.selectionSet, new Set());
    rootFields.forEach((node, i) => {
      if (kind !== 'mutation') return field(node, root, 1, 'q', new Set());
      if (node.name.value.startsWith('__')) return;
      rows += WRITE_ROWS;
      fixedRoundTrips += WRITE_ROUND_TRIPS;
      const def = root.getFields()[node.name.value];
      if (def && node.selectionSet) walk(node.selectionSet, getNamedType(def.type), 1, `m${i}`, new Set());
    });
  }
  return { rows, levels: levels.size, roundTrips: levels.size * Math.max(1, input.hosts) + fixedRoundTrips };
}

/** QUERY_TOO_COMPLEX when an estimate is over budget; the error states both. */
export function checkCost(estimate: CostEstimate, budget: CostBudget): void {
  if (estimate.rows <= budget.rows && estimate.roundTrips <= budget.roundTrips) return;
  const what = estimate.rows > budget.rows
    ? `an operation that touches at most ${budget.rows} rows, got one that can touch ${estimate.rows} (page sizes multiply down nested lists: ask for smaller pages)`
    : `an operation that needs at most ${budget.roundTrips} SQL round trips, got one that can need ${estimate.roundTrips} (fewer nested levels)`;
  throw new ShardqlError('QUERY_TOO_COMPLEX', `Expected ${what}`, {
    limit: 'cost',
    cost: estimate.rows,
    budget: budget.rows,
    sqlRoundTrips: estimate.roundTrips,
    sqlRoundTripBudget: budget.roundTrips,
  });
}
