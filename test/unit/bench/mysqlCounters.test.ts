/**
 * bench/mysqlCounters.ts: MariaDB's statement and commit counters, read around each warm run of a
 * system, summed over its runs and divided by their requests.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addMysql, mysqlPerRequest, NO_MYSQL } from '../../../bench/mysqlCounters.ts';

test("a system's runs add what the counters gained over each, and their requests", () => {
  const one = addMysql(NO_MYSQL, { statements: 1000, commits: 40 }, { statements: 3400, commits: 190 }, 200);
  const two = addMysql(one, { statements: 9000, commits: 500 }, { statements: 10_200, commits: 560 }, 100);
  assert.deepEqual(two, { gained: { statements: 3600, commits: 210 }, requests: 300 });
  assert.deepEqual(mysqlPerRequest(two), { statements: 12, commits: 0.7 });
});

test('a reading that failed leaves the whole tally unknown, and no requests give no figure', () => {
  const lost = addMysql(NO_MYSQL, null, { statements: 1, commits: 1 }, 10);
  assert.equal(lost, null);
  assert.equal(addMysql(lost, { statements: 1, commits: 1 }, { statements: 2, commits: 2 }, 10), null);
  assert.equal(mysqlPerRequest(lost), null);
  assert.equal(mysqlPerRequest(NO_MYSQL), null);
});
