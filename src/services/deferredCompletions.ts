import type { Storage } from '../storage/index.ts';
import { affectedRows, type SqlCondition } from '../storage/shardRouter.ts';

/** One intent to delete once its write answered, if `onlyIf` still holds on its shard. */
export interface DeferredCompletion {
  readonly shard: number;
  readonly id: bigint;
  readonly onlyIf: SqlCondition;
  /** Runs when the condition did not hold (the edge changed since): converge as the repair pass would. */
  readonly otherwise: () => Promise<void>;
  /** The relation's pair (`table:from:to`): a later write of the same pair may take this completion over (`supersede`). */
  readonly pair?: string;
}

export interface DeferredCompletionOptions {
  /** How long a host's first queued completion waits for others (and for a later write of its pair) before they go, ms. Default 100. */
  readonly delayMs?: number | undefined;
  /** Where a completion left to the repair pass is reported. */
  readonly log?: ((event: string, fields?: Record<string, unknown>) => void) | undefined;
}

/** The most completions one transaction carries. */
const MAX_BATCH = 64;

/**
 * Completes intents after their write answered, several per host in one transaction.
 *
 * By the time a relation write (`WriteExecutor.relate`) answers, both of its sides are committed:
 * the intent is bookkeeping that only the repair pass would otherwise need. Deleting it on the
 * write's path cost the write a third round trip and a third durable commit (and these commits
 * queue behind the same binlog fsyncs as the writes' own). Here a host's first queued completion
 * waits `delayMs` (default 100) for others, then they go in one transaction, at most one in flight
 * per host; completions queued meanwhile go in the next. A later write of the same pair (a like
 * undone at once) deletes the earlier intent inside its own first transaction (`supersede`): no
 * commit of its own at all.
 *
 * Nothing acknowledged depends on this: a completion that never runs (the process killed, the host
 * unreachable, the shard paused for a move) leaves the intent, which the repair pass completes by
 * re-deriving the reverse side, as after any crash between steps. A completion whose condition no
 * longer holds (a later write of the same pair changed the edge) runs `otherwise`: the slow path
 * that converges the reverse side and deletes the intent.
 */
export class DeferredCompletions {
  readonly #storage: Storage;
  readonly #log: ((event: string, fields?: Record<string, unknown>) => void) | undefined;
  readonly #queued = new Map<string, DeferredCompletion[]>();
  readonly #draining = new Map<string, Promise<void>>();
  /** Hosts whose queue waits out the delay. */
  readonly #waiting = new Map<string, NodeJS.Timeout>();
  readonly #slow = new Set<Promise<void>>();
  /** Queued completions by pair, with their host. */
  readonly #byPair = new Map<string, { readonly c: DeferredCompletion; readonly host: string }>();
  readonly #delayMs: number;

  constructor(storage: Storage, opts: DeferredCompletionOptions = {}) {
    this.#storage = storage;
    this.#log = opts.log;
    this.#delayMs = opts.delayMs ?? 100;
  }

  /** Queues a completion; it runs without the caller waiting (see `settled`). */
  defer(c: DeferredCompletion): void {
    let host: string;
    try {
      host = this.#storage.router.writableHostOfShard(c.shard);
    } catch (err) {
      this.#failed([c], err); // paused for a move: the repair pass completes it
      return;
    }
    const queue = this.#queued.get(host);
    if (queue) queue.push(c);
    else this.#queued.set(host, [c]);
    if (c.pair !== undefined) this.#byPair.set(c.pair, { c, host });
    if (this.#draining.has(host) || this.#waiting.has(host)) return; // the running or waiting drain takes it
    if (this.#delayMs > 0) this.#waiting.set(host, setTimeout(() => this.#start(host), this.#delayMs));
    else this.#start(host);
  }

  #start(host: string): void {
    clearTimeout(this.#waiting.get(host));
    this.#waiting.delete(host);
    if (this.#draining.has(host)) return;
    // Nothing left (a later write took it over): no drain. A drain starts only on a non-empty queue,
    // so it awaits before it can finish, and its entry is set before it deletes it.
    if ((this.#queued.get(host)?.length ?? 0) === 0) {
      this.#queued.delete(host);
      return;
    }
    this.#draining.set(host, this.#drain(host));
  }

  /**
   * Takes a queued completion of `pair` out of the queue, for a later write of the same pair to
   * delete that intent unconditionally in its own first transaction (`WriteExecutor.relate`). Safe
   * because the earlier write had applied the reverse side before it answered, so before the later
   * write changed the edge: the later write's own intent (committed with that delete) covers the
   * pair until a mirror after it confirms the reverse side. Hand it back (`defer`) if that
   * transaction does not commit.
   */
  supersede(pair: string): DeferredCompletion | undefined {
    const found = this.#byPair.get(pair);
    if (!found) return undefined;
    this.#byPair.delete(pair);
    const queue = this.#queued.get(found.host);
    const at = queue?.indexOf(found.c) ?? -1;
    if (at < 0) return undefined;
    queue!.splice(at, 1);
    return found.c;
  }

  /**
   * Sends every queued completion now, without waiting out the delay, and resolves once they (and
   * each slow path they started) have run: before storage closes, and in tests that count intents.
   */
  async settled(): Promise<void> {
    while (this.#waiting.size > 0 || this.#draining.size > 0 || this.#slow.size > 0) {
      for (const host of [...this.#waiting.keys()]) this.#start(host);
      await Promise.allSettled([...this.#draining.values(), ...this.#slow]);
    }
  }

  /** Completion transactions on `host`, one at a time, until its queue is empty. */
  async #drain(host: string): Promise<void> {
    for (;;) {
      // Checked and removed in one synchronous step, so a completion queued at any moment is either
      // taken by this loop or starts a new one.
      const queue = this.#queued.get(host);
      if (queue === undefined || queue.length === 0) {
        this.#queued.delete(host);
        this.#draining.delete(host);
        return;
      }
      const batch = queue.splice(0, MAX_BATCH);
      for (const c of batch) if (c.pair !== undefined && this.#byPair.get(c.pair)?.c === c) this.#byPair.delete(c.pair);
      await this.#complete(host, batch);
    }
  }

  async #complete(host: string, batch: readonly DeferredCompletion[]): Promise<void> {
    const { router, intents } = this.#storage;
    // A shard moved or paused since it was queued is left to the repair pass; the others go on.
    const here = batch.filter((c) => !router.topology.isPaused(c.shard) && router.topology.hostOfShard(c.shard) === host);
    if (here.length < batch.length) this.#failed(batch.filter((c) => !here.includes(c)), new Error('shard moved or paused'));
    if (here.length === 0) return;
    let results;
    try {
      results = await router.transactionOnHost(
        host,
        [...new Set(here.map((c) => c.shard))],
        (tx) => tx.commitWith(here.map((c) => intents.completePart(c.shard, c.id, c.onlyIf))),
      );
    } catch (err) {
      this.#failed(here, err);
      return;
    }
    for (const [i, c] of here.entries()) {
      if (affectedRows(results[i]!) === 1) continue;
      const slow = c.otherwise().catch((err: unknown) => this.#failed([c], err));
      this.#slow.add(slow);
      void slow.finally(() => this.#slow.delete(slow));
    }
  }

  #failed(batch: readonly DeferredCompletion[], err: unknown): void {
    this.#log?.('intent_completion_deferred_to_repair', {
      intents: batch.map((c) => `${c.shard}:${c.id}`),
      error: err instanceof Error ? err.message : String(err),
    });
  }
}
