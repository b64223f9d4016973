import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { CacheStats } from './cacheStats.ts';
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
 * The three keys share a hash tag, so the scripts also run on a Redis Cluster. A flush of Redis
 * (new epoch) or a gateway that fell behind the retained entries (a gap) empties that gateway's L1.
 * While Redis is unreachable no barrier succeeds and requests read L2 and MySQL only.
 */
const KEYS = ['shardql:{inv}:epoch', 'shardql:{inv}:seq', 'shardql:{inv}:log'] as const;

const APPEND = `
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], ARGV[3]) end
local seq = redis.call('INCR', KEYS[2])
redis.call('RPUSH', KEYS[3], ARGV[1])
redis.call('LTRIM', KEYS[3], -tonumber(ARGV[2]), -1)
return seq`;

const BARRIER = `
local epoch = redis.call('GET', KEYS[1])
if not epoch then
  epoch = ARGV[3]
  redis.call('SET', KEYS[1], epoch)
end
local seq = tonumber(redis.call('GET', KEYS[2]) or '0')
local last = tonumber(ARGV[1])
if epoch ~= ARGV[2] or last > seq then return {epoch, seq, 0} end
local n = seq - last
if n == 0 then return {epoch, seq, 1, {}} end
if n > redis.call('LLEN', KEYS[3]) then return {epoch, seq, 0} end
return {epoch, seq, 1, redis.call('LRANGE', KEYS[3], -n, -1)}`;

export interface InvalidationLogOptions {
  readonly redis: Redis;
  /** Entries kept in Redis; a gateway further behind empties its L1. Default 100,000. */
  readonly maxEntries?: number;
  /** A barrier or append not answered within this many ms fails. Default 500. */
  readonly timeoutMs?: number;
  readonly near?: NearCacheOptions;
}

type Scripted = Redis & {
  shardqlInvAppend(k1: string, k2: string, k3: string, entry: string, max: number, epoch: string): Promise<number>;
  shardqlInvBarrier(k1: string, k2: string, k3: string, last: number, epoch: string, fresh: string): Promise<[string, number, number, string[]?]>;
};

const newEpoch = (): string => randomBytes(8).toString('hex');

export class InvalidationLog {
  readonly near: NearCache;
  readonly #redis: Scripted;
  readonly #maxEntries: number;
  readonly #timeoutMs: number;
  #epoch = '';
  /** The epoch this gateway would create if the log had none: made anew only once it is used. */
  #candidate = newEpoch();
  /** The barrier on the wire, and the one queued behind it for requests that arrived meanwhile. */
  #inFlight: Promise<NearView | undefined> | undefined;
  #queued: Promise<NearView | undefined> | undefined;
  /** Appends that failed: replayed before the next barrier, which must not be trusted until then. */
  readonly #pending = new Set<string>();

  constructor(opts: InvalidationLogOptions) {
    this.#redis = opts.redis as Scripted;
    this.#maxEntries = opts.maxEntries ?? 100_000;
    this.#timeoutMs = opts.timeoutMs ?? 500;
    this.near = new NearCache(opts.near);
    opts.redis.defineCommand('shardqlInvAppend', { numberOfKeys: 3, lua: APPEND });
    opts.redis.defineCommand('shardqlInvBarrier', { numberOfKeys: 3, lua: BARRIER });
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
        await this.#append(keys);
        for (const k of keys) this.#pending.delete(k);
      }
      const [epoch, seq, ok, entries] = await withTimeout(
        this.#redis.shardqlInvBarrier(KEYS[0], KEYS[1], KEYS[2], this.near.applied, this.#epoch, this.#candidate),
        this.#timeoutMs,
      );
      if (epoch === this.#candidate) this.#candidate = newEpoch();
      this.#epoch = epoch;
      const keys = ok === 1 && entries ? entries.flatMap((e) => e.split(' ')) : undefined;
      return this.near.advance({ epoch, seq: Number(seq), keys });
    } catch {
      return undefined;
    } finally {
      this.#inFlight = undefined;
    }
  }

  /**
   * Records keys a write invalidated (call after L2 is invalidated, before acknowledging). Drops them
   * from this gateway's L1 at once. Throws if Redis fails; the keys are then replayed before the
   * next barrier, and this gateway's L1 is emptied meanwhile.
   */
  async append(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    try {
      const seq = await this.#append(keys);
      this.near.invalidateLocal(keys, seq);
    } catch (err) {
      for (const k of keys) this.#pending.add(k);
      this.near.invalidateLocal(keys, undefined);
      throw err;
    }
  }

  async #append(keys: readonly string[]): Promise<number> {
    const entry = [...new Set(keys)].join(' ');
    // A fresh epoch each time: the log may have been flushed since this gateway's candidate was used.
    return Number(await withTimeout(this.#redis.shardqlInvAppend(KEYS[0], KEYS[1], KEYS[2], entry, this.#maxEntries, newEpoch()), this.#timeoutMs));
  }
}
