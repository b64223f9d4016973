/**
 * Where a product's own behaviour attaches to the declared mutations (modelWrites.ts), by the
 * names the model gives: object types by key, relations by table. The generic writer calls these at
 * fixed points and knows nothing of what they do: a product's events, notifications, feeds and
 * rules beyond ownership live in its hooks (services/productHooks.ts for this one).
 */
import type { SequenceEvent } from '../core/events.ts';
import type { IntentStep } from '../storage/intentLog.ts';
import type { StoredObject } from '../storage/objectStore.ts';
import type { OpContext } from '../storage/sqlStats.ts';
import type { LocalWrite } from './writeExecutor.ts';

/** Hooks of a declared create of one object type. */
export interface CreateHooks {
  /**
   * References whose list a step of `created` writes, not the create's transaction: a list on
   * another shard (a comment in its author's list), or one with rules of its own (a repin's).
   */
  readonly listedByStep?: readonly string[];
  /** Checks before anything is written, after the input and the viewer (may read; throws to refuse). */
  check?(c: { readonly viewer: bigint; readonly refs: Readonly<Record<string, bigint | undefined>>; readonly ctx: OpContext }): Promise<void>;
  /**
   * Inside the create's first transaction, after the object and its lists: appends what the
   * product records there and returns the steps that follow it (kept in the write's intent).
   * `placedWith`: the object it was placed with, as locked in the transaction.
   */
  created?(w: LocalWrite, c: { readonly viewer: bigint; readonly object: StoredObject; readonly placedWith: StoredObject | undefined }): IntentStep[];
}

/** What a delete's authorization found that the delete carries out. */
export interface DeleteGrant {
  /** Cache keys dropped with the delete's commit, when it deleted something (a page that counted the object). */
  readonly changedLists?: readonly string[];
}

/** Hooks of a declared delete of one object type. */
export interface DeleteHooks {
  /** Replaces the owner check: who else may delete it (may read; throws FORBIDDEN to refuse). */
  authorize?(c: { readonly viewer: bigint; readonly object: StoredObject; readonly ctx: OpContext }): Promise<DeleteGrant>;
  /** After the delete committed: follow-up work readers' filtering makes optional (failures are the hook's to log). */
  deleted?(object: StoredObject): Promise<void>;
}

/** What an edge of a relation records besides itself. */
export interface RelationRecords {
  /** An add's events: the viewer's own, and the owner's notification (null for the viewer's own things). */
  readonly events?: { readonly own: SequenceEvent; readonly notify: SequenceEvent | null };
  /** Whose notifications the edge shows in: their cached page is dropped when it changes. */
  readonly notifies?: bigint;
}

/** Hooks of a declared relation (@relate / @unrelate), by its viewer-side table. */
export interface RelationHooks {
  /** Refuses an edge the model allows but the product does not (throws; following oneself). */
  check?(c: { readonly op: 'add' | 'remove'; readonly viewer: bigint; readonly target: StoredObject }): void;
  /** What the edge records (`owner`: whose thing the target is, if anyone's). */
  records?(c: { readonly op: 'add' | 'remove'; readonly viewer: bigint; readonly target: StoredObject; readonly owner: bigint | undefined; readonly sequence: number }): RelationRecords;
  /** After a remove answered: follow-up work readers' filtering makes optional. */
  removed?(viewer: bigint): Promise<void>;
}

/** A product's hooks: by object type key (create, delete) and by relation table. */
export interface WriteHooks {
  readonly create?: Readonly<Record<string, CreateHooks>>;
  readonly delete?: Readonly<Record<string, DeleteHooks>>;
  readonly relation?: Readonly<Record<string, RelationHooks>>;
}
