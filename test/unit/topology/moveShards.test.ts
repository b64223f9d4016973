import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compareFingerprints, moveCommands, moveShards, planMove } from '../../../src/topology/operations/moveShards.ts';
import { FakeCopier, FakeStore, layout } from './fixtures.ts';

describe('Topology move: planning', () => {
  test('a span over two hosts has two sources; the flip gives it to the target', () => {
    const plan = planMove(layout(), { shards: { from: 6, to: 9 }, to: 'mysql003' });
    assert.deepEqual(
      plan.sources.map((s) => [s.host, s.databases]),
      [
        ['mysql001', ['db00006', 'db00007']],
        ['mysql002', ['db00008', 'db00009']],
      ],
    );
    assert.deepEqual(plan.pauseDoc.pausedShards, [{ from: 6, to: 9 }]);
    assert.deepEqual(plan.pauseDoc.shards, layout().shards, 'the pause changes no range');
    assert.deepEqual(plan.flipDoc.shards.ranges, [
      { from: 0, to: 5, host: 'mysql001' },
      { from: 6, to: 9, host: 'mysql003' },
      { from: 10, to: 15, host: 'mysql002' },
    ]);
    assert.equal(plan.flipDoc.pausedShards, undefined, 'the flip lifts the pause');
    assert.equal(plan.alreadyPaused, false);
  });
  test('shards already on the target are left out', () => {
    const once = planMove(layout(), { shards: { from: 4, to: 5 }, to: 'mysql003' }).flipDoc;
    const plan = planMove(once, { shards: { from: 4, to: 7 }, to: 'mysql003' });
    assert.deepEqual(plan.moving, [{ from: 6, to: 7 }]);
  });
  test('a move interrupted while paused is resumed, and other paused shards stay paused', () => {
    const doc = {
      ...layout(),
      pausedShards: [
        { from: 4, to: 5 },
        { from: 12, to: 12 },
      ],
    };
    const plan = planMove(doc, { shards: { from: 4, to: 5 }, to: 'mysql003' });
    assert.equal(plan.alreadyPaused, true);
    assert.deepEqual(plan.flipDoc.pausedShards, [{ from: 12, to: 12 }]);
    assert.deepEqual(plan.resumeDoc.pausedShards, [{ from: 12, to: 12 }]);
  });
  test('mod shards move the same way: their ranges and their pause, the shards untouched', () => {
    const plan = planMove(layout(), { kind: 'modShard', shards: { from: 2, to: 5 }, to: 'mysql003' });
    assert.deepEqual(
      plan.sources.map((s) => [s.host, s.databases]),
      [
        ['mysql001', ['msdb00002', 'msdb00003']],
        ['mysql002', ['msdb00004', 'msdb00005']],
      ],
    );
    assert.deepEqual(plan.pauseDoc.pausedModShards, [{ from: 2, to: 5 }]);
    assert.equal(plan.pauseDoc.pausedShards, undefined, 'no ID shard is paused');
    assert.deepEqual(plan.pauseDoc.modShard, layout().modShard, 'the pause changes no range');
    assert.deepEqual(plan.flipDoc.modShard.ranges, [
      { from: 0, to: 1, host: 'mysql001' },
      { from: 2, to: 5, host: 'mysql003' },
      { from: 6, to: 7, host: 'mysql002' },
    ]);
    assert.deepEqual(plan.flipDoc.shards, layout().shards, 'the ID shards stay where they are');
    assert.equal(plan.flipDoc.pausedModShards, undefined, 'the flip lifts the pause');
    assert.deepEqual(plan.resumeDoc, layout());
  });
  test('a paused ID-shard move and a mod-shard move keep each other\'s pause', () => {
    const doc = { ...layout(), pausedShards: [{ from: 4, to: 5 }] };
    const plan = planMove(doc, { kind: 'modShard', shards: { from: 0, to: 1 }, to: 'mysql003' });
    assert.equal(plan.alreadyPaused, false);
    assert.deepEqual(plan.flipDoc.pausedShards, [{ from: 4, to: 5 }]);
    assert.deepEqual(plan.resumeDoc.pausedShards, [{ from: 4, to: 5 }]);
  });
  test('the pause carries a record of the move (shards, target, start), which the flip and the calling off remove', () => {
    const at = Date.parse('2026-12-03T20:31:02.120Z');
    const plan = planMove(layout(), { shards: { from: 6, to: 9 }, to: 'mysql003', at });
    assert.deepEqual(plan.pauseDoc.moves, [{ kind: 'shard', shards: [{ from: 6, to: 9 }], to: 'mysql003', since: '2026-12-03T20:31:02.120Z' }]);
    assert.equal(plan.flipDoc.moves, undefined);
    assert.deepEqual(plan.resumeDoc, layout());
    assert.equal(plan.pauseInForce, false);
  });
  test('a move resumed keeps the start of the pause it takes over; a record naming another target is replaced', () => {
    const paused = planMove(layout(), { shards: { from: 4, to: 7 }, to: 'mysql003', at: Date.parse('2026-12-03T20:00:00.000Z') }).pauseDoc;
    const again = planMove(paused, { shards: { from: 4, to: 7 }, to: 'mysql003', at: Date.parse('2026-12-03T21:00:00.000Z') });
    assert.equal(again.alreadyPaused, true);
    assert.equal(again.pauseInForce, true, 'the pause and its record are published already');
    const elsewhere = planMove(paused, { shards: { from: 4, to: 5 }, to: 'mysql002', at: Date.parse('2026-12-03T21:00:00.000Z') });
    assert.equal(elsewhere.pauseInForce, false);
    assert.deepEqual(elsewhere.pauseDoc.moves, [
      { kind: 'shard', shards: [{ from: 6, to: 7 }], to: 'mysql003', since: '2026-12-03T20:00:00.000Z' },
      { kind: 'shard', shards: [{ from: 4, to: 5 }], to: 'mysql002', since: '2026-12-03T20:00:00.000Z' },
    ]);
    assert.deepEqual(elsewhere.flipDoc.moves, [{ kind: 'shard', shards: [{ from: 6, to: 7 }], to: 'mysql003', since: '2026-12-03T20:00:00.000Z' }]);
    assert.deepEqual(elsewhere.flipDoc.pausedShards, [{ from: 6, to: 7 }], 'the other shards stay paused with their record');
  });
  test('the command that finishes a move names its kind, shards and target', () => {
    assert.deepEqual(moveCommands('shard', [{ from: 4, to: 5 }, { from: 9, to: 9 }], 'mysql003'), [
      'shardql topology move --shards 4-5 --to mysql003',
      'shardql topology move --shards 9 --to mysql003',
    ]);
    assert.deepEqual(moveCommands('modShard', [{ from: 0, to: 3 }], 'mysql001'), ['shardql topology move --mod-shards 0-3 --to mysql001']);
  });
  test('refuses mod shards beyond the count', () => {
    assert.throws(() => planMove(layout(), { kind: 'modShard', shards: { from: 6, to: 9 }, to: 'mysql003' }), /Mod shards 8–9 are in no range: the map has mod shards 0–7/);
  });
  const refusals: { name: string; from: number; to: number; host: string; want: RegExp }[] = [
    { name: 'an unknown target', from: 0, to: 1, host: 'mysql009', want: /Unknown target host 'mysql009'/ },
    { name: 'shards in no range', from: 14, to: 17, host: 'mysql003', want: /16–17 are in no range/ },
    { name: 'shards already on the target', from: 0, to: 3, host: 'mysql001', want: /already on mysql001/ },
  ];
  for (const r of refusals) {
    test(`refuses ${r.name}`, () => {
      assert.throws(() => planMove(layout(), { shards: { from: r.from, to: r.to }, to: r.host }), r.want);
    });
  }
});

