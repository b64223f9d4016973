/** bench/sizing.ts: cores per tier for the stated mix, from a report's warm capacity figures. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BenchReport, ScenarioResult } from '../../../bench/report.ts';
import { sizing, sizingPage } from '../../../bench/sizing.ts';

const scenario = (key: string, capacity: ScenarioResult['capacity']): ScenarioResult => ({
  key,
  title: key,
  mutation: false,
  phases: { cold: { systems: {}, ratios: {} }, warm: { systems: {}, ratios: {} } },
  consistency: {},
  capacity,
});

const MIX = { a: 0.75, b: 0.25 };

test('weights each scenario by its share, per tier', () => {
  const report = { scenarios: [scenario('a', { ours: { gateway: 2, mysql: 1 }, flat: { gateway: 4 } }), scenario('b', { ours: { gateway: 6, mysql: 5, redis: 1 } })] };
  const s = sizing(report, MIX);
  assert.deepEqual(s.cores.ours, { gateway: 3, mysql: 2, redis: 0.25 });
  assert.equal(s.cores.flat, null, 'flat lacks scenario b: no figure rather than a partial one');
  assert.deepEqual(s.missing, []);
  assert.deepEqual(sizing({ scenarios: [report.scenarios[0]!] }, MIX).missing, ['b']);
});

test('the page states its date, machine, table and assumptions', () => {
  const report = {
    date: '2026-11-25T21:00:00.000Z',
    mode: 'full',
    machine: { nproc: 2, cpu: 'Test CPU', node: 'v20.0.0' },
    config: { shards: 64, hosts: 2 },
    dataset: { users: 1000 },
    scenarios: [scenario('a', { ours: { gateway: 2, mysql: 1 } }), scenario('b', { ours: { gateway: 6, mysql: 5 } })],
  } as unknown as BenchReport;
  const page = sizingPage(report, MIX);
  assert.match(page, /Measured 2026-11-25T21:00:00.000Z \(full run\) on 2 cores \(Test CPU\)/);
  assert.match(page, /\| ours \| 3\.00 \| 2\.00 \| 5\.00 \|/);
  assert.match(page, /\| a \| 75% \|/);
  assert.match(page, /these shares are an assumption/);
});
