import { randomBytes } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import { pipelinePerNode } from '../redis/pipelinePerNode.ts';
import type { RedisClient } from '../redis/redisClient.ts';
import { LayerBreaker } from './breaker.ts';
import type { CacheStats } from '../core/cacheStats.ts';
import type { InvalidationLog } from './invalidationLog.ts';
import { withTimeout } from './withTimeout.ts';

/**
 * The Redis layer (mapping pages and counts). Each list — one direction of one mapping for one
 * `from` — is a hash: its pages and its count are fields, and `_gen` is a generation nonce.
 *
 * The generation belongs to the readers: a probe that misses a field of a list Redis does not hold
 * creates the hash with a fresh `_gen` and hands it out as the token; a probe that misses a field
 * of a list it holds hands out the `_gen` there. A reader fills a field only if `_gen` is still its
 * token (a Lua script checks and sets atomically). A write invalidates a list by deleting its hash:
 * a reader that probed before the write and fills after it finds no `_gen` (or a newer reader's),
 * so it cannot leave a stale page behind; a reader that probes after the write reads MySQL after
 * the commit. Deleting a list Redis does not hold changes nothing and writes nothing (no
 * append-only-file record, no fsync): a write to a list nobody has read costs Redis nothing to
 * invalidate, and neither do the millions of lists an import touches.
 *
 * Every script touches one list (one key), and a batch goes out as one pipeline per Redis node
 * (`pipelinePerNode`): lists spread over a Redis Cluster's primaries, no hash tag needed.
 */

/**
 * ARGV: field, new generation (used only if the list is absent), TTL ms. Returns [generation, value].
 * A full Redis (`maxmemory`, `noeviction`) refuses the new generation: then [false, false], a miss
 * with no token (read MySQL, fill nothing), not an error: lists Redis holds are still served, and
 * the layer's breaker does not trip on a Redis that answers.
 */
const PROBE = `
local r = redis.call('HMGET', KEYS[1], '_gen', ARGV[1])
if r[2] or r[1] then return r end
local set = redis.pcall('HSET', KEYS[1], '_gen', ARGV[2])
if type(set) == 'table' and set.err then return {false, false} end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {ARGV[2], false}`;

/** ARGV: token, field, value, TTL ms. Returns 1 if filled, 0 if not (another generation, or Redis full). */
const FILL = `
if redis.call('HGET', KEYS[1], '_gen') ~= ARGV[1] then return 0 end
local set = redis.pcall('HSET', KEYS[1], ARGV[2], ARGV[3])
if type(set) == 'table' and set.err then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`;

/**
 * Generations unique to this process: a random prefix drawn once, then a counter (a token only
 * has to differ from every generation a list ever had; a random draw per list cost a syscall).
 */
const GEN_PREFIX = randomBytes(6).toString('base64url');
let genCounter = 0;
const newGeneration = (): string => `${GEN_PREFIX}${(genCounter++).toString(36)}`;

/** The scripts below, as `defineCommand` adds them to a pipeline. */
type ListScripts = ChainableCommander & {
  shardqlListProbe(list: string, field: string, newGen: string, ttlMs: number): ChainableCommander;
  shardqlListFill(list: string, token: string, field: string, value: string, ttlMs: number): ChainableCommander;
};

export interface RedisListsOptions {
  readonly redis: RedisClient;
  /** Milliseconds a list's cached pages live. Default 600000 (10 min). */
  readonly ttlMs?: number;
  /** A batch not answered within this many ms reads as all-miss. Default 500. */
  readonly timeoutMs?: number;
}

export interface ListField {
  /** The list's hash key, e.g. `l:board_has_pins:241294…`. */
  readonly list: string;
  /** The field inside it: a page key, or `n` for the count. */
  readonly field: string;
}

/** What a reader saw before reading MySQL: the generation its fill must still match. */
export type ListToken = string;

export class RedisLists {
  readonly #redis: RedisClient;
  readonly #ttlMs: number;
  readonly #timeoutMs: number;
  readonly #breaker = new LayerBreaker();

  constructor(opts: RedisListsOptions) {
    this.#redis = opts.redis;
    this.#ttlMs = opts.ttlMs ?? 600_000;
    this.#timeoutMs = opts.timeoutMs ?? 500;
    this.#redis.defineCommand('shardqlListProbe', { numberOfKeys: 1, lua: PROBE });
    this.#redis.defineCommand('shardqlListFill', { numberOfKeys: 1, lua: FILL });
  }

