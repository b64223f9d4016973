import type { RedisClient } from '../redis/redisClient.ts';
import type { CacheStats } from '../core/cacheStats.ts';
import { LIMITS } from '../core/validate.ts';
import { withTimeout } from './withTimeout.ts';

/**
 * Materialized home feeds in Redis: one sorted set per viewer, `f:{<viewer>}`, of item IDs scored
 * by their time (ms), newest first on read; equal times order by ID (members are zero-padded to
 * 19 digits, so Redis's byte order of members is numeric order). Every operation touches one key
 * only (one viewer's feed), so each runs on a Redis Cluster as on one Redis.
 *
 * Besides items, a feed holds a few members below score 0 that describe it:
 *   score -1  `b:<ms>`           when its build began (the follows the build read are those before)
 *   score -2  `h:<ms>:<id>`      its horizon: the feed is exact only ABOVE this position; older
 *                                items were never stored or were trimmed (readers merge them from
 *                                MySQL). Absent: the feed holds every item its sources had.
 *   score -3  `w:<token>`        a build in progress (set by `mark`, removed by `commit`)
 *   score -4  `v:<n>`            its version: raised by every change of its items or horizon (an
 *                                append that added, a commit, a removal); with `b:`, what a gateway's
 *                                near copy of a page is checked against (see `read`)
 *
 * The append rule of the seeds: `append` adds an item only to a feed that exists; a missing feed is
 * never half-filled, it is built whole on its next read. A build marks the key first (so appends
 * that land while it reads MySQL are kept), then `commit` adds what it read to what was appended.
 * Every add is ZADD NX: adding an item twice is adding it once. A feed holds at most `cap` items:
 * each add trims the oldest and raises the horizon to the newest item it trimmed.
 */

/** Pads an ID to 19 digits (every ID is below 2^62): members compare as numbers. */
export function feedMember(id: bigint): string {
  return id.toString().padStart(19, '0');
}

export const feedKey = (viewer: bigint): string => `f:{${viewer}}`;

/** One hash of counters of the work done on feeds, by every worker. */
export const FEED_WORK_KEY = 'shardql:feed:work';

/** A position in a feed, newest first: time (ms) then item ID, both descending. */
export interface FeedPosition {
  readonly time: number;
  readonly id: bigint;
}

export interface FeedEntry extends FeedPosition {}

/** Lua helpers every script shares: read the horizon, and trim to `cap` items raising it. */
const COMMON = `
local key = KEYS[1]
local function horizon()
  local h = redis.call('ZRANGEBYSCORE', key, -2, -2)[1]
  if not h then return nil end
  local t, m = string.match(h, '^h:(%d+):(%d+)$')
  return tonumber(t), m
end
local function below(score, member, hs, hm)
  return hs ~= nil and (score < hs or (score == hs and member <= hm))
end
-- A change of the items or the horizon: the version goes up (near copies of pages are stale).
local function bump()
  local v = redis.call('ZRANGEBYSCORE', key, -4, -4)[1]
  if v then redis.call('ZREM', key, v) end
  redis.call('ZADD', key, -4, 'v:' .. ((v and tonumber(string.sub(v, 3)) or 0) + 1))
end
local function trim(cap)
  local items = redis.call('ZCOUNT', key, 0, '+inf')
  if items <= cap then return 0 end
  local excess = items - cap
  local gone = redis.call('ZRANGEBYSCORE', key, 0, '+inf', 'WITHSCORES', 'LIMIT', excess - 1, 1)
  local meta = redis.call('ZCOUNT', key, '-inf', '(0')
  redis.call('ZREMRANGEBYRANK', key, meta, meta + excess - 1)
  redis.call('ZREMRANGEBYSCORE', key, -2, -2)
  redis.call('ZADD', key, -2, 'h:' .. gone[2] .. ':' .. gone[1])
  return excess
end
`;

/** ARGV: score, member, cap. 0: no feed; 1: added; 2: at or below the horizon (not stored); 3: already there. */
const APPEND = `${COMMON}
if redis.call('EXISTS', key) == 0 then return 0 end
local score = tonumber(ARGV[1])
local hs, hm = horizon()
if below(score, ARGV[2], hs, hm) then return 2 end
local added = redis.call('ZADD', key, 'NX', score, ARGV[2])
trim(tonumber(ARGV[3]))
if added == 1 then
  bump()
  return 1
end
return 3`;

