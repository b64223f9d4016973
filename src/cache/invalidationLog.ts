import { randomBytes } from 'node:crypto';
import { isClusterClient, type RedisClient } from '../redis/redisClient.ts';
import type { CacheStats } from '../core/cacheStats.ts';
import { withTimeout } from './withTimeout.ts';
import { NearCache, type NearCacheOptions, type NearView } from './nearCache.ts';

/**
 * The shared invalidation log in Redis, and this gateway's in-process cache (L1) kept true by it.
 *
 * Every write, after invalidating memcached and Redis (L2) and before it is acknowledged, appends
 * the keys it invalidated to the log (one Lua call: position + 1, entry pushed, log trimmed).
 * Every request that reads starts with a read barrier: one Lua call that returns the log's
 * position and the entries since this gateway's last barrier, which are applied to L1 before the
 * request reads it. Barriers of concurrent requests are coalesced: a request waits for the next
 * barrier sent after it arrived, never for one already on the wire (that one may have missed a
 * write acknowledged just before the request). So a write acknowledged before a request began is
 * never hidden from it by any gateway's L1, and a warm request costs one Redis round trip however
 * many objects it reads.
 *
 * A write that could not invalidate the shared layer itself (memcached unreachable from it) says
 * so in its entry, and the keys are also recorded in a set (`unshared`) until a sweep has
 * invalidated them. Every gateway hands the keys such entries name to `onUnshared` at its barrier,
 * before the request reads: they are invalidated in the shared layer before this gateway reads it
 * again. A barrier that finds a gap (a fresh process, or one further behind than the kept log)
 * cannot see the entries it missed, so it returns the whole set instead.
 *
 * The keys share a hash tag (`{inv}`), so the scripts also run on a Redis Cluster, where the
 * log lives on one primary: it is one ordered log, read by one call per request. A flush of Redis
 * (new epoch) or a gateway that fell behind the retained entries (a gap) empties that gateway's L1.
 * While Redis is unreachable no barrier succeeds and requests read L2 and MySQL only.
 *
 * A restarted Redis also starts a new epoch, even when it comes back with its data (an append-only
 * file): while it was down, writes were acknowledged whose appends failed (their keys wait in the
 * writers' outboxes for a repair pass), so no gateway may trust its L1 across the restart. The
 * barrier compares the server's `run_id` (new at every start) with the one the epoch was made
 * under (`run`), and makes a fresh epoch when they differ.
 */
const KEYS = ['shardql:{inv}:epoch', 'shardql:{inv}:seq', 'shardql:{inv}:log', 'shardql:{inv}:unshared', 'shardql:{inv}:run'] as const;

/**
 * The log and the barrier write even when Redis is full (`allow-oom`). With `maxmemory` and the
 * `noeviction` policy (which the job queues need), a full Redis refuses every other write but
 * still answers reads: were appends refused while barriers passed, other gateways would keep
 * serving from L1 what a write acknowledged meanwhile had changed. The log stays bounded (trimmed
 * to `maxEntries`; the unshared set is emptied by sweeps).
 */
const ALLOW_OOM = '#!lua flags=allow-oom\n';

/**
 * ARGV: entry, kept entries, fresh epoch, then the keys whose shared layer (memcached, Redis
 * lists) the writer could not invalidate, if any: those are also recorded in the `unshared` set
 * (score: this entry's position) until a sweep has invalidated them.
 */
const APPEND = `${ALLOW_OOM}
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], ARGV[3]) end
local seq = redis.call('INCR', KEYS[2])
redis.call('RPUSH', KEYS[3], ARGV[1])
redis.call('LTRIM', KEYS[3], -tonumber(ARGV[2]), -1)
for i = 4, #ARGV do redis.call('ZADD', KEYS[4], seq, ARGV[i]) end
return seq`;

