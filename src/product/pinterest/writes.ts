import { formatId } from '../../core/ids.ts';
import { servedModel } from '../../core/model/served.ts';
import { checkEmail, checkStored, checkUsername } from '../../core/validate.ts';
import type { Storage } from '../../storage/index.ts';
import { isActive, type ObjectData, type StoredObject } from '../../storage/objectStore.ts';
import type { OpContext } from '../../storage/sqlStats.ts';
import type { WriteOpts } from '../../services/modelWrites.ts';
import { DeclaredWrites, type WritesDeps } from '../../services/writes.ts';
import { fanOutSteps, happeningEvents, ownBoard, productHooks, refStep } from './hooks.ts';
import { createUser } from './users.ts';
import { applyPatch, objectDef, storedField, updatePatch } from '../../services/writePlans.ts';

export type { WriteOpts, WritesDeps } from '../../services/writes.ts';

type PinFields = { title?: string | null; description?: string | null; link?: string | null; imageUrl?: string | null };

function optional<T>(value: string | null | undefined, check: (v: string) => T): T | null | undefined {
  return value === undefined || value === null ? value : check(value);
}

/**
 * The product's writes: its declared mutations run from the model (`model`, modelWrites.ts, with
 * the product's hooks, hooks.ts), typed by name for the product's own callers (the demo
 * seed, the importer, tests), and its @custom mutations (sign-up, the viewer's own account, repin).
 */
export class ProductWrites extends DeclaredWrites {
  readonly #s: Storage;
  readonly #deps: WritesDeps;

  constructor(deps: WritesDeps) {
    super(deps, productHooks({ storage: deps.storage, jobs: deps.jobs, log: deps.log }));
    this.#s = deps.storage;
    this.#deps = deps;
  }

  // Users (custom: a sign-up claims its unique names through the mod shard; the viewer is the one acted on)