/** ARGV: now, token, ttl ms, replace ('1': drop what is there first). 1: marked; 0: a feed (or a build) is there. */
const MARK = `
local key = KEYS[1]
if ARGV[4] == '1' then redis.call('DEL', key)
elseif redis.call('EXISTS', key) == 1 then return 0 end
redis.call('ZADD', key, -1, 'b:' .. ARGV[1], -3, 'w:' .. ARGV[2])
redis.call('PEXPIRE', key, ARGV[3])
return 1`;

/**
 * ARGV: token, cap, ttl ms, horizon ('' or '<ms>:<member>'), then score, member pairs. 1: stored
 * (merged with what appends added meanwhile); 0: the mark is gone (expired, flushed, replaced).
 */
const COMMIT = `${COMMON}
if not redis.call('ZSCORE', key, 'w:' .. ARGV[1]) then return 0 end
redis.call('ZREM', key, 'w:' .. ARGV[1])
local hs, hm = horizon()
if ARGV[4] ~= '' then
  local bt, bm = string.match(ARGV[4], '^(%d+):(%d+)$')
  bt = tonumber(bt)
  -- The higher of the build's horizon and one appends meanwhile may have set.
  if hs == nil or not below(bt, bm, hs, hm) then
    redis.call('ZREMRANGEBYSCORE', key, -2, -2)
    redis.call('ZADD', key, -2, 'h:' .. ARGV[4])
    hs, hm = bt, bm
  end
end
local batch = {}
for i = 5, #ARGV, 2 do
  local score = tonumber(ARGV[i])
  if not below(score, ARGV[i + 1], hs, hm) then
    batch[#batch + 1] = ARGV[i]
    batch[#batch + 1] = ARGV[i + 1]
  end
  if #batch >= 1000 then
    redis.call('ZADD', key, 'NX', unpack(batch))
    batch = {}
  end
end
if #batch > 0 then redis.call('ZADD', key, 'NX', unpack(batch)) end
-- Appends while building may have raised it: anything now at or below it goes.
hs, hm = horizon()
if hs ~= nil then
  redis.call('ZREMRANGEBYSCORE', key, 0, '(' .. hs)
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', key, hs, hs)) do
    if m <= hm then redis.call('ZREM', key, m) end
  end
end
trim(tonumber(ARGV[2]))
bump()
redis.call('PEXPIRE', key, ARGV[3])
return 1`;

/** ARGV: members. Removes them from an existing feed, raising its version if any was there; returns how many were. */
const REMOVE = `${COMMON}
local n = redis.call('ZREM', key, unpack(ARGV))
if n > 0 then bump() end
return n`;

/**
 * ARGV: after time ('' = from the newest), after member, n, ttl ms, renewal slack ms, the version
 * of the caller's near copy of this page ('' none). Returns {0} (no feed), {2, built} (a build in
 * progress), {3} (the feed is still at that version: the copy is exact), or
 * {1, built, horizon, "member,score,member,score,…", version ('' if it has none)}: up to n items
 * strictly after the position, newest first, joined into one string (one reply to encode and
 * decode, not two per item).
 *
 * Reading the items is what costs: Redis 7.0 formats each score with "%.17g" (~45 µs of Redis CPU
 * per page of 20, and a seventh of a warm feed read's gateway CPU in decoding it), where checking a
 * version reads three members without scores. A read keeps the feed alive: it renews
 * the ttl once less than ttl − slack is left. Only then is the read a write, which Redis appends to
 * its AOF and, with \`appendfsync always\`, fsyncs before it answers: a renewal on every read made
 * each warm feed read a write.
 */
