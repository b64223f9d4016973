import { ShardqlError } from '../core/errors.ts';
import { shardOf, formatId } from '../core/ids.ts';
import type { MappingTable } from '../core/mappings.ts';
import type { ObjectType } from '../core/objectTypes.ts';
import type { Topology } from '../core/topology.ts';
import { LIMITS, checkEmail, checkText, checkUrl, checkUsername } from '../core/validate.ts';
import type { Storage } from '../storage/index.ts';
import { isActive, type ObjectData, type StoredObject } from '../storage/objectStore.ts';
import type { OpContext } from '../storage/sqlStats.ts';
import type { BackgroundJobs, JobName, JobPayloads } from './backgroundJobs.ts';
import { deleteInTx } from './cascade.ts';
import { createUser } from './users.ts';
import { WriteExecutor, appendEventStep, type FaultHook, type IdempotencyOptions, type Learned, type LocalWrite, type WritePlan } from './writeExecutor.ts';
import { eventOf, type ActivityKind, type Happening } from '../core/events.ts';
import type { IntentStep } from '../storage/intentLog.ts';
import { notificationsCacheKey } from '../storage/eventStore.ts';

export interface WritesDeps {
  readonly storage: Storage;
  readonly topology: () => Topology;
  readonly now?: () => number;
  readonly random?: () => number;
  /** Fault injection at step boundaries (tests only). */
  readonly faults?: FaultHook;
  /**
   * The job queue, for the work a write hands to background workers: a new pin's fan-out to its
   * followers' stored feeds, a deleted pin's removal from them, an unfollow's cleaning. Absent:
   * none is enqueued (stored feeds then rely on readers' filtering and rebuilds).
   */
  readonly jobs?: BackgroundJobs;
  /** Where a failed enqueue is reported (the write itself stands). */
  readonly log?: (event: string, fields?: Record<string, unknown>) => void;
  /** See `GatewayConfig.intentCompletionDelayMs` (default 100). */
  readonly intentCompletionDelayMs?: number | undefined;
}

/** Options of one mutation call. */
export interface WriteOpts {
  /** A client's idempotency key: a retry with the same key returns the first result. */
  readonly idempotencyKey?: string | undefined;
  /** Told what the write knows for certain about the state it left (relations): the request's loaders keep it. */
  readonly learned?: ((fact: Learned) => void) | undefined;
}

type Patch = Record<string, string | null | undefined>;

