import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeRefs } from '../../../src/core/objectRefs.ts';

describe('decodeRefs: the IDs a blob points at, as bigints', () => {
  const cases: { name: string; data: Record<string, unknown>; want: Record<string, bigint> }[] = [
    { name: 'a pin: board and pinner', data: { title: 'x', board_id: '241294492511762325', pinner_id: '7' }, want: { board: 241294492511762325n, pinner: 7n } },
    { name: 'a repin also names the pin it copies', data: { via_pin_id: '12' }, want: { via: 12n } },
    { name: 'a comment: author and pin', data: { author_id: '3', pin_id: '4', text: 'hi' }, want: { author: 3n, pin: 4n } },
    { name: 'a board: owner', data: { owner_id: '18446744073709551615' }, want: { owner: 18446744073709551615n } },
    { name: 'not decimal, a number, too long or empty: no reference', data: { board_id: '12a', pinner_id: 7, owner_id: '1'.repeat(21), pin_id: '' }, want: {} },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual({ ...decodeRefs(c.data) }, c.want));
});