const READ = `
local key = KEYS[1]
if redis.call('EXISTS', key) == 0 then return {0} end
local built, h, v, building = '', '', '', false
for _, m in ipairs(redis.call('ZRANGEBYSCORE', key, -4, -1)) do
  local kind, rest = string.sub(m, 1, 1), string.sub(m, 3)
  if kind == 'b' then built = rest elseif kind == 'h' then h = rest elseif kind == 'v' then v = rest elseif kind == 'w' then building = true end
end
if building then return {2, built} end
local ttl = tonumber(ARGV[4])
if redis.call('PTTL', key) < ttl - tonumber(ARGV[5]) then redis.call('PEXPIRE', key, ttl) end
local version = ''
if v ~= '' then version = built .. '/' .. v end
if version ~= '' and version == ARGV[6] then return {3} end
local n = tonumber(ARGV[3])
local items
if ARGV[1] == '' then
  items = redis.call('ZREVRANGEBYSCORE', key, '+inf', 0, 'WITHSCORES', 'LIMIT', 0, n)
else
  items = {}
  local same = redis.call('ZREVRANGEBYSCORE', key, ARGV[1], ARGV[1], 'WITHSCORES')
  for i = 1, #same, 2 do
    if #items >= 2 * n then break end
    if same[i] < ARGV[2] then
      items[#items + 1] = same[i]
      items[#items + 1] = same[i + 1]
    end
  end
  local left = n - #items / 2
  if left > 0 then
    for _, v in ipairs(redis.call('ZREVRANGEBYSCORE', key, '(' .. ARGV[1], 0, 'WITHSCORES', 'LIMIT', 0, left)) do items[#items + 1] = v end
  end
end
return {1, built, h, table.concat(items, ','), version}`;

export interface RedisFeedsOptions {
  readonly redis: RedisClient;
  /** Most items a feed keeps (the oldest are trimmed). Default 1000. */
  readonly cap?: number;
  /** How long a feed nobody reads lives, ms (a read renews it once a sixteenth of it has passed). Default 3 days. */
  readonly ttlMs?: number;
  /** How long a build's mark lives if its builder dies, ms. Default 30000. */
  readonly buildTtlMs?: number;
  /** A read not answered within this many ms reads as no feed (the reader merges from MySQL). Default 500. */
  readonly timeoutMs?: number;
  /**
   * Client pages (at most pageMax + 1 items) this process keeps, each with the feed's version when
   * read (default 10,000; 0: none).
   * A read whose feed is still at that version gets Redis's "unchanged" and the kept page.
   */
  readonly nearPages?: number;
  /**
   * A kept page older than this (ms) is read again whatever its version says. Default 10,000. Only a
   * writer that does not raise versions (a gateway or worker of a build before them, during a
   * rolling upgrade) can make a kept page stale; this bounds how long.
   */
  readonly nearMaxAgeMs?: number;
  readonly now?: () => number;
}

/** A stored read, as a near copy keeps it. */
type StoredRead = Extract<FeedRead, { state: 'stored' }>;

/** What a read found. */
export type FeedRead =
  | { readonly state: 'missing' }
  /** Another reader is building it: read around it. */
  | { readonly state: 'building' }
  | {
      readonly state: 'stored';
      /** When its build began (ms). */
      readonly builtAt: number;
      /** The feed is exact only above this position (undefined: exact all the way down). */
      readonly horizon: FeedPosition | undefined;
      /** Items after the asked position, newest first. */
      readonly entries: FeedEntry[];
    };

export type AppendOutcome = 'missing' | 'added' | 'below-horizon' | 'present';
const APPEND_OUTCOMES: readonly AppendOutcome[] = ['missing', 'added', 'below-horizon', 'present'];

type FeedCommands = {
  shardqlFeedAppend(key: string, score: number, member: string, cap: number): Promise<number>;
  shardqlFeedMark(key: string, now: number, token: string, ttl: number, replace: string): Promise<number>;
  shardqlFeedCommit(key: string, ...args: (string | number)[]): Promise<number>;
  shardqlFeedRead(key: string, afterTime: string, afterMember: string, n: number, ttl: number, slack: number, known: string): Promise<(string | number)[]>;
  shardqlFeedRemove(key: string, ...members: string[]): Promise<number>;
};

function position(text: string): FeedPosition | undefined {
  const m = /^(\d+):(\d+)$/.exec(text);
  return m ? { time: Number(m[1]), id: BigInt(m[2]!) } : undefined;
}

export class RedisFeeds {
  readonly #redis: RedisClient & FeedCommands;
  readonly cap: number;
  readonly #ttlMs: number;
  /** A read renews the TTL once less than ttl − this is left (a sixteenth of it). */
  readonly #renewSlackMs: number;
  readonly #buildTtlMs: number;
  readonly #timeoutMs: number;
  /** Near copies of pages, oldest first: key → the page, its feed's version, when it was read. */
  readonly #near = new Map<string, { readonly read: StoredRead; readonly version: string; readonly at: number }>();
  readonly #nearPages: number;
  readonly #nearMaxAgeMs: number;
  readonly #now: () => number;