/** Applies an update input: undefined leaves a field, null clears it, a value sets it. */
function applyPatch(data: ObjectData, patch: Patch): ObjectData {
  const out: ObjectData = { ...data };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

function optional<T>(value: string | null | undefined, check: (v: string) => T): T | null | undefined {
  return value === undefined || value === null ? value : check(value);
}

/**
 * The product's writes. Each one checks input and ownership first. A write whose changes live on
 * one shard is one local transaction (an object and its list edges commit together); a write that
 * spans shards goes through the WriteExecutor: its first transaction records the remaining steps in
 * the intent log, and each later step mirrors the side written first. Objects are written before
 * the edges on other shards that point at them, and those edges removed before (or with) their
 * objects; lists skip inactive objects, so no list shows a missing one.
 */
export class ProductWrites {
  readonly #s: Storage;
  readonly #deps: WritesDeps;
  readonly #now: () => number;
  readonly #exec: WriteExecutor;

  constructor(deps: WritesDeps) {
    this.#s = deps.storage;
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
    this.#exec = new WriteExecutor(deps.storage, deps.faults, { jobs: deps.jobs }, { log: deps.log, delayMs: deps.intentCompletionDelayMs });
  }

  /**
   * Resolves once the bookkeeping these writes left to run after they answered (deleting relation
   * writes' intents) is done: before closing storage, and in tests that count intents.
   */
  settled(): Promise<void> {
    return this.#exec.settled();
  }

  #run<R>(plan: WritePlan<R>, viewer: bigint, opts: WriteOpts, ctx: OpContext): Promise<R> {
    return this.#exec.run(plan, this.#idempotency(viewer, opts), ctx);
  }

  /**
   * Hands follow-up work that readers' filtering makes optional to the background workers, after
   * the write committed (a deleted pin out of stored feeds, an unfollowed source's pins). A failure
   * to enqueue does not fail the write: it is logged. Work a reader cannot do without (a new pin's
   * fan-out) is recorded in the write's intent instead (`#fanOutSteps`).
   */
  async #enqueue<K extends JobName>(job: K, payload: JobPayloads[K]): Promise<void> {
    if (!this.#deps.jobs) return;
    try {
      await this.#deps.jobs.enqueue(job, payload);
    } catch (err) {
      this.#deps.log?.('job_enqueue_failed', { kind: job, error: err instanceof Error ? err.message : String(err) });
    }
  }

  /**
   * A new pin (or repin) into its audience's stored feeds: the fan-out job recorded in the write's
   * intent, so it is enqueued after the commit by the writer or, if the writer dies first, by the
   * repair pass — an acknowledged pin never misses the stored feeds. (None without a queue.)
   */
  #fanOutSteps(pin: StoredObject): IntentStep[] {
    const { pinner, board } = pin.refs;
    const jobs = this.#deps.jobs;
    if (!jobs || pinner === undefined || board === undefined) return [];
    return [{ kind: 'enqueue', job: 'feed.fanout', data: jobs.encode('feed.fanout', { pin: pin.id, pinner, board, time: pin.createdAt }) }];
  }

  #idempotency(viewer: bigint, opts: WriteOpts): IdempotencyOptions | undefined {
    const key = opts.idempotencyKey;
    return key === undefined ? undefined : { scope: formatId(viewer), key };
  }

  /** A result that is one object, stored as its ID for idempotent replays. */
  readonly #objectRecord: Pick<WritePlan<StoredObject>, 'toRecord' | 'fromRecord'> = {
    toRecord: (o) => ({ id: formatId(o.id) }),
    fromRecord: async (r, ctx) => {
      const o = await this.#s.objects.get(BigInt(String(r.id)), ctx);
      if (!o) throw new ShardqlError('NOT_FOUND', `No object with ID ${String(r.id)}`);
      return o;
    },
  };

  /**
   * As `#objectRecord`, for a write whose target may be deleted before it takes effect (a like, a
   * follow, a repin): such a write answers NOT_FOUND and is undone, so its replay answers NOT_FOUND
   * too — as does that of a write whose target was deleted since, like a new write of it would.
   */
  readonly #liveRecord: Pick<WritePlan<StoredObject>, 'toRecord' | 'fromRecord'> = {
    toRecord: this.#objectRecord.toRecord,
    fromRecord: async (r, ctx) => {
      const o = await this.#objectRecord.fromRecord(r, ctx);
      if (!isActive(o)) throw new ShardqlError('NOT_FOUND', `No ${o.type} with ID ${o.id}`, { id: formatId(o.id) });
      return o;
    },
  };

  /** A plan whose result is one object. */
  #objectPlan(kind: string, shard: number, args: unknown, first: WritePlan<StoredObject>['first']): WritePlan<StoredObject> {
    return { kind, shard, args, first, ...this.#objectRecord };
  }

  #deletePlan(kind: string, shard: number, id: bigint, first: WritePlan<boolean>['first']): WritePlan<boolean> {
    return { kind, shard, args: { id: formatId(id) }, first, toRecord: (deleted) => ({ deleted }), fromRecord: async (r) => r.deleted === true };
  }

  async #active(id: bigint, type: ObjectType, ctx: OpContext): Promise<StoredObject> {
    const o = await this.#s.objects.get(id, ctx);
    if (!o || o.type !== type || !isActive(o)) throw new ShardqlError('NOT_FOUND', `No ${type} with ID ${id}`, { id: formatId(id) });
    return o;
  }

  async #viewer(viewer: bigint | undefined, ctx: OpContext): Promise<StoredObject> {
    return this.#checkViewer(await this.#s.objects.get(this.#viewerId(viewer), ctx));
  }

  #viewerId(viewer: bigint | undefined): bigint {
    if (viewer === undefined) throw new ShardqlError('UNAUTHENTICATED', 'This operation needs a viewer: send Authorization: Bearer <token>');
    return viewer;
  }

  #checkViewer(o: StoredObject | undefined): StoredObject {
    if (!o || !isActive(o)) throw new ShardqlError('UNAUTHENTICATED', 'The token belongs to a user who no longer exists');
    return o;
  }

  #own(o: StoredObject, ref: 'owner' | 'pinner', viewer: bigint, what: string): void {
    if (o.refs[ref] !== viewer) throw new ShardqlError('FORBIDDEN', `Only the owner may change this ${what}`);
  }

  /**
   * A happening's events, appended by a write's first transaction `w`: the actor's activity, and
   * the owner's notification unless the actor is the owner. Those on `w`'s shard are appended
   * there; the others become `appendEvent` steps copying the first of them, so an interrupted
   * write completes them and a retried one adds nothing (the event ID is the happening's).
   */
  #events(w: LocalWrite, h: Happening, owner: bigint | undefined): IntentStep[] {
    const events = [eventOf(h, h.actor, 'activity'), ...(owner !== undefined && owner !== h.actor ? [eventOf(h, owner, 'notifications')] : [])];
    const local = events.filter((e) => shardOf(e.user) === w.shard);
    const source = local[0];
    if (!source) throw new Error(`a ${h.kind} event has no sequence on shard ${w.shard}`);
    for (const e of local) w.appendEvent(e);
    return events.filter((e) => shardOf(e.user) !== w.shard).map((e) => appendEventStep(source, e));
  }

  // Users

  async createUser(
    input: { username: string; email?: string | null; displayName?: string | null; about?: string | null },
    ctx: OpContext = {},
  ): Promise<StoredObject> {
    const username = checkUsername(input.username);
    const email = optional(input.email, (v) => checkEmail(v));
    const data: ObjectData = {};
    const displayName = optional(input.displayName, (v) => checkText(v, 'displayName', LIMITS.displayNameMax));
    const about = optional(input.about, (v) => checkText(v, 'about', LIMITS.aboutMax));
    if (displayName) data.displayName = displayName;
    if (about) data.about = about;
    return createUser(
      { objects: this.#s.objects, lookups: this.#s.lookups, topology: this.#deps.topology, ...(this.#deps.random ? { random: this.#deps.random } : {}) },
      { username, email: email ?? undefined, data },
      ctx,
   );
  }

  async updateViewer(viewer: bigint | undefined, input: { displayName?: string | null; about?: string | null }, ctx: OpContext = {}): Promise<StoredObject> {
    const me = await this.#viewer(viewer, ctx);
    const patch: Patch = {
      displayName: optional(input.displayName, (v) => checkText(v, 'displayName', LIMITS.displayNameMax)),
      about: optional(input.about, (v) => checkText(v, 'about', LIMITS.aboutMax)),
    };
    return this.#s.objects.update(me.id, (cur) => applyPatch(cur.data, patch), ctx);
  }

  /**
   * Deletes the viewer's account and everything it owns (services/cascade.ts): their boards and
   * pins (with their likes, comments and repin edges), their likes and follows in both directions.
   * The username stays claimed, so nobody can take over a deleted name.
   */
  async deleteViewer(viewer: bigint | undefined, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<boolean> {
    const id = this.#viewerId(viewer);
    const me = await this.#s.objects.get(id, ctx);
    // A retry with its key of a delete that went through (the account is gone now) answers as the
    // first attempt did, finishing what that one left; without a key, a deleted viewer is refused.
    if (!me || (!isActive(me) && opts.idempotencyKey === undefined)) this.#checkViewer(me);
    return this.#run(this.#cascadePlan('deleteViewer', me!), id, opts, ctx);
  }

  /** A delete that cascades: the object off its parents' lists and soft-deleted, then its purge (cascade.ts). */
  #cascadePlan(kind: string, o: StoredObject): WritePlan<boolean> {
    // The refs deleteInTx follows never change, so `o` as read before is good enough; the soft
    // delete locks the row. Deleting again finishes what is left (the steps are idempotent).
    return this.#deletePlan(kind, shardOf(o.id), o.id, async (w) => {
      const { deleted, steps } = await deleteInTx(w, o);
      return { result: deleted, steps };
    });
  }

  // Boards

  async createBoard(
    viewer: bigint | undefined,
    input: { name: string; description?: string | null },
    ctx: OpContext = {},
    opts: WriteOpts = {},
  ): Promise<StoredObject> {
    const name = checkText(input.name, 'name', LIMITS.boardNameMax, { required: true });
    const description = optional(input.description, (v) => checkText(v, 'description', LIMITS.descriptionMax));
    const me = await this.#viewer(viewer, ctx);
    const data = { owner_id: formatId(me.id), name, ...(description ? { description } : {}) };
    // The board and its edge on the owner's shard commit together.
    const plan = this.#objectPlan('createBoard', shardOf(me.id), data, async (w) => {
      const board = await w.create('board', data);
      await w.edges([{ op: 'add', table: 'user_has_boards', from: me.id, to: board.id, sequence: board.createdAt }]);
      return { result: board, steps: [] };
    });
    return this.#run(plan, me.id, opts, ctx);
  }

  async updateBoard(
    viewer: bigint | undefined,
    id: bigint,
    input: { name?: string | null; description?: string | null },
    ctx: OpContext = {},
  ): Promise<StoredObject> {
    if (input.name === null) throw new ShardqlError('INVALID_ARGUMENT', 'Expected name to be text, got null', { argument: 'name' });
    const patch: Patch = {
      name: optional(input.name, (v) => checkText(v, 'name', LIMITS.boardNameMax, { required: true })),
      description: optional(input.description, (v) => checkText(v, 'description', LIMITS.descriptionMax)),
    };
    const me = await this.#viewer(viewer, ctx);
    return this.#s.objects.update(
      id,
      (cur) => {
        if (cur.type !== 'board') throw new ShardqlError('NOT_FOUND', `No board with ID ${id}`);
        this.#own(cur, 'owner', me.id, 'board');
        return applyPatch(cur.data, patch);
      },
      ctx,
   );
  }

  /** Deletes a board and, as deleting each pin does, every pin on it; its follows go both ways (cascade.ts). */
  async deleteBoard(viewer: bigint | undefined, id: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<boolean> {
    const me = await this.#viewer(viewer, ctx);
    const board = await this.#s.objects.get(id, ctx);
    if (!board || board.type !== 'board') throw new ShardqlError('NOT_FOUND', `No board with ID ${id}`);
    this.#own(board, 'owner', me.id, 'board');
    return this.#run(this.#cascadePlan('deleteBoard', board), me.id, opts, ctx);
  }

  // Pins

  #pinFields(input: { title?: string | null; description?: string | null; link?: string | null; imageUrl?: string | null }): Patch {
    return {
      title: optional(input.title, (v) => checkText(v, 'title', LIMITS.titleMax)),
      description: optional(input.description, (v) => checkText(v, 'description', LIMITS.descriptionMax)),
      link: optional(input.link, (v) => checkUrl(v, 'link')),
      imageUrl: optional(input.imageUrl, (v) => checkUrl(v, 'imageUrl')),
    };
  }

  async #ownBoard(viewer: bigint, boardId: bigint, ctx: OpContext): Promise<StoredObject> {
    const board = await this.#active(boardId, 'board', ctx);
    this.#own(board, 'owner', viewer, 'board');
    return board;
  }

  /** A pin lives on its board's shard (its owner's); the pin and both of its list edges commit together. */
  async #savePin(w: LocalWrite, me: bigint, boardId: bigint, data: ObjectData): Promise<StoredObject> {
    await w.lockActive(boardId, 'board'); // a board deleted meanwhile takes no new pin
    const pin = await w.create('pin', { ...data, board_id: formatId(boardId), pinner_id: formatId(me) });
    await w.edges([
      { op: 'add', table: 'board_has_pins', from: boardId, to: pin.id, sequence: pin.createdAt },
      { op: 'add', table: 'user_has_pins', from: me, to: pin.id, sequence: pin.createdAt },
    ]);
    return pin;
  }

  async createPin(
    viewer: bigint | undefined,
    boardId: bigint,
    input: { title?: string | null; description?: string | null; link?: string | null; imageUrl?: string | null },
    ctx: OpContext = {},
    opts: WriteOpts = {},
  ): Promise<StoredObject> {
    const fields = applyPatch({}, this.#pinFields(input));
    const me = await this.#viewer(viewer, ctx);
    await this.#ownBoard(me.id, boardId, ctx);
    const plan = this.#objectPlan('createPin', shardOf(boardId), { boardId: formatId(boardId), fields }, async (w) => {
      const pin = await this.#savePin(w, me.id, boardId, fields);
      return { result: pin, steps: this.#fanOutSteps(pin) };
    });
    return this.#run(plan, me.id, opts, ctx);
  }

  async updatePin(
    viewer: bigint | undefined,
    id: bigint,
    input: { title?: string | null; description?: string | null; link?: string | null; imageUrl?: string | null },
    ctx: OpContext = {},
  ): Promise<StoredObject> {
    const patch = this.#pinFields(input);
    const me = await this.#viewer(viewer, ctx);
    return this.#s.objects.update(
      id,
      (cur) => {
        if (cur.type !== 'pin') throw new ShardqlError('NOT_FOUND', `No pin with ID ${id}`);
        this.#own(cur, 'pinner', me.id, 'pin');
        return applyPatch(cur.data, patch);
      },
      ctx,
   );
  }

  async deletePin(viewer: bigint | undefined, id: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<boolean> {
    const me = await this.#viewer(viewer, ctx);
    const pin = await this.#s.objects.get(id, ctx);
    if (!pin || pin.type !== 'pin') throw new ShardqlError('NOT_FOUND', `No pin with ID ${id}`);
    this.#own(pin, 'pinner', me.id, 'pin');
    // Its likes (both sides), comments and repin edge go with it (cascade.ts).
    const deleted = await this.#run(this.#cascadePlan('deletePin', pin), me.id, opts, ctx);
    const { pinner, board } = pin.refs;
    if (pinner !== undefined && board !== undefined) await this.#enqueue('feed.retract', { pin: pin.id, pinner, board });
    return deleted;
  }

  /** A repin is a new pin on the viewer's board (the board's shard), then the original's repin edge. */
  async repin(viewer: bigint | undefined, pinId: bigint, boardId: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<StoredObject> {
    const me = await this.#viewer(viewer, ctx);
    const [original] = await Promise.all([this.#active(pinId, 'pin', ctx), this.#ownBoard(me.id, boardId, ctx)]);
    const copy: ObjectData = {};
    for (const k of ['title', 'description', 'link', 'imageUrl']) if (original.data[k] !== undefined) copy[k] = original.data[k];
    const plan = this.#objectPlan('repin', shardOf(boardId), { pinId: formatId(pinId), boardId: formatId(boardId) }, async (w) => {
      const pin = await this.#savePin(w, me.id, boardId, { ...copy, via_pin_id: formatId(original.id) });
      const events = this.#events(w, { kind: 'REPIN', actor: me.id, object: original.id, detail: pin.id, ts: pin.createdAt }, original.refs.pinner);
      // A repin is a pin of its own: fanned out to the repinner's and the board's followers.
      const link: IntentStep = { kind: 'syncRepin', original: formatId(original.id), pin: formatId(pin.id), created: true };
      return { result: pin, steps: [link, ...events, ...this.#fanOutSteps(pin)] };
    });
    return this.#run({ ...plan, ...this.#liveRecord }, me.id, opts, ctx);
  }

  async movePin(viewer: bigint | undefined, boardId: bigint, pinId: bigint, afterPinId: bigint | null, ctx: OpContext = {}): Promise<StoredObject> {
    const me = await this.#viewer(viewer, ctx);
    const board = await this.#ownBoard(me.id, boardId, ctx);
    await this.#s.mappings.move('board_has_pins', boardId, pinId, afterPinId, ctx);
    return board;
  }

  // Comments

  async createComment(viewer: bigint | undefined, pinId: bigint, text: string, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<StoredObject> {
    const body = checkText(text, 'text', LIMITS.commentMax, { required: true });
    const me = await this.#viewer(viewer, ctx);
    // The comment lives on its pin's shard, with the pin's comment list: one transaction.
    const plan = this.#objectPlan('createComment', shardOf(pinId), { pinId: formatId(pinId), text: body }, async (w) => {
      const pin = await w.lockActive(pinId, 'pin');
      const comment = await w.create('comment', { pin_id: formatId(pinId), author_id: formatId(me.id), text: body });
      await w.edges([{ op: 'add', table: 'pin_has_comments', from: pinId, to: comment.id, sequence: comment.createdAt }]);
      // The pin's owner's notification commits with the comment; the author's activity follows if it lives elsewhere.
      const events = this.#events(w, { kind: 'COMMENT', actor: me.id, object: pinId, detail: comment.id, ts: comment.createdAt }, pin.refs.pinner);
      // Listed as the author's (for their account's delete to find it) by a step, which also deletes
      // the comment if the account was deleted meanwhile.
      return { result: comment, steps: [{ kind: 'syncAuthored', author: formatId(me.id), comment: formatId(comment.id) }, ...events] };
    });
    return this.#run(plan, me.id, opts, ctx);
  }

  /** The author or the pin's owner may delete a comment. */
  async deleteComment(viewer: bigint | undefined, id: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<boolean> {
    const me = await this.#viewer(viewer, ctx);
    const comment = await this.#s.objects.get(id, ctx);
    if (!comment || comment.type !== 'comment') throw new ShardqlError('NOT_FOUND', `No comment with ID ${id}`);
    const pinId = comment.refs.pin;
    if (pinId === undefined) throw new Error(`comment ${id} has no pin`);
    const pin = await this.#s.objects.get(pinId, ctx);
    if (comment.refs.author !== me.id && (!pin || pin.refs.pinner !== me.id)) {
      throw new ShardqlError('FORBIDDEN', 'Only the author or the pin owner may delete this comment');
    }
    const owner = pin?.refs.pinner;
    const plan = this.#deletePlan('deleteComment', shardOf(id), id, async (w) => {
      const { deleted, steps } = await deleteInTx(w, comment);
      // The pin's owner's notifications count it no more: their cached page goes too.
      if (deleted && owner !== undefined) w.changedLists.push(notificationsCacheKey(owner));
      return { result: deleted, steps };
    });
    return this.#run(plan, me.id, opts, ctx);
  }

  // Two-sided relations: the viewer's side first, then the other object's side.

  /**
   * A two-sided relation: the viewer's side (authoritative) in the first transaction with the
   * intent, then the other object's side mirrored from it (WriteExecutor.relate: three round trips).
   */
  async #relate(
    viewer: bigint | undefined,
    op: 'add' | 'remove',
    targetId: bigint,
    targetType: ObjectType,
    mine: MappingTable,
    ctx: OpContext,
    opts: WriteOpts,
  ): Promise<StoredObject> {
    const viewerId = this.#viewerId(viewer);
    // The viewer and the target in one read (one cache round trip when both are cached).
    const both = await this.#s.objects.getMany([viewerId, targetId], ctx);
    const me = this.#checkViewer(both.get(viewerId));
    const target = both.get(targetId);
    if (!target || target.type !== targetType || (op === 'add' && !isActive(target))) {
      throw new ShardqlError('NOT_FOUND', `No ${targetType} with ID ${targetId}`, op === 'add' ? { id: formatId(targetId) } : {});
    }
    if (targetType === 'user' && targetId === me.id)
      throw new ShardqlError('INVALID_ARGUMENT', 'Expected another user to follow, got the viewer', { argument: 'userId' });
    const sequence = this.#now();
    // Whose things this is: a pin's pinner, a board's owner, the followed user.
    const owner = targetType === 'user' ? targetId : targetType === 'pin' ? target.refs.pinner : target.refs.owner;
    const kind: ActivityKind = targetType === 'pin' ? 'LIKE' : targetType === 'user' ? 'FOLLOW_USER' : 'FOLLOW_BOARD';
    const happening: Happening = { kind, actor: me.id, object: targetId, detail: null, ts: sequence };
    const plan = {
      kind: `${op}:${mine}`,
      args: { target: formatId(targetId) },
      change: { op, table: mine, from: me.id, to: targetId, sequence },
      events: {
        own: eventOf(happening, me.id, 'activity'),
        notify: owner !== undefined && owner !== me.id ? eventOf(happening, owner, 'notifications') : null,
      },
      ...(owner !== undefined && owner !== me.id ? { notifies: owner } : {}),
      result: target,
      ...(op === 'add' ? this.#liveRecord : this.#objectRecord),
    };
    const result = await this.#exec.relate(plan, this.#idempotency(me.id, opts), ctx, opts.learned);
    // Readers stop showing an unfollowed source's pins at once; this takes them out of the stored feed.
    if (op === 'remove' && (mine === 'user_follows_users' || mine === 'user_follows_boards')) await this.#enqueue('feed.clean', { viewer: me.id });
    return result;
  }

  likePin(viewer: bigint | undefined, pinId: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<StoredObject> {
    return this.#relate(viewer, 'add', pinId, 'pin', 'user_likes_pins', ctx, opts);
  }
  unlikePin(viewer: bigint | undefined, pinId: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<StoredObject> {
    return this.#relate(viewer, 'remove', pinId, 'pin', 'user_likes_pins', ctx, opts);
  }
  followUser(viewer: bigint | undefined, userId: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<StoredObject> {
    return this.#relate(viewer, 'add', userId, 'user', 'user_follows_users', ctx, opts);
  }
  unfollowUser(viewer: bigint | undefined, userId: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<StoredObject> {
    return this.#relate(viewer, 'remove', userId, 'user', 'user_follows_users', ctx, opts);
  }
  followBoard(viewer: bigint | undefined, boardId: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<StoredObject> {
    return this.#relate(viewer, 'add', boardId, 'board', 'user_follows_boards', ctx, opts);
  }
  unfollowBoard(viewer: bigint | undefined, boardId: bigint, ctx: OpContext = {}, opts: WriteOpts = {}): Promise<StoredObject> {
    return this.#relate(viewer, 'remove', boardId, 'board', 'user_follows_boards', ctx, opts);
  }
}
