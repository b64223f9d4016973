/**
 * The fast lane (src/graphql/fastLane.ts) answers an operation Apollo has seen before past Apollo's
 * pipeline. What must hold: the same bytes, status and content type as Apollo's answer, whatever
 * the answer (data, execution errors, refusals, cost extension, Accept), and every request the
 * fast lane does not take is still Apollo's. Two production gateways over the same data, one with
 * the fast lane and one without (SHARDQL_FAST_LANE=0), are sent the same requests.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';

let env: TestEnv;
let fast: TestGateway;
let apollo: TestGateway;
const lines: string[] = [];
let token = '';
let board = '';
let pin = '';

before(async () => {
  env = await freshEnv();
  fast = await startTestGateway(env, 'fast-lane', { env: 'production', logPretty: false }, { log: (line: string) => void lines.push(line) });
  apollo = await startTestGateway(env, 'apollo-lane', { env: 'production', logPretty: false, fastLane: false });
  const me = (await apollo.ok('mutation { createUser(input: { username: "lane_alice" }) { user { id } token } }')).createUser;
  token = me.token;
  board = (await apollo.ok('mutation { createBoard(input: { name: "lanes" }) { id } }', {}, token)).createBoard.id;
  for (let i = 0; i < 3; i++) {
    pin = (await apollo.ok('mutation($b: ID!, $t: String) { createPin(input: { boardId: $b, title: $t, link: "https://example.com/l" }) { id } }', { b: board, t: `pin ${i}` }, token)).createPin.id;
  }
  await apollo.ok('mutation($p: ID!) { likePin(pinId: $p) { id } }', { p: pin }, token);
});
after(async () => {
  await fast?.stop();
  await apollo?.stop();
  await env?.close();
});

interface Sent {
  readonly status: number;
  readonly contentType: string | null;
  readonly length: string | null;
  readonly text: string;
  readonly requestId: string | null;
  /** Every header but the request's own (date, x-request-id). */
  readonly headers: Record<string, string>;
}

const ownHeaders = (res: Response): Record<string, string> => Object.fromEntries([...res.headers].filter(([k]) => k !== 'date' && k !== 'x-request-id'));