  constructor(opts: RedisFeedsOptions) {
    this.#redis = opts.redis as RedisClient & FeedCommands;
    this.cap = opts.cap ?? 1000;
    this.#ttlMs = opts.ttlMs ?? 3 * 86_400_000;
    this.#renewSlackMs = Math.floor(this.#ttlMs / 16);
    this.#buildTtlMs = opts.buildTtlMs ?? 30_000;
    this.#timeoutMs = opts.timeoutMs ?? 500;
    this.#nearPages = opts.nearPages ?? 10_000;
    this.#nearMaxAgeMs = opts.nearMaxAgeMs ?? 10_000;
    this.#now = opts.now ?? Date.now;
    if (!Number.isInteger(this.cap) || this.cap < 1) throw new RangeError(`a feed's cap must be a positive integer, got ${this.cap}`);
    opts.redis.defineCommand('shardqlFeedAppend', { numberOfKeys: 1, lua: APPEND });
    opts.redis.defineCommand('shardqlFeedMark', { numberOfKeys: 1, lua: MARK });
    opts.redis.defineCommand('shardqlFeedCommit', { numberOfKeys: 1, lua: COMMIT });
    opts.redis.defineCommand('shardqlFeedRead', { numberOfKeys: 1, lua: READ });
    opts.redis.defineCommand('shardqlFeedRemove', { numberOfKeys: 1, lua: REMOVE });
  }

