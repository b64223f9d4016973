import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { compareTypeNumbers, type DeclaredType } from '../../../../src/core/model/typeNumbers.ts';
import { checkTypesAtStart, evenLayout, keepReservedTypes, parseTopology } from '../../../../src/core/topology.ts';
import { isShardqlError } from '../../../../src/core/errors.ts';
import { DECLARED } from '../../../../src/core/model/declared.ts';

const MODEL: readonly DeclaredType[] = [
  { key: 'pin', typeNumber: 1, declaredAt: 'schema/schema.graphql:231' },
  { key: 'board', typeNumber: 2, declaredAt: 'schema/schema.graphql:217' },
];

describe("Type numbers: the model's against the topology's", () => {
  const cases: { name: string; model: readonly DeclaredType[]; published: Record<string, number>; disagree: string[]; undeclared: string[] }[] = [
    { name: 'the same numbers', model: MODEL, published: { pin: 1, board: 2 }, disagree: [], undeclared: [] },
    {
      name: 'a number changed in the model',
      model: [MODEL[0]!, { ...MODEL[1]!, typeNumber: 5 }],
      published: { pin: 1, board: 2 },
      disagree: ['idLayout.types.board is 2, the model declares board as 5 (schema/schema.graphql:217), expected the same number: a type number never changes'],
      undeclared: [],
    },
    {
      name: "a new type given a dropped type's number",
      model: [MODEL[0]!, { key: 'idea', typeNumber: 2, declaredAt: 'schema/schema.graphql:300' }],
      published: { pin: 1, board: 2 },
      disagree: ['idLayout.types gives 2 to board, the model gives it to idea (schema/schema.graphql:300), expected a number the topology has not given: a type number is never reused'],
      undeclared: ["idLayout.types.board is 2, the model declares no board, expected it declared with number 2: a removed type's number stays reserved"],
    },
    {
      name: 'a new type the topology does not list yet',
      model: [...MODEL, { key: 'idea', typeNumber: 6, declaredAt: 'schema/schema.graphql:300' }],
      published: { pin: 1, board: 2 },
      disagree: ["idLayout.types has no idea, the model declares idea as 6 (schema/schema.graphql:300), expected the topology to list it: publish one with this model's types (shardql topology publish)"],
      undeclared: [],
    },
    {
      name: 'a type dropped from the model',
      model: [MODEL[0]!],
      published: { pin: 1, board: 2 },
      disagree: [],
      undeclared: ["idLayout.types.board is 2, the model declares no board, expected it declared with number 2: a removed type's number stays reserved"],
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const found = compareTypeNumbers(c.model, c.published);
      assert.deepEqual(found.disagree, c.disagree);
      assert.deepEqual(found.undeclared, c.undeclared);
    });
  }
});

describe("The topology document keeps every type number it was given", () => {
  const hosts = { mysql001: { primary: { host: '10.0.0.1', port: 3306 } } };
  const layout = evenLayout({ hosts, shards: 16 });
  const withIdea = { ...layout, idLayout: { ...layout.idLayout, types: { ...layout.idLayout.types, idea: 9 } } };
  const pin = DECLARED.objects.find((o) => o.key === 'pin')!;

  test("a type this model does not declare is kept in the parsed document (a later publish keeps it)", () => {
    assert.equal(parseTopology(withIdea).doc.idLayout.types.idea, 9);
  });

  test('a process starting on it is refused, naming the type and its number', () => {
    assert.doesNotThrow(() => checkTypesAtStart(parseTopology(layout).doc));
    assert.throws(
      () => checkTypesAtStart(parseTopology(withIdea).doc),
      (e) => isShardqlError(e, 'INVALID_TOPOLOGY') && e.message === "Invalid topology: idLayout.types.idea is 9, the model declares no idea, expected it declared with number 9: a removed type's number stays reserved",
    );
  });

  test("a version numbering a model's type otherwise is refused with the model's file and line", () => {
    const other = { ...layout, idLayout: { ...layout.idLayout, types: { ...layout.idLayout.types, pin: 7 } } };
    assert.throws(
      () => parseTopology(other),
      (e) => isShardqlError(e, 'INVALID_TOPOLOGY') && e.message === `Invalid topology: idLayout.types.pin is 7, the model declares pin as 1 (${pin.declaredAt}), expected the same number: a type number never changes`,
    );
    assert.match(pin.declaredAt, /^schema\/schema\.graphql:\d+$/);
  });

  test('one number for two names, or a number past 10 bits, is refused', () => {
    const twice = { ...layout, idLayout: { ...layout.idLayout, types: { ...layout.idLayout.types, idea: 1 } } };
    assert.throws(() => parseTopology(twice), (e) => isShardqlError(e, 'INVALID_TOPOLOGY') && /gives 1 to both pin and idea/.test(e.message));
    const wide = { ...layout, idLayout: { ...layout.idLayout, types: { ...layout.idLayout.types, idea: 1024 } } };
    assert.throws(() => parseTopology(wide), (e) => isShardqlError(e, 'INVALID_TOPOLOGY') && /idLayout.types.idea must be an integer in 1..1023/.test(e.message));
  });

  test('types are kept in number order, whatever order the document gave them in', () => {
    const reversed = { ...withIdea, idLayout: { ...withIdea.idLayout, types: Object.fromEntries(Object.entries(withIdea.idLayout.types).reverse()) } };
    const order = Object.values(parseTopology(reversed).doc.idLayout.types);
    assert.deepEqual(order, [...order].sort((a, b) => a - b));
    assert.equal(JSON.stringify(parseTopology(reversed).doc), JSON.stringify(parseTopology(withIdea).doc));
  });

  test("publishing a layout built from the model keeps the published document's reserved numbers", () => {
    const next = keepReservedTypes(parseTopology(layout), parseTopology(withIdea).doc);
    assert.deepEqual(next.doc.idLayout.types, { ...layout.idLayout.types, idea: 9 });
    assert.deepEqual(Object.keys(next.doc.idLayout.types), ['pin', 'board', 'user', 'comment', 'idea']);
    assert.equal(keepReservedTypes(parseTopology(layout), null).doc.idLayout.types.idea, undefined);
  });
});
