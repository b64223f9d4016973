import type { DECLARED } from './model/declared.ts';
import { servedModel } from './model/served.ts';

/** The product's types as `declared.ts` spells them: TypeScript's names; the values are the served model's. */
type DeclaredObject = (typeof DECLARED.objects)[number];
const SERVED = servedModel();

/**
 * Object types and their type numbers in the ID, as the served model declares them
 * (`@object(typeNumber:)`, core/model/served.ts). Pinterest's pin is type 1 (see the seeds' test
 * vector). The topology document repeats this table and is refused if it disagrees, so a gateway
 * never decodes IDs with another deployment's numbering.
 */
export const OBJECT_TYPES = Object.fromEntries(SERVED.objects.map((o) => [o.key, o.typeNumber])) as {
  readonly [O in DeclaredObject as O['key']]: O['typeNumber'];
};
export type ObjectType = DeclaredObject['key'];
export type TypeNumber = DeclaredObject['typeNumber'];

const BY_NUMBER = new Map<number, ObjectType>(SERVED.objects.map((o) => [o.typeNumber, o.key as ObjectType]));

export function typeName(typeNumber: number): ObjectType | undefined {
  return BY_NUMBER.get(typeNumber);
}

/** Object table of each type, in every shard database (`@object(table:)`). */
export const OBJECT_TABLES = Object.fromEntries(SERVED.objects.map((o) => [o.key, o.table])) as {
  readonly [O in DeclaredObject as O['key']]: O['table'];
};
