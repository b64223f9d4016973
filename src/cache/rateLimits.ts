import type { Redis } from 'ioredis';

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
 * Token buckets, all taken or none: each KEYS[i] holds `capacity` tokens refilled at
 * capacity/window per ms. ARGV: cost, then capacity and window (ms) per key. Returns {0, 0} when
 * the cost was taken from every bucket, else {ms until every bucket would have it, index of the
 * bucket that needs longest} and nothing is taken.
 * Redis's own clock (TIME) decides, so every gateway replica sees the same buckets.
 */
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cost = tonumber(ARGV[1])
local wait = 0
local which = 0
local left = {}
for i, key in ipairs(KEYS) do
  local cap = tonumber(ARGV[2 * i])
  local window = tonumber(ARGV[2 * i + 1])
  local b = redis.call('HMGET', key, 'tokens', 'at')
  local tokens = tonumber(b[1]) or cap
  local at = tonumber(b[2]) or now
  if now > at then tokens = math.min(cap, tokens + (now - at) * cap / window) end
  left[i] = tokens
  if tokens < cost then
    local need = math.ceil((cost - tokens) * window / cap)
    if need > wait then
      wait = need
      which = i
    end
  end
end
if wait > 0 then return {wait, which} end
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[2 * i + 1])
  redis.call('HSET', key, 'tokens', tostring(left[i] - cost), 'at', tostring(now))
  redis.call('PEXPIRE', key, window)
end
return {0, 0}
`;

export interface RateLimitOptions {
  readonly redis: Redis;
  /** Per viewer (requests with a token). Undefined: no per-viewer limit. */
  readonly perViewer?: Rate | undefined;
  /** Per client address (every request). Undefined: no per-address limit. */
  readonly perAddress?: Rate | undefined;
  /** Key prefix. Default `shardql:rl:`. */
  readonly prefix?: string;
}

export type Admission = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSeconds: number; readonly scope: 'viewer' | 'address' };

/**
 * Rate limits kept in Redis, so they hold across gateway replicas: one Lua script takes from the
 * viewer's and the address's token buckets at once. Redis errors are thrown to the caller, which
 * fails open (a cache outage must not become an API outage).
 */
export class RedisRateLimits {
  readonly #opts: RateLimitOptions;
  readonly #prefix: string;

  constructor(opts: RateLimitOptions) {
    this.#opts = opts;
    this.#prefix = opts.prefix ?? 'shardql:rl:';
  }

  /** Takes `cost` requests (1, or the size of a batch) from the buckets of this viewer and address. */
  async take(who: { readonly viewer?: string | undefined; readonly address: string }, cost = 1): Promise<Admission> {
    const buckets: { key: string; rate: Rate; scope: 'viewer' | 'address' }[] = [];
    if (who.viewer !== undefined && this.#opts.perViewer) buckets.push({ key: `${this.#prefix}v:${who.viewer}`, rate: this.#opts.perViewer, scope: 'viewer' });
    if (this.#opts.perAddress) buckets.push({ key: `${this.#prefix}a:${who.address}`, rate: this.#opts.perAddress, scope: 'address' });
    if (buckets.length === 0) return { allowed: true };
    const args = [String(cost), ...buckets.flatMap((b) => [String(b.rate.limit), String(b.rate.windowMs)])];
    const [waitMs, which] = (await this.#opts.redis.eval(TAKE, buckets.length, ...buckets.map((b) => b.key), ...args)) as [number, number];
    if (waitMs <= 0) return { allowed: true };
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)), scope: buckets[which - 1]?.scope ?? 'address' };
  }
}
