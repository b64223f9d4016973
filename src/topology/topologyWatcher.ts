import { ShardqlError } from '../core/errors.ts';
import { parseTopology, type Topology } from '../core/topology.ts';

/**
 * Keeps the topology in force current: reads the document at revision R, watches from R+1, checks
 * every new version and swaps it in whole; an invalid version is refused (logged once) and the last
 * good one kept, and so is the last good one while the store is unreachable.
 *
 * The watch alone is not trusted: etcd3 drops a watcher that etcd cancels (after a compaction) without
 * re-creating it, and a stream can go silent. So the watcher also re-reads every `refreshIntervalMs`;
 * a re-read that finds a version the watch never delivered re-creates the watch, and so does a broken
 * watch. `refresh()` re-reads at once (the router calls it when a server says it is read-only).
 *
 *   const watcher = new TopologyWatcher({ source: etcdTopologySource(etcd, key), log });
 *   await watcher.start();           // throws if no valid topology can be read
 *   router uses () => watcher.current()
 *   await watcher.stop();
 */

/** The document as the store holds it. `raw` is null when the key does not exist. */
export interface TopologyRead {
  readonly raw: string | null;
  /** Revision of the document (etcd mod_revision); "0" when absent. */
  readonly modRevision: string;
  /** Revision of the whole store when read: a watch from storeRevision + 1 misses nothing. */
  readonly storeRevision: string;
}

/** One version delivered by a watch; `raw` null: the key was deleted. */
export interface TopologyChange {
  readonly raw: string | null;
  readonly modRevision: string;
}

export interface TopologyWatchListener {
  change(change: TopologyChange): void;
  /** The watch ended or failed; no more changes will come from it. */
  broken(err: unknown): void;
}

/** Where the document lives: etcd in production (etcdTopologySource), anything in unit tests. */
export interface TopologySource {
  read(): Promise<TopologyRead>;
  /** Starts a watch of changes with revision >= fromRevision. Must not wait for the store. */
  watch(fromRevision: string, listener: TopologyWatchListener): { close(): Promise<void> };
}

export interface TopologySwap {
  readonly topology: Topology;
  readonly revision: string;
  readonly previousRevision: string;
}

export type TopologyLog = (event: string, fields: Record<string, unknown>) => void;

export interface TopologyWatcherOptions {
  readonly source: TopologySource;
  readonly log?: TopologyLog;
  /** Re-read period besides the watch, ms. Default 5000. */
  readonly refreshIntervalMs?: number;
  /** Called after every swap, with the new map already in force. */
  readonly onSwap?: (swap: TopologySwap) => void;
  readonly now?: () => number;
}

export const TOPOLOGY_WATCHER_DEFAULTS = {
  refreshIntervalMs: 5000,
  /** Wait before re-creating a broken watch (the re-read happens then too). */
  rewatchDelayMs: 200,
  /** refresh() calls closer together than this share one read. */
  minRefreshGapMs: 100,
} as const;

/** What to do with a version seen by a read or a watch. Pure. */
export type VersionDecision =
  | { readonly kind: 'swap'; readonly topology: Topology }
  | { readonly kind: 'current' }
  | { readonly kind: 'stale' }
  | { readonly kind: 'rejected'; readonly problem: string; readonly alreadyRejected: boolean };

