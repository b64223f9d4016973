/**
 * The IDs an object's JSON blob points at (its board, pinner, owner…), decoded once when the object
 * is read, so resolvers and services pass bigints around instead of parsing decimal strings out of
 * blobs each in its own way. The blob keeps them as decimal strings (JSON has no 64-bit integers).
 *
 *   decodeRefs({ board_id: '241294492511762325', title: 'x' })  // { board: 241294492511762325n }
 */
export interface ObjectRefs {
  /** A board's owner. */
  readonly owner?: bigint;
  /** A pin's board and pinner. */
  readonly board?: bigint;
  readonly pinner?: bigint;
  /** The pin a repin copies. */
  readonly via?: bigint;
  /** A comment's author and pin. */
  readonly author?: bigint;
  readonly pin?: bigint;
}

/** Blob field of each reference. */
export const REF_FIELDS: { readonly [K in keyof ObjectRefs]-?: string } = {
  owner: 'owner_id',
  board: 'board_id',
  pinner: 'pinner_id',
  via: 'via_pin_id',
  author: 'author_id',
  pin: 'pin_id',
};

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
