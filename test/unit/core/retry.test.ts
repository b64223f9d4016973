import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ShardqlError } from '../../../src/core/errors.ts';
import { whileRetryable } from '../../../src/core/retry.ts';

describe('whileRetryable: an operation safe to repeat, tried again after a retryable refusal', () => {
  test('retryable refusals are waited out; the pauses grow as asked and each retry is told', async () => {
    let calls = 0;
    const told: number[] = [];
    const asked: number[] = [];
    const result = await whileRetryable(
      async () => {
        calls++;
        if (calls < 3) throw new ShardqlError('SHARD_UNAVAILABLE', 'Shard 3 is unavailable; retry later');
        return 'done';
      },
      { attempts: 5, pauseMs: (n) => (asked.push(n), 1), onRetry: (_err, n) => told.push(n) },
    );
    assert.deepEqual({ result, calls, told, asked }, { result: 'done', calls: 3, told: [1, 2], asked: [1, 2] });
  });

  test('a refusal that is not retryable is thrown at once', async () => {
    let calls = 0;
    await assert.rejects(
      whileRetryable(async () => {
        calls++;
        throw new ShardqlError('NOT_FOUND', 'No pin with ID 1');
      }, { attempts: 5, pauseMs: () => 1 }),
      (err) => err instanceof ShardqlError && err.code === 'NOT_FOUND',
    );
    assert.equal(calls, 1);
    await assert.rejects(whileRetryable(async () => { throw new Error('a bug'); }, { attempts: 5, pauseMs: () => 1 }), /a bug/);
  });

  test('after `attempts` tries the last refusal is thrown', async () => {
    let calls = 0;
    await assert.rejects(
      whileRetryable(async () => {
        calls++;
        throw new ShardqlError('WRITES_PAUSED', `paused ${calls}`);
      }, { attempts: 4, pauseMs: () => 1 }),
      /paused 4/,
    );
    assert.equal(calls, 4);
  });
});
