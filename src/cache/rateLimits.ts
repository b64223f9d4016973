import type { RedisClient } from '../redis/redisClient.ts';

/** A rate: `limit` requests per `windowMs`, e.g. "600/60s" → { limit: 600, windowMs: 60000 }. */
export interface Rate {
  readonly limit: number;
  readonly windowMs: number;
}

/**
 * Parses "600/60s", "10/1m", "5/500ms" or "100/1h". Returns undefined for "off".
 * Throws RangeError with the expected form otherwise.
 */
export function parseRate(text: string): Rate | undefined {
  if (text === 'off' || text === '0') return undefined;
  const m = /^(\d{1,9})\/(\d{1,9})(ms|s|m|h)$/.exec(text.trim());
  if (!m) throw new RangeError(`Expected a rate such as 600/60s (requests/window in ms, s, m or h) or off, got ${JSON.stringify(text)}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[3] as 'ms' | 's' | 'm' | 'h'];
  const rate = { limit: Number(m[1]), windowMs: Number(m[2]) * unit };
  if (rate.limit < 1 || rate.windowMs < 1) throw new RangeError(`Expected a rate of at least 1 request per window, got ${JSON.stringify(text)}`);
  return rate;
}

/**
 * One token bucket (KEYS[1]) holding `capacity` tokens refilled at capacity/window per ms. ARGV:
 * cost, capacity, window (ms). Takes `cost` and returns 0, or returns the ms until the bucket would
 * have it and takes nothing. Redis's own clock (TIME) decides, so every gateway replica sees the
 * same buckets. One key per script: on a Redis Cluster each bucket lives wherever its key hashes.
 */
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cost = tonumber(ARGV[1])
local cap = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1]) or cap
local at = tonumber(b[2]) or now
if now > at then tokens = math.min(cap, tokens + (now - at) * cap / window) end
if tokens < cost then return math.ceil((cost - tokens) * window / cap) end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens - cost), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], window)
return 0
`;

/**
 * Gives back what TAKE took from a bucket (KEYS[1]; ARGV: cost, capacity): the bucket is as if it
 * had not been asked. A request another bucket refused must not use this one up.
 */
const GIVE_BACK = `
local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens'))
if tokens == nil then return 0 end
redis.call('HSET', KEYS[1], 'tokens', tostring(math.min(tonumber(ARGV[2]), tokens + tonumber(ARGV[1]))))
return 1
`;

type BucketScripts = RedisClient & {
  shardqlRateTake(key: string, cost: number, capacity: number, windowMs: number): Promise<number>;
  shardqlRateGiveBack(key: string, cost: number, capacity: number): Promise<number>;
};

export interface RateLimitOptions {
  readonly redis: RedisClient;
  /** Per viewer (requests with a token). Undefined: no per-viewer limit. */
  readonly perViewer?: Rate | undefined;
  /** Per client address (every request). Undefined: no per-address limit. */
  readonly perAddress?: Rate | undefined;
  /** Key prefix. Default `shardql:rl:`. */
  readonly prefix?: string;
}

export type Admission = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number; readonly scope: 'viewer' | 'address' };

type Scope = 'viewer' | 'address';
interface BucketRef {
  readonly key: string;
  readonly rate: Rate;
  readonly scope: Scope;
}

/** The buckets a request takes from: its viewer's (if it has one and that limit is set) and its address's. */
function bucketsOf(opts: { readonly perViewer?: Rate | undefined; readonly perAddress?: Rate | undefined }, prefix: string, who: Who): BucketRef[] {
  const buckets: BucketRef[] = [];
  if (who.viewer !== undefined && opts.perViewer) buckets.push({ key: `${prefix}v:${who.viewer}`, rate: opts.perViewer, scope: 'viewer' });
  if (opts.perAddress) buckets.push({ key: `${prefix}a:${who.address}`, rate: opts.perAddress, scope: 'address' });
  return buckets;
}

/** The verdict from each bucket's wait (0 = it gave): refused by the longest wait, naming its scope. */
function verdictOf(buckets: readonly BucketRef[], waits: readonly number[]): Admission {
  const longest = waits.reduce((worst, wait, i) => (wait > (waits[worst] ?? 0) ? i : worst), 0);
  const waitMs = waits[longest] ?? 0;
  if (waitMs <= 0) return { allowed: true };
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)), scope: buckets[longest]!.scope };
}

/** Who a request is, for its buckets. */
export interface Who {
  readonly viewer?: string | undefined;
  readonly address: string;
}

