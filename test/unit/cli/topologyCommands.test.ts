import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gatewaysText } from '../../../src/cli/topologyCommands.ts';

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