describe('Topology move: verifying the copy', () => {
  const a = new Map([
    ['db00004.pins', { rows: 3, checksum: '11' }],
    ['db00004.users', { rows: 1, checksum: '22' }],
  ]);
  test('identical copies: no difference', () => assert.deepEqual(compareFingerprints(a, new Map(a)), []));
  test('a row count, a checksum, a missing and an extra table are each reported', () => {
    const b = new Map([
      ['db00004.pins', { rows: 2, checksum: '11' }],
      ['db00004.boards', { rows: 0, checksum: '0' }],
    ]);
    assert.deepEqual(compareFingerprints(a, b), [
      'db00004.pins: 3 rows on the source, 2 on the target',
      'db00004.users: missing on the target',
      'db00004.boards: only on the target',
    ]);
    assert.deepEqual(compareFingerprints(new Map([['x.t', { rows: 1, checksum: '1' }]]), new Map([['x.t', { rows: 1, checksum: '2' }]])), [
      'x.t: checksum 1 on the source, 2 on the target',
    ]);
  });
  test('a target that would hand out an ID again (lower auto-increment) differs; a higher one does not', () => {
    const src = new Map([['x.t', { rows: 1, checksum: '1', autoIncrement: 15 }]]);
    assert.match(
      compareFingerprints(src, new Map([['x.t', { rows: 1, checksum: '1', autoIncrement: 11 }]]))[0] ?? '',
      /next auto-increment 15 on the source, 11 on the target/,
    );
    assert.deepEqual(compareFingerprints(src, new Map([['x.t', { rows: 1, checksum: '1', autoIncrement: 16 }]])), []);
  });
});

