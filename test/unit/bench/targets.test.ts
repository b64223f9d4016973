/** bench/targets.ts: issue 32's targets from one run's warm measurements. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Measurement, ScenarioResult } from '../../../bench/report.ts';
import { targetsOf } from '../../../bench/targets.ts';

const m = (rps: number, p50: number, p99: number, cpu?: Record<string, number>): Measurement => ({
  requests: rps * 10,
  rps,
  p50Ms: p50,
  p99Ms: p99,
  meanMs: p50,
  sqlRoundTrips: 0,
  cacheRoundTrips: null,
  hitRates: { objects: null, lists: null },
  tail: p99 / p50,
  ...(cpu ? { cpuMsPerRequest: { total: Object.values(cpu).reduce((a, b) => a + b, 0), byProcess: cpu, loadGenerator: 0.1 } } : {}),
  errors: 0,
});

const scenario = (key: string, mutation: boolean, systems: ScenarioResult['phases']['warm']['systems']): ScenarioResult => ({
  key,
  title: key,
  mutation,
  phases: { cold: { systems: {}, ratios: {} }, warm: { systems, ratios: {} } },
  consistency: {},
  capacity: {},
});

test('reads: req/s against floor-jit, CPU against flat, tail against floor-jit', () => {
  const t = targetsOf([
    scenario('profile', false, {
      ours: m(900, 1, 3, { server: 0.2, 'mysql001-primary': 0.05 }),
      'floor-jit': m(1000, 1, 1.5, { server: 0.1 }),
      flat: m(300, 3, 6, { server: 0.4, 'mysql001-primary': 0.6 }),
    }),
  ]);
  assert.deepEqual(
    t.map((x) => [x.target, x.value === null ? null : Math.round(x.value * 100) / 100, x.met]),
    [
      ['req/s ours ÷ floor-jit', 0.9, true],
      ['CPU ms/req ours ÷ flat', 0.25, true],
      ['p99/p50 ours − floor-jit', 1.5, false],
    ],
  );
  assert.equal(t[1]!.remaining, 'server 0.200 · mysql001-primary 0.050');
});

test('mutations: CPU against flat only; a missing baseline reads n/a', () => {
  const t = targetsOf([
    scenario('like-unlike', true, { ours: m(500, 2, 4, { server: 0.9, 'mysql001-primary': 0.6 }), flat: m(900, 1, 2, { server: 0.3, 'mysql001-primary': 0.5 }) }),
    scenario('pin-detail', false, { ours: m(500, 2, 4) }),
  ]);
  assert.equal(t.length, 4);
  assert.deepEqual([t[0]!.target, t[0]!.met, t[0]!.remaining], ['CPU ms/req ours ÷ flat', false, 'server 0.900 · mysql001-primary 0.600']);
  assert.ok(Math.abs(t[0]!.value! - 1.875) < 1e-9);
  assert.deepEqual(t.slice(1).map((x) => [x.value, x.met]), [[null, null], [null, null], [null, null]]);
});
