import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeCursor, encodeCursor } from '../../../src/core/cursor.ts';
import { isShardqlError } from '../../../src/core/errors.ts';
import { modShardOf, normalizeLookupKey } from '../../../src/core/modShard.ts';

describe('Cursors', () => {
  const list = 'board_has_pins:42:t';
  test('round-trip the keyset position', () => {
    const c = { list, key: 1_700_000_000_123n, id: 241294492511762325n };
    assert.deepEqual(decodeCursor(encodeCursor(c), list), c);
    const negative = { list, key: -1_700_000_000_123n * 1024n, id: 1n };
    assert.deepEqual(decodeCursor(encodeCursor(negative), list), negative);
  });
  test('refuse a cursor of another list', () => {
    const other = encodeCursor({ list: 'user_has_pins:42:t', key: 1n, id: 1n });
    assert.throws(() => decodeCursor(other, list), (e) => isShardqlError(e, 'INVALID_CURSOR') && e.details.reason === 'from another list');
  });
  const garbage: [string, unknown][] = [
    ['empty', ''], ['not base64url', '!!!'], ['a number', 5], ['a huge string', 'A'.repeat(10_000)],
    ['wrong version', Buffer.from(`v9|${list}|1|1`).toString('base64url')],
    ['non-numeric key', Buffer.from(`v1|${list}|x|1`).toString('base64url')],
    ['negative id', Buffer.from(`v1|${list}|1|-1`).toString('base64url')],
    ['key past 2^63', Buffer.from(`v1|${list}|99999999999999999999|1`).toString('base64url')],
    ['extra fields', Buffer.from(`v1|${list}|1|1|1`).toString('base64url')],
  ];
  for (const [name, input] of garbage) {
    test(`refuse ${name} with INVALID_CURSOR`, () => {
      assert.throws(() => decodeCursor(input, list), (e) => isShardqlError(e, 'INVALID_CURSOR'));
    });
  }
});

describe('Mod shard', () => {
  test('md5(key) mod N, reading the digest as one number', () => {
    assert.equal(modShardOf('1.2.3.4', 4096), 1537);
    assert.equal(modShardOf('1.2.3.4', 1), 0);
  });
  test('spreads keys over every mod shard', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) seen.add(modShardOf(`user${i}`, 16));
    assert.equal(seen.size, 16);
  });
  test('is case-insensitive through normalization', () => {
    assert.equal(normalizeLookupKey('Alice'), normalizeLookupKey('alice'));
  });
});