/**
 * APPEND, after deleting KEYS[5..] (lists this Redis holds as the shared layer): a write's whole
 * invalidation in one round trip, atomic, so the entry never says deleted what is not. ARGV as APPEND's.
 */
const DELETE_APPEND = `${ALLOW_OOM}
for i = 5, #KEYS do redis.call('DEL', KEYS[i]) end
${APPEND.slice(ALLOW_OOM.length)}`;

const BARRIER = `${ALLOW_OOM}
local run = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
local epoch = redis.call('GET', KEYS[1])
if not epoch or redis.call('GET', KEYS[5]) ~= run then
  epoch = ARGV[3]
  redis.call('SET', KEYS[1], epoch)
  redis.call('SET', KEYS[5], run)
end
local seq = tonumber(redis.call('GET', KEYS[2]) or '0')
local last = tonumber(ARGV[1])
local gap = {epoch, seq, 0, redis.call('ZRANGE', KEYS[4], 0, tonumber(ARGV[4]) - 1)}
if epoch ~= ARGV[2] or last > seq then return gap end
local n = seq - last
if n == 0 then return {epoch, seq, 1, {}} end
if n > redis.call('LLEN', KEYS[3]) then return gap end
return {epoch, seq, 1, redis.call('LRANGE', KEYS[3], -n, -1)}`;

/** Forgets unshared records a sweep invalidated, each only if no newer failure re-recorded it. ARGV: key, position, … */
const FORGET = `
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) == ARGV[i + 1] then n = n + redis.call('ZREM', KEYS[1], ARGV[i]) end
end
return n`;

/** In an entry, what follows this word are keys whose shared layer was not invalidated (older readers skip it). */
const UNSHARED_MARK = '!';

export interface InvalidationLogOptions {
  readonly redis: RedisClient;
  /** Entries kept in Redis; a gateway further behind empties its L1. Default 100,000. */
  readonly maxEntries?: number;
  /** A barrier or append not answered within this many ms fails. Default 500. */
  readonly timeoutMs?: number;
  readonly near?: NearCacheOptions;
  /**
   * Keys a writer could not invalidate in the shared layer, named by an entry this gateway's
   * barrier read (or the whole unshared set, after a gap): called before the request reads.
   */
  readonly onUnshared?: (keys: readonly string[]) => void;
  /** Most unshared records a barrier after a gap returns. Default 10,000. */
  readonly maxUnshared?: number;
}

/** A key whose shared layer a writer could not invalidate, and the log position that recorded it. */
interface UnsharedRecord {
  readonly key: string;
  readonly seq: string;
}

type Scripted = RedisClient & {
  shardqlInvAppend(k1: string, k2: string, k3: string, k4: string, entry: string, max: number, epoch: string, ...unshared: string[]): Promise<number>;
  shardqlInvDeleteAppend(numKeys: number, ...keysThenArgs: (string | number)[]): Promise<number>;
  shardqlInvBarrier(
    k1: string,
    k2: string,
    k3: string,
    k4: string,
    k5: string,
    last: number,
    epoch: string,
    fresh: string,
    maxUnshared: number,
  ): Promise<[string, number, number, string[]?]>;
  shardqlInvForget(k: string, ...pairs: string[]): Promise<number>;
};

/**
 * Epochs unique to this process: a random prefix drawn once, then a counter (an epoch only has to
 * differ from every other one; a random draw per append cost a syscall on every write).
 */
const EPOCH_PREFIX = randomBytes(8).toString('hex');
let epochCounter = 0;
const newEpoch = (): string => `${EPOCH_PREFIX}${(epochCounter++).toString(36)}`;

/** The keys an entry names, and those of them whose shared layer was not invalidated. */
function parseEntry(entry: string): { keys: string[]; unshared: string[] } {
  const words = entry.split(' ');
  const mark = words.indexOf(UNSHARED_MARK);
  return mark < 0 ? { keys: words, unshared: [] } : { keys: words.slice(0, mark), unshared: words.slice(mark + 1) };
}

