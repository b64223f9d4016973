import type { KeyValueCache, KeyValueCacheSetOptions } from '@apollo/utils.keyvaluecache';
import type { RedisClient } from '../redis/redisClient.ts';

/**
 * Apollo's KeyValueCache over Redis, for automatic persisted queries: a query registered through
 * one gateway replica is known to all. A Redis failure reads as a miss (the client resends the
 * query text) and a failed set is dropped: persisted queries are an optimisation, never a
 * reason for a request to fail. One key per query: works on a Redis Cluster as on one Redis.
 */
export class RedisKeyValueCache implements KeyValueCache<string> {
  readonly #redis: RedisClient;
  readonly #prefix: string;

  constructor(redis: RedisClient, prefix = 'shardql:') {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  async get(key: string): Promise<string | undefined> {
    try {
      return (await this.#redis.get(this.#prefix + key)) ?? undefined;
    } catch {
      return undefined;
    }
  }

  async set(key: string, value: string, options?: KeyValueCacheSetOptions): Promise<void> {
    try {
      const ttl = options?.ttl ?? 7 * 24 * 3600;
      await this.#redis.set(this.#prefix + key, value, 'EX', Math.max(1, Math.ceil(ttl)));
    } catch {
      // Dropped: the next request that needs it sends the text again.
    }
  }

  async delete(key: string): Promise<boolean> {
    try {
      return (await this.#redis.del(this.#prefix + key)) > 0;
    } catch {
      return false;
    }
  }
}
