import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseTopology } from '../../../src/core/topology.ts';
import { openRange, planOpenRange } from '../../../src/topology/operations/openRange.ts';
import { FakeStore, layout } from './fixtures.ts';

describe('Topology open-range: planning', () => {
  test('a new range on a host with none: ranges and open spans grow', () => {
    const plan = planOpenRange(layout(), { shards: { from: 16, to: 23 }, host: 'mysql003' });
    assert.deepEqual(plan.next.shards.ranges.at(-1), { from: 16, to: 23, host: 'mysql003' });
    assert.deepEqual(plan.next.shards.open, [{ from: 0, to: 23 }]);
    assert.deepEqual(plan.added, [{ from: 16, to: 23 }]);
    assert.equal(parseTopology(plan.next).openShardCount, 24);
  });
  test('a range already on the host but closed is only opened', () => {
    const doc = planOpenRange(layout(), { shards: { from: 16, to: 23 }, host: 'mysql003' }).next;
    const closed = { ...doc, shards: { ...doc.shards, open: [{ from: 0, to: 15 }] } };
    const plan = planOpenRange(closed, { shards: { from: 16, to: 23 }, host: 'mysql003' });
    assert.deepEqual(plan.added, []);
    assert.deepEqual(plan.opened, [{ from: 16, to: 23 }]);
  });
  const refusals: { name: string; from: number; to: number; host: string; want: RegExp }[] = [
    { name: 'an unknown host', from: 16, to: 23, host: 'mysql009', want: /Unknown host 'mysql009'/ },
    { name: 'shards living on another host (that is a move)', from: 6, to: 17, host: 'mysql003', want: /6–7 on mysql001, 8–15 on mysql002.*topology move/ },
    { name: 'shards already on the host and open', from: 0, to: 7, host: 'mysql001', want: /nothing to do/ },
  ];
  for (const r of refusals) {
    test(`refuses ${r.name}`, () => {
      assert.throws(() => planOpenRange(layout(), { shards: { from: r.from, to: r.to }, host: r.host }), r.want);
    });
  }
});

describe('Topology open-range: running', () => {
  test('provisions before it publishes, with the new map', async () => {
    const events: string[] = [];
    const store = new FakeStore(layout(), events);
    const plan = planOpenRange(store.doc, { shards: { from: 16, to: 17 }, host: 'mysql003' });
    const report = await openRange(
      {
        store,
        provision: async (topology, shards) => {
          events.push(`provision ${shards.join(',')} on ${topology.hostOfShard(shards[0]!)}`);
          return { created: shards.length };
        },
      },
      plan,
      '10',
    );
    assert.deepEqual(events, ['provision 16,17 on mysql003', 'publish 11']);
    assert.equal(report.revision, '11');
  });
  test('a map changed since it was read is not overwritten', async () => {
    const store = new FakeStore(layout(), []);
    const plan = planOpenRange(store.doc, { shards: { from: 16, to: 17 }, host: 'mysql003' });
    await assert.rejects(openRange({ store, provision: async () => ({ created: 0 }) }, plan, '9'), /conflict/);
  });
});
