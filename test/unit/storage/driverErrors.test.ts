import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isShardqlError } from '../../../src/core/errors.ts';
import { translate } from '../../../src/storage/shardRouter.ts';

/** A mysql2-shaped driver error naming its host, as a refused connection does. */
function driverError(code: string, errno: number, fatal = true): Error {
  return Object.assign(new Error(`connect ${code} 10.1.2.3:3306 (mysql-host-7)`), { code, errno, fatal });
}

describe('driver errors as a client sees them', () => {
  it('a lost connection is a retryable SHARD_UNAVAILABLE naming the shards, never the host', () => {
    for (const [shards, message] of [
      [[3], 'Shard 3 is unavailable; retry later'],
      [[1, 2], 'Shards 1, 2 are unavailable; retry later'],
      // A catalogue or mod-shard statement has no shard: it names none (it once read "Shard  is unavailable").
      [[], 'A database is unavailable; retry later'],
    ] as const) {
      const e = translate(driverError('ECONNREFUSED', -111), shards);
      assert.ok(isShardqlError(e));
      assert.equal(e.code, 'SHARD_UNAVAILABLE');
      assert.equal(e.message, message);
      assert.equal(e.retryable, true);
      assert.deepEqual(e.details, { shards: [...shards] });
      assert.doesNotMatch(JSON.stringify({ m: e.message, d: e.details }), /10\.1\.2\.3|mysql-host-7/);
    }
  });

  it('a read-only server (a replica, a demoted primary) is SHARD_UNAVAILABLE too, and says so', () => {
    const e = translate(Object.assign(new Error('The MariaDB server is running with the --read-only option'), { code: 'ER_OPTION_PREVENTS_STATEMENT', errno: 1290 }), [5]);
    assert.ok(isShardqlError(e));
    assert.equal(e.message, 'Shard 5 is read-only right now; retry later');
    assert.deepEqual(e.details, { shards: [5], readOnly: true });
  });

  it('anything else (bad SQL, a duplicate key) comes back as it is, for the edge to mask', () => {
    const dup = Object.assign(new Error("Duplicate entry '1' for key 'PRIMARY'"), { code: 'ER_DUP_ENTRY', errno: 1062, fatal: false });
    assert.equal(translate(dup, [1]), dup);
  });
});
