import type { ObjectType } from './objectTypes.ts';

/**
 * Every mapping table: `(from_id, to_id, sequence)` on the shard of `from_id`, one direction each.
 * `reverse` names the table holding the other direction (on the other object's shard), so a write
 * knows both halves it must keep in step. The count of a list is kept under the table's own name.
 */
export interface MappingSpec {
  readonly from: ObjectType;
  readonly to: ObjectType;
  readonly reverse?: string;
  /** Whether the list also has an owner-chosen order (`position`), besides time (`sequence`). */
  readonly ordered?: boolean;
}

export const MAPPINGS = {
  user_has_boards: { from: 'user', to: 'board' },
  user_has_pins: { from: 'user', to: 'pin' },
  board_has_pins: { from: 'board', to: 'pin', ordered: true },
  user_likes_pins: { from: 'user', to: 'pin', reverse: 'pin_liked_by_users' },
  pin_liked_by_users: { from: 'pin', to: 'user', reverse: 'user_likes_pins' },
  user_follows_users: { from: 'user', to: 'user', reverse: 'user_followed_by_users' },
  user_followed_by_users: { from: 'user', to: 'user', reverse: 'user_follows_users' },
  user_follows_boards: { from: 'user', to: 'board', reverse: 'board_followed_by_users' },
  board_followed_by_users: { from: 'board', to: 'user', reverse: 'user_follows_boards' },
  pin_has_comments: { from: 'pin', to: 'comment' },
  /** The comments a user wrote, on the user's shard (each comment lives on its pin's): what deleting the account deletes. */
  user_wrote_comments: { from: 'user', to: 'comment' },
  pin_repinned_as_pins: { from: 'pin', to: 'pin' },
} as const satisfies Record<string, MappingSpec>;

export type MappingTable = keyof typeof MAPPINGS;
export const MAPPING_TABLES = Object.keys(MAPPINGS) as MappingTable[];

export function mappingSpec(table: MappingTable): MappingSpec {
  return MAPPINGS[table];
}

/** The table holding the other direction of a relation, if it has one. */
export function reverseOf(table: MappingTable): MappingTable | undefined {
  const spec: MappingSpec = MAPPINGS[table];
  return spec.reverse as MappingTable | undefined;
}

/**
 * The side of each two-sided relation written first (the viewer's): the truth its reverse mirrors.
 */
export const AUTHORITATIVE_TABLES: readonly MappingTable[] = ['user_likes_pins', 'user_follows_users', 'user_follows_boards'];

/** Whether `table` is the mirror of another (its rows, sequences included, copy the authoritative side). */
export function isMirror(table: MappingTable): boolean {
  const r = reverseOf(table);
  return r !== undefined && AUTHORITATIVE_TABLES.includes(r);
}
