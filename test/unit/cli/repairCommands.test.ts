import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseShardList } from '../../../src/cli/repairCommands.ts';
import { UsageError } from '../../../src/cli/command.ts';
import { fingerprintOf } from '../../../src/storage/intentLog.ts';

describe('CLI: shard lists for reconcile', () => {
  const good: [string, number[]][] = [
    ['7', [7]],
    ['0-3', [0, 1, 2, 3]],
    ['3,1,2-3', [1, 2, 3]],
    ['65535', [65535]],
  ];
  for (const [text, shards] of good) {
    test(`reads ${JSON.stringify(text)}`, () => assert.deepEqual(parseShardList(text), shards));
  }
  for (const bad of ['', 'x', '5-3', '70000', '1-', '-1', '1..3']) {
    test(`refuses ${JSON.stringify(bad)}`, () => assert.throws(() => parseShardList(bad), UsageError));
  }
});

describe('Idempotency fingerprints', () => {
  test('differ by operation and by arguments, not by bigint vs string spelling of the same ID', () => {
    assert.notEqual(fingerprintOf('createPin', { b: '1' }), fingerprintOf('repin', { b: '1' }));
    assert.notEqual(fingerprintOf('createPin', { b: '1' }), fingerprintOf('createPin', { b: '2' }));
    assert.equal(fingerprintOf('createPin', { b: 1n }), fingerprintOf('createPin', { b: '1' }));
  });
});
