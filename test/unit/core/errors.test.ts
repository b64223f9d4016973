import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ERROR_CATALOGUE, ErrorCode, ShardqlError } from '../../../src/core/errors.ts';

describe('Error catalogue', () => {
  test('every code has an entry, keyed by its own name', () => {
    for (const [key, code] of Object.entries(ErrorCode)) {
      assert.equal(key, code);
      const entry = ERROR_CATALOGUE[code];
      assert.ok(entry.status >= 200 && entry.status < 600, `${code} has an HTTP status`);
    }
    assert.deepEqual(Object.keys(ERROR_CATALOGUE).sort(), Object.keys(ErrorCode).sort());
  });
  test('codes are SCREAMING_SNAKE and stable strings', () => {
    for (const code of Object.values(ErrorCode)) assert.match(code, /^[A-Z][A-Z_]+$/);
  });
  test('retryable follows the catalogue', () => {
    assert.equal(new ShardqlError('SHARD_UNAVAILABLE', 'x').retryable, true);
    assert.equal(new ShardqlError('INVALID_ID', 'x').retryable, false);
  });
});
