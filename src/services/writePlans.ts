/**
 * The pure half of the declared mutations (`@create`, `@update`, `@relate`… in schema/): input and
 * model in, plan out, no I/O. modelWrites.ts runs what these build. With the product's model:
 *
 *   createPlan(model, 'pin', { kind: 'createPin', viewer: ann, fields: { title: 'Tea' }, refs: { board: annsBoard } })
 *   // { shard: shardOf(annsBoard), lock: { id: annsBoard, type: 'board' },
 *   //   data: { title: 'Tea', board_id: '…', pinner_id: '…' },
 *   //   listings: [{ ref: 'board', table: 'board_has_pins', from: annsBoard, local: true },
 *   //              { ref: 'pinner', table: 'user_has_pins', from: ann, local: true }] }
 */
import { ShardqlError } from '../core/errors.ts';
import { formatId, shardOf } from '../core/ids.ts';
import type { MappingTable } from '../core/mappings.ts';
import type { ModelData, MutationAction, MutationDef, ObjectDef, RefDef, RelationDef, StoredFieldDef } from '../core/model/model.ts';
import { checkStored, invalidArgument } from '../core/validate.ts';
import type { EdgeChange } from '../storage/mappingStore.ts';
import type { ObjectData, StoredObject } from '../storage/objectStore.ts';

/** A mutation's scalar input: undefined leaves a field, null clears it (on update), a string sets it. */
export type FieldInput = Readonly<Record<string, string | null | undefined>>;

/** A checked update: blob key → new value, null to clear. */
export type Patch = Readonly<Record<string, string | null>>;

export function objectDef(model: ModelData, key: string): ObjectDef {
  const o = model.objects.find((x) => x.key === key);
  if (!o) throw new Error(`the model declares no object type ${key}`);
  return o;
}

export function relationDef(model: ModelData, table: string): RelationDef {
  const r = model.relations.find((x) => x.table === table);
  if (!r) throw new Error(`the model declares no relation ${table}`);
  return r;
}

/** The declared stored field `field` of `type`. */
export function storedField(type: ObjectDef, field: string): StoredFieldDef {
  const f = type.stored.find((x) => x.field === field);
  if (!f) throw new Error(`${type.name} declares no stored field ${field}`);
  return f;
}

/** The declared mutation `name`, which must do `action`. */
export function mutationDef(model: ModelData, name: string, ...actions: MutationAction[]): MutationDef {
  const m = model.mutations.find((x) => x.name === name);
  if (!m || !actions.includes(m.action)) throw new Error(`the model declares no ${actions.join(' or ')} mutation ${name}`);
  return m;
}

/** The reference naming the user who owns objects of `type` (`@ref(owner: true)`), if any. */
export function ownerRef(type: ObjectDef): RefDef | undefined {
  return type.refs.find((r) => r.owner);
}

/**
 * Whose thing `o` is: the viewer's type owns itself (a followed user), any other type is its owner
 * ref's (a pin's pinner, a board's owner). Undefined for a type without an owner.
 */
export function ownerOf(model: ModelData, o: StoredObject): bigint | undefined {
  if (o.type === model.viewer) return o.id;
  const ref = ownerRef(objectDef(model, o.type));
  return ref === undefined ? undefined : (o.refs as Record<string, bigint | undefined>)[ref.field];
}

/**
 * A new object's stored fields, checked (format, maxLength, required): blob key → value. A
 * required field must be there and non-empty; an optional one left out, null or empty is not kept.
 */
export function createFields(type: ObjectDef, input: FieldInput): ObjectData {
  const data: ObjectData = {};
  for (const f of type.stored) {
    const v = input[f.field];
    if (v === undefined || v === null) {
      if (f.required) throw invalidArgument(f.field, 'non-empty text', v);
      continue;
    }
    const checked = checkStored(f, v);
    if (checked !== '') data[f.key] = checked;
  }
  return data;
}

/**
 * An update's patch, checked: a field left out (or undefined) stays, null clears it, a value
 * replaces it. A required field is never cleared; an immutable one never changes.
 */
export function updatePatch(type: ObjectDef, input: FieldInput): Patch {
  const patch: Record<string, string | null> = {};
  for (const f of type.stored) {
    const v = input[f.field];
    if (v === undefined) continue;
    if (f.immutable) throw new ShardqlError('INVALID_ARGUMENT', `Expected ${f.field} to stay as it was made, got a change`, { argument: f.field });
    if (v === null) {
      if (f.required) throw new ShardqlError('INVALID_ARGUMENT', `Expected ${f.field} to be text, got null`, { argument: f.field });
      patch[f.key] = null;
    } else {
      patch[f.key] = checkStored(f, v);
    }
  }
  return patch;
}

