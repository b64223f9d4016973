/**
 * The product's behaviour on its declared mutations, attached by the model's names (writeHooks.ts):
 * activity and notification events of likes, follows, comments and repins; a new pin's fan-out to
 * its audience's stored feeds and a deleted one's retraction; an unfollow's cleaning; the rules the
 * model does not state (a pin goes on the viewer's own board, nobody follows themself, a comment
 * may be deleted by its pin's owner too). The one file of services/ that names Pinterest's things.
 */
import { ShardqlError } from '../../core/errors.ts';
import { listingOfRef } from '../../core/listings.ts';
import type { ObjectType } from '../../core/objectTypes.ts';
import { eventOf, type Happening } from '../../core/events.ts';
import { sourcesOf } from '../../core/feedSpec.ts';
import { formatId, shardOf } from '../../core/ids.ts';
import type { Storage } from '../../storage/index.ts';
import { notificationsCacheKey } from '../../storage/eventStore.ts';
import type { IntentStep } from '../../storage/intentLog.ts';
import { isActive, type StoredObject } from '../../storage/objectStore.ts';
import type { OpContext } from '../../storage/sqlStats.ts';
import type { BackgroundJobs, JobName, JobPayloads } from '../../services/backgroundJobs.ts';
import { listingStep } from '../../services/cascade.ts';
import { appendEventStep, type LocalWrite } from '../../services/writeExecutor.ts';
import type { RelationHooks, WriteHooks } from '../../services/writeHooks.ts';
import { pinterestFeed } from './feed.ts';
import { PINTEREST_EVENTS as EVENTS, type PinterestActivityKind } from './events.ts';

export interface ProductHookDeps {
  readonly storage: Storage;
  /**
   * The job queue, for the work a write hands to background workers: a new pin's fan-out to its
   * followers' stored feeds, a deleted pin's removal from them, an unfollow's cleaning. Absent:
   * none is enqueued (stored feeds then rely on readers' filtering and rebuilds).
   */
  readonly jobs?: BackgroundJobs | undefined;
  /** Where a failed enqueue is reported (the write itself stands). */
  readonly log?: ((event: string, fields?: Record<string, unknown>) => void) | undefined;
}

/**
 * A happening's events, appended by a write's first transaction `w`: the actor's activity, and
 * the owner's notification unless the actor is the owner. Those on `w`'s shard are appended
 * there; the others become `appendEvent` steps copying the first of them, so an interrupted
 * write completes them and a retried one adds nothing (the event ID is the happening's).
 */
export function happeningEvents(w: LocalWrite, h: Happening, owner: bigint | undefined): IntentStep[] {
  const events = [eventOf(EVENTS, h, h.actor, 'activity'), ...(owner !== undefined && owner !== h.actor ? [eventOf(EVENTS, h, owner, 'notifications')] : [])];
  const local = events.filter((e) => shardOf(e.user) === w.shard);
  const source = local[0];
  if (!source) throw new Error(`a ${h.kind} event has no sequence on shard ${w.shard}`);
  for (const e of local) w.appendEvent(e);
  return events.filter((e) => shardOf(e.user) !== w.shard).map((e) => appendEventStep(source, e));
}

/**
 * A new pin (or repin) into its audience's stored feeds: the fan-out job recorded in the write's
 * intent, so it is enqueued after the commit by the writer or, if the writer dies first, by the
 * repair pass — an acknowledged pin never misses the stored feeds. (None without a queue.)
 */
export function fanOutSteps(jobs: BackgroundJobs | undefined, pin: StoredObject): IntentStep[] {
  const sources = sourcesOf(pinterestFeed, pin.refs);
  if (!jobs || !sources) return [];
  return [{ kind: 'enqueue', job: 'feed.fanout', data: jobs.encode('feed.fanout', { item: pin.id, sources, time: pin.createdAt }) }];
}

/** The board, active and the viewer's: a pin goes only on one's own board. */
export async function ownBoard(storage: Storage, viewer: bigint, boardId: bigint, ctx: OpContext): Promise<StoredObject> {
  const board = await storage.objects.get(boardId, ctx);
  if (!board || board.type !== 'board' || !isActive(board)) throw new ShardqlError('NOT_FOUND', `No board with ID ${boardId}`, { id: formatId(boardId) });
  if (board.refs.owner !== viewer) throw new ShardqlError('FORBIDDEN', 'Only the owner may change this board');
  return board;
}

