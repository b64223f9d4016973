import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { describeTopology, gatewaysText, serversOutside } from '../../../src/cli/topologyCommands.ts';
import { evenLayout, type TopologyDoc } from '../../../src/core/topology.ts';

describe('CLI: topology show, the gateways line', () => {
  const cases: { name: string; gateways: { id: string; revision: string }[]; want: string }[] = [
    { name: 'none registered', gateways: [], want: 'none registered' },
    {
      name: 'all on the published revision',
      gateways: [
        { id: 'a', revision: '15' },
        { id: 'b', revision: '15' },
      ],
      want: '2 serving revision 15',
    },
    {
      name: 'one behind is named',
      gateways: [
        { id: 'a', revision: '15' },
        { id: 'b', revision: '14' },
      ],
      want: '1 serving revision 15, 1 behind (b at 14)',
    },
  ];
  for (const c of cases) test(c.name, () => assert.equal(gatewaysText(c.gateways, '15'), c.want));
});

describe('CLI: topology show, a pause left behind by a move', () => {
  const hosts = { mysql001: { primary: { host: '10.0.0.1', port: 3306 } }, mysql002: { primary: { host: '10.0.0.2', port: 3306 } } };
  const since = '2026-12-03T20:31:02.120Z';
  const doc: TopologyDoc = {
    ...evenLayout({ hosts, shards: 16, modShards: 8 }),
    pausedShards: [
      { from: 4, to: 5 },
      { from: 12, to: 12 },
    ],
    pausedModShards: [{ from: 0, to: 1 }],
    moves: [
      { kind: 'shard', shards: [{ from: 4, to: 5 }], to: 'mysql002', since },
      { kind: 'modShard', shards: [{ from: 0, to: 1 }], to: 'mysql002', since },
    ],
  };
  const lines = describeTopology(doc, Date.parse(since) + 123_000);
  test('each recorded move: its shards, its age, its target and the command that finishes it', () => {
    assert.equal(
      lines[lines.indexOf('Paused shards (writes refused): 4–5, 12 (3)') + 1],
      `  4–5: paused 2 min 3 s ago (since ${since}) by a move to mysql002 that has not finished; unless it is still running, finish it: shardql topology move --shards 4-5 --to mysql002`,
    );
    assert.equal(
      lines[lines.indexOf('Paused mod shards (writes refused): 0–1 (2)') + 1],
      `  0–1: paused 2 min 3 s ago (since ${since}) by a move to mysql002 that has not finished; unless it is still running, finish it: shardql topology move --mod-shards 0-1 --to mysql002`,
    );
  });
  test('a pause no move recorded says so', () => {
    assert.equal(
      lines[lines.indexOf('Paused shards (writes refused): 4–5, 12 (3)') + 2],
      '  12: no move recorded (paused by hand, or by an older shardql): shardql topology move --shards 12 --to HOST finishes a move; publishing the map without the pause resumes writes',
    );
  });
  test('no pause: one line each, nothing under it', () => {
    const plain = describeTopology(evenLayout({ hosts, shards: 16, modShards: 8 }), 0);
    assert.deepEqual(plain.slice(-2), ['Paused shards (writes refused): none', 'Paused mod shards (writes refused): none']);
  });
});

describe('CLI: dev, the servers a published map names outside the stack', () => {
  const a = { host: '127.0.0.1', port: 3301 };
  const aReplica = { host: '127.0.0.1', port: 3302 };
  const b = { host: '127.0.0.1', port: 3303 };
  const stack = { mysql001: { primary: a, replica: aReplica }, mysql002: { primary: b } };
  const map = (hosts: TopologyDoc['hosts']): TopologyDoc => evenLayout({ hosts, shards: 4 });
  const cases: { name: string; doc: TopologyDoc; want: string[] }[] = [
    { name: "the stack's own layout", doc: map(stack), want: [] },
    { name: 'a promotion: the replica named the primary, no replica', doc: map({ mysql001: { primary: aReplica }, mysql002: { primary: b } }), want: [] },
    { name: 'fewer hosts than the stack', doc: map({ mysql001: { primary: a } }), want: [] },
    {
      name: 'a server of another machine, under a name the stack has',
      doc: map({ mysql001: { primary: { host: '10.0.0.5', port: 3306 }, replica: aReplica }, mysql002: { primary: b } }),
      want: ['mysql001 primary 10.0.0.5:3306'],
    },
    { name: 'a port the stack does not use', doc: map({ mysql009: { primary: a, replica: { host: '127.0.0.1', port: 4000 } } }), want: ['mysql009 replica 127.0.0.1:4000'] },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual(serversOutside(c.doc, stack), c.want));
});
