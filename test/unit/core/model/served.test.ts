import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DECLARED } from '../../../../src/core/model/declared.ts';
import { chooseModel, DEFAULT_MODEL_DIR, servedModel, servedModelDir, servedModelFiles } from '../../../../src/core/model/served.ts';
import { OBJECT_TYPES } from '../../../../src/core/objectTypes.ts';
import { MAPPING_TABLES } from '../../../../src/core/mappings.ts';

describe('The served model (core/model/served.ts)', () => {
  test("without SHARDQL_MODEL it is schema/, and equals declared.ts: what TypeScript knows is what is served", () => {
    assert.equal(servedModelDir(), DEFAULT_MODEL_DIR);
    assert.deepEqual(servedModel(), DECLARED);
    assert.deepEqual(
      servedModelFiles().map((f) => f.name),
      ['schema/model.graphql', 'schema/schema.graphql'],
    );
  });

  test('the tables the layers derive are the served model’s', () => {
    assert.deepEqual(OBJECT_TYPES, Object.fromEntries(servedModel().objects.map((o) => [o.key, o.typeNumber])));
    assert.deepEqual(MAPPING_TABLES, servedModel().relations.map((r) => r.table));
  });

  test('choosing another directory once the model was read is refused: one process, one model', () => {
    assert.equal(chooseModel(DEFAULT_MODEL_DIR), servedModel());
    assert.throws(() => chooseModel('examples/qa'), /the model was read from schema before examples\/qa was chosen/);
    assert.equal(servedModelDir(), DEFAULT_MODEL_DIR);
  });
});