/** Applies a patch to a blob: null removes the key, a value sets it. */
export function applyPatch(data: ObjectData, patch: Patch): ObjectData {
  const out: ObjectData = { ...data };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** A list a new object joins: `table(from → the object)`, written in its transaction when `local`. */
export interface Listing {
  /** The reference whose object lists it. */
  readonly ref: string;
  readonly table: MappingTable;
  readonly from: bigint;
  /** On the new object's shard: written in its transaction. Else a product step writes it. */
  readonly local: boolean;
}

/** How a declared create runs: where, under which lock, what it writes. */
export interface CreatePlan {
  /** The mutation's name: for logs, faults and idempotency fingerprints. */
  readonly kind: string;
  readonly type: ObjectDef;
  /** The new object's shard: its `placeWith` object's, else a random open one. */
  readonly shard: number;
  /**
   * The `placeWith` object, locked and checked active in the transaction (NOT_FOUND if deleted
   * meanwhile): a board deleted at the same time takes no new pin. Null when there is none or
   * it is the viewer (checked before; their own cascade finds what they make).
   */
  readonly lock: { readonly id: bigint; readonly type: string } | null;
  /** The blob: the stored fields, then each reference as a decimal ID under its key. */
  readonly data: ObjectData;
  readonly listings: readonly Listing[];
  /** The arguments, for the idempotency fingerprint. */
  readonly args: Readonly<Record<string, unknown>>;
}

export interface CreateInput {
  readonly kind: string;
  readonly viewer: bigint;
  /** Checked stored fields (`createFields`). */
  readonly fields: ObjectData;
  /** IDs of the references other than the owner's (the viewer's), by field. */
  readonly refs: Readonly<Record<string, bigint | undefined>>;
  /** Picks a random open shard, for a type placed with nothing. */
  readonly openShard?: () => number;
  /** References whose list a product step writes instead of the transaction (a list on another shard). */
  readonly listedByStep?: readonly string[];
}

/** Builds the plan of a declared create of `typeKey` (see the example at the top). */
export function createPlan(model: ModelData, typeKey: string, input: CreateInput): CreatePlan {
  const type = objectDef(model, typeKey);
  const ids = new Map<RefDef, bigint>();
  for (const ref of type.refs) {
    const id = ref.owner ? input.viewer : input.refs[ref.field];
    if (id !== undefined) ids.set(ref, id);
  }
  const place = type.placeWith === null ? undefined : type.refs.find((r) => r.field === type.placeWith);
  const placeId = place === undefined ? undefined : ids.get(place);
  if (place !== undefined && placeId === undefined) throw invalidArgument(`${place.field}Id`, `the ID of a ${place.to}`, placeId);
  let shard: number;
  if (placeId !== undefined) shard = shardOf(placeId);
  else if (input.openShard) shard = input.openShard();
  else throw new Error(`${type.name} is placed on a random open shard: the plan needs openShard`);

  const data: ObjectData = { ...input.fields };
  for (const [ref, id] of ids) data[ref.key] = formatId(id);
  const byStep = new Set(input.listedByStep ?? []);
  const listings: Listing[] = [];
  for (const [ref, id] of ids) {
    if (ref.listedIn === null || byStep.has(ref.field)) continue;
    const local = shardOf(id) === shard;
    if (!local) throw new Error(`${type.name}.${ref.field} is listed in ${ref.listedIn} on another shard than the ${type.key}: a product hook must list it by a step`);
    listings.push({ ref: ref.field, table: ref.listedIn as MappingTable, from: id, local });
  }
  const refArgs = Object.fromEntries([...ids].filter(([ref]) => !ref.owner).map(([ref, id]) => [ref.field, formatId(id)]));
  return {
    kind: input.kind,
    type,
    shard,
    lock: place !== undefined && placeId !== undefined && !place.owner ? { id: placeId, type: place.to } : null,
    data,
    listings,
    args: { ...refArgs, fields: input.fields },
  };
}

/** The edges that list a just-made object `o` in its transaction (newest first, by its time). */
export function listingEdges(plan: CreatePlan, o: Pick<StoredObject, 'id' | 'createdAt'>): EdgeChange[] {
  return plan.listings.filter((l) => l.local).map((l) => ({ op: 'add', table: l.table, from: l.from, to: o.id, sequence: o.createdAt }));
}

/**
 * Whether `viewer` may change `o` (update it, delete it, reorder its lists): whose thing it is
 * (`ownerOf`). FORBIDDEN otherwise, naming the type: "Only the owner may change this board".
 */
export function checkOwner(model: ModelData, o: StoredObject, viewer: bigint): void {
  if (ownerOf(model, o) !== viewer) throw new ShardqlError('FORBIDDEN', `Only the owner may change this ${o.type}`);
}

/**
 * The edge a @relate / @unrelate writes: `relation(from → target)`, an add at `sequence`; `from` is
 * the viewer, or the owned object whose list it is (a collection).
 */
export function relationChange(relation: RelationDef, op: 'add' | 'remove', from: bigint, target: bigint, sequence: number): EdgeChange & { readonly sequence: number } {
  return { op, table: relation.table as MappingTable, from, to: target, sequence };
}
