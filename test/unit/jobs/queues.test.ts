import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConcurrency, parseQueueList, queuePrefix } from '../../../src/jobs/queues.ts';
import { parseShardRanges, reconcileShards, repairPass, shardRanges } from '../../../src/jobs/kinds/sweeps.ts';
import { JobPayloadError } from '../../../src/jobs/jobKind.ts';
import { ConfigError, loadWorkerConfig } from '../../../src/config.ts';

describe('Jobs: queue names, prefixes and settings', () => {
  test('each queue gets its own hash tag: one Redis Cluster slot per queue', () => {
    assert.equal(queuePrefix('shardql:jobs', 'feed'), '{shardql:jobs:feed}');
    assert.equal(queuePrefix('shardql:jobs', 'sweeps'), '{shardql:jobs:sweeps}');
    assert.throws(() => queuePrefix('a{b}', 'feed'), /hash tag/);
  });
  const concurrency: [string, object][] = [
    ['16', { feed: 16 }],
    ['feed=4,sweeps=2', { feed: 4, sweeps: 2 }],
    [' sweeps = 3 ', { sweeps: 3 }],
  ];
  for (const [text, want] of concurrency) test(`concurrency ${JSON.stringify(text)}`, () => assert.deepEqual(parseConcurrency(text), want));
  for (const bad of ['0', 'x', 'feed=0', 'mail=2', 'feed=2000', '']) test(`refuses concurrency ${JSON.stringify(bad)}`, () => assert.throws(() => parseConcurrency(bad)));
  test('queue lists', () => {
    assert.deepEqual(parseQueueList('sweeps, feed,feed'), ['sweeps', 'feed']);
    assert.throws(() => parseQueueList('feed,mail'), /feed, sweeps, import/);
    assert.throws(() => parseQueueList(','));
  });
  test('worker configuration: defaults, overrides, and a clear error', () => {
    const d = loadWorkerConfig({});
    assert.deepEqual(d, { queues: ['feed', 'sweeps', 'import'], concurrency: {}, lockMs: 15000, stalledCheckMs: 5000, stopGraceMs: 10000, repairEveryMs: 10000, reconcileEveryMs: 21600000, eventSweepEveryMs: 3600000, testJobs: false, fanoutPage: 1000, importPassword: null });
    const o = loadWorkerConfig({ SHARDQL_WORKER_QUEUES: 'feed', SHARDQL_WORKER_CONCURRENCY: '32', SHARDQL_WORKER_LOCK_MS: '1000', SHARDQL_RECONCILE_EVERY_MS: '0' });
    assert.deepEqual([o.queues, o.concurrency, o.lockMs, o.stalledCheckMs, o.reconcileEveryMs], [['feed'], { feed: 32 }, 1000, 1000, 0]);
    assert.throws(() => loadWorkerConfig({ SHARDQL_WORKER_CONCURRENCY: 'lots' }), ConfigError);
    assert.throws(() => loadWorkerConfig({ SHARDQL_WORKER_LOCK_MS: '10' }), /SHARDQL_WORKER_LOCK_MS must be an integer >= 200/);
  });
});

describe('Jobs: sweep payloads cross Redis and come back the same', () => {
  const ranges: [number[], string][] = [
    [[0, 1, 2, 3], '0-3'],
    [[0, 1, 2, 3, 7, 9, 10], '0-3,7,9-10'],
    [[5], '5'],
  ];
  for (const [shards, text] of ranges) {
    test(`${text}`, () => {
      assert.equal(shardRanges(shards), text);
      assert.deepEqual(parseShardRanges(text), shards);
    });
  }
  test('a reconcile chunk: codec round trip and a job ID without ":"', () => {
    const p = { shards: [16, 17, 18, 40], run: 'repeat.sweep.reconcile.1795' };
    assert.deepEqual(reconcileShards.decode(JSON.parse(JSON.stringify(reconcileShards.encode(p)))), p);
    assert.equal(reconcileShards.jobId!(p), 'reconcile-repeat.sweep.reconcile.1795-16-18_40');
  });
  const bad: [unknown, RegExp][] = [
    [null, /expected a JSON object, got null/],
    [{ shards: '3-1', run: 'r' }, /shards: expected ranges/],
    [{ shards: '1', run: 'a:b' }, /run: expected a string/],
  ];
  for (const [data, message] of bad) test(`refuses ${JSON.stringify(data)}`, () => assert.throws(() => reconcileShards.decode(data), (e: unknown) => e instanceof JobPayloadError && message.test(e.message)));
  test('repair: the minimum age defaults to 5 s and must be a whole number of ms', () => {
    assert.deepEqual(repairPass.decode({}), { minAgeMs: 5000 });
    assert.throws(() => repairPass.decode({ minAgeMs: 1.5 }), JobPayloadError);
  });
});