export class InvalidationLog {
  readonly near: NearCache;
  readonly #redis: Scripted;
  readonly #maxEntries: number;
  readonly #timeoutMs: number;
  readonly #onUnshared: (keys: readonly string[]) => void;
  readonly #maxUnshared: number;
  #epoch = '';
  /** The epoch this gateway would create if the log had none: made anew only once it is used. */
  #candidate = newEpoch();
  /** The barrier on the wire, and the one queued behind it for requests that arrived meanwhile. */
  #inFlight: Promise<NearView | undefined> | undefined;
  #queued: Promise<NearView | undefined> | undefined;
  /** Appends that failed: replayed before the next barrier, which must not be trusted until then. */
  readonly #pending = new Set<string>();
  /** Of those, the keys whose shared layer was not invalidated either: replayed as such. */
  readonly #pendingUnshared = new Set<string>();

  constructor(opts: InvalidationLogOptions) {
    this.#redis = opts.redis as Scripted;
    this.#maxEntries = opts.maxEntries ?? 100_000;
    this.#timeoutMs = opts.timeoutMs ?? 500;
    this.#onUnshared = opts.onUnshared ?? (() => undefined);
    this.#maxUnshared = opts.maxUnshared ?? 10_000;
    this.near = new NearCache(opts.near);
    opts.redis.defineCommand('shardqlInvAppend', { numberOfKeys: 4, lua: APPEND });
    // No numberOfKeys: the first argument says how many (4 + the keys deleted).
    opts.redis.defineCommand('shardqlInvDeleteAppend', { lua: DELETE_APPEND });
    opts.redis.defineCommand('shardqlInvBarrier', { numberOfKeys: 5, lua: BARRIER });
    opts.redis.defineCommand('shardqlInvForget', { numberOfKeys: 1, lua: FORGET });
  }

  /**
   * A view to read L1 with, from a barrier sent after this call; undefined when Redis cannot say
   * (then read L2 and MySQL only). Counted as one Redis round trip of the request.
   */
  view(stats?: CacheStats): Promise<NearView | undefined> {
    stats?.roundTrip('redis');
    if (this.#inFlight === undefined) return (this.#inFlight = this.#barrier());
    this.#queued ??= this.#inFlight.then(() => {
      this.#queued = undefined;
      return (this.#inFlight = this.#barrier());
    });
    return this.#queued;
  }