  async createUser(
    input: { username: string; email?: string | null; displayName?: string | null; about?: string | null },
    ctx: OpContext = {},
    opts: WriteOpts = {},
  ): Promise<StoredObject> {
    const username = checkUsername(input.username);
    const email = optional(input.email, (v) => checkEmail(v));
    const data: ObjectData = {};
    const user = objectDef(servedModel(), servedModel().viewer);
    const displayName = optional(input.displayName, (v) => checkStored(storedField(user, 'displayName'), v));
    const about = optional(input.about, (v) => checkStored(storedField(user, 'about'), v));
    if (displayName) data.displayName = displayName;
    if (about) data.about = about;
    return createUser(
      { objects: this.#s.objects, lookups: this.#s.lookups, topology: this.#deps.topology, ...(this.#deps.random ? { random: this.#deps.random } : {}) },
      { username, email: email ?? undefined, data, idempotencyKey: opts.idempotencyKey },
      ctx,
    );
  }

  async updateViewer(viewer: bigint | undefined, input: { displayName?: string | null; about?: string | null }, ctx: OpContext = {}): Promise<StoredObject> {
    const patch = updatePatch(objectDef(servedModel(), servedModel().viewer), input);
    const me = await this.model.viewer(viewer, ctx);
    return this.#s.objects.update(me.id, (cur) => applyPatch(cur.data, patch), ctx);
  }

  /**
   * Deletes the viewer's account and everything it owns (services/cascade.ts): their boards and
   * pins (with their likes, comments and repin edges), their likes and follows in both directions.
   * The username stays claimed, so nobody can take over a deleted name.
   */
  async deleteViewer(viewer: bigint | undefined, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<boolean> {
    const id = this.model.viewerId(viewer);
    const me = await this.#s.objects.get(id, ctx);
    // A retry with its key of a delete that went through (the account is gone now) answers as the
    // first attempt did, finishing what that one left; without a key, a deleted viewer is refused.
    if (!me || (!isActive(me) && opts.idempotencyKey === undefined)) this.model.checkViewer(me);
    return this.model.run(this.model.cascadePlan('deleteViewer', me!), id, opts, ctx);
  }

  // Boards

  createBoard(viewer: bigint | undefined, input: { name: string; description?: string | null }, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<StoredObject> {
    return this.model.create('createBoard', viewer, { fields: input, refs: {} }, ctx, opts);
  }

  updateBoard(viewer: bigint | undefined, id: bigint, input: { name?: string | null; description?: string | null }, ctx: OpContext = {}): Promise<StoredObject> {
    return this.model.update('updateBoard', viewer, id, input, ctx);
  }

  /** Deletes a board and, as deleting each pin does, every pin on it; its follows go both ways (cascade.ts). */
  deleteBoard(viewer: bigint | undefined, id: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<boolean> {
    return this.model.delete('deleteBoard', viewer, id, ctx, opts);
  }

  // Pins

  createPin(viewer: bigint | undefined, boardId: bigint, input: PinFields, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<StoredObject> {
    return this.model.create('createPin', viewer, { fields: input, refs: { board: boardId } }, ctx, opts);
  }

  updatePin(viewer: bigint | undefined, id: bigint, input: PinFields, ctx: OpContext = {}): Promise<StoredObject> {
    return this.model.update('updatePin', viewer, id, input, ctx);
  }

  /** Deletes a pin; its likes (both sides), comments and repin edge go with it (cascade.ts). */
  deletePin(viewer: bigint | undefined, id: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<boolean> {
    return this.model.delete('deletePin', viewer, id, ctx, opts);
  }

  /** A repin is a new pin on the viewer's board (the board's shard), then the original's repin edge. */
  async repin(viewer: bigint | undefined, pinId: bigint, boardId: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<StoredObject> {
    const me = await this.model.viewer(viewer, ctx);
    const [original] = await Promise.all([this.model.active(pinId, 'pin', ctx), ownBoard(this.#s, me.id, boardId, ctx)]);
    const copy: ObjectData = {};
    for (const k of ['title', 'description', 'link', 'imageUrl']) if (original.data[k] !== undefined) copy[k] = original.data[k];
    const made = this.model.createPlan('repin', 'pin', me.id, { fields: copy, refs: { board: boardId, via: original.id } });
    const plan = this.model.objectPlan('repin', made.shard, { pinId: formatId(pinId), boardId: formatId(boardId) }, async (w) => {
      const { object: pin } = await this.model.writeCreated(w, made);
      const events = happeningEvents(w, { kind: 'REPIN', actor: me.id, object: original.id, detail: pin.id, ts: pin.createdAt }, original.refs.pinner);
      // A repin is a pin of its own: fanned out to the repinner's and the board's followers.
      const link = refStep('pin', 'via', original.id, pin.id, true);
      return { result: pin, steps: [link, ...events, ...fanOutSteps(this.#deps.jobs, pin)] };
    });
    return this.model.run({ ...plan, ...this.model.liveRecord }, me.id, opts, ctx);
  }

  movePin(viewer: bigint | undefined, boardId: bigint, pinId: bigint, afterPinId: bigint | null, ctx: OpContext = {}): Promise<StoredObject> {
    return this.model.reorder('movePin', viewer, boardId, pinId, afterPinId, ctx);
  }

  // Comments

  createComment(viewer: bigint | undefined, pinId: bigint, text: string, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<StoredObject> {
    return this.model.create('createComment', viewer, { fields: { text }, refs: { pin: pinId } }, ctx, opts);
  }

  /** The author or the pin's owner may delete a comment. */
  deleteComment(viewer: bigint | undefined, id: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<boolean> {
    return this.model.delete('deleteComment', viewer, id, ctx, opts);
  }

  // Two-sided relations: the viewer's side first, then the other object's side.

  likePin(viewer: bigint | undefined, pinId: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<StoredObject> {
    return this.model.relate('likePin', viewer, pinId, ctx, opts);
  }
  unlikePin(viewer: bigint | undefined, pinId: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<StoredObject> {
    return this.model.relate('unlikePin', viewer, pinId, ctx, opts);
  }
  followUser(viewer: bigint | undefined, userId: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<StoredObject> {
    return this.model.relate('followUser', viewer, userId, ctx, opts);
  }
  unfollowUser(viewer: bigint | undefined, userId: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<StoredObject> {
    return this.model.relate('unfollowUser', viewer, userId, ctx, opts);
  }
  followBoard(viewer: bigint | undefined, boardId: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<StoredObject> {
    return this.model.relate('followBoard', viewer, boardId, ctx, opts);
  }
  unfollowBoard(viewer: bigint | undefined, boardId: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<StoredObject> {
    return this.model.relate('unfollowBoard', viewer, boardId, ctx, opts);
  }
}
