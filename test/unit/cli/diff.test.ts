import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { evenLayout, parseTopology, type TopologyDoc } from '../../../src/core/topology.ts';
import { diffTopology } from '../../../src/cli/diff.ts';

const two = {
  mysql001: { primary: { host: '10.0.0.1', port: 3306 }, replica: { host: '10.0.0.2', port: 3306 } },
  mysql002: { primary: { host: '10.0.0.3', port: 3306 }, replica: { host: '10.0.0.4', port: 3306 } },
};
const three = { ...two, mysql003: { primary: { host: '10.0.0.5', port: 3306 } } };
const base = evenLayout({ hosts: two, shards: 4096 });

type Mutable<T> = { -readonly [K in keyof T]: T[K] extends object ? Mutable<T[K]> : T[K] };

/** `base` changed by `edit`, and checked to be a valid topology (the diff only ever sees valid ones). */
function changed(edit: (doc: Mutable<TopologyDoc>) => void): TopologyDoc {
  const doc = structuredClone(base) as Mutable<TopologyDoc>;
  edit(doc);
  return parseTopology(doc).doc;
}

const cases: { name: string; a: TopologyDoc | null; b: TopologyDoc; want: string[] }[] = [
  { name: 'identical documents: no change', a: base, b: base, want: [] },
  {
    name: 'the same layout with ranges cut differently: no change',
    a: base,
    b: changed((d) => {
      d.shards.ranges = [
        { from: 0, to: 1023, host: 'mysql001' },
        { from: 1024, to: 2047, host: 'mysql001' },
        { from: 2048, to: 4095, host: 'mysql002' },
      ];
    }),
    want: [],
  },
  {
    name: 'nothing published: everything is added',
    a: null,
    b: evenLayout({ hosts: two, shards: 16, modShards: 8 }),
    want: [
      '+ host mysql001: primary 10.0.0.1:3306, replica 10.0.0.2:3306',
      '+ host mysql002: primary 10.0.0.3:3306, replica 10.0.0.4:3306',
      '+ shards 0–7 (8) on mysql001',
      '+ shards 8–15 (8) on mysql002',
      '+ open shards 0–15 (16)',
      '+ mod shard count 8',
      '+ mod shards 0–3 (4) on mysql001',
      '+ mod shards 4–7 (4) on mysql002',
    ],
  },
  {
    name: 'a new host with a new open range',
    a: base,
    b: changed((d) => {
      d.hosts = three;
      d.shards.ranges.push({ from: 4096, to: 6143, host: 'mysql003' });
      d.shards.open = [{ from: 0, to: 6143 }];
    }),
    want: ['+ host mysql003: primary 10.0.0.5:3306, no replica', '+ shards 4096–6143 (2048) on mysql003', '+ open shards 4096–6143 (2048)'],
  },
  {
    name: 'one shard moves to another host',
    a: changed((d) => {
      d.hosts = three;
    }),
    b: changed((d) => {
      d.hosts = three;
      d.shards.ranges = [
        { from: 0, to: 2047, host: 'mysql001' },
        { from: 2048, to: 2048, host: 'mysql003' },
        { from: 2049, to: 4095, host: 'mysql002' },
      ];
    }),
    want: ['~ shards 2048 (1) move mysql002 → mysql003'],
  },
  {
    name: 'a host is removed after its shards moved away',
    a: changed((d) => {
      d.hosts = three;
    }),
    b: base,
    want: ['- host mysql003 (primary 10.0.0.5:3306, no replica)'],
  },
  {
    name: 'a replica is promoted: endpoints change',
    a: base,
    b: changed((d) => {
      d.hosts.mysql001 = { primary: { host: '10.0.0.2', port: 3306 } };
    }),
    want: ['~ host mysql001: primary 10.0.0.1:3306 → 10.0.0.2:3306, replica 10.0.0.2:3306 → none'],
  },
  {
    name: 'shards closed to new users and dropped from the map',
    a: base,
    b: changed((d) => {
      d.shards.open = [{ from: 0, to: 1999 }];
      d.shards.ranges = [
        { from: 0, to: 2047, host: 'mysql001' },
        { from: 2048, to: 4000, host: 'mysql002' },
      ];
    }),
    want: ['- shards 4001–4095 (95) dropped from the map (were on mysql002)', '- close shards 2000–4095 (2096)'],
  },
  {
    name: 'open spans split and joined',
    a: changed((d) => {
      d.shards.open = [
        { from: 0, to: 9 },
        { from: 20, to: 29 },
      ];
    }),
    b: changed((d) => {
      d.shards.open = [{ from: 5, to: 24 }];
    }),
    // In shard order, whatever the direction.
    want: ['- close shards 0–4 (5)', '+ open shards 10–19 (10)', '- close shards 25–29 (5)'],
  },
  {
    name: 'mod shard count changes',
    a: base,
    b: changed((d) => {
      d.modShard = { count: 8192, ranges: [{ from: 0, to: 8191, host: 'mysql002' }] };
    }),
    want: [
      '~ mod shard count 4096 → 8192 (md5(key) mod count changes: existing usernames and emails map to other mod shards)',
      '~ mod shards 0–2047 (2048) move mysql001 → mysql002',
      '+ mod shards 4096–8191 (4096) on mysql002',
    ],
  },
  {
    name: 'writes paused',
    a: base,
    b: changed((d) => {
      d.pausedShards = [{ from: 7, to: 7 }];
    }),
    want: ['+ pause writes on shards 7 (1)'],
  },
  {
    name: 'writes resumed',
    a: changed((d) => {
      d.pausedShards = [{ from: 7, to: 9 }];
    }),
    b: base,
    want: ['- resume writes on shards 7–9 (3)'],
  },
];

describe('diffTopology', () => {
  for (const c of cases) {
    test(c.name, () => {
      assert.deepEqual(diffTopology(c.a, c.b), c.want);
    });
  }

  test('is pure: inputs are not modified', () => {
    const a = structuredClone(base);
    const b = changed((d) => {
      d.shards.open = [{ from: 0, to: 99 }];
    });
    const bCopy = structuredClone(b);
    diffTopology(a, b);
    assert.deepEqual(a, base);
    assert.deepEqual(b, bCopy);
  });
});
