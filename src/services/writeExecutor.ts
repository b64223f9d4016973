import { ShardqlError, isShardqlError } from '../core/errors.ts';
import { formatId, shardOf, typeOf } from '../core/ids.ts';
import { listingFor } from '../core/listings.ts';
import { reverseOf, type MappingTable } from '../core/mappings.ts';
import type { ObjectType } from '../core/objectTypes.ts';
import type { Storage } from '../storage/index.ts';
import { fingerprintOf, type EventKey, type IntentStep } from '../storage/intentLog.ts';
import { decodeEvent, encodeEvent } from '../storage/eventStore.ts';
import type { SequenceEvent } from '../core/events.ts';
import { listCacheKey, type EdgeChange, type EdgeState } from '../storage/mappingStore.ts';
import { notificationsCacheKey } from '../storage/eventStore.ts';
import { isActive, type ObjectData, type StoredObject } from '../storage/objectStore.ts';
import { batchOf, type BatchPart, type SqlCondition, type Tx } from '../storage/shardRouter.ts';
import type { OpContext } from '../storage/sqlStats.ts';
import { deleteObject, parentEdges, purge } from './cascade.ts';
import type { BackgroundJobs } from './backgroundJobs.ts';
import { DeferredCompletions, type DeferredCompletionOptions } from './deferredCompletions.ts';
import { dropNotified, notifiedKeys } from './notified.ts';

/**
 * Where a fault can be injected (tests): before the first transaction (the write's checks done),
 * inside it, after it, after each step, before completion.
 */
export type FaultPoint = 'before-first-transaction' | 'in-first-transaction' | 'after-first-commit' | `after-step-${number}` | 'before-complete';

/**
 * A crash injected at a step boundary (tests): it throws (the write fails inside this process and
 * its normal error path runs) or ends the process (SIGKILL: connections are lost, nothing more runs).
 */
export type Crash = () => never;

/**
 * Called at each step boundary of a multi-shard write (tests), with the write's kind and its
 * idempotency key if it has one. It may pause there or change data, and returns the crash to play
 * at that point, if any. The crash is returned, not thrown, so the writer can play it where a real
 * one falls: a relation write (`relate`) sends its first transaction with COMMIT in one round
 * trip, so when the hook returns a crash for 'in-first-transaction' it sends the statements
 * without COMMIT, then plays the crash.
 */
export type FaultHook = (point: FaultPoint, kind: string, idempotencyKey: string | undefined) => Crash | undefined | void | Promise<Crash | undefined | void>;

export interface IdempotencyOptions {
  /** Whose key it is (the viewer): keys of different viewers never collide. */
  readonly scope: string;
  readonly key: string;
}

/** The first local transaction of a write, on one shard: objects and edges of that shard only. */
export class LocalWrite {
  readonly shard: number;
  readonly #tx: Tx;
  readonly #storage: Storage;
  readonly changedObjects: bigint[] = [];
  readonly changedLists: string[] = [];
  /** Objects this transaction created, and those it left inactive: states the steps after it may take as known. */
  readonly created = new Map<bigint, StoredObject>();
  readonly deactivated = new Set<bigint>();
  /** Events appended to sequences on this shard: sent with the intent record (no round trip of their own when there is one). */
  readonly events: SequenceEvent[] = [];

  constructor(tx: Tx, shard: number, storage: Storage) {
    this.#tx = tx;
    this.shard = shard;
    this.#storage = storage;
  }

  async create(type: ObjectType, data: ObjectData): Promise<StoredObject> {
    const o = await this.#storage.objects.insertInTx(this.#tx, type, this.shard, data);
    this.created.set(o.id, o);
    return o;
  }

  /** The object, locked until commit; NOT_FOUND unless active and of `type`. */
  async lockActive(id: bigint, type: ObjectType): Promise<StoredObject> {
    this.#own(id);
    const o = await this.#storage.objects.lockInTx(this.#tx, id);
    if (!o || o.type !== type || !isActive(o)) throw new ShardqlError('NOT_FOUND', `No ${type} with ID ${id}`, { id: `${id}` });
    return o;
  }

  /** The object (any state), locked until commit. */
  async lock(id: bigint): Promise<StoredObject | undefined> {
    this.#own(id);
    return this.#storage.objects.lockInTx(this.#tx, id);
  }

  async softDelete(id: bigint): Promise<boolean> {
    this.#own(id);
    const changed = await this.#storage.objects.softDeleteInTx(this.#tx, id);
    if (changed) this.changedObjects.push(id);
    this.deactivated.add(id); // inactive now (or missing), under its lock until commit
    return changed;
  }

  async edges(changes: readonly EdgeChange[]): Promise<boolean[]> {
    const out: boolean[] = [];
    for (const c of changes) {
      this.#own(c.from);
      const changed = await this.#storage.mappings.applyInTx(this.#tx, c);
      if (changed) this.changedLists.push(listCacheKey(c.table, c.from));
      out.push(changed);
    }
    return out;
  }

