import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { clientOptionFile } from '../../../src/storage/shardCopy.ts';

describe('Shard copy: the client option file', () => {
  test('quotes user and password, escaping what the option parser would read otherwise', () => {
    // Checked against the MariaDB 10.11 client: a user with this password logs in with this file.
    assert.equal(clientOptionFile({ user: 'shardql', password: 'a"b\\c#d\'e f' }), '[client]\nuser="shardql"\npassword="a\\"b\\\\c#d\'e f"\n');
  });
  test('a line break cannot start a new option', () => {
    assert.equal(clientOptionFile({ user: 'u', password: 'x\nhost=evil' }).split('\n').length, 4);
  });
});
