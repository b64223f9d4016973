import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkSqlIdentifiers, SqlIdentifierError } from '../../../src/storage/sqlIdentifiers.ts';

// A topology with shards 0..15 and mod shards 0..7.
const known = { shard: (s: number) => s >= 0 && s < 16, modShard: (m: number) => m >= 0 && m < 8 };

describe('SQL identifiers: only db/msdb + 5 digits the topology knows', () => {
  const passes: [string, string][] = [
    ['a shard table', 'SELECT local_id, data FROM db00014.pins WHERE local_id IN (?, ?)'],
    [
      'a UNION over shards',
      '(SELECT ? AS req FROM db00000.board_has_pins WHERE from_id = ?)\nUNION ALL\n(SELECT ? AS req FROM db00015.board_has_pins WHERE from_id = ?)',
    ],
    ['a mod shard', 'INSERT IGNORE INTO msdb00007.lookups (namespace, lookup_key, id, created_at) VALUES (?, ?, ?, ?)'],
    ['the catalogue, with a literal naming shards', "SELECT schema_name AS db FROM information_schema.schemata WHERE schema_name REGEXP '^(db|msdb)[0-9]{5}$'"],
    ['no identifier at all', 'SELECT 1'],
    ['a JSON path literal', "SELECT local_id FROM db00001.pins WHERE JSON_VALUE(data, '$.via_pin_id') IS NOT NULL"],
    ['DDL for a shard the topology does not have yet', 'CREATE TABLE IF NOT EXISTS db04096.pins (local_id BIGINT)'],
    ['dropping a shard the topology no longer has', 'DROP DATABASE IF EXISTS db00100'],
    ['a system variable', 'SELECT @@global.read_only'],
  ];
  for (const [name, sql] of passes) test(`passes: ${name}`, () => checkSqlIdentifiers(sql, known));

  const refused: [string, string][] = [
    ['too few digits', 'SELECT * FROM db14.pins'],
    ['too many digits', 'SELECT * FROM db000014.pins'],
    ['a suffix', 'SELECT * FROM db00014x.pins'],
    ['another database', 'SELECT * FROM mysql.user'],
    ['a quoted other database', 'SELECT * FROM `mysql`.`user`'],
    ['a shard the topology does not have', 'SELECT * FROM db04000.pins'],
    ['a mod shard the topology does not have', 'SELECT * FROM msdb00008.lookups'],
    ['a bad name in DDL', 'DROP DATABASE IF EXISTS db1; DROP DATABASE mysql'],
    ['an injected name', 'SELECT * FROM db00001.pins WHERE 1 UNION SELECT * FROM performance_schema.threads'],
  ];
  for (const [name, sql] of refused) test(`refused: ${name}`, () => assert.throws(() => checkSqlIdentifiers(sql, known), SqlIdentifierError));

  test('a text checked once is checked again against the topology of each call (texts are remembered, shards are not)', () => {
    const sql = 'SELECT * FROM db00014.pins WHERE local_id = ?';
    checkSqlIdentifiers(sql, { shard: (n) => n === 14, modShard: () => false });
    assert.throws(() => checkSqlIdentifiers(sql, { shard: () => false, modShard: () => false }), SqlIdentifierError);
    const bad = 'SELECT * FROM mysql.user';
    for (let i = 0; i < 2; i++) assert.throws(() => checkSqlIdentifiers(bad, known), SqlIdentifierError);
  });
});
