import { DECLARED } from './model/declared.ts';

type DeclaredObject = (typeof DECLARED.objects)[number];

/**
 * Object types and their type numbers in the ID, as the model declares them (`@object(typeNumber:)`
 * in schema/). Pinterest's pin is type 1 (see the seeds' test vector). The topology document repeats
 * this table and is refused if it disagrees, so a gateway never decodes IDs with another
 * deployment's numbering.
 */
export const OBJECT_TYPES = Object.fromEntries(DECLARED.objects.map((o) => [o.key, o.typeNumber])) as {
  readonly [O in DeclaredObject as O['key']]: O['typeNumber'];
};
export type ObjectType = DeclaredObject['key'];
export type TypeNumber = DeclaredObject['typeNumber'];

const BY_NUMBER = new Map<number, ObjectType>(DECLARED.objects.map((o) => [o.typeNumber, o.key]));

export function typeName(typeNumber: number): ObjectType | undefined {
  return BY_NUMBER.get(typeNumber);
}

/** Object table of each type, in every shard database (`@object(table:)`). */
export const OBJECT_TABLES = Object.fromEntries(DECLARED.objects.map((o) => [o.key, o.table])) as {
  readonly [O in DeclaredObject as O['key']]: O['table'];
};
