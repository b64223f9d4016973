/**
 * Object types and their type numbers in the ID. Pinterest's pin is type 1 (see the seeds' test
 * vector); the others are ours. The topology document repeats this table and is refused if it
 * disagrees, so a gateway never decodes IDs with another deployment's numbering.
 */
export const OBJECT_TYPES = { pin: 1, board: 2, user: 3, comment: 4 } as const;
export type ObjectType = keyof typeof OBJECT_TYPES;
export type TypeNumber = (typeof OBJECT_TYPES)[ObjectType];

const BY_NUMBER = new Map<number, ObjectType>(
  (Object.entries(OBJECT_TYPES) as [ObjectType, number][]).map(([name, n]) => [n, name]),
);

export function typeName(typeNumber: number): ObjectType | undefined {
  return BY_NUMBER.get(typeNumber);
}

/** Object table of each type, in every shard database. */
export const OBJECT_TABLES: { readonly [T in ObjectType]: string } = {
  pin: 'pins',
  board: 'boards',
  user: 'users',
  comment: 'comments',
};
