import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { groupBy } from '../../../src/core/groupBy.ts';

describe('groupBy: one group per key, items in arrival order', () => {
  const cases: { name: string; items: number[]; key: (n: number) => string; want: [string, number[]][] }[] = [
    { name: 'nothing gives no groups', items: [], key: String, want: [] },
    { name: 'keys in the order they first appear', items: [3, 1, 4, 1, 5, 9, 2, 6], key: (n) => (n % 2 ? 'odd' : 'even'), want: [['odd', [3, 1, 1, 5, 9]], ['even', [4, 2, 6]]] },
    { name: 'one key takes everything', items: [5, 4, 3], key: () => 'all', want: [['all', [5, 4, 3]]] },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual([...groupBy(c.items, c.key)], c.want));

  test('a level of 100,000 keys on one server groups in linear time', () => {
    const items = Array.from({ length: 100_000 }, (_, i) => i);
    const groups = groupBy(items, () => 0);
    assert.equal(groups.get(0)?.length, 100_000);
  });
});
