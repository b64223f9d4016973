/**
 * A full Redis: `maxmemory` reached under the `noeviction` policy (the one the job queues need),
 * so Redis refuses every write that needs memory but still answers reads. On a redis-server of
 * this file's own (the stack's Redis has no memory limit), made full by holding more than the
 * limit it is then given:
 *   - the invalidation log still takes a writer's entry, and another gateway's barrier hands out
 *     a view that no longer holds the key (were the append refused while barriers passed, that
 *     gateway's L1 would keep serving the old value);
 *   - a list probe still serves what Redis holds, answers a list it does not hold as a miss with
 *     no token (nothing to fill) instead of an error, and a fill writes nothing and fails nothing;
 *   - rate limits: the shared buckets cannot be taken from, so the gateway's own decide.
 * And the version check every gateway and worker runs at start (scripts flags need Redis 7.0).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { InvalidationLog } from '../../src/cache/invalidationLog.ts';
import { RedisLists } from '../../src/cache/redisLists.ts';
import { CacheStats } from '../../src/core/cacheStats.ts';
import { allocatePorts, LOOPBACK } from '../../src/stack/net.ts';
import { outdatedRedisServers } from '../../src/redis/redisVersion.ts';
import { LocalRateLimits, RedisRateLimits } from '../../src/cache/rateLimits.ts';
import { LayerBreaker } from '../../src/cache/breaker.ts';
import { rateLimitAdmission } from '../../src/http/admission.ts';
import type { RequestScope } from '../../src/core/requestScope.ts';
import { isShardqlError } from '../../src/core/errors.ts';

let server: ChildProcess;
let writer: Redis;
let reader: Redis;

before(async () => {
  const [port] = await allocatePorts(1);
  server = spawn('redis-server', ['--port', String(port), '--bind', LOOPBACK, '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'], { stdio: 'ignore' });
  // Connection refusals while the server starts are retried (every 50 ms, up to 100 times).
  const client = () => new Redis({ host: LOOPBACK, port: port!, retryStrategy: (n) => (n > 100 ? null : 50) }).on('error', () => undefined);
  writer = client();
  reader = client();
  await writer.ping();
  await reader.ping();
});

after(async () => {
  writer?.disconnect();
  reader?.disconnect();
  server?.kill('SIGKILL');
});

/**
 * Makes Redis full: ~4 MB of values, then a `maxmemory` of half what it uses. (Filling up to a
 * limit is not enough: a refused command frees its own buffer and the next small write fits.)
 */
async function makeFull(redis: Redis): Promise<void> {
  for (let i = 0; i < 200; i++) await redis.set(`junk:${i}`, 'x'.repeat(20_000));
  const used = Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);
  await redis.config('SET', 'maxmemory', String(Math.floor(used / 2)));
}

test('a full Redis (noeviction): the invalidation log still works, and list probes degrade to misses', async () => {
  const logA = new InvalidationLog({ redis: writer });
  const logB = new InvalidationLog({ redis: reader });
  const lists = new RedisLists({ redis: reader });

  // Before: gateway B holds object 42 in its L1; Redis holds one list page.
  const v1 = await logB.view();
  assert.ok(v1, 'a barrier while Redis has room');
  assert.equal(logB.near.fill(v1, 'o', 42n, 'o', 'old'), true);
  assert.equal(logB.near.get((await logB.view())!, 'o', 42n, 'o'), 'old');
  const held = { list: 'l:test:held', field: 'p1' };
  const absent = { list: 'l:test:absent', field: 'p1' };
  const first = await lists.probe([held]);
  const token = first.tokens.get(0);
  assert.ok(token, 'a miss on a list Redis does not hold yet gets a token');
  await lists.fill([{ field: held, value: 'page one', token }]);

  await makeFull(writer);
  await assert.rejects(writer.set('one-more', 'x'), /OOM command not allowed/, 'Redis is full');

  // A write acknowledged now: its entry is taken, and B's next barrier drops the key.
  await logA.append(['o:42']);
  const v2 = await logB.view();
  assert.ok(v2, 'a barrier while Redis is full still hands out a view');
  assert.equal(logB.near.get(v2, 'o', 42n, 'o'), undefined, 'B no longer serves the old value');

  // Lists: the held page is served; the absent list is a miss with no token; no error counted.
  const stats = new CacheStats();
  for (let i = 0; i < 5; i++) {
    const r = await lists.probe([held, absent], stats);
    assert.equal(r.values.get(0), 'page one', 'a list Redis holds is still served');
    assert.equal(r.values.has(1), false);
    assert.equal(r.tokens.has(1), false, 'no token: nothing to fill while Redis is full');
  }
  assert.equal(stats.layers.redis.errors, 0, 'a full Redis is not a failed one: the breaker is not fed');
  assert.equal(stats.layers.redis.hits, 5);
  assert.equal(stats.layers.redis.misses, 5);
  await lists.fill([{ field: { list: held.list, field: 'p2' }, value: 'page two', token: (await reader.hget(held.list, '_gen'))! }], stats);
  assert.equal(stats.layers.redis.errors, 0, 'a refused fill is no error either');
  assert.equal(await reader.hget(held.list, 'p2'), null, 'and it wrote nothing');
  assert.equal(await reader.exists(absent.list), 0, 'no generation was made for the absent list');

  // Rate limits: the shared bucket cannot be written, so this gateway's own buckets decide (and still refuse).
  const rates = { perViewer: { limit: 2, windowMs: 60_000 } };
  await assert.rejects(new RedisRateLimits({ redis: reader, ...rates }).take({ viewer: '9', address: '::1' }), /OOM command not allowed/);
  const outcomes: string[] = [];
  const admit = rateLimitAdmission({
    limiter: new RedisRateLimits({ redis: reader, ...rates }),
    local: new LocalRateLimits(rates),
    breaker: new LayerBreaker(),
    log: () => undefined,
    onOutcome: (outcome, limiter) => void outcomes.push(`${outcome}:${limiter}`),
  });
  const scope = { id: 'r', address: '::1', trace: undefined, operation: undefined, errors: {}, usage: undefined } as unknown as RequestScope;
  await admit(scope, 9n, 1);
  await admit(scope, 9n, 1);
  await assert.rejects(admit(scope, 9n, 1), (e: unknown) => isShardqlError(e, 'RATE_LIMITED'));
  assert.deepEqual(outcomes, ['error:redis', 'allowed:local', 'error:redis', 'allowed:local', 'refused:local']);

  // Room again: the absent list gets its generation and can be filled.
  await writer.config('SET', 'maxmemory', '0');
  const again = await lists.probe([absent]);
  assert.ok(again.tokens.get(0), 'with room again, a miss gets its token');
});

test('the version check: this Redis is recent enough, and is named when a newer one is required', async () => {
  const port = writer.options.port;
  assert.deepEqual(await outdatedRedisServers(writer), []);
  const version = /redis_version:(\S+)/.exec(await writer.info('server'))![1];
  assert.deepEqual(await outdatedRedisServers(writer, '99.0.0'), [`${LOOPBACK}:${port} ${version}`]);
});