describe('Topology move: running', () => {
  test('tables, pause, gateways, lock, rows, flip, gateways, unlock — in that order', async () => {
    const events: string[] = [];
    const store = new FakeStore(layout(), events);
    const copier = new FakeCopier(events);
    copier.existing = ['db00004'];
    const plan = planMove(store.doc, { shards: { from: 4, to: 5 }, to: 'mysql003' });
    const report = await moveShards({ store, copier }, plan, '10');
    assert.deepEqual(events, [
      'drop 3303 db00004',
      'copy schema 3301->3303 db00004,db00005',
      'publish 11 paused=[{"from":4,"to":5}]',
      'wait gateways 11',
      'lock 3301 db00004,db00005',
      'copy data 3301->3303 db00004,db00005',
      'align 3301->3303',
      'publish 12',
      'wait gateways 12',
      'unlock 3301',
    ]);
    assert.equal(store.doc.shards.ranges.find((r) => r.from === 4)?.host, 'mysql003');
    assert.equal(report.rows, 6);
    assert.equal(report.sourceDropped, false);
  });
  test('a copy that differs calls the move off: writes resume, the ranges stay', async () => {
    const events: string[] = [];
    const store = new FakeStore(layout(), events);
    const copier = new FakeCopier(events);
    copier.corrupt = true;
    const plan = planMove(store.doc, { shards: { from: 4, to: 5 }, to: 'mysql003' });
    await assert.rejects(
      moveShards({ store, copier }, plan, '10'),
      /differs.*checksum 2 on the source, 1 on the target.*called off: writes resumed \(revision 12\), the map is unchanged, the partial copy on mysql003 was dropped/s,
    );
    assert.deepEqual(store.doc, layout());
    assert.ok(events.indexOf('unlock 3301') < events.indexOf('publish 12'), 'the lock goes before writes resume');
    assert.equal(events.at(-1), 'drop 3303 db00004,db00005', 'the partial copy is dropped once writes resumed');
  });
  test('a gateway that does not serve the pause calls the move off before anything is locked', async () => {
    const events: string[] = [];
    const store = new FakeStore(layout(), events);
    store.gatewaysBehindFor.add('11');
    const plan = planMove(store.doc, { shards: { from: 4, to: 5 }, to: 'mysql003' });
    await assert.rejects(moveShards({ store, copier: new FakeCopier(events) }, plan, '10'), /gw-old \(revision 10\).*called off/s);
    assert.ok(!events.some((e) => e.startsWith('lock') || e.startsWith('copy data')));
    assert.equal(store.doc.pausedShards, undefined);
  });
  test('etcd gone while the move waits for the gateways: the pause stays with its record, the error names the shards and the command; the same move run again finishes', async () => {
    const events: string[] = [];
    const store = new FakeStore(layout(), events);
    store.etcdDiesWaitingFor.add('11');
    const plan = planMove(store.doc, { shards: { from: 4, to: 5 }, to: 'mysql003' });
    await assert.rejects(
      moveShards({ store, copier: new FakeCopier(events) }, plan, '10'),
      (err: Error) => {
        assert.equal(
          err.message,
          'Waiting for the gateways to serve the pause failed: 14 UNAVAILABLE: No connection established. The move was called off, but lifting the pause failed ' +
            '(14 UNAVAILABLE: No connection established): writes to shards 4–5 stay paused (revision 11; nothing is lost). Run ' +
            '`shardql topology move --shards 4-5 --to mysql003` again to finish the move: it resumes from the pause (`shardql topology show` lists it); ' +
            'or publish the map without the pause to call the move off',
        );
        return true;
      },
    );
    assert.deepEqual(store.doc.pausedShards, [{ from: 4, to: 5 }]);
    assert.deepEqual(store.doc.moves?.map((m) => [m.shards, m.to]), [[[{ from: 4, to: 5 }], 'mysql003']]);
    assert.ok(!events.some((e) => e.startsWith('lock') || e.startsWith('copy data')), 'nothing was locked or copied');

    store.etcdDown = false; // etcd is back
    store.etcdDiesWaitingFor.clear();
    const again = planMove(store.doc, { shards: { from: 4, to: 5 }, to: 'mysql003' });
    events.length = 0;
    await moveShards({ store, copier: new FakeCopier(events) }, again, '11');
    assert.ok(!events.some((e) => e.startsWith('publish 12 paused')), 'the pause is not published again');
    assert.equal(store.doc.shards.ranges.find((r) => r.from === 4)?.host, 'mysql003');
    assert.equal(store.doc.pausedShards, undefined);
    assert.equal(store.doc.moves, undefined);
  });
  test('etcd gone while the pause is published: the error says where to see whether it was, and the command', async () => {
    const store = new FakeStore(layout(), []);
    store.etcdDown = true;
    const plan = planMove(store.doc, { kind: 'modShard', shards: { from: 2, to: 3 }, to: 'mysql003' });
    await assert.rejects(
      moveShards({ store, copier: new FakeCopier([]) }, plan, '10'),
      /^TopologyOperationError: Publishing the pause failed \(14 UNAVAILABLE: No connection established\); nothing was copied\. If the pause was published nonetheless, `shardql topology show` lists mod shards 2–3 as paused: run `shardql topology move --mod-shards 2-3 --to mysql003` again to finish the move$/,
    );
  });
  test('a verification that cannot read a side calls the move off: writes resume', async () => {
    const events: string[] = [];
    const store = new FakeStore(layout(), events);
    const copier = new FakeCopier(events);
    copier.fingerprint = async () => {
      throw new Error('Connection lost: The server closed the connection.');
    };
    const plan = planMove(store.doc, { shards: { from: 4, to: 5 }, to: 'mysql003' });
    await assert.rejects(
      moveShards({ store, copier }, plan, '10'),
      /^TopologyOperationError: Comparing the copies on mysql001 and mysql003 failed: Connection lost: The server closed the connection\. The move was called off: writes resumed \(revision 12\)/,
    );
    assert.deepEqual(store.doc, layout());
  });
  test('etcd gone while the move waits for the gateways to serve the flip: the move is done, the source lock released, the source copy kept', async () => {
    const events: string[] = [];
    const store = new FakeStore(layout(), events);
    store.etcdDiesWaitingFor.add('12');
    const lines: string[] = [];
    const plan = planMove(store.doc, { shards: { from: 4, to: 4 }, to: 'mysql003' });
    const report = await moveShards({ store, copier: new FakeCopier(events), log: (l) => lines.push(l) }, plan, '10', { dropSource: true });
    assert.equal(report.lagging, null);
    assert.equal(report.sourceDropped, false);
    assert.equal(events.at(-1), 'unlock 3301');
    assert.ok(lines.some((l) => /^Warning: the move is done, but which map the gateways serve could not be read \(14 UNAVAILABLE/.test(l)), lines.join('\n'));
    assert.equal(store.doc.shards.ranges.find((r) => r.from === 4)?.host, 'mysql003');
  });
  test('--drop-source drops the source copies only after every gateway serves the flip', async () => {
    const events: string[] = [];
    const store = new FakeStore(layout(), events);
    const plan = planMove(store.doc, { shards: { from: 4, to: 4 }, to: 'mysql003' });
    const report = await moveShards({ store, copier: new FakeCopier(events) }, plan, '10', { dropSource: true });
    assert.equal(report.sourceDropped, true);
    assert.equal(events.at(-1), 'drop 3301 db00004');

    const lagging: string[] = [];
    const store2 = new FakeStore(layout(), lagging);
    store2.gatewaysBehindFor.add('12');
    const report2 = await moveShards({ store: store2, copier: new FakeCopier(lagging) }, plan, '10', { dropSource: true });
    assert.equal(report2.sourceDropped, false);
    assert.equal(report2.lagging, 1);
    assert.ok(!lagging.some((e) => e.startsWith('drop 3301')));
  });
});
