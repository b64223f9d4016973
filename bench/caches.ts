/**
 * Cache accounting for the report. The gateway has no memcached/Redis look-aside yet (a later
 * issue), so today every cache column reads n/a. Two sources fill them in as soon as it does:
 *
 *  - per request, `extensions.cost.cacheRoundTrips` (and `cacheHits` / `cacheMisses`) when the
 *    gateway reports them next to `sqlRoundTrips` (sampled like the SQL round trips);
 *  - per run, the servers' own counters: memcached `get_hits`/`get_misses` (objects) and Redis
 *    `keyspace_hits`/`keyspace_misses` (mapping pages and counts), read before and after each timed
 *    run on the benchmark's own stack. A rate is only reported when the run made lookups.
 *
 * "Cold" flushes both (only on the benchmark's dedicated stack, never on one tests share).
 */
import { connect } from 'node:net';
import { Redis } from 'ioredis';
import type { StackInfo } from '../src/stack/localStack.ts';

export interface CacheCounters {
  readonly memcachedHits: number;
  readonly memcachedMisses: number;
  readonly redisHits: number;
  readonly redisMisses: number;
}

export const ZERO_COUNTERS: CacheCounters = { memcachedHits: 0, memcachedMisses: 0, redisHits: 0, redisMisses: 0 };

/** `sum` plus what the counters gained from `before` to `after`; null when any of them is (a cache did not answer). */
export function addCounters(sum: CacheCounters | null, before: CacheCounters | null, after: CacheCounters | null): CacheCounters | null {
  if (!sum || !before || !after) return null;
  return {
    memcachedHits: sum.memcachedHits + after.memcachedHits - before.memcachedHits,
    memcachedMisses: sum.memcachedMisses + after.memcachedMisses - before.memcachedMisses,
    redisHits: sum.redisHits + after.redisHits - before.redisHits,
    redisMisses: sum.redisMisses + after.redisMisses - before.redisMisses,
  };
}

export interface HitRates {
  /** memcached (objects) hit rate over the run, or null when the run made no memcached lookups. */
  readonly objects: number | null;
  /** Redis (mapping pages and counts) hit rate, or null. */
  readonly lists: number | null;
}

function memcachedCommand(host: string, port: number, command: string, until: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, host);
    let buf = '';
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error('memcached did not answer'));
    }, 2000);
    sock.on('data', (d) => {
      buf += d.toString();
      if (until.test(buf)) {
        clearTimeout(timer);
        sock.end();
        resolve(buf);
      }
    });
    sock.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    sock.write(`${command}\r\n`);
  });
}

export class CacheProbe {
  readonly #stack: StackInfo;
  readonly #redis: Redis;

  constructor(stack: StackInfo) {
    this.#stack = stack;
    this.#redis = new Redis({ host: stack.redis.host, port: stack.redis.port, lazyConnect: true, maxRetriesPerRequest: 1 });
    this.#redis.on('error', () => undefined);
  }

  async counters(): Promise<CacheCounters | null> {
    try {
      const mc = this.#stack.memcached;
      const stats = await memcachedCommand(mc.host, mc.port, 'stats', /END\r\n$/);
      const stat = (name: string): number => Number(new RegExp(`STAT ${name} (\\d+)`).exec(stats)?.[1] ?? 0);
      const info = await this.#redis.info('stats');
      const field = (name: string): number => Number(new RegExp(`${name}:(\\d+)`).exec(info)?.[1] ?? 0);
      return { memcachedHits: stat('get_hits'), memcachedMisses: stat('get_misses'), redisHits: field('keyspace_hits'), redisMisses: field('keyspace_misses') };
    } catch {
      return null;
    }
  }

  static rates(before: CacheCounters | null, after: CacheCounters | null): HitRates {
    if (!before || !after) return { objects: null, lists: null };
    const rate = (h: number, m: number): number | null => (h + m > 0 ? h / (h + m) : null);
    return {
      objects: rate(after.memcachedHits - before.memcachedHits, after.memcachedMisses - before.memcachedMisses),
      lists: rate(after.redisHits - before.redisHits, after.redisMisses - before.redisMisses),
    };
  }

  /** Empties both caches: a cold start. */
  async flush(): Promise<void> {
    const mc = this.#stack.memcached;
    await memcachedCommand(mc.host, mc.port, 'flush_all', /OK\r\n$/).catch(() => undefined);
    await this.#redis.flushdb().catch(() => undefined);
  }

  close(): void {
    this.#redis.disconnect();
  }
}