  async #barrier(): Promise<NearView | undefined> {
    try {
      if (this.#pending.size > 0) {
        const keys = [...this.#pending];
        const unshared = [...this.#pendingUnshared];
        await this.#append(keys, unshared);
        for (const k of keys) this.#pending.delete(k);
        for (const k of unshared) this.#pendingUnshared.delete(k);
      }
      const [epoch, seq, ok, entries] = await withTimeout(
        this.#redis.shardqlInvBarrier(KEYS[0], KEYS[1], KEYS[2], KEYS[3], KEYS[4], this.near.applied, this.#epoch, this.#candidate, this.#maxUnshared),
        this.#timeoutMs,
      );
      if (epoch === this.#candidate) this.#candidate = newEpoch();
      this.#epoch = epoch;
      let keys: string[] | undefined;
      if (ok === 1 && entries) {
        const parsed = entries.map(parseEntry);
        keys = parsed.flatMap((e) => e.keys);
        const unshared = parsed.flatMap((e) => e.unshared);
        if (unshared.length > 0) this.#onUnshared(unshared);
      } else if (entries && entries.length > 0) {
        // A gap: the entries missed are unknown, the records of every key not yet swept are not.
        this.#onUnshared(entries);
      }
      return this.near.advance({ epoch, seq: Number(seq), keys });
    } catch {
      return undefined;
    } finally {
      this.#inFlight = undefined;
    }
  }

  /**
   * Records keys a write invalidated (call after L2 is invalidated, before acknowledging), and
   * which of them it could not invalidate in L2 (`unshared`): every gateway invalidates those
   * before it next reads L2, and they stay recorded until a sweep (`sweepUnshared`) did. Drops
   * the keys from this gateway's L1 at once. Throws if Redis fails; the keys are then replayed
   * before the next barrier, and this gateway's L1 is emptied meanwhile.
   */
  async append(keys: readonly string[], unshared: readonly string[] = []): Promise<void> {
    if (keys.length === 0) return;
    try {
      const seq = await this.#append(keys, unshared);
      this.near.invalidateLocal(keys, seq);
    } catch (err) {
      for (const k of keys) this.#pending.add(k);
      for (const k of unshared) this.#pendingUnshared.add(k);
      this.near.invalidateLocal(keys, undefined);
      throw err;
    }
  }

  /**
   * The shared-layer invalidation of `keys` on `client` and their append, in one round trip (one
   * script: deleted, then appended): what a write does after its commit when the keys live in
   * this log's own Redis (`RedisLists`). Undefined when it cannot: another client, or a Redis
   * Cluster (the keys live on other nodes than the log); then invalidate, then `append`.
   *
   * The function throws if Redis fails; whether the keys were deleted is then unknown, so they
   * are replayed before the next barrier as keys the shared layer may still hold (as `append`
   * replays those it was told of), and this gateway's L1 is emptied meanwhile.
   */
  deletingAlong(client: RedisClient): ((keys: readonly string[]) => Promise<void>) | undefined {
    if (client !== this.#redis || isClusterClient(client)) return undefined;
    return async (keys) => {
      if (keys.length === 0) return;
      const unique = [...new Set(keys)];
      try {
        const seq = Number(
          await withTimeout(
            this.#redis.shardqlInvDeleteAppend(4 + unique.length, KEYS[0], KEYS[1], KEYS[2], KEYS[3], ...unique, unique.join(' '), this.#maxEntries, newEpoch()),
            this.#timeoutMs,
          ),
        );
        this.near.invalidateLocal(unique, seq);
      } catch (err) {
        for (const k of unique) {
          this.#pending.add(k);
          this.#pendingUnshared.add(k);
        }
        this.near.invalidateLocal(unique, undefined);
        throw err;
      }
    };
  }

  async #append(keys: readonly string[], unshared: readonly string[]): Promise<number> {
    const marked = [...new Set(unshared)];
    const entry = [...new Set(keys), ...(marked.length > 0 ? [UNSHARED_MARK, ...marked] : [])].join(' ');
    // A fresh epoch each time: the log may have been flushed since this gateway's candidate was used.
    return Number(
      await withTimeout(
        this.#redis.shardqlInvAppend(KEYS[0], KEYS[1], KEYS[2], KEYS[3], entry, this.#maxEntries, newEpoch(), ...marked),
        this.#timeoutMs,
      ),
    );
  }

  /**
   * The sweep any gateway runs in the background: invalidates (through `invalidate`, which throws
   * if it cannot) the oldest `limit` keys recorded as not invalidated in the shared layer, then
   * forgets those records — each only if no write recorded the key again meanwhile. Returns how
   * many it forgot. Throws, forgetting nothing, if Redis or the invalidation fails.
   */
  async sweepUnshared(invalidate: (keys: readonly string[]) => Promise<void>, limit = 1000): Promise<number> {
    const flat = await withTimeout(this.#redis.zrange(KEYS[3], '0', String(limit - 1), 'WITHSCORES'), this.#timeoutMs);
    if (flat.length === 0) return 0;
    const records: UnsharedRecord[] = [];
    for (let i = 0; i < flat.length; i += 2) records.push({ key: flat[i]!, seq: flat[i + 1]! });
    await invalidate(records.map((r) => r.key));
    return Number(await withTimeout(this.#redis.shardqlInvForget(KEYS[3], ...records.flatMap((r) => [r.key, r.seq])), this.#timeoutMs));
  }
}
