import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isShardqlError } from '../../../src/core/errors.ts';
import {
  compareRevisions,
  decideVersion,
  TopologyWatcher,
  type TopologyRead,
  type TopologySource,
  type TopologyWatchListener,
} from '../../../src/topology/topologyWatcher.ts';
import { gatewaysBehind } from '../../../src/topology/etcdTopologySource.ts';
import { ep, layout } from './fixtures.ts';
import { evenLayout, parseTopology } from '../../../src/core/topology.ts';

const valid = JSON.stringify(layout());
const other = JSON.stringify({ ...layout(), pausedShards: [{ from: 1, to: 1 }] });

describe('Topology watcher: deciding about a version', () => {
  const cases: { name: string; inForce: string; rejected?: string; raw: string | null; rev: string; want: string }[] = [
    { name: 'an older revision is stale', inForce: '9', raw: valid, rev: '7', want: 'stale' },
    { name: 'the revision in force is current', inForce: '9', raw: valid, rev: '9', want: 'current' },
    { name: 'a newer valid document is swapped in', inForce: '9', raw: other, rev: '12', want: 'swap' },
    { name: 'revisions compare as numbers, not text', inForce: '9', raw: other, rev: '10', want: 'swap' },
    { name: 'not JSON is refused', inForce: '9', raw: '{"format": 1', rev: '12', want: 'rejected:not JSON' },
    {
      name: 'an invalid document is refused with the reason',
      inForce: '9',
      raw: JSON.stringify({ ...layout(), format: 2 }),
      rev: '12',
      want: 'rejected:format must be 1, got 2',
    },
    { name: 'a deleted key is refused', inForce: '9', raw: null, rev: '12', want: 'rejected:deleted' },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const d = decideVersion(c.inForce, c.rejected, { raw: c.raw, modRevision: c.rev });
      const [kind, problem] = c.want.split(':');
      assert.equal(d.kind, kind);
      if (problem) assert.match(d.kind === 'rejected' ? d.problem : '', new RegExp(problem));
    });
  }
  test('a refused revision seen again is marked as already refused', () => {
    const d = decideVersion('9', '12', { raw: 'nope', modRevision: '12' });
    assert.ok(d.kind === 'rejected' && d.alreadyRejected);
  });
  test('a map with another mod-shard count is refused while one is in force; the same count is swapped in', () => {
    const current = parseTopology(layout());
    const count = current.doc.modShard.count;
    const hosts = { mysql001: { primary: ep(3301), replica: ep(3311) }, mysql002: { primary: ep(3302), replica: ep(3312) } };
    const moreModShards = JSON.stringify(evenLayout({ hosts, shards: 16, modShards: count * 2 }));
    const refused = decideVersion('9', undefined, { raw: moreModShards, modRevision: '12' }, current);
    assert.equal(refused.kind, 'rejected');
    assert.match(refused.kind === 'rejected' ? refused.problem : '', new RegExp(`mod-shard count changed from ${count} to ${count * 2}`));
    assert.equal(decideVersion('9', undefined, { raw: other, modRevision: '12' }, current).kind, 'swap');
    // At start (nothing in force) any valid count is read: the start-up check compares it with the recorded one.
    assert.equal(decideVersion('0', undefined, { raw: moreModShards, modRevision: '12' }).kind, 'swap');
  });
  test('revisions beyond 2^53 compare exactly', () => assert.equal(compareRevisions('9007199254740993', '9007199254740992'), 1));
});

/** A store in memory: `put` changes it, watches are handed out and driven by the test. */
class FakeSource implements TopologySource {
  raw: string | null = valid;
  modRevision = '5';
  storeRevision = '5';
  down = false;
  watches: { from: string; listener: TopologyWatchListener; closed: boolean }[] = [];
  async read(): Promise<TopologyRead> {
    if (this.down) throw new Error('14 UNAVAILABLE: No connection established');
    return { raw: this.raw, modRevision: this.modRevision, storeRevision: this.storeRevision };
  }
  watch(from: string, listener: TopologyWatchListener) {
    const w = { from, listener, closed: false };
    this.watches.push(w);
    return { close: async () => void (w.closed = true) };
  }
  put(raw: string, notify = true): void {
    this.storeRevision = String(Number(this.storeRevision) + 1);
    this.modRevision = this.storeRevision;
    this.raw = raw;
    const live = this.watches.filter((w) => !w.closed);
    if (notify) for (const w of live) w.listener.change({ raw, modRevision: this.modRevision });
  }
  get live() {
    return this.watches.filter((w) => !w.closed);
  }
}

function harness() {
  const source = new FakeSource();
  const logs: { event: string; fields: Record<string, unknown> }[] = [];
  const swaps: string[] = [];
  let clock = 1_000_000;
  const watcher = new TopologyWatcher({
    source,
    log: (event, fields) => logs.push({ event, fields }),
    refreshIntervalMs: 3_600_000, // the test drives re-reads itself
    onSwap: (s) => swaps.push(`${s.previousRevision}→${s.revision}`),
    now: () => clock,
  });
  return { source, logs, swaps, watcher, tick: (ms: number) => (clock += ms), events: () => logs.map((l) => l.event) };
}

