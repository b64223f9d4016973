import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeId, encodeId, parseId, shardOf, typeOf, MAX_LOCAL_ID, formatId } from '../../../src/core/ids.ts';
import { isShardqlError } from '../../../src/core/errors.ts';

describe('IDs: the seeds layout (2 reserved | 16 shard | 10 type | 36 local)', () => {
  test("decodes Pinterest's own pin 241294492511762325", () => {
    assert.deepEqual(decodeId(241294492511762325n), { shard: 3429, type: 1, local: 7075733n });
    assert.equal(shardOf(241294492511762325n), 3429);
    assert.equal(typeOf(241294492511762325n), 'pin');
  });

  test('encodes it back', () => {
    assert.equal(encodeId({ shard: 3429, type: 1, local: 7075733n }), 241294492511762325n);
  });

  const roundTrips: [string, { shard: number; type: number; local: bigint }][] = [
    ['all zero', { shard: 0, type: 0, local: 0n }],
    ['largest shard, type and local', { shard: 65535, type: 1023, local: MAX_LOCAL_ID }],
    ['a user on shard 7', { shard: 7, type: 3, local: 12345n }],
  ];
  for (const [name, parts] of roundTrips) {
    test(`round-trips ${name}`, () => {
      const id = encodeId(parts);
      assert.ok(id < 1n << 62n, 'reserved bits stay zero');
      assert.deepEqual(decodeId(id), parts);
    });
  }

  test('refuses a local ID past 36 bits with LOCAL_ID_OVERFLOW instead of wrapping', () => {
    assert.throws(() => encodeId({ shard: 1, type: 1, local: MAX_LOCAL_ID + 1n }), (e) => isShardqlError(e, 'LOCAL_ID_OVERFLOW'));
  });
});

describe('IDs: parsing client input', () => {
  test('accepts the decimal wire form', () => {
    assert.equal(parseId('241294492511762325'), 241294492511762325n);
    assert.equal(formatId(241294492511762325n), '241294492511762325');
  });

  const pin = encodeId({ shard: 5, type: 1, local: 9n });
  const bad: [string, unknown, string][] = [
    ['empty', '', 'not_decimal'],
    ['letters', 'abc', 'not_decimal'],
    ['negative', '-5', 'not_decimal'],
    ['leading zero', '0241294492511762325', 'not_decimal'],
    ['plus sign', '+1', 'not_decimal'],
    ['decimal point', '1.5', 'not_decimal'],
    ['whitespace', ' 241294492511762325', 'not_decimal'],
    ['hex', '0x10', 'not_decimal'],
    ['a float number', 1.5, 'not_decimal'],
    ['null', null, 'not_decimal'],
    ['an object', { id: 1 }, 'not_decimal'],
    ['20 digits', '12345678901234567890', 'too_large'],
    ['a thousand digits', '9'.repeat(1000), 'too_large'],
    ['reserved bit 62 set', String(1n << 62n), 'reserved_bits'],
    ['2^64 - 1', '18446744073709551615', 'too_large'],
    ['just below 2^63', String((1n << 63n) - 1n), 'reserved_bits'],
    ['type 0', String(encodeId({ shard: 1, type: 0, local: 1n })), 'unknown_type'],
    ['type 1023', String(encodeId({ shard: 1, type: 1023, local: 1n })), 'unknown_type'],
  ];
  for (const [name, input, reason] of bad) {
    test(`refuses ${name} with INVALID_ID (${reason})`, () => {
      assert.throws(() => parseId(input), (e) => isShardqlError(e, 'INVALID_ID') && e.details.reason === reason);
    });
  }

  test('refuses an ID of another type when one is expected', () => {
    assert.throws(() => parseId(String(pin), { expect: 'user' }), (e) => isShardqlError(e, 'INVALID_ID') && e.details.reason === 'wrong_type');
    // Says what was expected, then what came.
    const user = encodeId({ shard: 5, type: 3, local: 9n });
    assert.throws(() => parseId(String(pin), { expect: 'user' }), { message: `Expected an ID of type user, got an ID of type pin: "${pin}"` });
    assert.throws(() => parseId(String(user), { expect: 'pin' }), { message: `Expected an ID of type pin, got an ID of type user: "${user}"` });
    assert.equal(parseId(String(pin), { expect: 'pin' }), pin);
  });

  test('refuses a shard the topology does not know', () => {
    assert.throws(() => parseId(String(pin), { shardExists: (s) => s < 4 }), (e) => isShardqlError(e, 'INVALID_ID') && e.details.reason === 'unknown_shard');
  });

  test('messages quote a long input cut short', () => {
    try {
      parseId('x'.repeat(10_000));
      assert.fail('should throw');
    } catch (e) {
      assert.ok(isShardqlError(e) && e.message.length < 200, 'message stays short');
    }
  });
});
