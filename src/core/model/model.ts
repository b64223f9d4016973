/**
 * The declared model: what a deployment's graph is made of, read once from the directives of its
 * SDL (schema/*.graphql, see parseModel.ts) into plain data. Every generic layer reads this, never
 * the SDL and never a product's names: TAO's small fixed vocabulary of objects and associations.
 *
 *   type Board @object(typeNumber: 2, table: "boards", placeWith: "owner") {
 *     name: String! @stored(maxLength: 100)
 *     owner: User @ref(key: "owner_id", owner: true, listedIn: "user_has_boards")
 *     pins(…): PinConnection! @relation(table: "board_has_pins", order: OWNER, timeRange: true)
 *     pinCount: Int! @count(relation: "board_has_pins")
 *   }
 *
 * reads as an object type numbered 2 in every ID, kept in `boards` on the shard of its owner, with
 * one scalar in its JSON blob, one reference (whose target may edit it, and whose list
 * `user_has_boards` gains the board when it is made), one list and that list's count.
 */

/** How a stored scalar is checked on write. */
export type StoredFormat = 'TEXT' | 'URL' | 'HANDLE' | 'EMAIL';

/** A scalar kept in the object's JSON blob. */
export interface StoredFieldDef {
  /** The GraphQL field. */
  readonly field: string;
  /** The blob's key. */
  readonly key: string;
  /** Non-null in the SDL: required (non-empty) on create, never null on read. */
  readonly required: boolean;
  readonly maxLength: number | null;
  readonly format: StoredFormat;
  /** Set when the object is made, never changed after. */
  readonly immutable: boolean;
  /** Unique across the deployment through the mod shard, under this lookup namespace. */
  readonly uniqueIn: string | null;
}

/** What happens to an object when the object its reference names is deleted. */
export type RefDelete = 'DELETE' | 'UNLINK';

/** A field holding another object's ID (`Pin.board`, `Pin.via`). */
export interface RefDef {
  readonly field: string;
  /** The blob's key, holding the ID as a decimal string. */
  readonly key: string;
  /** The referenced object's type (its key). */
  readonly to: string;
  /** The referenced user owns this object: only they may update or delete it. */
  readonly owner: boolean;
  /** The relation listing this object under the referenced one, written when the object is made. */
  readonly listedIn: string | null;
  readonly onDelete: RefDelete;
}

export interface ObjectDef {
  /** The GraphQL type. */
  readonly name: string;
  /** Its name inside the code and in IDs' type table: the type's name with a lower-case first letter. */
  readonly key: string;
  /** The ID's 10-bit type number; never reused. */
  readonly typeNumber: number;
  /** The object table on every shard. */
  readonly table: string;
  /** A ref whose object's shard a new object lands on; null: a random open shard. */
  readonly placeWith: string | null;
  /** Where the type is declared (`schema/schema.graphql:217`): what a refusal at start points to. */
  readonly declaredAt: string;
  readonly stored: readonly StoredFieldDef[];
  readonly refs: readonly RefDef[];
  /** Fields counting a relation's list of this object: field → relation table. */
  readonly counts: readonly { readonly field: string; readonly relation: string }[];
  /** Fields telling whether the viewer has an edge to this object: field → relation table. */
  readonly viewerEdges: readonly { readonly field: string; readonly relation: string }[];
  /**
   * Fields with no model directive besides `id` and `createdAt` (`User.activity`), where each is
   * declared: a product's resolvers answer them, and a model served with a field no attached
   * product resolves is refused (product/product.ts `unresolvedFields`).
   */
  readonly productFields: readonly ProductField[];
}

/** A field of an object type that only a product resolves, and where it is declared. */
export interface ProductField {
  readonly field: string;
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/** The order of a relation's list. */
export type RelationOrder = 'TIME' | 'OWNER';

/** Who writes a relation's edges. */
export type RelationWriter =
  /**
   * A @relate / @unrelate mutation: the viewer's own edge (`from` is the viewer), or an edge of an
   * object the viewer owns (`from` has an owner: a collection's pins), named by the argument `<from>Id`.
   */
  | 'VIEWER'
  /** The other direction's write: this table mirrors its inverse, on the other object's shard. */
  | 'INVERSE'
  /** An object's reference (@ref(listedIn)): the edge is made with the object and goes with it. */
  | 'REF';

/** One direction of a relation: a mapping table `noun_verb_noun` on the shard of `from`. */
export interface RelationDef {
  readonly table: string;
  /** Object keys (`user`, `pin`). */
  readonly from: string;
  readonly to: string;
  /** The field of `from` that lists it; null for a list the API does not show (`@list` on the type). */
  readonly field: string | null;
  /** The table of the other direction, on the other object's shard. */
  readonly inverse: string | null;
  readonly order: RelationOrder;
  /** The list offers since/until over its sequence (a time). */
  readonly timeRange: boolean;
  readonly writer: RelationWriter;
}

export type MutationAction = 'CREATE' | 'UPDATE' | 'DELETE' | 'RELATE' | 'UNRELATE' | 'REORDER' | 'CUSTOM';

/** A mutation and what it does to the model; CUSTOM ones are product behaviour attached by name. */
export interface MutationDef {
  readonly name: string;
  readonly action: MutationAction;
  /** CREATE, UPDATE, DELETE: the object type (its key). */
  readonly type: string | null;
  /** RELATE, UNRELATE, REORDER: the relation's table. */
  readonly relation: string | null;
  /** The argument naming the object acted on (RELATE: the edge's `to`), if any. */
  readonly argument: string | null;
}

/** The whole declaration, as plain data (what `npm run model` writes into declared.ts). */
export interface ModelData {
  /** The object key of the viewer's type (`Query.viewer`): the `from` side of every VIEWER relation. */
  readonly viewer: string;
  readonly objects: readonly ObjectDef[];
  readonly relations: readonly RelationDef[];
  readonly mutations: readonly MutationDef[];
}

/** The lower-case-first key of a GraphQL type name: `Pin` → `pin`, `BoardSection` → `boardSection`. */
export function objectKey(typeName: string): string {
  return typeName.charAt(0).toLowerCase() + typeName.slice(1);
}
