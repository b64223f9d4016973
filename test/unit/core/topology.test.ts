import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { evenLayout, parseTopology, shardDatabase, modShardDatabase, type TopologyDoc } from '../../../src/core/topology.ts';
import { isShardqlError } from '../../../src/core/errors.ts';

const hosts = {
  mysql001: { primary: { host: '10.0.0.1', port: 3306 }, replica: { host: '10.0.0.2', port: 3306 } },
  mysql002: { primary: { host: '10.0.0.3', port: 3306 } },
};
const seeds = evenLayout({ hosts, shards: 4096 });

function withChange(change: (doc: Record<string, any>) => void): unknown {
  const doc = structuredClone(seeds) as Record<string, any>;
  change(doc);
  return doc;
}

describe('Topology: the seeds layout', () => {
  const t = parseTopology(seeds);
  test('deals shards out to hosts in contiguous blocks', () => {
    assert.equal(t.hostOfShard(0), 'mysql001');
    assert.equal(t.hostOfShard(2047), 'mysql001');
    assert.equal(t.hostOfShard(2048), 'mysql002');
    assert.equal(t.hostOfShard(4095), 'mysql002');
    assert.equal(t.hostOfShard(4096), undefined);
    assert.equal(t.openShardCount, 4096);
  });
  test('maps mod shards too', () => {
    assert.equal(t.hostOfModShard(0), 'mysql001');
    assert.equal(t.hostOfModShard(4095), 'mysql002');
    assert.equal(t.hostOfModShard(4096), undefined);
  });
  test('groups every shard by host for provisioning', () => {
    const byHost = t.shardsByHost();
    assert.equal(byHost.get('mysql001')?.length, 2048);
    assert.equal(byHost.get('mysql002')?.length, 2048);
  });
  test('names databases db%05d and msdb%05d', () => {
    assert.equal(shardDatabase(3429), 'db03429');
    assert.equal(shardDatabase(0), 'db00000');
    assert.equal(modShardDatabase(65535), 'msdb65535');
    assert.throws(() => shardDatabase(65536), RangeError);
    assert.throws(() => shardDatabase(-1), RangeError);
    assert.throws(() => shardDatabase(1.5), RangeError);
  });
});

describe('Topology: open spans with gaps', () => {
  const t = parseTopology(withChange((d) => {
    d.shards.open = [{ from: 10, to: 11 }, { from: 4000, to: 4002 }];
  }));
  test('counts and enumerates only open shards', () => {
    assert.equal(t.openShardCount, 5);
    assert.deepEqual([0, 1, 2, 3, 4].map((i) => t.nthOpenShard(i)), [10, 11, 4000, 4001, 4002]);
    assert.ok(t.isOpen(4001) && !t.isOpen(12));
    assert.ok(t.shardExists(12), 'a closed shard in a range still exists for reads');
  });
});

