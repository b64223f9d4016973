/**
 * The IDs an object's JSON blob points at (its board, pinner, owner…), decoded once when the object
 * is read, so resolvers and services pass bigints around instead of parsing decimal strings out of
 * blobs each in its own way. The blob keeps them as decimal strings (JSON has no 64-bit integers).
 *
 *   decodeRefs({ board_id: '241294492511762325', title: 'x' })  // { board: 241294492511762325n }
 */
import { servedModel } from './model/served.ts';

/** The references of one object, by their field in the served model (`@ref`): a pin's board, a comment's author… */
export type ObjectRefs = { readonly [field: string]: bigint | undefined };

/** Blob field of each reference (the model checks that one field name means one key in every type). */
export const REF_FIELDS: Readonly<Record<string, string>> = Object.fromEntries(servedModel().objects.flatMap((o) => o.refs.map((r) => [r.field, r.key])));

const DECIMAL_ID = /^[0-9]{1,20}$/;
const NO_REFS: ObjectRefs = Object.freeze({});

export function decodeRefs(data: Readonly<Record<string, unknown>>): ObjectRefs {
  let out: Record<string, bigint> | undefined;
  for (const [ref, field] of Object.entries(REF_FIELDS)) {
    const v = data[field];
    if (typeof v === 'string' && DECIMAL_ID.test(v)) (out ??= {})[ref] = BigInt(v);
  }
  return out ?? NO_REFS;
}
