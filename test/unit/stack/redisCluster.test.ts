import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { slotRange } from '../../../src/stack/redisCluster.ts';

describe('slotRange: the slots each node of the local Redis Cluster takes', () => {
  test('3 nodes: as redis-cli --cluster create deals them', () => {
    assert.deepEqual([0, 1, 2].map((i) => slotRange(i, 3)), [[0, 5460], [5461, 10922], [10923, 16383]]);
  });
  for (const n of [1, 3, 4, 7]) {
    test(`${n} nodes: every slot once, in order`, () => {
      const ranges = Array.from({ length: n }, (_, i) => slotRange(i, n));
      assert.equal(ranges[0]![0], 0);
      assert.equal(ranges.at(-1)![1], 16383);
      for (let i = 1; i < n; i++) assert.equal(ranges[i]![0], ranges[i - 1]![1] + 1);
    });
  }
});
