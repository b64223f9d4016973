/**
 * The declared mutations, run from the model (`@create`, `@update`, `@delete`, `@relate`,
 * `@unrelate`, `@reorder` in schema/): each checks its input against the declared fields and the
 * viewer's ownership against the declared owner, builds its plan (writePlans.ts, pure) and runs it
 * through the WriteExecutor. A product's own behaviour (events, feeds, rules beyond ownership)
 * attaches through its hooks (writeHooks.ts); its @custom mutations use the helpers here.
 *
 * A write whose changes live on one shard is one local transaction (an object and its list edges
 * commit together); a write that spans shards records its remaining steps in the intent log in
 * its first transaction, and each later step mirrors the side written first. Objects are written
 * before the edges on other shards that point at them, and those edges removed before (or with)
 * their objects; lists skip inactive objects, so no list shows a missing one.
 */
import { ShardqlError } from '../core/errors.ts';
import { formatId, shardOf } from '../core/ids.ts';
import type { MappingTable } from '../core/mappings.ts';
import type { ModelData } from '../core/model/model.ts';
import type { ObjectType } from '../core/objectTypes.ts';
import type { Topology } from '../core/topology.ts';
import type { Storage } from '../storage/index.ts';
import { isActive, type ObjectData, type StoredObject } from '../storage/objectStore.ts';
import type { OpContext } from '../storage/sqlStats.ts';
import { deleteInTx, listingStep } from './cascade.ts';
import { randomOpenShard } from './placement.ts';
import { createClaimed, type Claim } from './uniqueClaims.ts';
import type { DeleteGrant, WriteHooks } from './writeHooks.ts';
import { applyPatch, checkOwner, createFields, createPlan, mutationDef, objectDef, ownerOf, relationChange, relationDef, updatePatch, listingEdges, type CreatePlan, type FieldInput } from './writePlans.ts';
import type { IdempotencyOptions, Learned, LocalWrite, RelationPlan, WriteExecutor, WritePlan } from './writeExecutor.ts';

/** Options of one mutation call. */
export interface WriteOpts {
  /** A client's idempotency key: a retry with the same key returns the first result. */
  readonly idempotencyKey?: string | undefined;
  /** Told what the write knows for certain about the state it left (relations): the request's loaders keep it. */
  readonly learned?: ((fact: Learned) => void) | undefined;
}

export interface ModelWritesDeps {
  readonly storage: Storage;
  readonly topology: () => Topology;
  readonly model: ModelData;
  /** Runs the plans; its owner waits for it (`settled`) before closing storage. */
  readonly executor: WriteExecutor;
  /** The product's hooks (none: the model's behaviour alone). */
  readonly hooks?: WriteHooks | undefined;
  /** Clock of relation edges' sequences (default Date.now). */
  readonly now?: (() => number) | undefined;
  /** Picks a random open shard (default Math.random). */
  readonly random?: (() => number) | undefined;
}

/** A create's input: the stored fields by field name, and the IDs of its references other than the owner's (the viewer). */
export interface CreateArgs {
  readonly fields: FieldInput;
  readonly refs: Readonly<Record<string, bigint | undefined>>;
}

/** The viewer a sign-up's write runs as: nobody yet (no ID has 0). */
const SIGN_UP_VIEWER = 0n;

type ResultRecord<R> = Pick<WritePlan<R>, 'toRecord' | 'fromRecord'>;

export class ModelWrites {
  readonly #s: Storage;
  readonly #deps: ModelWritesDeps;
  readonly #model: ModelData;
  readonly #hooks: WriteHooks;
  readonly #exec: WriteExecutor;
  readonly #now: () => number;

  constructor(deps: ModelWritesDeps) {
    this.#s = deps.storage;
    this.#deps = deps;
    this.#model = deps.model;
    this.#hooks = deps.hooks ?? {};
    this.#exec = deps.executor;
    this.#now = deps.now ?? Date.now;
  }

  // Declared mutations, by name.