describe('Topology: validation refuses bad maps and names the problem', () => {
  const cases: [string, unknown, RegExp][] = [
    ['not an object', 'nope', /JSON object/],
    ['wrong format', withChange((d) => { d.format = 2; }), /format must be 1/],
    ['another ID layout', withChange((d) => { d.idLayout.shardBits = 12; }), /idLayout.shardBits is 12/],
    ['other type numbers', withChange((d) => { d.idLayout.types.pin = 7; }), /types.pin is 7/],
    ['no hosts', withChange((d) => { d.hosts = {}; }), /at least one host/],
    ['bad port', withChange((d) => { d.hosts.mysql001.primary.port = 70000; }), /port must be an integer in 1..65535/],
    ['overlapping ranges', withChange((d) => { d.shards.ranges[1].from = 2000; }), /overlap: 0–2047 \(mysql001\) and 2000–4095 \(mysql002\)/],
    ['a gap over open shards', withChange((d) => { d.shards.ranges[1].from = 3000; }), /open shards 2048–2999 have no host/],
    ['an unknown host', withChange((d) => { d.shards.ranges[0].host = 'mysql009'; }), /unknown host 'mysql009'/],
    ['a backwards range', withChange((d) => { d.shards.ranges[0] = { from: 10, to: 5, host: 'mysql001' }; }), /runs backwards: 10–5/],
    ['a shard past 65535', withChange((d) => { d.shards.ranges[1].to = 70000; }), /0..65535/],
    ['mod shards uncovered', withChange((d) => { d.modShard.ranges.pop(); }), /mod shard 2048 has no host/],
    ['nothing open', withChange((d) => { d.shards.open = []; }), /at least one shard/],
    ['overlapping open spans', withChange((d) => { d.shards.open = [{ from: 0, to: 10 }, { from: 5, to: 20 }]; }), /open shard spans overlap/],
    ['paused mod shards beyond the count', withChange((d) => { d.pausedModShards = [{ from: 4000, to: 4096 }]; }), /pausedModShards\[0\].to must be an integer in 0..4095/],
    ['a move record of shards not paused', withChange((d) => { d.pausedShards = [{ from: 4, to: 4 }]; d.moves = [{ kind: 'shard', shards: [{ from: 4, to: 5 }], to: 'mysql002', since: '2026-12-03T20:31:02.120Z' }]; }), /moves\[0\] names shard 5, which pausedShards does not pause/],
    ['a move record of ID shards paused only as mod shards', withChange((d) => { d.pausedModShards = [{ from: 4, to: 5 }]; d.moves = [{ kind: 'shard', shards: [{ from: 4, to: 5 }], to: 'mysql002', since: '2026-12-03T20:31:02.120Z' }]; }), /moves\[0\] names shard 4, which pausedShards does not pause/],
    ['a move record to an unknown host', withChange((d) => { d.pausedShards = [{ from: 4, to: 5 }]; d.moves = [{ ...{ kind: 'shard', shards: [{ from: 4, to: 5 }], to: 'mysql002', since: '2026-12-03T20:31:02.120Z' }, to: 'mysql009' }]; }), /moves\[0\].to must name a host of the map, got "mysql009"/],
    ['a move record with no time', withChange((d) => { d.pausedShards = [{ from: 4, to: 5 }]; d.moves = [{ ...{ kind: 'shard', shards: [{ from: 4, to: 5 }], to: 'mysql002', since: '2026-12-03T20:31:02.120Z' }, since: 'yesterday' }]; }), /moves\[0\].since must be an ISO 8601 time, got "yesterday"/],
    ['a move record of another kind', withChange((d) => { d.pausedShards = [{ from: 4, to: 5 }]; d.moves = [{ ...{ kind: 'shard', shards: [{ from: 4, to: 5 }], to: 'mysql002', since: '2026-12-03T20:31:02.120Z' }, kind: 'host' }]; }), /moves\[0\].kind must be "shard" or "modShard", got "host"/],
  ];
  for (const [name, doc, message] of cases) {
    test(`refuses ${name}`, () => {
      assert.throws(() => parseTopology(doc), (e) => isShardqlError(e, 'INVALID_TOPOLOGY') && message.test(e.message));
    });
  }

  test('pauses shards and mod shards apart (a move of either kind)', () => {
    const t = parseTopology(withChange((d) => { d.pausedShards = [{ from: 4, to: 5 }]; d.pausedModShards = [{ from: 7, to: 7 }]; }));
    assert.deepEqual([4, 5, 7].map((n) => [t.isPaused(n), t.isModShardPaused(n)]), [[true, false], [true, false], [false, true]]);
    assert.deepEqual(t.doc.pausedModShards, [{ from: 7, to: 7 }], 'kept in the document');
  });

  test('keeps the record of the move holding a pause', () => {
    const move = { kind: 'shard', shards: [{ from: 4, to: 5 }], to: 'mysql002', since: '2026-12-03T20:31:02.120Z' };
    const t = parseTopology(withChange((d) => { d.pausedShards = [{ from: 4, to: 5 }]; d.moves = [move]; }));
    assert.deepEqual(t.doc.moves, [move]);
  });

  test('accepts ranges beyond the open shards (provisioned, not yet open)', () => {
    const doc = withChange((d) => { d.shards.open = [{ from: 0, to: 1023 }]; }) as TopologyDoc;
    assert.equal(parseTopology(doc).openShardCount, 1024);
  });
});
