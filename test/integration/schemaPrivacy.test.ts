/**
 * Schema privacy in production: with introspection and suggestions off, graphql-js's validation
 * messages still name types, fields and arguments ("Cannot query field … on type …", "Unknown
 * argument …", "… must have a selection of subfields"), which is how reconnaissance tools rebuild a
 * hidden schema. This replays their probes — known and unknown names side by side — against the
 * real gateway and checks that the answers cannot be told apart and name nothing of the schema,
 * while the server log keeps the real message under the request ID.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildSchema, isEnumType, isInputObjectType, isInterfaceType, isObjectType } from 'graphql';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { checkedFetch, codes, startTestGateway, type GqlResult, type TestGateway } from '../helpers/gateway.ts';
import { loadTypeDefs } from '../../src/graphql/schema.ts';

let env: TestEnv;
let hidden: TestGateway;
let open: TestGateway;
const lines: string[] = [];

before(async () => {
  env = await freshEnv({ shards: 4 });
  hidden = await startTestGateway(env, 'privacy-on', { env: 'production', logPretty: false }, { log: (line: string) => void lines.push(line) });
  // The same production gateway with the setting turned off: what the probes learn without it.
  open = await startTestGateway(env, 'privacy-off', { env: 'production', schemaPrivacy: false });
});
after(async () => {
  await hidden?.stop();
  await open?.stop();
  await env?.close();
});

/**
 * Probes as a reconnaissance tool sends them, in groups: within a group every document is invalid,
 * some for a name that exists (a known field without its sub-selection, a known argument of the
 * wrong type, a known type in an impossible fragment) and some for a name that does not.
 */
const PROBES: Record<string, { query: string; variables?: Record<string, unknown> }[]> = {
  'fields of a type': [
    { query: '{ viewer { boards } }' }, // known object field, no sub-selection
    { query: '{ viewer { boardz } }' }, // unknown
    { query: '{ viewer { username { length } } }' }, // known scalar given a sub-selection
    { query: '{ viewer { usernamez { length } } }' },
    { query: '{ viewer { followerCount followingCount boardCount pinCount nope } }' }, // many known, one unknown
    { query: '{ viewer { a1 a2 a3 a4 a5 a6 a7 a8 } }' },
  ],
  'root fields': [{ query: '{ pin }' }, { query: '{ pinz }' }, { query: 'mutation { likePin }' }, { query: 'mutation { likePinz }' }],
  arguments: [
    { query: '{ viewer { boards(frist: 1) { edges { cursor } } } }' }, // unknown argument
    { query: '{ viewer { boards(first: "x") { edges { cursor } } } }' }, // known argument, wrong type
    { query: '{ pin { id } }' }, // known required argument missing
    { query: '{ user(identifier: "1") { id } }' },
  ],
  'types and fragments': [
    { query: '{ viewer { ... on Pin { id } } }' }, // known type, impossible spread
    { query: '{ viewer { ... on Pinn { id } } }' }, // unknown type
    { query: 'query ($x: Board) { viewer { id } }' }, // known type, not an input type
    { query: 'query ($x: Boardd) { viewer { id } }' },
    { query: 'fragment F on User { id } { viewer { ...F ...G } }' },
  ],
  'enum values and input fields': [
    { query: '{ board(id: "1") { pins(order: NEWES) { edges { cursor } } } }' },
    { query: '{ board(id: "1") { pins(order: 5) { edges { cursor } } } }' },
    { query: 'mutation { createBoard(input: { nam: "x" }) { id } }' },
    { query: 'mutation { createBoard(input: { name: 5 }) { id } }' },
    { query: 'mutation { createBoard(input: {}) { id } }' },
  ],
  directives: [{ query: '{ viewer @include { id } }' }, { query: '{ viewer @includ(if: true) { id } }' }, { query: '{ viewer @skip(iff: true) { id } }' }],
};

const VARIABLE_PROBES = [
  { query: 'mutation ($i: CreateBoardInput!) { createBoard(input: $i) { id } }', variables: { i: { nam: 'x' } } }, // unknown input field
  { query: 'mutation ($i: CreateBoardInput!) { createBoard(input: $i) { id } }', variables: { i: { name: 5 } } }, // known, wrong type
  { query: 'mutation ($i: CreateBoardInput!) { createBoard(input: $i) { id } }', variables: { i: {} } }, // known, missing
  { query: 'query ($n: Int!) { homeFeed(first: $n) { edges { cursor } } }', variables: { n: 'ten' } },
];

