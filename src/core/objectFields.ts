/**
 * The scalar fields of an object as GraphQL shows them (its `@stored` fields in schema/), read out
 * of its JSON blob once, when the object is decoded (objectStore), and kept on the decoded object
 * under the field's own name. The executor (graphql-jit) reads a field without a resolver as a
 * plain property: no resolve info, no closures, no call per field. A profile page shows 1,000
 * objects; these were 2,000 resolver calls of its 2,750.
 *
 * A field the blob lacks, or holds as something other than a string, is null (or '' where the
 * schema says non-null).
 */
import { servedModel } from './model/served.ts';
import type { StoredFieldDef } from './model/model.ts';
import type { ObjectType } from './objectTypes.ts';

/** The stored scalars of one object, by their field in the served model (`@stored`). */
export type ObjectFields = { readonly [field: string]: string | null | undefined };

const STORED = new Map<string, readonly StoredFieldDef[]>(servedModel().objects.map((o) => [o.key, o.stored]));

/** The fields of an object of `type` with blob `data` (a new object; the blob is not changed). */
export function objectFields(type: ObjectType, data: Readonly<Record<string, unknown>>): ObjectFields {
  const out: Record<string, string | null> = {};
  for (const f of STORED.get(type) ?? []) {
    const v = data[f.key];
    out[f.field] = typeof v === 'string' ? v : f.required ? '' : null;
  }
  return out;
}
