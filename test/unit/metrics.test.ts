import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayMetrics } from '../../src/metrics.ts';
import { CacheStats } from '../../src/core/cacheStats.ts';
import { SqlStats } from '../../src/storage/sqlStats.ts';

/**
 * GatewayMetrics sums each request's counts in plain numbers and hands them to prom-client when
 * scraped: the exposition must show exactly what was recorded, scrape after scrape.
 */
const series = (text: string, name: string): Record<string, number> =>
  Object.fromEntries([...text.matchAll(new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`, 'gm'))].map((m) => [m[1] ?? '', Number(m[2])]));

describe('GatewayMetrics', () => {
  test('requests and cache operations: exactly what was recorded, on every scrape', async () => {
    const metrics = new GatewayMetrics();
    const empty = await metrics.registry.metrics();
    assert.deepEqual(series(empty, 'shardql_requests_total'), {});
    assert.deepEqual(series(empty, 'shardql_cache_operations_total'), {});

    const request = (hits: number, redisTrips: number, misses = 0, errors = 0): CacheStats => {
      const c = new CacheStats();
      c.hits('local', hits);
      c.roundTrip('redis', redisTrips);
      if (misses) c.misses('memcached', misses);
      for (let i = 0; i < errors; i++) c.error('redis');
      return c;
    };
    const sql = new SqlStats();
    sql.record('h1', [1], 3);
    metrics.recordRequest(0.002, false, sql, request(20, 1));
    metrics.recordRequest(0.004, false, new SqlStats(), request(5, 1, 2));
    metrics.recordRequest(0.3, true, new SqlStats(), request(0, 0, 0, 1));
    for (let scrape = 0; scrape < 2; scrape++) {
      const text = await metrics.registry.metrics();
      assert.deepEqual(series(text, 'shardql_requests_total'), { '{outcome="ok"}': 2, '{outcome="error"}': 1 }, `scrape ${scrape}`);
      assert.deepEqual(
        series(text, 'shardql_cache_operations_total'),
        { '{layer="local",kind="hit"}': 25, '{layer="memcached",kind="miss"}': 2, '{layer="redis",kind="error"}': 1, '{layer="redis",kind="round_trip"}': 2 },
        `scrape ${scrape}`,
      );
      assert.deepEqual(series(text, 'shardql_sql_round_trips_total'), { '': 1 });
      assert.equal(series(text, 'shardql_request_duration_seconds_count')[''], 3);
    }
    metrics.recordRequest(0.001, false, new SqlStats(), request(1, 1));
    const text = await metrics.registry.metrics();
    assert.deepEqual(series(text, 'shardql_requests_total'), { '{outcome="ok"}': 3, '{outcome="error"}': 1 });
    assert.equal(series(text, 'shardql_cache_operations_total')['{layer="local",kind="hit"}'], 26);
  });
});
