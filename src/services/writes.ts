import { ShardqlError } from '../core/errors.ts';
import { shardOf, formatId } from '../core/ids.ts';
import type { MappingTable } from '../core/mappings.ts';
import type { ObjectType } from '../core/objectTypes.ts';
import type { Topology } from '../core/topology.ts';
import { LIMITS, checkEmail, checkText, checkUrl, checkUsername } from '../core/validate.ts';
import type { Storage } from '../storage/index.ts';
import type { EdgeChange } from '../storage/mappingStore.ts';
import { isActive, type ObjectData, type StoredObject } from '../storage/objectStore.ts';
import type { OpContext } from '../storage/sqlStats.ts';
import { createUser } from './users.ts';

export interface WritesDeps {
  readonly storage: Storage;
  readonly topology: () => Topology;
  readonly now?: () => number;
  readonly random?: () => number;
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
 * The product's writes. Each one checks input and ownership first, then writes objects before the
 * edges that point at them and removes edges before the objects they point at, so no list ever
 * points at a missing object. Every step is idempotent (edges by primary key, deletes by flag).
 */
export class ProductWrites {
  readonly #s: Storage;
  readonly #deps: WritesDeps;
  readonly #now: () => number;

  constructor(deps: WritesDeps) {
    this.#s = deps.storage;
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
  }

  async #active(id: bigint, type: ObjectType, ctx: OpContext): Promise<StoredObject> {
    const o = await this.#s.objects.get(id, ctx);
    if (!o || o.type !== type || !isActive(o)) throw new ShardqlError('NOT_FOUND', `No ${type} with ID ${id}`, { id: formatId(id) });
    return o;
  }