describe('Topology watcher: following the store', () => {
  test('reads at R, then watches from R+1', async () => {
    const h = harness();
    await h.watcher.start();
    assert.equal(h.watcher.revision(), '5');
    assert.deepEqual(
      h.source.watches.map((w) => w.from),
      ['6'],
    );
    await h.watcher.stop();
  });
  test('a valid new version from the watch is swapped in whole', async () => {
    const h = harness();
    await h.watcher.start();
    const before = h.watcher.current();
    h.source.put(other);
    assert.notEqual(h.watcher.current(), before);
    assert.deepEqual(h.watcher.current().doc.pausedShards, [{ from: 1, to: 1 }]);
    assert.deepEqual(h.swaps, ['5→6']);
    await h.watcher.stop();
  });
  test('an invalid version is refused, logged once, and the last good map stays', async () => {
    const h = harness();
    await h.watcher.start();
    const good = h.watcher.current();
    h.source.put('{"format": 2}');
    assert.equal(h.watcher.current(), good);
    assert.equal(h.watcher.revision(), '5');
    assert.deepEqual(h.watcher.rejected()?.revision, '6');
    h.tick(1000);
    await h.watcher.refresh(); // the periodic re-read sees the same refused version
    assert.equal(h.events().filter((e) => e === 'topology_rejected').length, 1);
    h.source.put(other);
    assert.equal(h.watcher.revision(), '7', 'a valid version after the refused one is taken');
    assert.equal(h.watcher.rejected(), undefined);
    await h.watcher.stop();
  });
  test('while the store is unreachable the map stays and its age grows; it is confirmed again once back', async () => {
    const h = harness();
    await h.watcher.start();
    h.source.down = true;
    h.tick(4000);
    await h.watcher.refresh();
    h.tick(4000);
    await h.watcher.refresh();
    assert.equal(h.watcher.revision(), '5');
    assert.equal(h.watcher.ageMs(), 8000);
    assert.equal(h.events().filter((e) => e === 'topology_store_unreachable').length, 1);
    h.source.down = false;
    h.source.put(other, false); // changed while we could not see it
    h.tick(200);
    await h.watcher.refresh();
    assert.equal(h.watcher.revision(), '6');
    assert.equal(h.watcher.ageMs(), 0);
    assert.ok(h.events().includes('topology_store_reachable'));
    await h.watcher.stop();
  });
  test('a broken watch (etcd cancelled it) is re-created from the revision read', async () => {
    const h = harness();
    await h.watcher.start();
    h.source.watches[0]!.listener.broken(new Error('Watcher canceled: mvcc: required revision has been compacted'));
    assert.equal(h.source.live.length, 0);
    h.source.put(other, false);
    h.tick(200);
    await h.watcher.refresh();
    assert.equal(h.watcher.revision(), '6');
    assert.deepEqual(
      h.source.live.map((w) => w.from),
      ['7'],
    );
    assert.ok(h.events().includes('topology_watch_broken'));
    await h.watcher.stop();
  });
  test('a silent watch (a re-read finds what it never delivered) is re-created', async () => {
    const h = harness();
    await h.watcher.start();
    h.source.put(other, false);
    h.tick(200);
    await h.watcher.refresh();
    assert.equal(h.watcher.revision(), '6');
    assert.ok(h.events().includes('topology_watch_silent'));
    assert.equal(h.source.watches[0]!.closed, true);
    assert.deepEqual(
      h.source.live.map((w) => w.from),
      ['7'],
    );
    // events of the replaced watch are ignored
    h.source.watches[0]!.listener.change({ raw: '{"format": 2}', modRevision: '9' });
    assert.equal(h.watcher.rejected(), undefined);
    await h.watcher.stop();
  });
  test('refresh() calls close together share one read', async () => {
    const h = harness();
    await h.watcher.start();
    let reads = 0;
    const read = h.source.read.bind(h.source);
    h.source.read = async () => (reads++, read());
    h.tick(200);
    await Promise.all([h.watcher.refresh(), h.watcher.refresh(), h.watcher.refresh()]);
    await h.watcher.refresh(); // within the minimum gap
    assert.equal(reads, 1);
    await h.watcher.stop();
  });
  test('start refuses a store with no map, or an invalid one', async () => {
    const missing = harness();
    missing.source.raw = null;
    await assert.rejects(missing.watcher.start(), (e) => isShardqlError(e, 'TOPOLOGY_UNAVAILABLE'));
    const invalid = harness();
    invalid.source.raw = '[]';
    await assert.rejects(invalid.watcher.start(), (e) => isShardqlError(e, 'INVALID_TOPOLOGY') && /revision 5/.test(e.message));
    const down = harness();
    down.source.down = true;
    await assert.rejects(down.watcher.start(), (e) => isShardqlError(e, 'TOPOLOGY_UNAVAILABLE'));
  });
});

describe('Topology watcher: gateways behind a revision', () => {
  test('only gateways below the revision (or with no revision) are behind', () => {
    const gws = [
      { id: 'a', revision: '12' },
      { id: 'b', revision: '11' },
      { id: 'c', revision: '100' },
      { id: 'd', revision: 'junk' },
    ];
    assert.deepEqual(
      gatewaysBehind(gws, '12').map((g) => g.id),
      ['b', 'd'],
    );
  });
});
