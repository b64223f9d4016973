import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkFenceTarget, planPromotion, promote, promotionBlockers } from '../../../src/topology/operations/promote.ts';
import { FakeReplication, FakeStore, ep, layout } from './fixtures.ts';

describe('Topology promote: planning', () => {
  test("the replica's endpoint becomes the host's primary, with no replica", () => {
    const plan = planPromotion(layout(), 'mysql001');
    assert.deepEqual(plan.next.hosts.mysql001, { primary: ep(3311) });
    assert.deepEqual(plan.next.shards, layout().shards, 'no shard changes host');
  });
  test('a host without a replica (promoted already) is refused', () => {
    const once = planPromotion(layout(), 'mysql001').next;
    assert.throws(() => planPromotion(once, 'mysql001'), /no replica to promote/);
  });
  test('an unknown host is refused', () => assert.throws(() => planPromotion(layout(), 'nope'), /Unknown host 'nope'/));

  const plan = planPromotion(layout(), 'mysql001');
  const healthy = {
    replicating: true,
    source: ep(3301),
    ioRunning: false,
    sqlRunning: true,
    receivedGtid: '0-11-9',
    appliedGtid: '0-11-9',
    readOnly: true,
    semiSync: true,
  };
  const blockers: { name: string; state: typeof healthy & { sqlError?: string }; want: RegExp | null }[] = [
    { name: 'a replica of the old primary whose IO thread lost it: fine', state: healthy, want: null },
    { name: 'not a replica at all', state: { ...healthy, replicating: false }, want: /not a replica/ },
    { name: 'a replica of another server', state: { ...healthy, source: ep(3399) }, want: /replicates from 10\.0\.0\.1:3399/ },
    { name: 'an SQL thread stopped by an error', state: { ...healthy, sqlRunning: false, sqlError: 'Duplicate entry' }, want: /Duplicate entry/ },
  ];
  for (const b of blockers) {
    test(b.name, () => {
      const found = promotionBlockers(plan, b.state);
      if (b.want === null) assert.deepEqual(found, []);
      else assert.match(found.join('; '), b.want);
    });
  }
  test('fencing refuses a server that is a primary in the map', () => {
    assert.throws(() => checkFenceTarget(layout(), ep(3302)), /mysql002's primary/);
    checkFenceTarget(layout(), ep(3311));
  });
});

describe('Topology promote: running', () => {
  test('a dead primary: stop receiving, apply what was received, promote, publish', async () => {
    const events: string[] = [];
    const store = new FakeStore(layout(), events);
    const mysql = new FakeReplication(events);
    const plan = planPromotion(store.doc, 'mysql001');
    const report = await promote({ store, mysql }, plan, '10');
    assert.deepEqual(events, ['stop receiving 3311', 'wait applied 3311 0-11-42', 'make primary 3311', 'make writable 3311', 'publish 11', 'wait gateways 11']);
    assert.deepEqual(store.doc.hosts.mysql001, { primary: ep(3311) });
    assert.equal(report.oldPrimaryReachable, false);
  });
  test('a primary that answers is refused without --force, and nothing happens', async () => {
    const events: string[] = [];
    const store = new FakeStore(layout(), events);
    const mysql = new FakeReplication(events);
    mysql.alive.add(3301);
    await assert.rejects(promote({ store, mysql }, planPromotion(store.doc, 'mysql001'), '10'), /answers.*--force/);
    assert.deepEqual(events, []);
  });
  test('with --force, a live primary is fenced first and the replica catches up with it', async () => {
    const events: string[] = [];
    const store = new FakeStore(layout(), events);
    const mysql = new FakeReplication(events);
    mysql.alive.add(3301);
    await promote({ store, mysql }, planPromotion(store.doc, 'mysql001'), '10', { force: true });
    assert.deepEqual(events.slice(0, 2), ['fence 3301', 'wait applied 3311 0-11-50']);
  });
  test('a replica that cannot apply what it received is not promoted', async () => {
    const events: string[] = [];
    const store = new FakeStore(layout(), events);
    const mysql = new FakeReplication(events);
    mysql.applies = false;
    await assert.rejects(promote({ store, mysql }, planPromotion(store.doc, 'mysql001'), '10'), /has not applied everything it received/);
    assert.ok(!events.some((e) => e.startsWith('make primary') || e.startsWith('publish')));
  });
});