  async #viewer(viewer: bigint | undefined, ctx: OpContext): Promise<StoredObject> {
    if (viewer === undefined) throw new ShardqlError('UNAUTHENTICATED', 'This operation needs a viewer: send Authorization: Bearer <token>');
    const o = await this.#s.objects.get(viewer, ctx);
    if (!o || !isActive(o)) throw new ShardqlError('UNAUTHENTICATED', 'The token belongs to a user who no longer exists');
    return o;
  }

  #own(o: StoredObject, field: string, viewer: bigint, what: string): void {
    if (o.data[field] !== formatId(viewer)) throw new ShardqlError('FORBIDDEN', `Only the owner may change this ${what}`);
  }

  async #edges(changes: EdgeChange[], ctx: OpContext): Promise<boolean[]> {
    return this.#s.mappings.apply(changes, ctx);
  }

  // Users

  async createUser(input: { username: string; email?: string | null; displayName?: string | null; about?: string | null }, ctx: OpContext = {}): Promise<StoredObject> {
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

  /** Soft-deletes the viewer. The username stays claimed, so nobody can take over a deleted name. */
  async deleteViewer(viewer: bigint | undefined, ctx: OpContext = {}): Promise<boolean> {
    const me = await this.#viewer(viewer, ctx);
    return this.#s.objects.softDelete(me.id, ctx);
  }

  // Boards

  async createBoard(viewer: bigint | undefined, input: { name: string; description?: string | null }, ctx: OpContext = {}): Promise<StoredObject> {
    const name = checkText(input.name, 'name', LIMITS.boardNameMax, { required: true });
    const description = optional(input.description, (v) => checkText(v, 'description', LIMITS.descriptionMax));
    const me = await this.#viewer(viewer, ctx);
    const board = await this.#s.objects.create('board', shardOf(me.id), { owner_id: formatId(me.id), name, ...(description ? { description } : {}) }, ctx);
    await this.#edges([{ op: 'add', table: 'user_has_boards', from: me.id, to: board.id, sequence: board.createdAt }], ctx);
    return board;
  }

  async updateBoard(viewer: bigint | undefined, id: bigint, input: { name?: string | null; description?: string | null }, ctx: OpContext = {}): Promise<StoredObject> {
    if (input.name === null) throw new ShardqlError('INVALID_ARGUMENT', 'Expected name to be text, got null', { argument: 'name' });
    const patch: Patch = {
      name: optional(input.name, (v) => checkText(v, 'name', LIMITS.boardNameMax, { required: true })),
      description: optional(input.description, (v) => checkText(v, 'description', LIMITS.descriptionMax)),
    };
    const me = await this.#viewer(viewer, ctx);
    return this.#s.objects.update(id, (cur) => {
      if (cur.type !== 'board') throw new ShardqlError('NOT_FOUND', `No board with ID ${id}`);
      this.#own(cur, 'owner_id', me.id, 'board');
      return applyPatch(cur.data, patch);
    }, ctx);
  }

  /** Deletes a board and every pin on it: pins' edges first, then pins, then the board's edge, then the board. */
  async deleteBoard(viewer: bigint | undefined, id: bigint, ctx: OpContext = {}): Promise<boolean> {
    const me = await this.#viewer(viewer, ctx);
    const board = await this.#s.objects.get(id, ctx);
    if (!board || board.type !== 'board') throw new ShardqlError('NOT_FOUND', `No board with ID ${id}`);
    this.#own(board, 'owner_id', me.id, 'board');
    if (!isActive(board)) return false;
    for (;;) {
      const [page] = await this.#s.mappings.pages([{ table: 'board_has_pins', from: id, first: 100 }], ctx);
      if (!page || page.edges.length === 0) break;
      const pins = await this.#s.objects.getMany(page.edges.map((e) => e.to), ctx);
      for (const e of page.edges) {
        const pin = pins.get(e.to);
        if (pin) await this.#removePin(pin, ctx);
        else await this.#edges([{ op: 'remove', table: 'board_has_pins', from: id, to: e.to }], ctx);
      }
    }
    await this.#edges([{ op: 'remove', table: 'user_has_boards', from: me.id, to: id }], ctx);
    return this.#s.objects.softDelete(id, ctx);
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
    this.#own(board, 'owner_id', viewer, 'board');
    return board;
  }

  /** A pin lives on its board's shard (which is its owner's); both of its list edges commit together. */
  async #savePin(me: bigint, board: StoredObject, data: ObjectData, ctx: OpContext): Promise<StoredObject> {
    const pin = await this.#s.objects.create('pin', shardOf(board.id), { ...data, board_id: formatId(board.id), pinner_id: formatId(me) }, ctx);
    await this.#edges([
      { op: 'add', table: 'board_has_pins', from: board.id, to: pin.id, sequence: pin.createdAt },
      { op: 'add', table: 'user_has_pins', from: me, to: pin.id, sequence: pin.createdAt },
    ], ctx);
    return pin;
  }

  async createPin(viewer: bigint | undefined, boardId: bigint, input: { title?: string | null; description?: string | null; link?: string | null; imageUrl?: string | null }, ctx: OpContext = {}): Promise<StoredObject> {
    const fields = applyPatch({}, this.#pinFields(input));
    const me = await this.#viewer(viewer, ctx);
    const board = await this.#ownBoard(me.id, boardId, ctx);
    return this.#savePin(me.id, board, fields, ctx);
  }

  async updatePin(viewer: bigint | undefined, id: bigint, input: { title?: string | null; description?: string | null; link?: string | null; imageUrl?: string | null }, ctx: OpContext = {}): Promise<StoredObject> {
    const patch = this.#pinFields(input);
    const me = await this.#viewer(viewer, ctx);
    return this.#s.objects.update(id, (cur) => {
      if (cur.type !== 'pin') throw new ShardqlError('NOT_FOUND', `No pin with ID ${id}`);
      this.#own(cur, 'pinner_id', me.id, 'pin');
      return applyPatch(cur.data, patch);
    }, ctx);
  }

  async #removePin(pin: StoredObject, ctx: OpContext): Promise<boolean> {
    const board = BigInt(String(pin.data.board_id));
    const pinner = BigInt(String(pin.data.pinner_id));
    await this.#edges([
      { op: 'remove', table: 'board_has_pins', from: board, to: pin.id },
      { op: 'remove', table: 'user_has_pins', from: pinner, to: pin.id },
    ], ctx);
    if (typeof pin.data.via_pin_id === 'string') {
      await this.#edges([{ op: 'remove', table: 'pin_repinned_as_pins', from: BigInt(pin.data.via_pin_id), to: pin.id }], ctx);
    }
    return this.#s.objects.softDelete(pin.id, ctx);
  }

  async deletePin(viewer: bigint | undefined, id: bigint, ctx: OpContext = {}): Promise<boolean> {
    const me = await this.#viewer(viewer, ctx);
    const pin = await this.#s.objects.get(id, ctx);
    if (!pin || pin.type !== 'pin') throw new ShardqlError('NOT_FOUND', `No pin with ID ${id}`);
    this.#own(pin, 'pinner_id', me.id, 'pin');
    if (!isActive(pin)) return false;
    return this.#removePin(pin, ctx);
  }

  /** A repin is a new pin on the viewer's board (the board's shard), pointing back at the original. */
  async repin(viewer: bigint | undefined, pinId: bigint, boardId: bigint, ctx: OpContext = {}): Promise<StoredObject> {
    const me = await this.#viewer(viewer, ctx);
    const [original, board] = await Promise.all([this.#active(pinId, 'pin', ctx), this.#ownBoard(me.id, boardId, ctx)]);
    const copy: ObjectData = {};
    for (const k of ['title', 'description', 'link', 'imageUrl']) if (original.data[k] !== undefined) copy[k] = original.data[k];
    const pin = await this.#savePin(me.id, board, { ...copy, via_pin_id: formatId(original.id) }, ctx);
    await this.#edges([{ op: 'add', table: 'pin_repinned_as_pins', from: original.id, to: pin.id, sequence: pin.createdAt }], ctx);
    return pin;
  }

  async movePin(viewer: bigint | undefined, boardId: bigint, pinId: bigint, afterPinId: bigint | null, ctx: OpContext = {}): Promise<StoredObject> {
    const me = await this.#viewer(viewer, ctx);
    const board = await this.#ownBoard(me.id, boardId, ctx);
    await this.#s.mappings.move('board_has_pins', boardId, pinId, afterPinId, ctx);
    return board;
  }

  // Comments

  async createComment(viewer: bigint | undefined, pinId: bigint, text: string, ctx: OpContext = {}): Promise<StoredObject> {
    const body = checkText(text, 'text', LIMITS.commentMax, { required: true });
    const me = await this.#viewer(viewer, ctx);
    const pin = await this.#active(pinId, 'pin', ctx);
    const comment = await this.#s.objects.create('comment', shardOf(pin.id), { pin_id: formatId(pin.id), author_id: formatId(me.id), text: body }, ctx);
    await this.#edges([{ op: 'add', table: 'pin_has_comments', from: pin.id, to: comment.id, sequence: comment.createdAt }], ctx);
    return comment;
  }

  /** The author or the pin's owner may delete a comment. */
  async deleteComment(viewer: bigint | undefined, id: bigint, ctx: OpContext = {}): Promise<boolean> {
    const me = await this.#viewer(viewer, ctx);
    const comment = await this.#s.objects.get(id, ctx);
    if (!comment || comment.type !== 'comment') throw new ShardqlError('NOT_FOUND', `No comment with ID ${id}`);
    const pinId = BigInt(String(comment.data.pin_id));
    if (comment.data.author_id !== formatId(me.id)) {
      const pin = await this.#s.objects.get(pinId, ctx);
      if (!pin || pin.data.pinner_id !== formatId(me.id)) throw new ShardqlError('FORBIDDEN', 'Only the author or the pin owner may delete this comment');
    }
    if (!isActive(comment)) return false;
    await this.#edges([{ op: 'remove', table: 'pin_has_comments', from: pinId, to: id }], ctx);
    return this.#s.objects.softDelete(id, ctx);
  }

  // Two-sided relations: the viewer's side first, then the other object's side.

  async #relate(viewer: bigint | undefined, op: 'add' | 'remove', targetId: bigint, targetType: ObjectType, mine: MappingTable, theirs: MappingTable, ctx: OpContext): Promise<StoredObject> {
    const me = await this.#viewer(viewer, ctx);
    const target = op === 'add' ? await this.#active(targetId, targetType, ctx) : await this.#s.objects.get(targetId, ctx);
    if (!target || target.type !== targetType) throw new ShardqlError('NOT_FOUND', `No ${targetType} with ID ${targetId}`);
    if (targetType === 'user' && targetId === me.id) throw new ShardqlError('INVALID_ARGUMENT', 'Expected another user to follow, got the viewer', { argument: 'userId' });
    const sequence = this.#now();
    await this.#edges([{ op, table: mine, from: me.id, to: targetId, sequence }, { op, table: theirs, from: targetId, to: me.id, sequence }], ctx);
    return target;
  }

  likePin(viewer: bigint | undefined, pinId: bigint, ctx: OpContext = {}): Promise<StoredObject> {
    return this.#relate(viewer, 'add', pinId, 'pin', 'user_likes_pins', 'pin_liked_by_users', ctx);
  }
  unlikePin(viewer: bigint | undefined, pinId: bigint, ctx: OpContext = {}): Promise<StoredObject> {
    return this.#relate(viewer, 'remove', pinId, 'pin', 'user_likes_pins', 'pin_liked_by_users', ctx);
  }
  followUser(viewer: bigint | undefined, userId: bigint, ctx: OpContext = {}): Promise<StoredObject> {
    return this.#relate(viewer, 'add', userId, 'user', 'user_follows_users', 'user_followed_by_users', ctx);
  }
  unfollowUser(viewer: bigint | undefined, userId: bigint, ctx: OpContext = {}): Promise<StoredObject> {
    return this.#relate(viewer, 'remove', userId, 'user', 'user_follows_users', 'user_followed_by_users', ctx);
  }
  followBoard(viewer: bigint | undefined, boardId: bigint, ctx: OpContext = {}): Promise<StoredObject> {
    return this.#relate(viewer, 'add', boardId, 'board', 'user_follows_boards', 'board_followed_by_users', ctx);
  }
  unfollowBoard(viewer: bigint | undefined, boardId: bigint, ctx: OpContext = {}): Promise<StoredObject> {
    return this.#relate(viewer, 'remove', boardId, 'board', 'user_follows_boards', 'board_followed_by_users', ctx);
  }
}