/**
 * Hands follow-up work that readers' filtering makes optional to the background workers, after
 * the write committed (a deleted pin out of stored feeds, an unfollowed source's pins). A failure
 * to enqueue does not fail the write: it is logged. Work a reader cannot do without (a new pin's
 * fan-out) is recorded in the write's intent instead (`fanOutSteps`).
 */
function enqueuer(deps: ProductHookDeps) {
  return async <K extends JobName>(job: K, payload: JobPayloads[K]): Promise<void> => {
    if (!deps.jobs) return;
    try {
      await deps.jobs.enqueue(job, payload);
    } catch (err) {
      deps.log?.('job_enqueue_failed', { kind: job, error: err instanceof Error ? err.message : String(err) });
    }
  };
}

/** A relation that shows in activity and notifications as `kind`; `cleans`: removing it cleans the viewer's stored feed. */
function related(kind: PinterestActivityKind, enqueue: ReturnType<typeof enqueuer>, cleans: boolean): RelationHooks {
  return {
    records: ({ viewer, target, owner, sequence }) => {
      const happening: Happening = { kind, actor: viewer, object: target.id, detail: null, ts: sequence };
      const notifies = owner !== undefined && owner !== viewer;
      return {
        events: { own: eventOf(EVENTS, happening, viewer, 'activity'), notify: notifies ? eventOf(EVENTS, happening, owner, 'notifications') : null },
        ...(notifies ? { notifies: owner } : {}),
      };
    },
    // Readers stop showing an unfollowed source's pins at once; this takes them out of the stored feed.
    ...(cleans ? { removed: (viewer: bigint) => enqueue('feed.clean', { viewer }) } : {}),
  };
}

/**
 * The step listing `id` under `from` by its reference `type.field` (the model says which list and
 * what its refusal means, see cascade.ts `listingStep`). `created`: the creating write's own step.
 */
export function refStep(type: ObjectType, field: string, from: bigint, id: bigint, created = false): IntentStep {
  return listingStep(listingOfRef(type, field), from, id, created);
}

/** The product's hooks, by the model's names. */
export function productHooks(deps: ProductHookDeps): WriteHooks {
  const enqueue = enqueuer(deps);
  return {
    create: {
      pin: {
        // A repin's link to its original is its own step (writes.ts: `refStep('pin', 'via', …)`).
        listedByStep: ['via'],
        check: async ({ viewer, refs, ctx }) => {
          if (refs.board !== undefined) await ownBoard(deps.storage, viewer, refs.board, ctx);
        },
        created: (_w, { object }) => fanOutSteps(deps.jobs, object),
      },
      comment: {
        // Listed as the author's (for their account's delete to find it) by a step, which also
        // deletes the comment if the account was deleted meanwhile.
        listedByStep: ['author'],
        created: (w, { viewer, object, placedWith: pin }) => {
          if (!pin) throw new Error(`comment ${object.id} was made without its pin`);
          // The pin's owner's notification commits with the comment; the author's activity follows if it lives elsewhere.
          const events = happeningEvents(w, { kind: 'COMMENT', actor: viewer, object: pin.id, detail: object.id, ts: object.createdAt }, pin.refs.pinner);
          return [refStep('comment', 'author', viewer, object.id), ...events];
        },
      },
    },
    delete: {
      pin: {
        deleted: async (pin) => {
          const sources = sourcesOf(pinterestFeed, pin.refs);
          if (sources) await enqueue('feed.retract', { item: pin.id, sources });
        },
      },
      comment: {
        /** The author or the pin's owner may delete a comment. */
        authorize: async ({ viewer, object: comment, ctx }) => {
          const pinId = comment.refs.pin;
          if (pinId === undefined) throw new Error(`comment ${comment.id} has no pin`);
          const pin = await deps.storage.objects.get(pinId, ctx);
          if (comment.refs.author !== viewer && (!pin || pin.refs.pinner !== viewer)) {
            throw new ShardqlError('FORBIDDEN', 'Only the author or the pin owner may delete this comment');
          }
          // The pin's owner's notifications count it no more: their cached page goes too.
          const owner = pin?.refs.pinner;
          return { changedLists: owner === undefined ? [] : [notificationsCacheKey(owner)] };
        },
      },
    },
    relation: {
      user_likes_pins: related('LIKE', enqueue, false),
      user_follows_users: {
        ...related('FOLLOW_USER', enqueue, true),
        check: ({ viewer, target }) => {
          if (target.id === viewer) throw new ShardqlError('INVALID_ARGUMENT', 'Expected another user to follow, got the viewer', { argument: 'userId' });
        },
      },
      user_follows_boards: related('FOLLOW_BOARD', enqueue, true),
    },
  };
}