/**
 * Rate limits kept in Redis, so they hold across gateway replicas: a request takes from the
 * viewer's and the address's token buckets (one script per bucket, sent together: one round trip)
 * and is admitted only if both had enough; a bucket that gave while the other refused gets its
 * tokens back (a second round trip, on refusals only). Between the two, a concurrent request can
 * only find fewer tokens, never more: the limits are never exceeded. Each bucket is its own key,
 * so on a Redis Cluster buckets spread over the primaries. Redis errors are thrown to the caller
 * (`rateLimitAdmission`), which then asks this process's own buckets (`LocalRateLimits`).
 */
export class RedisRateLimits {
  readonly #opts: RateLimitOptions;
  readonly #prefix: string;
  readonly #redis: BucketScripts;

  constructor(opts: RateLimitOptions) {
    this.#opts = opts;
    this.#prefix = opts.prefix ?? 'shardql:rl:';
    this.#redis = opts.redis as BucketScripts;
    opts.redis.defineCommand('shardqlRateTake', { numberOfKeys: 1, lua: TAKE });
    opts.redis.defineCommand('shardqlRateGiveBack', { numberOfKeys: 1, lua: GIVE_BACK });
  }

  /** Takes `cost` requests (1, or the size of a batch) from the buckets of this viewer and address. */
  async take(who: Who, cost = 1): Promise<Admission> {
    const buckets = bucketsOf(this.#opts, this.#prefix, who);
    if (buckets.length === 0) return { allowed: true };
    const waits = await Promise.all(buckets.map((b) => this.#redis.shardqlRateTake(b.key, cost, b.rate.limit, b.rate.windowMs)));
    const verdict = verdictOf(buckets, waits);
    if (!verdict.allowed) await Promise.all(buckets.flatMap((b, i) => (waits[i] === 0 ? [this.#redis.shardqlRateGiveBack(b.key, cost, b.rate.limit)] : [])));
    return verdict;
  }
}

export interface LocalRateLimitOptions {
  readonly perViewer?: Rate | undefined;
  readonly perAddress?: Rate | undefined;
  /** The most buckets held; beyond it the least recently used go (a bucket gone is a full one). Default 100,000. */
  readonly maxBuckets?: number;
  /** The clock, ms. Default `Date.now`. */
  readonly now?: () => number;
}

/**
 * The same token buckets as `RedisRateLimits` (TAKE's arithmetic, the same give-back), held in
 * this process: what a gateway enforces on its own while Redis cannot answer, so an outage of
 * Redis lifts no limit. Each replica then keeps its own buckets, starting full: with N replicas
 * behind a balancer a client gets up to N times its limit until Redis answers again. Bounded: at
 * most `maxBuckets` (least recently used first out); a bucket idle for a whole window is full, so
 * it is dropped as Redis's PEXPIRE drops it.
 */
export class LocalRateLimits {
  readonly #opts: LocalRateLimitOptions;
  readonly #now: () => number;
  readonly #max: number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(opts: LocalRateLimitOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
    this.#max = opts.maxBuckets ?? 100_000;
  }

  /** How many buckets it holds now. */
  get size(): number {
    return this.#buckets.size;
  }

  take(who: Who, cost = 1): Admission {
    const buckets = bucketsOf(this.#opts, '', who);
    if (buckets.length === 0) return { allowed: true };
    const now = this.#now();
    const waits = buckets.map((b) => this.#take(b, cost, now));
    const verdict = verdictOf(buckets, waits);
    if (!verdict.allowed) {
      for (const [i, b] of buckets.entries()) {
        const held = waits[i] === 0 ? this.#buckets.get(b.key) : undefined;
        if (held) held.tokens = Math.min(b.rate.limit, held.tokens + cost);
      }
    }
    return verdict;
  }

  /** TAKE on one bucket: 0 and `cost` taken, or the ms until it would have it (nothing taken). */
  #take(b: BucketRef, cost: number, now: number): number {
    const cap = b.rate.limit;
    const window = b.rate.windowMs;
    const held = this.#buckets.get(b.key);
    let tokens = held && now - held.at < window ? held.tokens : cap;
    const at = held?.at ?? now;
    if (now > at) tokens = Math.min(cap, tokens + ((now - at) * cap) / window);
    if (tokens < cost) return Math.ceil(((cost - tokens) * window) / cap);
    // Taken: it becomes the most recently used.
    this.#buckets.delete(b.key);
    this.#buckets.set(b.key, { tokens: tokens - cost, at: now });
    for (const key of this.#buckets.keys()) {
      if (this.#buckets.size <= this.#max) break;
      this.#buckets.delete(key);
    }
    return 0;
  }
}
