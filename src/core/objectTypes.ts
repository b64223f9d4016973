import { servedModel } from './model/served.ts';

const SERVED = servedModel();

/**
 * Object types and their type numbers in the ID, as the served model declares them
 * (`@object(typeNumber:)`, core/model/served.ts). Pinterest's pin is type 1 (see the seeds' test
 * vector). The topology document repeats this table and is refused if it disagrees, so a gateway
 * never decodes IDs with another deployment's numbering.
 */
export const OBJECT_TYPES: Readonly<Record<ObjectType, number>> = Object.fromEntries(SERVED.objects.map((o) => [o.key, o.typeNumber]));
/** An object type's key (`@object` type name, lower-case first): any the served model declares. */
export type ObjectType = string;

const BY_NUMBER = new Map<number, ObjectType>(SERVED.objects.map((o) => [o.typeNumber, o.key as ObjectType]));

/** The type number of `type`; a type the served model does not declare is a programming error, thrown. */
export function typeNumberOf(type: ObjectType): number {
  const n = OBJECT_TYPES[type];
  if (n === undefined) throw new Error(`shardql: the served model declares no object type ${JSON.stringify(type)}`);
  return n;
}

export function typeName(typeNumber: number): ObjectType | undefined {
  return BY_NUMBER.get(typeNumber);
}

/** Object table of each type, in every shard database (`@object(table:)`). */
export const OBJECT_TABLES: Readonly<Record<ObjectType, string>> = Object.fromEntries(SERVED.objects.map((o) => [o.key, o.table]));

/** The object table of `type`; a type the served model does not declare is a programming error, thrown. */
export function objectTableOf(type: ObjectType): string {
  const t = OBJECT_TABLES[type];
  if (t === undefined) throw new Error(`shardql: the served model declares no object type ${JSON.stringify(type)}`);
  return t;
}
