import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { shardTables, mappingTableDdl } from '../../../src/storage/ddl.ts';
import { MAPPING_TABLES } from '../../../src/core/mappings.ts';

describe('DDL', () => {
  test('a shard holds every object table, every mapping table, the counts, the intent log and idempotency keys', () => {
    const tables = shardTables();
    for (const t of ['users', 'boards', 'pins', 'comments', 'counts', 'intents', 'idempotency', ...MAPPING_TABLES]) assert.ok(tables.has(t), t);
  });
  test('mapping tables key on (from, to) and index (from, sequence, to) for keyset pages', () => {
    const ddl = mappingTableDdl('user_likes_pins', false);
    assert.match(ddl, /PRIMARY KEY \(from_id, to_id\)/);
    assert.match(ddl, /KEY by_sequence \(from_id, sequence, to_id\)/);
    assert.doesNotMatch(ddl, /by_position/);
    assert.match(mappingTableDdl('board_has_pins', true), /KEY by_position \(from_id, position, to_id\)/);
  });
});
