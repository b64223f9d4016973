import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assignSpan, intersect, mergeSpans, parseShardSpan, placementOf, shardsOf, spansOf, subtractSpan } from '../../../src/topology/operations/spans.ts';
import { TopologyOperationError } from '../../../src/topology/operations/errors.ts';

describe('Topology spans: parsing what the operator types', () => {
  const cases: { name: string; text: string; want: { from: number; to: number } | RegExp }[] = [
    { name: 'a dash span', text: '4-7', want: { from: 4, to: 7 } },
    { name: 'an en dash, as `topology show` prints it', text: '4–7', want: { from: 4, to: 7 } },
    { name: 'two dots', text: '4..7', want: { from: 4, to: 7 } },
    { name: 'one shard', text: '12', want: { from: 12, to: 12 } },
    { name: 'spaces around', text: ' 1 - 2 ', want: { from: 1, to: 2 } },
    { name: 'backwards', text: '7-4', want: /runs backwards/ },
    { name: 'beyond the last shard', text: '0-65536', want: /at most 65535/ },
    { name: 'not a number', text: 'a-b', want: /shard number or a span/ },
    { name: 'negative', text: '-3', want: /shard number or a span/ },
  ];
  for (const c of cases) {
    test(c.name, () => {
      if (c.want instanceof RegExp)
        assert.throws(
          () => parseShardSpan(c.text),
          (e: unknown) => e instanceof TopologyOperationError && c.want instanceof RegExp && c.want.test(e.message),
        );
      else assert.deepEqual(parseShardSpan(c.text), c.want);
    });
  }
});

describe('Topology spans: arithmetic', () => {
  test('merge joins overlapping and adjacent spans, in order', () => {
    assert.deepEqual(
      mergeSpans([
        { from: 5, to: 6 },
        { from: 0, to: 2 },
        { from: 3, to: 3 },
        { from: 9, to: 9 },
      ]),
      [
        { from: 0, to: 3 },
        { from: 5, to: 6 },
        { from: 9, to: 9 },
      ],
    );
  });
  test('subtract cuts a hole, a head or a tail', () => {
    assert.deepEqual(subtractSpan([{ from: 0, to: 9 }], { from: 3, to: 4 }), [
      { from: 0, to: 2 },
      { from: 5, to: 9 },
    ]);
    assert.deepEqual(subtractSpan([{ from: 0, to: 9 }], { from: 0, to: 4 }), [{ from: 5, to: 9 }]);
    assert.deepEqual(subtractSpan([{ from: 0, to: 9 }], { from: 0, to: 9 }), []);
    assert.deepEqual(subtractSpan([{ from: 0, to: 2 }], { from: 5, to: 6 }), [{ from: 0, to: 2 }]);
  });
  test('intersect keeps the covered parts', () => {
    assert.deepEqual(
      intersect(
        [
          { from: 8, to: 20 },
          { from: 2, to: 3 },
        ],
        { from: 0, to: 9 },
      ),
      [
        { from: 2, to: 3 },
        { from: 8, to: 9 },
      ],
    );
  });
  test('shardsOf and spansOf are inverse', () => {
    assert.deepEqual(
      shardsOf([
        { from: 3, to: 4 },
        { from: 1, to: 1 },
      ]),
      [1, 3, 4],
    );
    assert.deepEqual(spansOf([7, 1, 2, 3]), [
      { from: 1, to: 3 },
      { from: 7, to: 7 },
    ]);
  });
});

describe('Topology spans: re-assigning ranges', () => {
  const ranges = [
    { from: 0, to: 7, host: 'a' },
    { from: 8, to: 15, host: 'b' },
  ];
  test('a span in the middle of a range is cut out and given to the new host', () => {
    assert.deepEqual(assignSpan(ranges, { from: 4, to: 5 }, 'c'), [
      { from: 0, to: 3, host: 'a' },
      { from: 4, to: 5, host: 'c' },
      { from: 6, to: 7, host: 'a' },
      { from: 8, to: 15, host: 'b' },
    ]);
  });
  test('a span across two ranges takes the end of one and the start of the other', () => {
    assert.deepEqual(assignSpan(ranges, { from: 6, to: 9 }, 'c'), [
      { from: 0, to: 5, host: 'a' },
      { from: 6, to: 9, host: 'c' },
      { from: 10, to: 15, host: 'b' },
    ]);
  });
  test('a span given back to its neighbour host is joined with it', () => {
    assert.deepEqual(assignSpan(ranges, { from: 8, to: 15 }, 'a'), [{ from: 0, to: 15, host: 'a' }]);
  });
  test('a span beyond every range is added', () => {
    assert.deepEqual(assignSpan(ranges, { from: 16, to: 23 }, 'c'), [...ranges, { from: 16, to: 23, host: 'c' }]);
  });
  test('placement says which host holds each part, and where there is none', () => {
    assert.deepEqual(placementOf(ranges, { from: 6, to: 17 }), [
      { from: 6, to: 7, host: 'a' },
      { from: 8, to: 15, host: 'b' },
      { from: 16, to: 17, host: undefined },
    ]);
  });
});