  /**
   * Reads many fields in one round trip (a pipeline per node). Returns values found and, for each
   * field not found, its list's generation token (made now if Redis did not hold the list). What a
   * failed (or slow) node holds reads as a miss with no token (and nothing is filled there).
   */
  async probe(fields: readonly ListField[], stats?: CacheStats): Promise<{ values: Map<number, string>; tokens: Map<number, ListToken> }> {
    const values = new Map<number, string>();
    const tokens = new Map<number, ListToken>();
    if (fields.length === 0) return { values, tokens };
    if (!(await this.#usable(stats))) {
      stats?.misses('redis', fields.length);
      return { values, tokens };
    }
    stats?.roundTrip('redis');
    try {
      const results = await withTimeout(
        pipelinePerNode(this.#redis, fields, (f) => f.list, (p, f) => (p as ListScripts).shardqlListProbe(f.list, f.field, newGeneration(), this.#ttlMs)),
        this.#timeoutMs,
      );
      let failed = false;
      results.forEach(([err, res], i) => {
        if (err) return void (failed = true);
        const [gen, value] = res as [string | null, string | null];
        if (value !== null) values.set(i, value);
        else if (gen !== null) tokens.set(i, gen);
      });
      if (failed) throw new Error('a Redis node failed');
      this.#breaker.succeeded();
    } catch {
      this.#breaker.failed();
      stats?.error('redis');
    }
    stats?.hits('redis', values.size);
    stats?.misses('redis', fields.length - values.size);
    return { values, tokens };
  }

  /** Fills fields read from MySQL, each only if its list's generation is unchanged. One round trip. */
  async fill(entries: readonly { field: ListField; value: string; token: ListToken }[], stats?: CacheStats): Promise<void> {
    if (entries.length === 0) return;
    stats?.roundTrip('redis');
    try {
      const results = await withTimeout(
        pipelinePerNode(
          this.#redis,
          entries,
          (e) => e.field.list,
          (p, e) => (p as ListScripts).shardqlListFill(e.field.list, e.token, e.field.field, e.value, this.#ttlMs),
        ),
        this.#timeoutMs,
      );
      const failed = results.find(([err]) => err);
      if (failed) throw failed[0];
    } catch {
      this.#breaker.failed();
      stats?.error('redis');
    }
  }

  /** Not in cooldown, and every failed invalidation replayed. */
  #usable(stats?: CacheStats): Promise<boolean> {
    return this.#breaker.usable((keys) => this.#deleteLists(keys, stats));
  }

  /**
   * Invalidates whole lists (pages and count) after a write. One round trip. On failure the lists
   * are kept and replayed before this gateway reads Redis again, and the error is rethrown.
   */
  async invalidate(lists: readonly string[], stats?: CacheStats): Promise<void> {
    if (lists.length === 0) return;
    await this.#breaker.invalidating(lists, (k) => this.#deleteLists(k, stats));
  }

  /**
   * `invalidate` and the log's append in one round trip (one script deletes the lists, then
   * appends them: `InvalidationLog.deletingAlong`); on failure the lists are kept for replay as
   * `invalidate` keeps them, and it throws. Undefined where it cannot (the log on another client,
   * a Redis Cluster): then `invalidate`, then the log's `append`.
   */
  loggedInvalidation(log: InvalidationLog): ((lists: readonly string[]) => Promise<void>) | undefined {
    const send = log.deletingAlong(this.#redis);
    return send && ((lists) => this.#breaker.invalidating(lists, send));
  }

  /** Lists another process could not invalidate: deleted before this gateway next reads them. */
  invalidateBeforeNextRead(lists: readonly string[]): void {
    this.#breaker.addPending(lists);
  }

  async #deleteLists(lists: readonly string[], stats?: CacheStats): Promise<void> {
    stats?.roundTrip('redis');
    const results = await withTimeout(
      pipelinePerNode(this.#redis, [...new Set(lists)], (l) => l, (p, l) => p.del(l)),
      this.#timeoutMs,
    );
    const failed = results.find(([err]) => err);
    if (failed) throw failed[0];
  }
}