/** Compares etcd revisions (decimal strings of int64). */
export function compareRevisions(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Decides about one version of the document, given the revision in force and the last refused one.
 * Examples: revision 7 while 9 is in force → stale; 9 again → current; 12 with `{"format":2}` →
 * rejected ("format must be 1, got 2"), and alreadyRejected on every later sighting of 12.
 */
export function decideVersion(inForce: string, lastRejected: string | undefined, incoming: TopologyChange, current?: Topology): VersionDecision {
  const order = compareRevisions(incoming.modRevision, inForce);
  if (order < 0) return { kind: 'stale' };
  if (order === 0) return { kind: 'current' };
  const alreadyRejected = lastRejected !== undefined && compareRevisions(lastRejected, incoming.modRevision) === 0;
  if (incoming.raw === null) return { kind: 'rejected', problem: 'the topology key was deleted', alreadyRejected };
  let doc: unknown;
  try {
    doc = JSON.parse(incoming.raw);
  } catch (err) {
    return { kind: 'rejected', problem: `not JSON (${err instanceof Error ? err.message : String(err)})`, alreadyRejected };
  }
  try {
    const topology = parseTopology(doc);
    // Usernames and emails are placed by md5(key) mod the count: a map with another count, swapped
    // in live, would look every claim up on the wrong mod shard. A process adopts a count only at
    // start, where it is checked against the count the mod shards record (storage/modShardCountRecord.ts).
    const [was, now] = [current?.doc.modShard.count, topology.doc.modShard.count];
    if (was !== undefined && was !== now) {
      return { kind: 'rejected', problem: `the mod-shard count changed from ${was} to ${now}: lookups are hashed over it, so a running process never swaps it in (restart to adopt a new count, which the start-up check compares with the count the mod shards record)`, alreadyRejected };
    }
    return { kind: 'swap', topology };
  } catch (err) {
    return { kind: 'rejected', problem: err instanceof Error ? err.message : String(err), alreadyRejected };
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message.replace(/\s*Resolution note:\s*$/, '') : String(err);
}

export class TopologyWatcher {
  readonly #opts: TopologyWatcherOptions;
  readonly #now: () => number;
  #topology: Topology | undefined;
  #revision = '0';
  /** When a read or the watch last confirmed the map in force (ms). */
  #confirmedAt = 0;
  #rejected: { revision: string; problem: string } | undefined;
  #watch: { close(): Promise<void> } | undefined;
  /** Highest revision the current watch delivered: a re-read finding more means the watch is silent. */
  #watchedUpTo = '0';
  #timer: NodeJS.Timeout | undefined;
  #refreshing: Promise<void> | undefined;
  #lastRefreshAt = 0;
  #unreachableSince: number | undefined;
  #stopped = false;

  constructor(opts: TopologyWatcherOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
  }

  /** Reads the first version (it must exist and be valid), then watches. */
  async start(): Promise<void> {
    let read: TopologyRead;
    try {
      read = await this.#opts.source.read();
    } catch (err) {
      throw new ShardqlError('TOPOLOGY_UNAVAILABLE', `The topology store is unreachable: ${errorText(err)}`, {}, { cause: err });
    }
    if (read.raw === null) throw new ShardqlError('TOPOLOGY_UNAVAILABLE', 'No topology is published; run `shardql topology publish`');
    const decision = decideVersion('0', undefined, read);
    if (decision.kind !== 'swap') {
      throw new ShardqlError(
        'INVALID_TOPOLOGY',
        `The published topology (revision ${read.modRevision}) is not valid: ${decision.kind === 'rejected' ? decision.problem : decision.kind}`,
      );
    }
    this.#topology = decision.topology;
    this.#revision = read.modRevision;
    this.#confirmedAt = this.#now();
    this.#log('topology_loaded', {
      revision: read.modRevision,
      hosts: Object.keys(decision.topology.doc.hosts).length,
      openShards: decision.topology.openShardCount,
    });
    this.#startWatch(read.storeRevision);
    this.#schedule(this.#opts.refreshIntervalMs ?? TOPOLOGY_WATCHER_DEFAULTS.refreshIntervalMs);
  }

  /** The map in force. */
  current(): Topology {
    if (!this.#topology) throw new Error('TopologyWatcher.current() called before start() resolved');
    return this.#topology;
  }

  /** etcd revision of the map in force. */
  revision(): string {
    return this.#revision;
  }

  /** Milliseconds since a read or the watch last confirmed the map in force is the newest valid one. */
  ageMs(): number {
    return this.#now() - this.#confirmedAt;
  }

  /** The newest refused version, if it is newer than the map in force. */
  rejected(): { readonly revision: string; readonly problem: string } | undefined {
    return this.#rejected && compareRevisions(this.#rejected.revision, this.#revision) > 0 ? this.#rejected : undefined;
  }

  /** Re-reads now (calls close together share one read). Never throws. */
  refresh(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#refreshing) return this.#refreshing;
    if (this.#now() - this.#lastRefreshAt < TOPOLOGY_WATCHER_DEFAULTS.minRefreshGapMs) return Promise.resolve();
    this.#refreshing = this.#reread()
      .catch((err: unknown) => this.#log('topology_refresh_failed', { revision: this.#revision, error: errorText(err) }))
      .finally(() => {
        this.#refreshing = undefined;
        this.#lastRefreshAt = this.#now();
      });
    return this.#refreshing;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#refreshing;
    await this.#closeWatch();
  }

  #log(event: string, fields: Record<string, unknown>): void {
    this.#opts.log?.(event, fields);
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      void this.refresh().finally(() => this.#schedule(this.#opts.refreshIntervalMs ?? TOPOLOGY_WATCHER_DEFAULTS.refreshIntervalMs));
    }, ms);
    this.#timer.unref();
  }

  async #reread(): Promise<void> {
    let read: TopologyRead;
    try {
      read = await this.#opts.source.read();
    } catch (err) {
      if (this.#unreachableSince === undefined) {
        this.#unreachableSince = this.#now();
        this.#log('topology_store_unreachable', { revision: this.#revision, error: errorText(err) });
      }
      return;
    }
    if (this.#unreachableSince !== undefined) {
      this.#log('topology_store_reachable', { revision: this.#revision, downMs: this.#now() - this.#unreachableSince });
      this.#unreachableSince = undefined;
    }
    const missedByWatch =
      this.#watch !== undefined && compareRevisions(read.modRevision, this.#watchedUpTo) > 0 && compareRevisions(read.modRevision, this.#revision) > 0;
    this.#consider(read, 'read');
    if (this.#stopped) return;
    if (this.#watch === undefined || missedByWatch) {
      if (missedByWatch) this.#log('topology_watch_silent', { revision: read.modRevision });
      await this.#closeWatch();
      this.#startWatch(read.storeRevision);
    }
  }

  #consider(version: TopologyChange, via: 'read' | 'watch'): void {
    const decision = decideVersion(this.#revision, this.#rejected?.revision, version, this.#topology);
    switch (decision.kind) {
      case 'swap': {
        const previousRevision = this.#revision;
        this.#topology = decision.topology;
        this.#revision = version.modRevision;
        this.#confirmedAt = this.#now();
        this.#log('topology_swapped', {
          revision: version.modRevision,
          previousRevision,
          via,
          openShards: decision.topology.openShardCount,
          paused: decision.topology.doc.pausedShards ?? [],
          pausedMod: decision.topology.doc.pausedModShards ?? [],
        });
        this.#opts.onSwap?.({ topology: decision.topology, revision: version.modRevision, previousRevision });
        return;
      }
      case 'current':
        this.#confirmedAt = this.#now();
        return;
      case 'stale':
        return;
      case 'rejected':
        // The last good map stays; it is still the newest valid one, so it counts as confirmed.
        this.#confirmedAt = this.#now();
        if (!decision.alreadyRejected) {
          this.#rejected = { revision: version.modRevision, problem: decision.problem };
          this.#log('topology_rejected', { revision: version.modRevision, keptRevision: this.#revision, problem: decision.problem });
        }
        return;
    }
  }

  #startWatch(afterStoreRevision: string): void {
    if (this.#stopped) return;
    const from = (BigInt(afterStoreRevision) + 1n).toString();
    this.#watchedUpTo = afterStoreRevision;
    // Events of a watch that was replaced or broke are ignored.
    const live = (): boolean => !this.#stopped && this.#watch === watch;
    const watch = this.#opts.source.watch(from, {
      change: (c) => {
        if (!live()) return;
        if (compareRevisions(c.modRevision, this.#watchedUpTo) > 0) this.#watchedUpTo = c.modRevision;
        this.#consider(c, 'watch');
      },
      broken: (err) => {
        if (!live()) return;
        this.#watch = undefined;
        this.#log('topology_watch_broken', { revision: this.#revision, error: errorText(err) });
        void watch.close().catch(() => undefined);
        // Re-read (which re-creates the watch) soon, not at the next period.
        this.#schedule(TOPOLOGY_WATCHER_DEFAULTS.rewatchDelayMs);
      },
    });
    this.#watch = watch;
  }

  async #closeWatch(): Promise<void> {
    const w = this.#watch;
    this.#watch = undefined;
    if (w) await w.close().catch(() => undefined);
  }
}