  /**
   * `@create`: a new object of the mutation's type, with the lists its references name, on its
   * `placeWith` object's shard. Its unique values (`@stored(unique:)`) are claimed through the mod
   * shard around the write (uniqueClaims.ts: `<NAMESPACE>_TAKEN` when held). A create of the
   * viewer's type is a sign-up: it needs no viewer (its hooks see viewer 0).
   */
  async create(name: string, viewer: bigint | undefined, args: CreateArgs, ctx: OpContext, opts: WriteOpts = {}): Promise<StoredObject> {
    const type = objectDef(this.#model, mutationDef(this.#model, name, 'CREATE').type!);
    const fields = createFields(type, args.fields);
    const signUp = type.key === this.#model.viewer;
    const me = signUp ? SIGN_UP_VIEWER : (await this.viewer(viewer, ctx)).id;
    const hooks = this.#hooks.create?.[type.key];
    await hooks?.check?.({ viewer: me, refs: args.refs, ctx });
    const claims: Claim[] = type.stored.flatMap((f): Claim[] => (f.uniqueIn !== null && typeof fields[f.key] === 'string' ? [[f.uniqueIn, fields[f.key] as string]] : []));
    const write = (marker: ObjectData, writeOpts: WriteOpts): Promise<StoredObject> => {
      const plan = this.createPlan(name, type.key, me, { fields: { ...fields, ...marker }, refs: args.refs });
      const w = this.objectPlan(plan.kind, plan.shard, plan.args, async (tx) => {
        const { object, placedWith } = await this.writeCreated(tx, plan);
        const listedElsewhere = plan.remote.map((l) => listingStep({ table: l.table as MappingTable }, l.from, object.id, true));
        return { result: object, steps: [...listedElsewhere, ...(hooks?.created?.(tx, { viewer: me, object, placedWith }) ?? [])] };
      });
      return this.run(w, me, writeOpts, ctx);
    };
    // A sign-up's write has no viewer to scope an idempotency key by: without claims it records none.
    if (claims.length === 0) return write({}, signUp ? {} : opts);
    // The claims' token (from the idempotency key) makes a retry answer with its first object, so
    // the write itself records no idempotency key: a rolled-back first attempt must not be replayed.
    return createClaimed(
      { objects: this.#s.objects, lookups: this.#s.lookups },
      {
        claims,
        idempotencyKey: opts.idempotencyKey,
        make: (marker) => write(marker, {}),
        unmake: (o) => this.run(this.cascadePlan(`${name}:undo`, o), me, {}, ctx),
      },
      ctx,
    );
  }

  /** `@update`: the owner patches an object's stored fields (undefined leaves, null clears). */
  async update(name: string, viewer: bigint | undefined, id: bigint, input: FieldInput, ctx: OpContext): Promise<StoredObject> {
    const type = objectDef(this.#model, mutationDef(this.#model, name, 'UPDATE').type!);
    const patch = updatePatch(type, input);
    const me = await this.viewer(viewer, ctx);
    return this.#s.objects.update(
      id,
      (cur) => {
        if (cur.type !== type.key) throw new ShardqlError('NOT_FOUND', `No ${type.key} with ID ${id}`);
        checkOwner(this.#model, cur, me.id);
        return applyPatch(cur.data, patch);
      },
      ctx,
    );
  }

  /** `@delete`: the owner (or whom the type's hook allows) deletes an object and what it takes with it (cascade.ts). */
  async delete(name: string, viewer: bigint | undefined, id: bigint, ctx: OpContext, opts: WriteOpts = {}): Promise<boolean> {
    const type = objectDef(this.#model, mutationDef(this.#model, name, 'DELETE').type!);
    const me = await this.viewer(viewer, ctx);
    const o = await this.#s.objects.get(id, ctx);
    if (!o || o.type !== type.key) throw new ShardqlError('NOT_FOUND', `No ${type.key} with ID ${id}`);
    const hooks = this.#hooks.delete?.[type.key];
    let grant: DeleteGrant = {};
    if (hooks?.authorize) grant = await hooks.authorize({ viewer: me.id, object: o, ctx });
    else checkOwner(this.#model, o, me.id);
    const deleted = await this.run(this.cascadePlan(name, o, grant.changedLists), me.id, opts, ctx);
    await hooks?.deleted?.(o);
    return deleted;
  }

  /**
   * `@relate` / `@unrelate`: the viewer's edge to the target. The viewer's side (authoritative) in
   * the first transaction with the intent, then the target's side mirrored from it
   * (WriteExecutor.relate: three round trips). Adding twice is one edge. A relation from an owned
   * type (not the viewer's) takes `listOwner`, the object whose list it is: only its owner may.
   */
  async relate(name: string, viewer: bigint | undefined, targetId: bigint, ctx: OpContext, opts: WriteOpts = {}, listOwner?: bigint): Promise<StoredObject> {
    const m = mutationDef(this.#model, name, 'RELATE', 'UNRELATE');
    const op = m.action === 'RELATE' ? 'add' : 'remove';
    const relation = relationDef(this.#model, m.relation!);
    const viewerId = this.viewerId(viewer);
    const ownList = relation.from !== this.#model.viewer;
    if (ownList && listOwner === undefined) throw new ShardqlError('INVALID_ARGUMENT', `${name} needs ${relation.from}Id, the ${relation.from} whose list it changes`);
    // The viewer, the target (and the list's owner) in one read (one cache round trip when cached).
    const read = await this.#s.objects.getMany(ownList ? [viewerId, targetId, listOwner!] : [viewerId, targetId], ctx);
    const me = this.checkViewer(read.get(viewerId));
    const target = read.get(targetId);
    if (!target || target.type !== relation.to || (op === 'add' && !isActive(target))) {
      throw new ShardqlError('NOT_FOUND', `No ${relation.to} with ID ${targetId}`, op === 'add' ? { id: formatId(targetId) } : {});
    }
    let from = me.id;
    if (ownList) {
      const list = read.get(listOwner!);
      if (!list || list.type !== relation.from || !isActive(list)) throw new ShardqlError('NOT_FOUND', `No ${relation.from} with ID ${listOwner}`, { id: formatId(listOwner!) });
      checkOwner(this.#model, list, me.id);
      from = list.id;
    }
    const hooks = this.#hooks.relation?.[relation.table];
    hooks?.check?.({ op, viewer: me.id, target });
    const sequence = this.#now();
    const records = hooks?.records?.({ op, viewer: me.id, target, owner: ownerOf(this.#model, target), sequence }) ?? {};
    if (relation.inverse === null) {
      // One side only (a reading list): one local transaction on the list owner's shard. Nothing
      // on the target's shard names the edge, so a deleted target's edges go by reconcile (lists
      // skip it at once).
      const change = relationChange(relation, op, from, targetId, sequence);
      const local = this.objectPlan(`${op}:${relation.table}`, shardOf(from), { target: formatId(targetId), from: formatId(from) }, async (w) => {
        await w.edges([change]);
        return { result: target, steps: [] };
      });
      const result = await this.run({ ...local, ...(op === 'add' ? this.liveRecord : this.objectRecord) }, me.id, opts, ctx);
      opts.learned?.({ kind: 'edge', table: relation.table as MappingTable, from, to: targetId, present: op === 'add' });
      if (op === 'remove') await hooks?.removed?.(me.id);
      return result;
    }
    const plan: RelationPlan<StoredObject> = {
      kind: `${op}:${relation.table}`,
      args: ownList ? { target: formatId(targetId), from: formatId(from) } : { target: formatId(targetId) },
      change: relationChange(relation, op, from, targetId, sequence),
      ...(records.events ? { events: records.events } : {}),
      ...(records.notifies !== undefined ? { notifies: records.notifies } : {}),
      result: target,
      ...(op === 'add' ? this.liveRecord : this.objectRecord),
    };
    const result = await this.#exec.relate(plan, this.idempotency(me.id, opts), ctx, opts.learned);
    if (op === 'remove') await hooks?.removed?.(me.id);
    return result;
  }

  /** `@reorder`: the owner of a list moves `id` right after `after` in its owner's order (first when null). Answers the list's owner. */
  async reorder(name: string, viewer: bigint | undefined, listOwner: bigint, id: bigint, after: bigint | null, ctx: OpContext): Promise<StoredObject> {
    const relation = relationDef(this.#model, mutationDef(this.#model, name, 'REORDER').relation!);
    const me = await this.viewer(viewer, ctx);
    const owner = await this.active(listOwner, relation.from, ctx);
    checkOwner(this.#model, owner, me.id);
    await this.#s.mappings.move(relation.table as MappingTable, listOwner, id, after, ctx);
    return owner;
  }

  // Parts of the declared writes, for a product's custom mutations.

  /**
   * The plan of a create of `typeKey` by `viewer` (input checked), with the type's hooks'
   * step-written lists, and `remote`: the lists on another shard than the new object's that no hook
   * writes (an answer in its author's list), each written by a `syncListing` step of the create.
   */
  createPlan(kind: string, typeKey: string, viewer: bigint, input: { readonly fields: CreatePlan['data']; readonly refs: CreateArgs['refs'] }): CreatePlan & { readonly remote: readonly { readonly table: string; readonly from: bigint }[] } {
    const type = objectDef(this.#model, typeKey);
    const byHooks = this.#hooks.create?.[typeKey]?.listedByStep ?? [];
    // The shard first (every list left to steps), so that the second plan lands on the same one.
    let open: number | undefined;
    const openShard = (): number => (open ??= randomOpenShard(this.#deps.topology(), this.#deps.random));
    const base = { kind, viewer, fields: input.fields, refs: input.refs, openShard };
    const listed = type.refs.filter((r) => r.listedIn !== null).map((r) => r.field);
    const { shard } = createPlan(this.#model, typeKey, { ...base, listedByStep: listed });
    const remote = type.refs.flatMap((r) => {
      const from = r.owner ? viewer : input.refs[r.field];
      return r.listedIn !== null && !byHooks.includes(r.field) && from !== undefined && shardOf(from) !== shard ? [{ field: r.field, table: r.listedIn, from }] : [];
    });
    const plan = createPlan(this.#model, typeKey, { ...base, listedByStep: [...byHooks, ...remote.map((r) => r.field)] });
    return { ...plan, remote: remote.map(({ table, from }) => ({ table, from })) };
  }

  /** A create's first transaction: its `placeWith` object locked active, the object, its lists on this shard. */
  async writeCreated(w: LocalWrite, plan: CreatePlan): Promise<{ object: StoredObject; placedWith: StoredObject | undefined }> {
    const placedWith = plan.lock === null ? undefined : await w.lockActive(plan.lock.id, plan.lock.type as ObjectType);
    const object = await w.create(plan.type.key as ObjectType, plan.data);
    const edges = listingEdges(plan, object);
    if (edges.length > 0) await w.edges(edges);
    return { object, placedWith };
  }

  /**
   * A delete that cascades: the object off its parents' lists and soft-deleted, then its purge
   * (cascade.ts). `changedLists`: cache keys dropped with the commit when it deleted something.
   */
  cascadePlan(kind: string, o: StoredObject, changedLists: readonly string[] = []): WritePlan<boolean> {
    // The refs deleteInTx follows never change, so `o` as read before is good enough; the soft
    // delete locks the row. Deleting again finishes what is left (the steps are idempotent).
    return this.deletePlan(kind, shardOf(o.id), o.id, async (w) => {
      const { deleted, steps } = await deleteInTx(w, o);
      if (deleted) w.changedLists.push(...changedLists);
      return { result: deleted, steps };
    });
  }

  run<R>(plan: WritePlan<R>, viewer: bigint, opts: WriteOpts, ctx: OpContext): Promise<R> {
    return this.#exec.run(plan, this.idempotency(viewer, opts), ctx);
  }

  idempotency(viewer: bigint, opts: WriteOpts): IdempotencyOptions | undefined {
    const key = opts.idempotencyKey;
    return key === undefined ? undefined : { scope: formatId(viewer), key };
  }

  /** A result that is one object, stored as its ID for idempotent replays. */
  readonly objectRecord: ResultRecord<StoredObject> = {
    toRecord: (o) => ({ id: formatId(o.id) }),
    fromRecord: async (r, ctx) => {
      const o = await this.#s.objects.get(BigInt(String(r.id)), ctx);
      if (!o) throw new ShardqlError('NOT_FOUND', `No object with ID ${String(r.id)}`);
      return o;
    },
  };

  /**
   * As `objectRecord`, for a write whose target may be deleted before it takes effect (a relation
   * added, a copy of an object): such a write answers NOT_FOUND and is undone, so its replay
   * answers NOT_FOUND too — as does that of a write whose target was deleted since, like a new
   * write of it would.
   */
  readonly liveRecord: ResultRecord<StoredObject> = {
    toRecord: this.objectRecord.toRecord,
    fromRecord: async (r, ctx) => {
      const o = await this.objectRecord.fromRecord(r, ctx);
      if (!isActive(o)) throw new ShardqlError('NOT_FOUND', `No ${o.type} with ID ${o.id}`, { id: formatId(o.id) });
      return o;
    },
  };

  /** A plan whose result is one object. */
  objectPlan(kind: string, shard: number, args: unknown, first: WritePlan<StoredObject>['first']): WritePlan<StoredObject> {
    return { kind, shard, args, first, ...this.objectRecord };
  }

  deletePlan(kind: string, shard: number, id: bigint, first: WritePlan<boolean>['first']): WritePlan<boolean> {
    return { kind, shard, args: { id: formatId(id) }, first, toRecord: (deleted) => ({ deleted }), fromRecord: async (r) => r.deleted === true };
  }

  /** An active object of `type`; NOT_FOUND otherwise. */
  async active(id: bigint, type: string, ctx: OpContext): Promise<StoredObject> {
    const o = await this.#s.objects.get(id, ctx);
    if (!o || o.type !== type || !isActive(o)) throw new ShardqlError('NOT_FOUND', `No ${type} with ID ${id}`, { id: formatId(id) });
    return o;
  }

  /** The viewer, active; UNAUTHENTICATED without one or for a deleted one. */
  async viewer(viewer: bigint | undefined, ctx: OpContext): Promise<StoredObject> {
    return this.checkViewer(await this.#s.objects.get(this.viewerId(viewer), ctx));
  }

  viewerId(viewer: bigint | undefined): bigint {
    if (viewer === undefined) throw new ShardqlError('UNAUTHENTICATED', 'This operation needs a viewer: send Authorization: Bearer <token>');
    return viewer;
  }

  checkViewer(o: StoredObject | undefined): StoredObject {
    if (!o || !isActive(o)) throw new ShardqlError('UNAUTHENTICATED', 'The token belongs to a user who no longer exists');
    return o;
  }
}