async function post(gw: TestGateway, body: unknown, headers: Record<string, string> = {}): Promise<Sent> {
  const res = await fetch(`${gw.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type'), length: res.headers.get('content-length'), text, requestId: res.headers.get('x-request-id'), headers: ownHeaders(res) };
}

const logged = (requestId: string | null): Record<string, any> => {
  const line = lines.map((l) => JSON.parse(l) as Record<string, any>).find((o) => o.event === 'request' && o.requestId === requestId);
  assert.ok(line, `a log line for ${requestId}`);
  return line;
};

const BOARD = 'query Board($b: ID!, $n: Int) { board(id: $b) { name pins(first: $n) { edges { cursor node { id title likeCount pinner { username } } } pageInfo { hasNextPage endCursor } } } }';

describe('The fast lane', () => {
  test('answers a query seen before byte for byte as Apollo does, whatever the answer', async () => {
    const cases: { name: string; body: Record<string, unknown>; headers?: Record<string, string> }[] = [
      { name: 'data', body: { query: BOARD, variables: { b: board, n: 2 } } },
      { name: 'data, named operation', body: { query: BOARD, operationName: 'Board', variables: { b: board, n: 3 } } },
      { name: 'data, the viewer', body: { query: '{ viewer { username boards(first: 5) { edges { node { name } } } } }' }, headers: { authorization: `Bearer ${token}` } },
      { name: 'cost asked for', body: { query: BOARD, variables: { b: board, n: 1 } }, headers: { 'x-shardql-cost': '1' } },
      { name: 'an execution error (bad cursor)', body: { query: 'query($b: ID!) { board(id: $b) { name pins(first: 2, after: "garbage!") { edges { cursor } } } }', variables: { b: board } } },
      { name: 'an execution error beside data', body: { query: 'query($b: ID!, $p: ID!) { pin(id: $p) { title } board(id: $b) { pins(first: 2, after: "nope") { edges { cursor } } } }', variables: { b: board, p: pin } } },
      { name: 'a missing object', body: { query: 'query($p: ID!) { pin(id: $p) { title } }', variables: { p: '1' } } },
      { name: 'Accept: graphql-response+json', body: { query: BOARD, variables: { b: board, n: 2 } }, headers: { accept: 'application/graphql-response+json, application/json;q=0.9' } },
      { name: 'Accept: */*', body: { query: BOARD, variables: { b: board, n: 2 } }, headers: { accept: '*/*' } },
      { name: 'a mutation', body: { query: 'mutation($b: ID!) { updateBoard(id: $b, input: { name: "lanes" }) { id name } }', variables: { b: board } }, headers: { authorization: `Bearer ${token}` } },
      { name: 'a mutation refused (no such pin)', body: { query: 'mutation($p: ID!) { likePin(pinId: $p) { id } }', variables: { p: '1' } }, headers: { authorization: `Bearer ${token}` } },
    ];
    const texts = new Set<unknown>();
    for (const c of cases) {
      // Each gateway sees the request once to learn it (and warm its caches), then answers it again.
      await post(apollo, c.body, c.headers);
      const first = await post(fast, c.body, c.headers);
      if (!texts.has(c.body.query)) assert.equal(logged(first.requestId).fastLane, undefined, `${c.name}: a query not seen yet is Apollo's`);
      texts.add(c.body.query);
      const want = await post(apollo, c.body, c.headers);
      const got = await post(fast, c.body, c.headers);
      assert.equal(logged(got.requestId).fastLane, true, `${c.name}: seen before, answered by the fast lane`);
      assert.deepEqual(
        { status: got.status, headers: got.headers, text: got.text },
        { status: want.status, headers: want.headers, text: want.text },
        c.name,
      );
      assert.equal(got.length, String(Buffer.byteLength(got.text)), `${c.name}: its length`);
      assert.match(got.contentType ?? '', /^application\/(json|graphql-response\+json); charset=utf-8$/, c.name);
    }
  });

  test('the same log line, metrics and error counts as an Apollo answer', async () => {
    const body = { query: 'query($b: ID!) { board(id: $b) { name pins(first: 2, after: "garbage!") { edges { cursor } } } }', variables: { b: board } };
    const got = await post(fast, body);
    const line = logged(got.requestId);
    assert.equal(line.fastLane, true);
    assert.equal(line.operation, '(anonymous)');
    assert.deepEqual(line.errors, { INVALID_CURSOR: 1 });
    assert.equal(line.status, 200);
    const metrics = await (await fetch(`${fast.url}/metrics`)).text();
    const answered = (outcome: string): number => Number(new RegExp(`shardql_requests_total\\{outcome="${outcome}"\\} (\\d+)`).exec(metrics)?.[1] ?? NaN);
    const requests = lines.map((l) => JSON.parse(l) as Record<string, any>).filter((o) => o.event === 'request');
    // Every GraphQL request this gateway answered, by either lane, is counted once.
    assert.equal(answered('ok') + answered('error'), requests.filter((r) => r.path === undefined).length);
    assert.equal(answered('error'), requests.filter((r) => r.errors !== undefined).length);
  });

  test("what it does not take is Apollo's: variables it cannot coerce, a refused cost, persisted queries, GET, an Accept for neither type", async () => {
    const seen = { query: BOARD, variables: { b: board, n: 2 } };
    await post(fast, seen);
    const cases: { name: string; send: () => Promise<Sent>; status: number; code?: string }[] = [
      { name: 'variables not coerced', send: () => post(fast, { query: BOARD, variables: { b: board, n: 'two' } }), status: 400, code: 'BAD_USER_INPUT' },
      { name: 'a page size out of range', send: () => post(fast, { query: BOARD, variables: { b: board, n: 100000 } }), status: 400 },
      { name: 'a persisted query', send: () => post(fast, { ...seen, extensions: { persistedQuery: { version: 1, sha256Hash: 'f'.repeat(64) } } }), status: 400 },
      { name: 'Accept: text/plain only', send: () => post(fast, seen, { accept: 'text/plain' }), status: 406 },
      {
        name: 'GET',
        send: async () => {
          const res = await fetch(`${fast.url}/graphql?query=${encodeURIComponent(BOARD)}&variables=${encodeURIComponent(JSON.stringify({ b: board, n: 2 }))}`, { headers: { 'apollo-require-preflight': '1' } });
          return { status: res.status, contentType: res.headers.get('content-type'), length: res.headers.get('content-length'), text: await res.text(), requestId: res.headers.get('x-request-id'), headers: ownHeaders(res) };
        },
        status: 200,
      },
    ];
    for (const c of cases) {
      // Twice: the second time the fast lane has seen everything Apollo could show it.
      for (let i = 0; i < 2; i++) {
        const r = await c.send();
        assert.equal(r.status, c.status, `${c.name}: ${r.text.slice(0, 300)}`);
        if (c.code) assert.equal(JSON.parse(r.text).errors?.[0]?.extensions?.code, c.code, c.name);
        assert.equal(logged(r.requestId).fastLane, undefined, `${c.name} (${i}): Apollo's`);
      }
    }
  });
});
