import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewaysText, serversOutside } from '../../../src/cli/topologyCommands.ts';
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