/** Every name the schema has: types, fields, arguments, input fields, enum values (3 letters or more). */
function schemaNames(): Set<string> {
  const schema = buildSchema(loadTypeDefs());
  const names = new Set<string>();
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    names.add(type.name);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const f of Object.values(type.getFields())) {
        names.add(f.name);
        for (const a of f.args) names.add(a.name);
      }
    }
    if (isInputObjectType(type)) for (const f of Object.values(type.getFields())) names.add(f.name);
    if (isEnumType(type)) for (const v of type.getValues()) names.add(v.name);
  }
  return new Set([...names].filter((n) => n.length >= 3));
}

const answer = (r: GqlResult): string => `${r.status} ${r.text}`;

describe('Schema privacy (production)', () => {
  test('known and unknown names get the same answer, which names nothing of the schema', async () => {
    const names = schemaNames();
    assert.ok(names.has('CreateBoardInput') && names.has('followerCount') && names.has('NEWEST'), 'the name list is the schema');
    let probes = 0;
    for (const [group, list] of Object.entries(PROBES)) {
      const answers = new Set<string>();
      for (const p of list) {
        const r = await hidden.gql(p.query, p.variables ?? {});
        probes++;
        assert.equal(r.status, 400, `${group}: ${p.query} → ${r.text}`);
        assert.deepEqual(r.body, { errors: [{ message: r.body.errors![0]!.message, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] }, `${group}: ${p.query}`);
        answers.add(answer(r));
        for (const n of names) assert.doesNotMatch(r.text, new RegExp(`\\b${n}\\b`), `${group}: the answer to ${p.query} names ${n}`);
      }
      assert.equal(answers.size, 1, `${group}: answers differ: ${[...answers].join('\n')}`);
    }
    const variableAnswers = new Set<string>();
    for (const p of VARIABLE_PROBES) {
      const r = await hidden.gql(p.query, p.variables);
      probes++;
      assert.equal(r.status, 400, r.text);
      assert.deepEqual(codes(r), ['BAD_USER_INPUT']);
      variableAnswers.add(answer(r));
      for (const n of names) assert.doesNotMatch(r.text, new RegExp(`\\b${n}\\b`), `the answer to ${JSON.stringify(p.variables)} names ${n}`);
    }
    assert.equal(variableAnswers.size, 1, [...variableAnswers].join('\n'));
    console.log(`# ${probes} probes, ${Object.keys(PROBES).length + 1} groups, one answer per group`);
  });

  test('with the setting off, the same probes do tell known from unknown (what privacy removes)', async () => {
    let told = 0;
    for (const list of Object.values(PROBES)) {
      const answers = new Set<string>();
      for (const p of list) answers.add((await open.gql(p.query, p.variables ?? {})).body.errors!.map((e) => e.message).join('|'));
      if (answers.size > 1) told++;
    }
    assert.equal(told, Object.keys(PROBES).length, 'every group answers differently per name without privacy');
    const r = await open.gql('{ viewer { boards } }');
    assert.match(r.body.errors![0]!.message, /BoardConnection/);
  });

  test('the server log has the real message under the request ID', async () => {
    const res = await checkedFetch(env, `${hidden.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'probe-77' },
      body: JSON.stringify({ query: '{ viewer { boardz } }' }),
    });
    assert.equal(res.headers.get('x-request-id'), 'probe-77');
    assert.doesNotMatch(res.text, /boardz|User/);
    const logged = lines.map((l) => JSON.parse(l) as Record<string, any>).filter((l) => l.requestId === 'probe-77');
    const invalid = logged.find((l) => l.event === 'graphql_invalid');
    assert.ok(invalid, lines.slice(-3).join('\n'));
    assert.deepEqual(invalid.errors, ['GRAPHQL_VALIDATION_FAILED: Cannot query field "boardz" on type "User".']);
    assert.deepEqual(logged.find((l) => l.event === 'request')?.errors, { GRAPHQL_VALIDATION_FAILED: 1 });
  });

  test('valid operations are untouched: data, and our own errors with their codes and messages', async () => {
    const ok = await hidden.gql('{ __typename viewer { id } }');
    assert.deepEqual(ok.body, { data: { __typename: 'Query', viewer: null } });
    const bad = await hidden.gql('{ pin(id: "12") { id } }');
    assert.deepEqual(codes(bad), ['INVALID_ID']);
    assert.match(bad.body.errors![0]!.message, /12/);
  });
});