  /**
   * Up to `n` items of a viewer's feed after `after` (exclusive), newest first: one round trip.
   * When this process kept that page and the feed is still at the version it was read at, Redis
   * answers "unchanged" and the kept page is the answer (see READ). A Redis failure or timeout reads
   * as a missing feed. The entries returned are shared with later reads: never changed by callers.
   */
  async read(viewer: bigint, after: FeedPosition | undefined, n: number, stats?: CacheStats): Promise<FeedRead> {
    stats?.roundTrip('redis');
    const afterTime = after ? String(after.time) : '';
    const afterMember = after ? feedMember(after.id) : '';
    const nearKey = `${viewer}|${afterTime}|${afterMember}|${n}`;
    let near = this.#nearPages > 0 ? this.#near.get(nearKey) : undefined;
    if (near !== undefined && this.#now() - near.at > this.#nearMaxAgeMs) near = undefined;
    let reply: (string | number)[];
    try {
      reply = await withTimeout(
        this.#redis.shardqlFeedRead(feedKey(viewer), afterTime, afterMember, n, this.#ttlMs, this.#renewSlackMs, near?.version ?? ''),
        this.#timeoutMs,
      );
    } catch {
      stats?.error('redis');
      return { state: 'missing' };
    }
    const state = Number(reply[0]);
    if (state === 3 && near !== undefined) {
      stats?.hits('redis', 1);
      return near.read;
    }
    this.#near.delete(nearKey);
    if (state === 0 || state === 3) {
      // 3 without a copy asked about cannot be; read as missing (the caller builds or merges).
      stats?.misses('redis', 1);
      return { state: 'missing' };
    }
    if (state === 2) return { state: 'building' };
    stats?.hits('redis', 1);
    const entries: FeedEntry[] = [];
    const joined = String(reply[3] ?? '');
    if (joined !== '') {
      const parts = joined.split(',');
      for (let i = 0; i + 1 < parts.length; i += 2) entries.push({ id: BigInt(parts[i]!), time: Number(parts[i + 1]) });
    }
    const read: StoredRead = { state: 'stored', builtAt: Number(reply[1]), horizon: position(String(reply[2])), entries: Object.freeze(entries) as FeedEntry[] };
    const version = String(reply[4] ?? '');
    // Only a client's page (at most pageMax + 1 items) is kept: a worker reading whole feeds
    // (feed.clean, 1,000 items each) would otherwise keep up to nearPages of those.
    if (version !== '' && this.#nearPages > 0 && n <= LIMITS.pageMax + 1) {
      if (this.#near.size >= this.#nearPages) this.#near.delete(this.#near.keys().next().value!);
      this.#near.set(nearKey, { read, version, at: this.#now() });
    }
    return read;
  }

  /**
   * Marks a missing feed as being built, at `now`: from then on appends land in it. Returns the
   * build's token, or undefined when a feed (or another build) is already there. `replace` drops
   * whatever is there first (a rebuild).
   */
  async mark(viewer: bigint, now: number, opts: { readonly replace?: boolean } = {}, stats?: CacheStats): Promise<string | undefined> {
    const token = `${now.toString(36)}${Math.random().toString(36).slice(2, 10)}`;
    stats?.roundTrip('redis');
    const ok = await withTimeout(this.#redis.shardqlFeedMark(feedKey(viewer), now, token, this.#buildTtlMs, opts.replace ? '1' : '0'), this.#timeoutMs);
    return ok === 1 ? token : undefined;
  }

  /**
   * Stores a build: its items (newest first or in any order) added to whatever appends put there
   * since the mark, and its horizon (undefined: it read every source to its end). False when the
   * mark is gone (the feed expired, Redis was flushed, or a rebuild replaced it): nothing stored.
   */
  async commit(viewer: bigint, token: string, entries: readonly FeedEntry[], horizon: FeedPosition | undefined, stats?: CacheStats): Promise<boolean> {
    const args: (string | number)[] = [token, this.cap, this.#ttlMs, horizon ? `${horizon.time}:${feedMember(horizon.id)}` : ''];
    for (const e of entries) args.push(e.time, feedMember(e.id));
    stats?.roundTrip('redis');
    return (await withTimeout(this.#redis.shardqlFeedCommit(feedKey(viewer), ...args), this.#timeoutMs * 4)) === 1;
  }

  /**
   * Adds one item to each of these viewers' feeds that exists (the append rule). Commands to
   * different feeds are sent together without waiting for each other (each on its own key, so a
   * cluster client routes each to its node). Throws if any fails: the caller retries the whole
   * (every add is idempotent).
   */
  async append(viewers: readonly bigint[], item: FeedEntry): Promise<Record<AppendOutcome, number>> {
    const member = feedMember(item.id);
    const replies = await Promise.all(viewers.map((v) => this.#redis.shardqlFeedAppend(feedKey(v), item.time, member, this.cap)));
    const out: Record<AppendOutcome, number> = { missing: 0, added: 0, 'below-horizon': 0, present: 0 };
    for (const r of replies) out[APPEND_OUTCOMES[Number(r)] ?? 'missing']++;
    return out;
  }

  /** Removes items from one viewer's feed (a missing feed stays missing). Returns how many were there. */
  async remove(viewer: bigint, items: readonly bigint[]): Promise<number> {
    if (items.length === 0) return 0;
    return Number(await this.#redis.shardqlFeedRemove(feedKey(viewer), ...items.map(feedMember)));
  }

  /** Removes one item from each of these viewers' feeds. Returns how many feeds held it. */
  async removeFromMany(viewers: readonly bigint[], item: bigint): Promise<number> {
    const member = feedMember(item);
    const replies = await Promise.all(viewers.map((v) => this.#redis.shardqlFeedRemove(feedKey(v), member)));
    return replies.reduce((n, r) => n + Number(r), 0);
  }

  /**
   * Adds to the process-independent counters of feed work (fan-outs, insertions, removals…): one
   * hash, one round trip; /metrics shows them. A job that runs again counts again.
   */
  async count(work: Readonly<Record<string, number>>): Promise<void> {
    const entries = Object.entries(work).filter(([, n]) => n !== 0);
    if (entries.length === 0) return;
    const multi = this.#redis.multi();
    for (const [field, n] of entries) multi.hincrby(FEED_WORK_KEY, field, n);
    await multi.exec();
  }

  /** The counters of feed work so far (empty after a Redis flush). */
  async work(): Promise<Record<string, number>> {
    const raw = await withTimeout(this.#redis.hgetall(FEED_WORK_KEY), this.#timeoutMs);
    return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, Number(v)]));
  }

  /** Drops a viewer's feed (its next read builds it again). */
  async drop(viewer: bigint): Promise<void> {
    await this.#redis.del(feedKey(viewer));
  }
}
