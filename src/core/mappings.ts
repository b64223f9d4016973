import { servedModel } from './model/served.ts';
import type { ObjectType } from './objectTypes.ts';

/**
 * Every mapping table, as the served model declares them (`@relation`, core/model/served.ts): `(from_id, to_id,
 * sequence)` on the shard of `from_id`, one direction each. `reverse` names the table holding the
 * other direction (on the other object's shard), so a write knows both halves it must keep in step.
 * The count of a list is kept under the table's own name.
 */
export interface MappingSpec {
  readonly from: ObjectType;
  readonly to: ObjectType;
  readonly reverse?: string;
  /** Whether the list also has an owner-chosen order (`position`), besides time (`sequence`). */
  readonly ordered?: true;
}

const SERVED = servedModel();

export const MAPPINGS: Readonly<Record<MappingTable, MappingSpec>> = Object.fromEntries(
  SERVED.relations.map((r): [string, MappingSpec] => [
    r.table,
    { from: r.from as ObjectType, to: r.to as ObjectType, ...(r.inverse !== null ? { reverse: r.inverse } : {}), ...(r.order === 'OWNER' ? { ordered: true } : {}) },
  ]),
);

/** A mapping table's name (`@relation(table:)`): any the served model declares. */
export type MappingTable = string;
export const MAPPING_TABLES = SERVED.relations.map((r) => r.table) as MappingTable[];

/** The spec of `table`; a table the served model does not declare is a programming error, thrown. */
export function mappingSpec(table: MappingTable): MappingSpec {
  const spec = MAPPINGS[table];
  if (spec === undefined) throw new Error(`shardql: the served model declares no mapping table ${JSON.stringify(table)}`);
  return spec;
}

/** The table holding the other direction of a relation, if it has one. */
export function reverseOf(table: MappingTable): MappingTable | undefined {
  return mappingSpec(table).reverse;
}

/**
 * The side of each two-sided relation written first (the viewer's, through its @relate mutation):
 * the truth its reverse mirrors.
 */
export const AUTHORITATIVE_TABLES: readonly MappingTable[] = SERVED.relations.filter((r) => r.writer === 'VIEWER').map((r) => r.table as MappingTable);

/** Whether `table` is the mirror of another (its rows, sequences included, copy the authoritative side). */
export function isMirror(table: MappingTable): boolean {
  const r = reverseOf(table);
  return r !== undefined && AUTHORITATIVE_TABLES.includes(r);
}
