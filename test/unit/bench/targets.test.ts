/** bench/targets.ts: issue 32's targets from one run's warm measurements. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Measurement, ScenarioResult } from '../../../bench/report.ts';
import { aboveFlat, targetsOf, WRITE_REASONS } from '../../../bench/targets.ts';

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

test('a missed write target says, per tier, the milliseconds above flat and why: MariaDB hosts summed, tiers at or below flat left out', () => {
  const [t] = targetsOf([
    scenario('like-unlike', true, {
      ours: m(300, 20, 40, { server: 2.144, 'mysql001-primary': 1.034, 'mysql002-primary': 0.921, redis: 0.286, etcd: 0.042, memcached: 0.003 }),
      flat: m(500, 10, 30, { server: 1.303, 'mysql001-primary': 1.092, etcd: 0.025, redis: 0.002, memcached: 0.002, 'mysql002-primary': 0 }),
    }),
  ]);
  assert.equal(t!.met, false);
  assert.deepEqual(
    t!.aboveFlat!.map((e) => [e.tier, e.ours, e.flat, e.above]),
    [
      ['mysql', 1.955, 1.092, 0.863],
      ['gateway', 2.144, 1.303, 0.841],
      ['redis', 0.286, 0.002, 0.284],
      ['etcd', 0.042, 0.025, 0.017],
      ['memcached', 0.003, 0.002, 0.001],
    ],
  );
  assert.deepEqual(t!.aboveFlat!.map((e) => e.why), t!.aboveFlat!.map((e) => WRITE_REASONS[e.tier]));
  assert.match(WRITE_REASONS.mysql!, /two local transactions, so two durable commits/);
});

test('a write target met, or a read target missed, carries no excess; a tier without a reason says so', () => {
  const [met] = targetsOf([
    scenario('like-unlike', true, { ours: m(500, 2, 4, { server: 0.5, 'mysql001-primary': 0.5 }), flat: m(500, 2, 4, { server: 0.6, 'mysql001-primary': 0.5 }) }),
  ]);
  assert.deepEqual([met!.met, met!.aboveFlat], [true, undefined]);
  const read = targetsOf([scenario('profile', false, { ours: m(900, 1, 2, { server: 2 }), flat: m(900, 1, 2, { server: 1 }) })]);
  assert.deepEqual(read.map((x) => x.aboveFlat), [undefined, undefined, undefined]);
  const cpu = (byProcess: Record<string, number>) => ({ total: Object.values(byProcess).reduce((a, b) => a + b, 0), byProcess, loadGenerator: null });
  assert.deepEqual(aboveFlat(cpu({ 'worker-1': 0.2, server: 0.1 }), cpu({ server: 0.3 }), {}), [
    { tier: 'worker', ours: 0.2, flat: 0, above: 0.2, why: 'no reason recorded for this tier' },
  ]);
});
