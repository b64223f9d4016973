/**
 * bench/runs.ts: runs of one system taken in turns with the others' make one measurement, as if
 * they were one run: req/s over all measured seconds, percentiles over all latencies.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeRuns, percentile, type MeasuredRun } from '../../../bench/runs.ts';

const run = (latenciesMs: number[], seconds: number, extra: Partial<MeasuredRun> = {}): MeasuredRun => {
  const sorted = Float64Array.from(latenciesMs).sort();
  return {
    requests: latenciesMs.length,
    durationMs: seconds * 1000 + 7,
    rps: latenciesMs.length / seconds,
    p50Ms: percentile(sorted, 0.5),
    p90Ms: percentile(sorted, 0.9),
    p99Ms: percentile(sorted, 0.99),
    meanMs: latenciesMs.reduce((a, b) => a + b, 0) / latenciesMs.length,
    errors: 0,
    timeouts: 0,
    non2xx: 0,
    graphqlErrors: 0,
    latenciesMs: Array.from(sorted),
    ...extra,
  };
};

test('mergeRuns: two rounds read as one run of both', () => {
  // Round one: 100 requests at 1..100 ms in 2 s; round two: 300 at 101..400 ms in 4 s.
  const a = run(Array.from({ length: 100 }, (_, i) => i + 1), 2);
  const b = run(Array.from({ length: 300 }, (_, i) => 400 - i), 4, { errors: 2, non2xx: 1, graphqlErrors: 3, timeouts: 1, firstErrorBody: 'second' });
  const m = mergeRuns([a, b]);
  const whole = run(Array.from({ length: 400 }, (_, i) => i + 1), 6);
  assert.equal(m.requests, 400);
  assert.equal(m.rps, 400 / 6);
  assert.deepEqual([m.p50Ms, m.p90Ms, m.p99Ms, m.meanMs], [whole.p50Ms, whole.p90Ms, whole.p99Ms, whole.meanMs]);
  assert.deepEqual([m.p50Ms, m.p90Ms, m.p99Ms, m.meanMs], [200, 360, 396, 200.5]);
  assert.deepEqual([m.errors, m.non2xx, m.graphqlErrors, m.timeouts, m.firstErrorBody], [2, 1, 3, 1, 'second']);
  assert.equal(m.durationMs, 6014);
});

test('mergeRuns: one run is itself; none, or one without its latencies, is refused', () => {
  const a = run([1, 2, 3], 1);
  assert.equal(mergeRuns([a]), a);
  assert.throws(() => mergeRuns([]), /no run/);
  const { latenciesMs: _, ...bare } = a;
  assert.throws(() => mergeRuns([a, bare]), /without its latencies/);
});
