/**
 * What the declared model says an object's references do to lists, and so what deleting an object
 * takes with it: derived once from `@ref(listedIn, onDelete)` and `@relation(inverse)` (schema/),
 * so the cascade, reconcile and the import name no table of their own.
 *
 *   Comment.author: User @ref(key: "author_id", listedIn: "user_wrote_comments", onDelete: DELETE)
 *
 * reads as a listing: every active comment is in `user_wrote_comments` of its author (on the
 * author's shard), and deleting the author deletes the comment. A list some `@ref(onDelete:
 * DELETE)` writes is a *containment* list (a user's boards, a board's pins, a pin's comments, a
 * user's comments); one an `UNLINK` ref writes only links (a pin's repins: a repin outlives its
 * original). Pure: no I/O.
 */
import { MAPPING_TABLES, reverseOf, type MappingTable, mappingSpec } from './mappings.ts';
import { servedModel } from './model/served.ts';
import type { RefDelete } from './model/model.ts';
import type { ObjectRefs } from './objectRefs.ts';
import type { ObjectType } from './objectTypes.ts';

/** A reference that lists its object under the referenced one (`@ref(listedIn:)`). */
export interface Listing {
  /** The type holding the reference (`comment`). */
  readonly type: ObjectType;
  /** The reference (`author`). */
  readonly field: string;
  /** Its key in the blob (`author_id`). */
  readonly key: string;
  /** The list, on the referenced object's shard (`user_wrote_comments`). */
  readonly table: MappingTable;
  /** The referenced type, owner of the list (`user`). */
  readonly to: ObjectType;
  /** DELETE: the object is deleted with the referenced one (the list contains it); UNLINK: it stays. */
  readonly onDelete: RefDelete;
}

/** Every listing of the model, in declaration order (types, then their fields). */
export const LISTINGS: readonly Listing[] = servedModel().objects.flatMap((o) =>
  o.refs.flatMap((r): Listing[] =>
    r.listedIn === null
      ? []
      : [{ type: o.key as ObjectType, field: r.field, key: r.key, table: r.listedIn as MappingTable, to: r.to as ObjectType, onDelete: r.onDelete }],
  ),
);

/** The listings of objects of `type` (a pin's board, pinner and original). */
export function listingsOf(type: ObjectType): readonly Listing[] {
  return LISTINGS.filter((l) => l.type === type);
}

/** The listings that contain objects of `type`: deleting the referenced object deletes this one. */
export function containersOf(type: ObjectType): readonly Listing[] {
  return LISTINGS.filter((l) => l.type === type && l.onDelete === 'DELETE');
}

/** The listing that writes `table`, if a reference does (`user_wrote_comments` → Comment.author). */
export function listingOf(table: MappingTable): Listing | undefined {
  return LISTINGS.find((l) => l.table === table);
}

/** The listing that writes `table`; throws if no reference does (an intent naming another list). */
export function listingFor(table: string): Listing {
  const l = LISTINGS.find((x) => x.table === table);
  if (!l) throw new Error(`no @ref(listedIn: "${table}") in the model`);
  return l;
}

/** The listing of the reference `field` of `type` (`listingOfRef('comment', 'author')`); throws if it lists nowhere. */
export function listingOfRef(type: ObjectType, field: string): Listing {
  const l = LISTINGS.find((x) => x.type === type && x.field === field);
  if (!l) throw new Error(`${type}.${field} has no @ref(listedIn:) in the model`);
  return l;
}

/**
 * The one listing of `type` under `to` with `onDelete`, if exactly one: how an intent step recorded
 * by a previous version names its list (by its two objects, see storage/intentLog.ts `decodeSteps`).
 *
 *   listingBetween('comment', 'user', 'DELETE')  // Comment.author → user_wrote_comments
 */
export function listingBetween(type: ObjectType, to: ObjectType, onDelete: RefDelete): Listing | undefined {
  const found = LISTINGS.filter((l) => l.type === type && l.to === to && l.onDelete === onDelete);
  return found.length === 1 ? found[0] : undefined;
}

/** Lists whose `to` belongs to their `from`: written by a `@ref(onDelete: DELETE, listedIn:)`. */
export const CONTAINMENT_TABLES: readonly MappingTable[] = MAPPING_TABLES.filter((t) => listingOf(t)?.onDelete === 'DELETE');

/**
 * How an edge of a deleted object's list is undone:
 *   - `child`: a containment list: its objects are deleted too (each cascading in turn);
 *   - `relation`: one side of a two-sided relation: the other side goes first, then this one;
 *   - `link`: anything else (a pin's repins): the edge alone goes, the object it names stays.
 */
export type ListRole = 'child' | 'relation' | 'link';

export function listRole(table: MappingTable): ListRole {
  if (CONTAINMENT_TABLES.includes(table)) return 'child';
  return reverseOf(table) ? 'relation' : 'link';
}

const OWNED = new Map<ObjectType, readonly MappingTable[]>();

/**
 * The lists an object of `type` owns, containment lists first (their objects go before the
 * relations are undone), each group in declaration order.
 *
 *   ownedLists('board')  // ['board_has_pins', 'board_followed_by_users']
 */
export function ownedLists(type: ObjectType): readonly MappingTable[] {
  let lists = OWNED.get(type);
  if (!lists) {
    const mine = MAPPING_TABLES.filter((t) => mappingSpec(t).from === type);
    lists = [...mine.filter((t) => listRole(t) === 'child'), ...mine.filter((t) => listRole(t) !== 'child')];
    OWNED.set(type, lists);
  }
  return lists;
}

/**
 * The edges that must hold an object of `type` with `refs`: one per reference with a list,
 * wherever that list lives (`containment` selects the DELETE ones, `links` the UNLINK ones).
 *
 *   listedEdges('comment', { pin: 7n, author: 9n }, 'DELETE')
 *   // [{ table: 'user_wrote_comments', from: 9n, … }, { table: 'pin_has_comments', from: 7n, … }]
 */
export function listedEdges(type: ObjectType, refs: ObjectRefs, onDelete: RefDelete): { listing: Listing; table: MappingTable; from: bigint }[] {
  const out: { listing: Listing; table: MappingTable; from: bigint }[] = [];
  for (const l of listingsOf(type)) {
    const from = refs[l.field];
    if (l.onDelete === onDelete && from !== undefined) out.push({ listing: l, table: l.table, from });
  }
  return out;
}
