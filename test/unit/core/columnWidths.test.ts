import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fitToColumn, IMPORT_CHUNK_WIDTH, INTENT_KIND_WIDTH, LOOKUP_NAMESPACE_WIDTH } from '../../../src/core/columnWidths.ts';
import { chunkName, importNamespace } from '../../../src/core/importSchema.ts';
import { deletesChunkName } from '../../../src/jobs/kinds/import.ts';
import { IMPORT_CHUNKS_DDL, INTENTS_DDL, LOOKUPS_DDL } from '../../../src/storage/ddl.ts';

/** A mapping table at the longest a model may name one (64 characters, MySQL's limit). */
const LONGEST_TABLE = `listener_follows_${'x'.repeat(64 - 'listener_follows_'.length - '_listeners'.length)}_listeners`;

describe('fitToColumn: a name built from the model, as a column of fixed width holds it', () => {
  const cases: { name: string; value: string; width: number; want: string }[] = [
    { name: 'a name that fits is kept as it is', value: 'add:user_likes_pins', width: 32, want: 'add:user_likes_pins' },
    { name: 'a name exactly as wide as the column is kept', value: 'a'.repeat(32), width: 32, want: 'a'.repeat(32) },
    { name: 'a longer name keeps its first characters, then ~ and 8 hex digits of its hash', value: 'remove:listener_follows_listeners', width: 32, want: 'remove:listener_follows~9d3992d0' },
  ];
  for (const c of cases) test(c.name, () => assert.equal(fitToColumn(c.value, c.width), c.want));

  test('every name a write records fits its column, and names sharing their first characters stay apart', () => {
    const names = ['add', 'remove', 'cascade'].map((op) => `${op}:${LONGEST_TABLE}`);
    const mutation = `commentOnTrackFromTheListenersPage${'AndMore'.repeat(40)}`;
    const fitted = [...names, mutation, `${mutation}Too`].map((n) => fitToColumn(n, INTENT_KIND_WIDTH));
    for (const f of fitted) assert.ok(f.length <= INTENT_KIND_WIDTH, f);
    assert.equal(new Set(fitted).size, fitted.length, fitted.join(', '));
    assert.deepEqual(fitted.map((f) => fitToColumn(f, INTENT_KIND_WIDTH)), fitted, 'a fitted name fits as it is');
  });

  test('a column too narrow for a fitted name is refused', () => {
    assert.throws(() => fitToColumn('abcdefghijk', 9), /cannot hold a fitted name/);
  });

  test('the DDL declares the widths the names are fitted to', () => {
    assert.match(INTENTS_DDL, new RegExp(`kind VARCHAR\\(${INTENT_KIND_WIDTH}\\)`));
    assert.match(LOOKUPS_DDL, new RegExp(`namespace VARCHAR\\(${LOOKUP_NAMESPACE_WIDTH}\\)`));
    assert.match(IMPORT_CHUNKS_DDL, new RegExp(`chunk VARCHAR\\(${IMPORT_CHUNK_WIDTH}\\)`));
  });

  test("an import chunk of a 64-character table fits the ledger's column, one name per chunk; a short one reads as before", () => {
    assert.equal(chunkName('pins', 3), 'pins.3');
    assert.equal(deletesChunkName('pins', 3), 'deletes:pins.3');
    const names = [0, 1, 12345].flatMap((i) => [chunkName(LONGEST_TABLE, i), deletesChunkName(LONGEST_TABLE, i)]);
    for (const n of names) assert.ok(n.length <= IMPORT_CHUNK_WIDTH, n);
    assert.equal(new Set(names).size, names.length, names.join(', '));
    assert.ok(names.filter((n) => n.startsWith('deletes:')).length === 3, 'a deletes chunk keeps its prefix');
  });

  test("the importer's namespace of a type with a long key fits the lookups column; a short one reads as before", () => {
    assert.equal(importNamespace('pin'), 'import:pin');
    const long = importNamespace('listenerPlaylistOfTheWeekCollection');
    assert.ok(long.length <= LOOKUP_NAMESPACE_WIDTH && long.startsWith('import:listenerPlaylist'), long);
  });
});
