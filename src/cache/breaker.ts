/**
 * The health of one cache layer as this gateway sees it. After a failure or timeout the layer is
 * skipped for `cooldownMs` (reads go straight to MySQL instead of paying the timeout on every
 * level of every query). Invalidations that failed are kept and replayed before the layer serves
 * reads again: a cache that was unreachable, not emptied, may still hold what they were meant to
 * remove.
 */
export class LayerBreaker {
  readonly #cooldownMs: number;
  readonly #threshold: number;
  readonly #now: () => number;
  #openUntil = 0;
  #failures = 0;
  readonly #pending = new Set<string>();

  /** Opens after `threshold` failures in a row (default 2: one slow answer under load is not an outage). */
  constructor(opts: { cooldownMs?: number; threshold?: number; now?: () => number } = {}) {
    this.#cooldownMs = opts.cooldownMs ?? 1000;
    this.#threshold = opts.threshold ?? 2;
    this.#now = opts.now ?? Date.now;
  }

  /** Whether a read may try the layer now (closed, or its cooldown is over). */
  mayTry(): boolean {
    return this.#now() >= this.#openUntil;
  }

  failed(): void {
    this.#failures++;
    if (this.#failures >= this.#threshold) this.#openUntil = this.#now() + this.#cooldownMs;
  }

  succeeded(): void {
    this.#failures = 0;
    this.#openUntil = 0;
  }

  /** Keys whose invalidation failed and must be replayed before reads trust the layer. */
  get pendingInvalidations(): readonly string[] {
    return [...this.#pending];
  }

  addPending(keys: readonly string[]): void {
    for (const k of keys) this.#pending.add(k);
  }

  clearPending(keys: readonly string[]): void {
    for (const k of keys) this.#pending.delete(k);
  }

  /**
   * Whether reads may use the layer now: not in its cooldown, and every failed invalidation
   * replayed (through `invalidate`) first.
   */
  async usable(invalidate: (keys: readonly string[]) => Promise<void>): Promise<boolean> {
    if (!this.mayTry()) return false;
    const pending = this.pendingInvalidations;
    if (pending.length === 0) return true;
    try {
      await invalidate(pending);
      this.clearPending(pending);
      this.succeeded();
      return true;
    } catch {
      this.failed();
      return false;
    }
  }

  /** Runs an invalidation; if it fails, keeps its keys for replay, counts the failure and rethrows. */
  async invalidating(keys: readonly string[], invalidate: (keys: readonly string[]) => Promise<void>): Promise<void> {
    try {
      await invalidate(keys);
    } catch (err) {
      this.addPending(keys);
      this.failed();
      throw err;
    }
  }
}
