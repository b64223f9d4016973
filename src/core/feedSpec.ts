/**
 * A home feed a product declares (product.ts `feed`): the items a viewer sees, newest first, from
 * the sources they follow, as plain data checked against the served model when the product
 * attaches. The spec names only what the model cannot say; the rest is read from the model:
 *
 *   { field: 'homeFeed', item: 'pin', sources: [
 *     { ref: 'pinner', follows: 'user_follows_users' },
 *     { ref: 'board', follows: 'user_follows_boards' } ] }
 *
 * reads as: the feed is `Query.homeFeed`; its items are pins; a pin reaches the followers of its
 * pinner (`Pin.pinner` is a user) and of its board. Each source's list of items is its reference's
 * `@ref(listedIn:)` (`user_has_pins`, `board_has_pins`), and its followers the inverse of the
 * viewer's follow list (`user_followed_by_users`, `board_followed_by_users`). Pure: no I/O.
 */
import type { MappingTable } from './mappings.ts';
import type { ModelData } from './model/model.ts';

export interface FeedSpec {
  /** The Query field that reads the feed (`homeFeed`): what the cost model charges as a feed read. */
  readonly field: string;
  /** The object type of the items (its key: `pin`). */
  readonly item: string;
  /** Who an item reaches: the followers of each source it names. At least one. */
  readonly sources: readonly FeedSourceSpec[];
}

export interface FeedSourceSpec {
  /** The item's reference naming this source (`pinner`); the model gives its type and its list of items (`listedIn`). */
  readonly ref: string;
  /** The viewer's follow list of sources of that type (`user_follows_users`); its inverse lists a source's followers. */
  readonly follows: string;
}

/** A source as the feed's code reads it: the spec's names and what the model derives from them. */
export interface FeedSource {
  /** The item's reference naming the source (`pinner`). */
  readonly ref: string;
  /** The source's object type (`user`). */
  readonly type: string;
  /** The viewer's follow list of this kind of source (`user_follows_users`). */
  readonly follows: MappingTable;
  /** A source's followers: the follow list's inverse (`user_followed_by_users`). */
  readonly followers: MappingTable;
  /** A source's items, newest first: the reference's listing (`user_has_pins`). */
  readonly items: MappingTable;
}

/** A feed spec resolved against the model: every table named, every name checked. */
export interface Feed {
  readonly field: string;
  readonly item: string;
  readonly sources: readonly FeedSource[];
}

type Resolved = { readonly feed: Feed; readonly problems: readonly [] } | { readonly feed: undefined; readonly problems: readonly string[] };

/**
 * The spec against `model`: the resolved feed, or what the model lacks (in missingNeeds' words:
 * `type pin`, `relation user_follows_boards`, `ref pin.board`, or a relation whose ends do not fit).
 *
 *   resolveFeed({ field: 'homeFeed', item: 'pin', sources: [{ ref: 'board', follows: 'user_follows_walls' }] }, pinterest)
 *     // { feed: undefined, problems: ['relation user_follows_walls'] }
 */
export function resolveFeed(spec: FeedSpec, model: ModelData): Resolved {
  const problems: string[] = [];
  const item = model.objects.find((o) => o.key === spec.item);
  if (!item) return { feed: undefined, problems: [`type ${spec.item}`] };
  if (spec.sources.length === 0) problems.push(`feed ${spec.field}: at least one source (expected sources, got none)`);
  const relation = (table: string) => model.relations.find((r) => r.table === table);
  const sources: FeedSource[] = [];
  const seen = new Set<string>();
  for (const s of spec.sources) {
    if (seen.has(s.ref)) problems.push(`feed ${spec.field}: source ${s.ref} named twice`);
    // A fan-out's payload names the item by its type and each source by its reference (jobs/kinds/feed.ts).
    if (s.ref === 'time' || s.ref === spec.item) problems.push(`feed ${spec.field}: a source's reference other than ${spec.item} and time (they name the item and its time in a fan-out), got ${s.ref}`);
    seen.add(s.ref);
    const ref = item.refs.find((r) => r.field === s.ref);
    if (!ref) {
      problems.push(`ref ${spec.item}.${s.ref}`);
      continue;
    }
    const listing = ref.listedIn === null ? undefined : relation(ref.listedIn);
    if (!listing) problems.push(ref.listedIn === null ? `ref ${spec.item}.${s.ref} listed in a relation (@ref(listedIn:))` : `relation ${ref.listedIn}`);
    else if (listing.from !== ref.to || listing.to !== spec.item) problems.push(`relation ${listing.table} from ${ref.to} to ${spec.item} (got from ${listing.from} to ${listing.to})`);
    const follows = relation(s.follows);
    if (!follows) {
      problems.push(`relation ${s.follows}`);
      continue;
    }
    if (follows.from !== model.viewer || follows.to !== ref.to) problems.push(`relation ${s.follows} from ${model.viewer} to ${ref.to} (got from ${follows.from} to ${follows.to})`);
    const followers = follows.inverse === null ? undefined : relation(follows.inverse);
    if (!followers) problems.push(follows.inverse === null ? `relation ${s.follows} with an inverse listing a ${ref.to}'s followers` : `relation ${follows.inverse}`);
    if (listing && followers) {
      sources.push({ ref: s.ref, type: ref.to, follows: follows.table as MappingTable, followers: followers.table as MappingTable, items: listing.table as MappingTable });
    }
  }
  if (problems.length > 0) return { feed: undefined, problems };
  return { feed: { field: spec.field, item: spec.item, sources }, problems: [] };
}

/**
 * The IDs of an item's sources by reference (`{ pinner: 7n, board: 9n }`), or undefined when the
 * item lacks one: an item reaches a feed only with every source it is declared to have.
 */
export function sourcesOf(feed: Pick<FeedSpec, 'sources'>, refs: Readonly<Record<string, bigint | undefined>>): Record<string, bigint> | undefined {
  const out: Record<string, bigint> = {};
  for (const s of feed.sources) {
    const id = refs[s.ref];
    if (id === undefined) return undefined;
    out[s.ref] = id;
  }
  return out;
}