  /** Appends an event to a sequence on this shard, in this transaction (idempotent). */
  appendEvent(e: SequenceEvent): void {
    this.#own(e.user);
    this.events.push(e);
  }

  /** Whether this transaction appended the event at `key`: a step copying it elsewhere need not read it back. */
  appended(key: EventKey): boolean {
    return this.events.some((e) => `${e.user}` === key.user && e.kind === key.kind && e.ts === key.ts && `${e.id}` === key.id);
  }

  #own(id: bigint): void {
    if (shardOf(id) !== this.shard) throw new Error(`a local write on shard ${this.shard} cannot touch ${id} on shard ${shardOf(id)}`);
  }
}

export interface WritePlan<R> {
  /** A name for logs, faults and fingerprints, e.g. 'likePin'. */
  readonly kind: string;
  /** The shard of the first step: where the intent and the idempotency key live. */
  readonly shard: number;
  /** The arguments, for the idempotency fingerprint. */
  readonly args: unknown;
  /** The first step, in one local transaction; returns the result and the steps that remain. */
  readonly first: (w: LocalWrite) => Promise<{ result: R; steps: IntentStep[] }>;
  /** What to store as the result of an idempotent write, and how to rebuild it on a retry. */
  readonly toRecord: (result: R) => Record<string, unknown>;
  readonly fromRecord: (record: Record<string, unknown>, ctx: OpContext) => Promise<R>;
}

/**
 * What a write found out about the state it left, handed to the request that made it so the reads
 * after the write (its selection set) need not ask again. Reported only when certain.
 */
export type Learned =
  | { readonly kind: 'edge'; readonly table: MappingTable; readonly from: bigint; readonly to: bigint; readonly present: boolean }
  | { readonly kind: 'count'; readonly table: MappingTable; readonly id: bigint; readonly n: number };

/**
 * A two-sided relation write (like, follow): one edge on the viewer's shard, the authoritative side,
 * whose reverse on the other object's shard mirrors it. Its result is known before it runs.
 */
export interface RelationPlan<R> {
  /** A name for logs, faults and fingerprints, e.g. 'add:user_likes_pins'. */
  readonly kind: string;
  /** The arguments, for the idempotency fingerprint. */
  readonly args: unknown;
  /** The authoritative side's change; an add carries its sequence. */
  readonly change: EdgeChange & { readonly sequence: number };
  /**
   * An add's events: `own` in the viewer's sequence (on the viewer's shard, appended with the
   * edge only if the edge changed), `notify` in the other object's owner's (null for the viewer's
   * own things), appended with the reverse edge, on the same shard.
   */
  readonly events?: { readonly own: SequenceEvent; readonly notify: SequenceEvent | null };
  /** Whose notifications this relation shows in (the other object's owner): their cached page is dropped when it changes. */
  readonly notifies?: bigint;
  readonly result: R;
  readonly toRecord: (result: R) => Record<string, unknown>;
  readonly fromRecord: (record: Record<string, unknown>, ctx: OpContext) => Promise<R>;
}

/**
 * Runs writes that may span shards without a distributed transaction:
 *   1. one local transaction on the first shard makes the first step's changes, records the
 *      remaining steps in the intent log and the idempotency key with the result — all or nothing;
 *   2. each remaining step runs on its own shard; each is idempotent and order-safe (it re-derives
 *      the state it must produce from the authoritative side, `runStep`) — or, when the first
 *      transaction itself settled that side (a relation, a repin created or deleted), it applies
 *      the state it knows;
 *   3. the intent is deleted: in the known case after the write answered, only if that side is
 *      still in that state (`DeferredCompletions`), else at once after re-deriving as in 2.
 * A crash anywhere after 1 leaves an intent that the repair pass (or a retry with the same
 * idempotency key) completes; a crash before leaves nothing.
 */
export class WriteExecutor {
  readonly #storage: Storage;
  readonly #faults: FaultHook | undefined;

  readonly #ports: StepPorts;
  readonly #completions: DeferredCompletions;
  readonly #log: DeferredCompletionOptions['log'];

  constructor(storage: Storage, faults?: FaultHook, ports: StepPorts = {}, completions: DeferredCompletionOptions = {}) {
    this.#storage = storage;
    this.#faults = faults;
    this.#ports = ports;
    this.#completions = new DeferredCompletions(storage, completions);
    this.#log = completions.log;
  }

