import { randomBytes } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import { pipelinePerNode } from '../redis/pipelinePerNode.ts';
import type { RedisClient } from '../redis/redisClient.ts';
import { LayerBreaker } from './breaker.ts';
import type { CacheStats } from './cacheStats.ts';
import { withTimeout } from './withTimeout.ts';

/**
 * The Redis layer (mapping pages and counts). Each list — one direction of one mapping for one
 * `from` — is a hash: its pages and its count are fields, and `_gen` is a generation nonce.
 * A write invalidates the whole list at once by replacing the hash with a fresh `_gen`; a reader
 * fills a field only if `_gen` is still the one it saw before reading MySQL (a Lua script checks
 * and sets atomically). So a reader that raced a write cannot leave a stale page behind.
 *
 * Every script touches one list (one key), and a batch goes out as one pipeline per Redis node
 * (`pipelinePerNode`): lists spread over a Redis Cluster's primaries, no hash tag needed.
 */
const GEN = '_gen';

const FILL = `
local gen = redis.call('HGET', KEYS[1], '_gen')
if (gen or '') ~= ARGV[1] and not (ARGV[1] == '' and gen == ARGV[5]) then return 0 end
if gen == false then redis.call('HSET', KEYS[1], '_gen', ARGV[5]) end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`;

const INVALIDATE = `
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], '_gen', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

/** The scripts below, as `defineCommand` adds them to a pipeline. */
type ListScripts = ChainableCommander & {
  shardqlFill(list: string, token: string, field: string, value: string, ttlMs: number, newGen: string): ChainableCommander;
  shardqlInvalidate(list: string, gen: string, ttlMs: number): ChainableCommander;
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

/** What a reader saw before reading MySQL: the generation its fill must still match ('' = none). */
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
    this.#redis.defineCommand('shardqlFill', { numberOfKeys: 1, lua: FILL });
    this.#redis.defineCommand('shardqlInvalidate', { numberOfKeys: 1, lua: INVALIDATE });
  }

  /**
   * Reads many fields in one round trip (a pipeline per node). Returns values found and, for each
   * field not found, its list's generation token. What a failed (or slow) node holds reads as a
   * miss with no token (and nothing is filled there).
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
        pipelinePerNode(this.#redis, fields, (f) => f.list, (p, f) => p.hmget(f.list, GEN, f.field)),
        this.#timeoutMs,
      );
      let failed = false;
      results.forEach(([err, res], i) => {
        if (err) return void (failed = true);
        const [gen, value] = res as [string | null, string | null];
        if (value !== null) values.set(i, value);
        else tokens.set(i, gen ?? '');
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
    // Fills of one absent list in one batch share the generation the first of them creates.
    const newGen = new Map<string, string>();
    for (const e of entries) if (!newGen.has(e.field.list)) newGen.set(e.field.list, randomBytes(8).toString('hex'));
    try {
      const results = await withTimeout(
        pipelinePerNode(
          this.#redis,
          entries,
          (e) => e.field.list,
          (p, e) => (p as ListScripts).shardqlFill(e.field.list, e.token, e.field.field, e.value, this.#ttlMs, newGen.get(e.field.list)!),
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
    return this.#breaker.usable((keys) => this.#newGenerations(keys, stats));
  }

  /**
   * Invalidates whole lists (pages and count) after a write. One round trip. On failure the lists
   * are kept and replayed before this gateway reads Redis again, and the error is rethrown.
   */
  async invalidate(lists: readonly string[], stats?: CacheStats): Promise<void> {
    if (lists.length === 0) return;
    await this.#breaker.invalidating(lists, (k) => this.#newGenerations(k, stats));
  }

  /** Lists another process could not invalidate: given new generations before this gateway next reads them. */
  invalidateBeforeNextRead(lists: readonly string[]): void {
    this.#breaker.addPending(lists);
  }

  async #newGenerations(lists: readonly string[], stats?: CacheStats): Promise<void> {
    stats?.roundTrip('redis');
    const results = await withTimeout(
      pipelinePerNode(this.#redis, [...new Set(lists)], (l) => l, (p, l) => (p as ListScripts).shardqlInvalidate(l, randomBytes(8).toString('hex'), this.#ttlMs)),
      this.#timeoutMs,
    );
    const failed = results.find(([err]) => err);
    if (failed) throw failed[0];
  }
}