  async run<R>(plan: WritePlan<R>, idem: IdempotencyOptions | undefined, ctx: OpContext): Promise<R> {
    const fingerprint = fingerprintOf(plan.kind, plan.args);
    if (idem) {
      const replay = await this.#replay(plan, idem, fingerprint, ctx);
      if (replay.found) return replay.result;
    }
    let local: LocalWrite | undefined;
    let intentId: bigint | null = null;
    let out: { result: R; steps: IntentStep[] };
    await this.#fault('before-first-transaction', plan.kind, idem);
    try {
      out = await this.#storage.router.transaction(
        plan.shard,
        async (tx) => {
          local = new LocalWrite(tx, plan.shard, this.#storage);
          const o = await plan.first(local);
          // The events this transaction appended ride with the intent record (or go alone).
          const appends = local.events.flatMap((e) => this.#storage.events.appendPart(e).statements);
          if (o.steps.length > 0) intentId = await this.#storage.intents.recordInTx(tx, plan.shard, plan.kind, o.steps, appends);
          else if (appends.length > 0) await tx.batch(appends);
          if (idem) await this.#storage.intents.saveIdempotencyInTx(tx, plan.shard, idem.scope, idem.key, fingerprint, plan.toRecord(o.result), intentId);
          await this.#fault('in-first-transaction', plan.kind, idem);
          return o;
        },
        ctx,
      );
    } catch (err) {
      return await this.#twinOr(err, plan, idem, fingerprint, ctx);
    }
    local!.changedLists.push(...this.#storage.events.keysOf(local!.events));
    await this.#invalidate(local!, ctx);
    await this.#fault('after-first-commit', plan.kind, idem);
    // A first step whose source the first transaction itself settled (the repin it created or the
    // pin it deleted): mirror that state and confirm it on completion, as `relate` does.
    const known = intentId === null || out.steps.length === 0 ? undefined : knownMirror(this.#storage, out.steps[0]!, local!);
    // The write is committed: it is acknowledged whatever its remaining steps meet. A step that
    // fails (Redis down for a fan-out's enqueue, another shard unreachable) leaves the intent as it
    // is, with that step and those after it, for the repair pass (or a retry with the key).
    const steps = new RemainingSteps(plan.kind, plan.shard, intentId, this.#log);
    if (known && intentId !== null) {
      // Events this transaction appended whose copy goes to the step's shard travel with its edge.
      const along = out.steps.flatMap((step, i) =>
        i > 0 && step.kind === 'appendEvent' && local!.appended(step.source) && shardOf(BigInt(step.event.user)) === shardOf(known.change.from) ? [i] : [],
      );
      const events = along.map((i) => decodeEvent((out.steps[i] as Extract<IntentStep, { kind: 'appendEvent' }>).event));
      // A repin deleted: its REPIN no longer counts in the original's owner's notifications (an
      // added one comes with its event, whose append drops them).
      const unnotified = known.change.op === 'remove' ? await notifiedKeys(this.#storage, [known.change], ctx).catch(() => []) : [];
      let refused = false;
      await steps.run(async () => {
        ({ refused } = await this.#storage.mappings.applyAlong(
          known.change,
          events.flatMap((e) => this.#storage.events.appendPart(e).statements),
          [...this.#storage.events.keysOf(events), ...unnotified],
          ctx,
        ));
      });
      if (refused) {
        // The original was deleted before this repin took effect (its list takes no add, under its
        // lock): the repin is undone, the steps after this one (its events' copies, its fan-out)
        // are moot, and the write answers as one of a missing pin. A retry with its key finds the
        // repin deleted and answers the same (`fromRecord`).
        await deleteObject(this.#storage, known.change.to, new WriteExecutor(this.#storage), ctx);
        await this.#storage.intents.complete(plan.shard, intentId, ctx);
        throw notFound(known.change.from);
      }
      await this.#fault('after-step-0', plan.kind, idem);
      for (const [i, step] of out.steps.entries()) {
        if (i === 0 || along.includes(i)) continue;
        await steps.run(() => this.#runKnown(step, local!, ctx));
        await this.#fault(`after-step-${i}`, plan.kind, idem);
      }
      await this.#fault('before-complete', plan.kind, idem);
      if (steps.leftToRepair) return out.result;
      // Every step ran; the intent is deleted after the answer, as a relation's is (see `relate`).
      const [first] = out.steps;
      const id: bigint = intentId;
      this.#completions.defer({
        shard: plan.shard,
        id,
        onlyIf: known.still,
        otherwise: async () => {
          await runStep(this.#storage, first!, {}, this.#ports);
          await this.#storage.intents.complete(plan.shard, id, {});
        },
      });
      return out.result;
    }
    for (const [i, step] of out.steps.entries()) {
      await steps.run(() => this.#runKnown(step, local!, ctx));
      await this.#fault(`after-step-${i}`, plan.kind, idem);
    }
    await this.#fault('before-complete', plan.kind, idem);
    const id = intentId;
    if (id !== null) await steps.run(() => this.#storage.intents.complete(plan.shard, id, ctx));
    return out.result;
  }

  /** A step after the first transaction: an event it appended is copied without reading it back. */
  async #runKnown(step: IntentStep, local: LocalWrite, ctx: OpContext): Promise<void> {
    if (step.kind === 'appendEvent' && local.appended(step.source)) await this.#storage.events.append([decodeEvent(step.event)], ctx);
    else await runStep(this.#storage, step, ctx, this.#ports);
  }

  /** A first transaction failed: if a twin request with the same key committed first, answer what it answered; else rethrow. */
  async #twinOr<R>(
    err: unknown,
    plan: Pick<WritePlan<R>, 'shard' | 'fromRecord'>,
    idem: IdempotencyOptions | undefined,
    fingerprint: string,
    ctx: OpContext,
  ): Promise<R> {
    if (idem && (err as { code?: string }).code === 'ER_DUP_ENTRY') {
      const replay = await this.#replay(plan, idem, fingerprint, ctx);
      if (replay.found) return replay.result;
    }
    throw err;
  }

  async #replay<R>(
    plan: Pick<WritePlan<R>, 'shard' | 'fromRecord'>,
    idem: IdempotencyOptions,
    fingerprint: string,
    ctx: OpContext,
  ): Promise<{ found: true; result: R } | { found: false }> {
    const rec = await this.#storage.intents.findIdempotency(plan.shard, idem.scope, idem.key, ctx);
    if (!rec) return { found: false };
    if (rec.fingerprint !== fingerprint) {
      throw new ShardqlError('INVALID_ARGUMENT', 'Expected a new idempotency key for a different operation, got a key already used for another one', {
        argument: 'Idempotency-Key',
      });
    }
    // The first attempt may have stopped midway: finish its remaining steps before answering.
    if (rec.intentId !== null) await completeIntent(this.#storage, plan.shard, rec.intentId, ctx, this.#ports);
    return { found: true, result: await plan.fromRecord(rec.result, ctx) };
  }

  /**
   * A relation write in two SQL round trips before it answers, each one local transaction (was 16):
   *   1. on the viewer's shard, ONE batch: the edge and its count, a locking read of the edge as
   *      this transaction leaves it, the intent (and the idempotency key), COMMIT;
   *   2. on the other shard, ONE batch: the reverse edge and its count made to match that state,
   *      and the count as it commits; then both lists' caches dropped in one round trip;
   *   3. after it answered (`DeferredCompletions`: batched with other writes' completions on the
   *      same host), on the viewer's shard, the intent deleted only if the edge is still in that state.
   * When both shards live on one host, 1 and 2 are one local transaction across their databases
   * (1 without its COMMIT, 2 with it): the same two round trips, one durable commit instead of two.
   * Step 1 already knows the state it committed, so the reverse is applied without reading the
   * forward side under a lock first (as `runStep` does); step 3 is the re-read that `mirror`
   * makes after applying, fused with completing the intent. If step 3 deletes nothing, the edge
   * changed meanwhile (or the repair pass finished the intent): converge as repair does. If it
   * did, the edge and the other side's count are certain, and `learned` hears them.
   *
   * Doing a relation again (liking a liked pin) runs the same three steps: the intent mirrors
   * whatever state the edge is in, so a retry after a failure also finishes the other side.
   *
   * Why this converges, for concurrent writes of one pair (two requests, or a request and the
   * repair pass): every change of the forward edge commits with an intent, and an intent is deleted
   * only by a mirror whose last apply was followed by a read of the forward edge finding the state
   * it applied — step 3 here (the read and the delete in one statement), the re-read in `mirror`.
   * Take the last apply to the reverse side, by a mirror M of state s: M then read the forward
   * edge. Had it changed from s, M would have applied again, and that apply would be later; so
   * it was s, and any change of the forward edge after that read brings its own intent and a
   * later apply, again a contradiction. So once every intent is gone, the reverse edge (and its
   * count, changed with it) equals the forward edge. An intent whose writer crashed stays until
   * the repair pass runs its steps; nothing is deleted on a guess.
   */
  async relate<R>(plan: RelationPlan<R>, idem: IdempotencyOptions | undefined, ctx: OpContext, learned?: (fact: Learned) => void): Promise<R> {
    const { change } = plan;
    const shard = shardOf(change.from);
    const reverse = reverseOf(change.table);
    if (!reverse) throw new Error(`${change.table} has no reverse table`);
    const fingerprint = fingerprintOf(plan.kind, plan.args);
    const replayable = { shard, fromRecord: plan.fromRecord };
    if (idem) {
      const replay = await this.#replay(replayable, idem, fingerprint, ctx);
      if (replay.found) return replay.result;
    }
    const { mappings, intents, router, objects, events } = this.#storage;
    const step: IntentStep = { kind: 'syncReverse', table: change.table, from: formatId(change.from), to: formatId(change.to) };
    const own = change.op === 'add' ? plan.events?.own : undefined;
    const notify = own ? (plan.events?.notify ?? null) : null;
    // The viewer's event commits with the edge, only if the edge changed (a like of a liked pin adds none);
    // the owner's is copied from it: by the step below if the write stops, else with the reverse edge.
    const steps: IntentStep[] = [step, ...(own && notify ? [appendEventStep(own, notify)] : [])];
    // An earlier write of this pair whose intent still waits for its completion: its delete rides here (see `supersede`).
    const pair = `${change.table}:${change.from}:${change.to}`;
    const superseded = this.#completions.supersede(pair);
    const first = batchOf(
      mappings.changePart(change),
      own ? events.appendPart(own, mappings.edgeChanged) : NOTHING,
      // A remove leaves the edge absent until this transaction commits (its DELETE locks the key,
      // present or not): nothing to read back. Were that ever wrong, the completion's `onlyIf`
      // would find it so and converge.
      change.op === 'remove' ? ABSENT : mappings.edgePart(change.table, change.from, change.to),
      intents.recordPart(shard, plan.kind, steps, idem && { scope: idem.scope, key: idem.key, fingerprint, result: plan.toRecord(plan.result) }),
      superseded ? intents.deletePart(superseded.shard, superseded.id) : NOTHING,
    );
    // The reverse edge as the forward one is left (`state`), the owner's event with it when both live
    // on one shard (a pin's, board's or user's owner lives on its shard), else on its own.
    const mirrorOf = (changed: boolean, state: EdgeState) => {
      const mirrored = reverseChange(reverse, change.from, change.to, state);
      const notifyNow = changed && notify !== null ? notify : undefined;
      return { mirrored, notifyNow, along: notifyNow && shardOf(notifyNow.user) === shardOf(mirrored.from) ? notifyNow : undefined };
    };
    const alongOf = ({ along }: ReturnType<typeof mirrorOf>) => (along ? events.appendPart(along).statements : []);
    // Both sides on one host (writable there): one local transaction across their databases, in two
    // round trips (the forward batch, then the reverse one with COMMIT): one durable commit where two
    // hosts need two, and no moment when one side is committed without the other. The intent still
    // commits with them: a writer killed after the commit leaves it for the repair pass, which drops
    // the lists' caches (`forgetWrite`), and the completion below deletes it as on two hosts.
    const otherShard = shardOf(change.to);
    let changed: boolean;
    let state: EdgeState;
    let intentId: bigint;
    let fused: { changed: boolean; refused: boolean; count: number } | undefined;
    await this.#fault('before-first-transaction', plan.kind, idem);
    try {
      const host = router.writableHostOfShard(shard);
      const oneHost = !router.topology.isPaused(otherShard) && router.hostOfShard(otherShard) === host;
      [changed, , state, intentId, , fused] = oneHost
        ? await router.transactionOnHost(
            host,
            shard === otherShard ? [shard] : [shard, otherShard],
            async (tx) => {
              const crash = await this.#faults?.('in-first-transaction', plan.kind, idem?.key);
              const forward = first.read(await tx.batch(first.statements));
              if (crash) return crash(); // the forward statements ran; the reverse ones and COMMIT never come
              const m = mirrorOf(forward[0], forward[2]);
              const part = mappings.countingPart(m.mirrored, alongOf(m));
              return [...forward, part.read(await tx.commitWith(part.statements))] as const;
            },
            ctx,
          )
        : await router.transaction(
            shard,
            async (tx) => {
              const crash = await this.#faults?.('in-first-transaction', plan.kind, idem?.key);
              if (!crash) return [...first.read(await tx.commitWith(first.statements)), undefined] as const;
              await tx.batch(first.statements); // the statements ran; COMMIT never comes
              return crash();
            },
            ctx,
          );
    } catch (err) {
      if (superseded) this.#completions.defer(superseded); // not deleted: it waits for its own completion again
      return await this.#twinOr(err, replayable, idem, fingerprint, ctx);
    }
    const mirror = mirrorOf(changed, state);
    const { mirrored, notifyNow, along } = mirror;
    let applied: { changed: boolean; refused: boolean; count: number } | undefined;
    try {
      await this.#fault('after-first-commit', plan.kind, idem);
      applied = fused ?? (await mappings.applyCounting(mirrored, ctx, alongOf(mirror)));
      if (notifyNow && !along) await events.append([notifyNow], ctx);
    } finally {
      // Both lists' caches (and the owner's notifications) in one round trip, once both sides
      // committed (before the write answers) — whether or not this write changed them. Finding the
      // edge as it asks proves nothing about the caches: an earlier write of the pair may have
      // committed that state and died before dropping them (its intent waits for the repair pass,
      // seconds away), and this write is about to answer that state.
      const lists = [
        listCacheKey(change.table, change.from),
        listCacheKey(mirrored.table, mirrored.from),
        ...(plan.notifies !== undefined ? [notificationsCacheKey(plan.notifies)] : []),
      ];
      await mappings.invalidate(lists, ctx);
    }
    await this.#fault('after-step-0', plan.kind, idem);
    await this.#fault('before-complete', plan.kind, idem);
    // The owner's event, if the reverse edge's batch carried it, is committed: only the edge needs converging.
    const converge = async (c: OpContext): Promise<void> => {
      for (const st of steps) if (st.kind !== 'appendEvent' || !along) await runStep(this.#storage, st, c, this.#ports);
      await intents.complete(shard, intentId, c);
    };
    if (applied.refused) {
      // The other object was deleted before this write took effect (its reverse list takes no add,
      // under its lock): the relation is undone as repair would undo it, and the write answers as
      // one of a missing object. A retry with its key finds the object deleted and answers the same.
      await converge(ctx);
      throw notFound(change.to);
    }
    // Both sides committed what this write made the edge: the request may read it from here (a
    // concurrent write of the same pair is as if it came right after this one).
    learned?.({ kind: 'edge', table: change.table, from: change.from, to: change.to, present: state !== undefined });
    learned?.({ kind: 'count', table: mirrored.table, id: mirrored.from, n: applied.count });
    // The intent is deleted after the answer, only if the edge is still in that state (else the slow path converges it).
    this.#completions.defer({
      shard,
      id: intentId,
      onlyIf: andAlso(mappings.edgeIs(change.table, change.from, change.to, state), objects.activeIs(change.from)),
      otherwise: () => converge({}),
      pair,
    });
    return plan.result;
  }

  /** Resolves once every intent completion this executor deferred has run (tests, shutdown). */
  settled(): Promise<void> {
    return this.#completions.settled();
  }

  /** Plays the crash the fault hook returns for this point, if any. */
  async #fault(point: FaultPoint, kind: string, idem: IdempotencyOptions | undefined): Promise<void> {
    const crash = await this.#faults?.(point, kind, idem?.key);
    if (crash) crash();
  }

  async #invalidate(local: LocalWrite, ctx: OpContext): Promise<void> {
    await Promise.all([this.#storage.objects.invalidate(local.changedObjects, ctx), this.#storage.mappings.invalidate(local.changedLists, ctx)]);
  }
}

/**
 * The steps a committed write runs before it answers: the first that fails stops them, is logged,
 * and leaves the intent (every step still in it) to the repair pass; the write is answered anyway.
 */
class RemainingSteps {
  #failed = false;

  constructor(
    readonly kind: string,
    readonly shard: number,
    readonly intentId: bigint | null,
    readonly log: DeferredCompletionOptions['log'],
  ) {}

  /** Whether a step failed: the intent stays for the repair pass. */
  get leftToRepair(): boolean {
    return this.#failed;
  }

  /** Runs `step` unless one before it failed. */
  async run(step: () => Promise<unknown>): Promise<void> {
    if (this.#failed) return;
    try {
      await step();
    } catch (err) {
      this.#failed = true;
      this.log?.('write_steps_left_to_repair', {
        kind: this.kind,
        intent: this.intentId === null ? null : `${this.shard}:${this.intentId}`,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
}

/** The answer to a write whose target was deleted before the write took effect. */
function notFound(id: bigint): ShardqlError {
  return new ShardqlError('NOT_FOUND', `No ${typeOf(id) ?? 'object'} with ID ${id}`, { id: formatId(id) });
}

/** A part of a batch that sends nothing. */
const NOTHING: BatchPart<undefined> = { statements: [], read: () => undefined };

/** An edge's state known without asking: absent. */
const ABSENT: BatchPart<EdgeState> = { statements: [], read: () => undefined };

/** Where an event is, for a step that copies it. */
export function eventKey(e: SequenceEvent): EventKey {
  return { user: formatId(e.user), kind: e.kind, ts: e.ts, id: `${e.id}` };
}

/** A step appending `event` once `source` (the same happening, appended by the first transaction) is there. */
export function appendEventStep(source: SequenceEvent, event: SequenceEvent): IntentStep {
  return { kind: 'appendEvent', source: eventKey(source), event: encodeEvent(event) };
}

/**
 * A step's change and the condition that it is still right, when the first transaction settled
 * the step's source itself: an object it created (active, naming `from`; a repin) or one it
 * soft-deleted (inactive). Holding its lock until commit, it knows that state as committed.
 */
function knownMirror(storage: Storage, step: IntentStep, local: LocalWrite): { change: EdgeChange; still: SqlCondition } | undefined {
  if (step.kind !== 'syncListing') return undefined;
  const listing = listingFor(step.table);
  // Only a link (`UNLINK`) is mirrored along: a containment's step stays a step of its own, which
  // deletes the object if its container refuses it (after the write has answered).
  if (listing.onDelete !== 'UNLINK') return undefined;
  const table = listing.table;
  const id = BigInt(step.object);
  const from = BigInt(step.from);
  const created = local.created.get(id);
  if (created && isActive(created) && created.refs[listing.field] === from) {
    return {
      change: { op: 'add', table, from, to: id, sequence: created.createdAt },
      still: storage.objects.activeRefIs(id, listing.key, step.from, true),
    };
  }
  if (local.deactivated.has(id)) {
    return {
      change: { op: 'remove', table, from, to: id },
      still: storage.objects.activeRefIs(id, listing.key, step.from, false),
    };
  }
  return undefined;
}

/** The reverse edge `reverse(to → from)` as it must be for the forward edge in `state`. */
function reverseChange(reverse: MappingTable, from: bigint, to: bigint, state: EdgeState): EdgeChange {
  return state ? { op: 'add', table: reverse, from: to, to: from, sequence: state.sequence } : { op: 'remove', table: reverse, from: to, to: from };
}

/** Finishes one intent if it is still pending: runs its steps (idempotent) and deletes it. */
/** What some steps need besides storage: the job queue (an `enqueue` step). */
export interface StepPorts {
  readonly jobs?: BackgroundJobs | undefined;
}

export async function completeIntent(storage: Storage, shard: number, id: bigint, ctx: OpContext = {}, ports: StepPorts = {}): Promise<boolean> {
  const intent = await storage.intents.intent(shard, id, ctx);
  if (!intent) return false;
  await finishSteps(storage, intent.steps, ctx, ports);
  await storage.intents.complete(shard, id, ctx);
  return true;
}

/**
 * Runs the steps of a write whose writer stopped (the repair pass, a retry with its idempotency
 * key), then drops the caches of everything the write changed. Its writer drops them after its own
 * commits, so a writer that died between a commit and that left them stale; a step drops only
 * what it changes itself, and one the writer had already run changes nothing.
 */
export async function finishSteps(storage: Storage, steps: readonly IntentStep[], ctx: OpContext = {}, ports: StepPorts = {}): Promise<void> {
  for (const step of steps) await runStep(storage, step, ctx, ports);
  for (const step of steps) await forgetWrite(storage, step, ctx);
}

/** Drops the cached objects and lists a write with this step may have changed, in its first transaction and in the step. */
async function forgetWrite(storage: Storage, step: IntentStep, ctx: OpContext): Promise<void> {
  switch (step.kind) {
    case 'syncReverse': {
      // Both sides of the relation, each list with its count.
      const table = step.table as MappingTable;
      const reverse = reverseOf(table);
      if (!reverse) throw new Error(`${table} has no reverse table`);
      await storage.mappings.invalidate([listCacheKey(table, BigInt(step.from)), listCacheKey(reverse, BigInt(step.to))], ctx);
      return;
    }
    case 'syncListing': {
      // The object made or deleted, the listing's list, and the lists that contain the object (a
      // repin's board's and pinner's: its first transaction wrote them; an object's refs never change).
      const id = BigInt(step.object);
      const o = (await storage.objects.getMany([id], ctx)).get(id);
      const lists = [listCacheKey(step.table as MappingTable, BigInt(step.from)), ...(o ? parentEdges(o).filter((p) => p.table !== step.table).map((p) => listCacheKey(p.table, p.from)) : [])];
      await Promise.all([storage.objects.invalidate([id], ctx), storage.mappings.invalidate(lists, ctx)]);
      return;
    }
    case 'purge': {
      // The deleted object and its parents' lists (the first transaction's changes); the purge's
      // own changes, children included, dropped their caches as they went.
      const id = BigInt(step.id);
      const o = (await storage.objects.getMany([id], ctx)).get(id);
      const lists = o ? parentEdges(o).map((p) => listCacheKey(p.table, p.from)) : [];
      await Promise.all([storage.objects.invalidate([id], ctx), storage.mappings.invalidate(lists, ctx)]);
      return;
    }
    case 'invalidate':
    case 'enqueue':
      return; // the step itself is an invalidation, or changes no cached data
    case 'appendEvent': // the user's first page of notifications (or activity) it lands in
      await storage.mappings.invalidate(storage.events.keysOf([decodeEvent(step.event)]), ctx);
      return;
    default: {
      const unknown: never = step;
      throw new Error(`unknown intent step ${JSON.stringify(unknown)}`);
    }
  }
}

/**
 * One remaining step. Each re-derives what it must produce from the side written first, so
 * replaying a step late (after a later opposite write) cannot undo that write.
 */
export async function runStep(storage: Storage, step: IntentStep, ctx: OpContext = {}, ports: StepPorts = {}): Promise<void> {
  switch (step.kind) {
    case 'enqueue':
      // No queue here (a process without Redis): the intent stays for one that has it.
      if (!ports.jobs) throw new Error(`no job queue in this process to enqueue the recorded ${step.job} job`);
      await ports.jobs.enqueueRecorded(step.job, step.data);
      return;
    case 'syncReverse': {
      const table = step.table as MappingTable;
      const reverse = reverseOf(table);
      if (!reverse) throw new Error(`${table} has no reverse table`);
      await syncReverse(storage, table, reverse, BigInt(step.from), BigInt(step.to), ctx);
      await dropNotified(storage, [{ table: reverse, from: BigInt(step.to) }], ctx);
      return;
    }
    case 'purge':
      await purge(storage, BigInt(step.id), () => new WriteExecutor(storage), ctx);
      return;
    case 'syncListing': {
      const listing = listingFor(step.table);
      const table = listing.table;
      const from = BigInt(step.from);
      const id = BigInt(step.object);
      const derive = async (tx: Tx): Promise<EdgeChange> => {
        const o = await storage.objects.lockInTx(tx, id);
        return o !== undefined && isActive(o) && o.refs[listing.field] === from
          ? { op: 'add', table, from, to: id, sequence: o.createdAt }
          : { op: 'remove', table, from, to: id };
      };
      const { refused } = await mirror(storage, shardOf(id), shardOf(from), ctx, { inTx: derive, read: () => storage.router.transaction(shardOf(id), derive, ctx) });
      // `from` was deleted before the object was listed under it (its cascade cannot find it): a
      // containment takes the object with it; a link undoes only the write that created the object.
      if (refused && (listing.onDelete === 'DELETE' || step.created === true)) await deleteObject(storage, id, new WriteExecutor(storage), ctx);
      await dropNotified(storage, [{ table, from }], ctx);
      return;
    }
    case 'invalidate':
      await storage.replayInvalidation(step.keys, ctx);
      return;
    case 'appendEvent': {
      const src = step.source;
      if (await storage.events.exists({ user: BigInt(src.user), kind: src.kind, ts: src.ts, id: BigInt(src.id) }, ctx)) {
        await storage.events.append([decodeEvent(step.event)], ctx);
      }
      return;
    }
    default: {
      const unknown: never = step;
      throw new Error(`unknown intent step ${JSON.stringify(unknown)}`);
    }
  }
}

/**
 * The forward edge `table(from → to)` as its reverse must mirror it: present only while `from` is
 * active too (a deleted object's relations are being undone by its cascade). One round trip, a
 * locking read: the newest committed state.
 */
async function forwardState(storage: Storage, table: MappingTable, from: bigint, to: bigint, ctx: OpContext): Promise<EdgeState> {
  const part = batchOf(storage.objects.activePart(from), storage.mappings.edgePart(table, from, to));
  const [active, state] = await storage.router.transaction(shardOf(from), async (tx) => part.read(await tx.commitWith(part.statements)), ctx);
  return active ? state : undefined;
}

/**
 * Makes `reverse(to → from)` mirror the forward edge (`forwardState`): apply, then read the forward
 * side again; if it changed meanwhile, apply again. The last mirror to finish has read the last
 * state, so concurrent mirrors of one pair converge on it (see WriteExecutor.relate). If the
 * reverse list refuses the add, `to` was deleted, for good: the forward edge goes too (`to`'s
 * cascade may be over already, or it never saw an edge added after it began).
 */
async function syncReverse(storage: Storage, table: MappingTable, reverse: MappingTable, from: bigint, to: bigint, ctx: OpContext): Promise<void> {
  let state = await forwardState(storage, table, from, to, ctx);
  for (let attempt = 0; attempt < 10; attempt++) {
    const { refused } = await storage.mappings.applyOne(reverseChange(reverse, from, to, state), ctx);
    if (refused) await storage.mappings.apply([{ op: 'remove', table, from, to }], ctx);
    const now = await forwardState(storage, table, from, to, ctx);
    if (!refused && now?.sequence === state?.sequence) return;
    state = now;
  }
  throw new ShardqlError('SHARD_UNAVAILABLE', 'A relation kept changing while it was being written; retry');
}

/** Both conditions. */
function andAlso(a: SqlCondition, b: SqlCondition): SqlCondition {
  return { sql: `(${a.sql}) AND (${b.sql})`, values: [...a.values, ...b.values] };
}

/** How a step derives the change it must make from the side written first. */
interface Derive {
  /** Inside a transaction on the source shard, under a lock held until it commits. */
  readonly inTx: (tx: Tx) => Promise<EdgeChange>;
  /** On its own: the newest committed state of the source. */
  readonly read: () => Promise<EdgeChange>;
}

/**
 * Makes the edge on `targetShard` match the authoritative state read on `sourceShard`. On one
 * shard: one transaction, under the source's lock. Across shards no lock is held across the two
 * (holding a connection while waiting for another can exhaust a pool): apply, then read the source
 * again; if it changed meanwhile, apply again. The last mirror to finish has read the last state,
 * so concurrent mirrors of one pair converge on it (see WriteExecutor.relate). `refused`: an add
 * the target list refused, its owner being deleted (for good: nothing more to converge).
 */
async function mirror(storage: Storage, sourceShard: number, targetShard: number, ctx: OpContext, derive: Derive): Promise<{ refused: boolean }> {
  if (sourceShard === targetShard) {
    let change: EdgeChange | undefined;
    const outcome = await storage.router.transaction(
      sourceShard,
      async (tx) => {
        change = await derive.inTx(tx);
        const part = storage.mappings.changeOutcomePart(change);
        return part.read(await tx.batch(part.statements));
      },
      ctx,
    );
    if (outcome.changed && change) await storage.mappings.invalidate([listCacheKey(change.table, change.from)], ctx);
    return { refused: outcome.refused };
  }
  const same = (a: EdgeChange, b: EdgeChange): boolean => a.op === b.op && a.sequence === b.sequence;
  let change = await derive.read();
  for (let attempt = 0; attempt < 10; attempt++) {
    const { refused } = await storage.mappings.applyOne(change, ctx);
    if (refused) return { refused };
    const now = await derive.read();
    if (same(now, change)) return { refused: false };
    change = now;
  }
  throw new ShardqlError('SHARD_UNAVAILABLE', 'A relation kept changing while it was being written; retry');
}

export function isRetryableWriteError(err: unknown): boolean {
  return isShardqlError(err) && err.retryable;
}
