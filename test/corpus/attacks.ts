import { createHash } from 'node:crypto';

/**
 * The attack corpus: requests a public GraphQL endpoint over a sharded fleet must refuse early,
 * clearly and cheaply — each before any SQL runs, each with a stable code. Generated, so every
 * attack has a name that says what it tries.
 */
export interface AttackRequest {
  readonly method: 'GET' | 'POST' | 'PUT';
  /** Query string of the URL (GET), e.g. `?query=…`. */
  readonly search?: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

export interface Attack {
  readonly name: string;
  /** What kind of attack (deep nesting, alias flood, …): the figures are printed per kind. */
  readonly kind: string;
  readonly request: AttackRequest;
  readonly expect: { readonly status: number; readonly code: string };
}

/** Real objects of the target, so that an attack that got through would run real SQL. */
export interface CorpusIds {
  readonly userId: string;
  readonly boardId: string;
  readonly pinId: string;
  readonly username: string;
}

const JSON_HEADERS = { 'content-type': 'application/json' };
const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
const range = (from: number, to: number, step = 1): number[] => Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, i) => from + i * step);
const repeat = (n: number, f: (i: number) => string, sep = ' '): string => Array.from({ length: n }, (_, i) => f(i)).join(sep);
const nest = (n: number, open: string, inner: string, close = ' }'): string => `${open.repeat(n)}${inner}${close.repeat(n)}`;

function post(query: string, variables?: Record<string, unknown>, extra: Record<string, unknown> = {}): AttackRequest {
  return { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ query, ...(variables ? { variables } : {}), ...extra }) };
}

export function attackCorpus(ids: CorpusIds): Attack[] {
  const out: Attack[] = [];
  const add = (kind: string, name: string, request: AttackRequest, status: number, code: string): void => {
    out.push({ name: `${kind}: ${name}`, kind, request, expect: { status, code } });
  };
  const U = JSON.stringify(ids.userId);
  const B = JSON.stringify(ids.boardId);
  const P = JSON.stringify(ids.pinId);
  const TOO_COMPLEX = [400, 'QUERY_TOO_COMPLEX'] as const;
  const INVALID_ARGUMENT = [400, 'INVALID_ARGUMENT'] as const;
  const VALIDATION = [400, 'GRAPHQL_VALIDATION_FAILED'] as const;

  // Deep nesting: 13 to 40 levels, by object references, through connections, fragments and inline fragments.
  for (const n of range(13, 40)) add('deep nesting', `pin.via × ${n - 2} (${n} levels)`, post(`{ pin(id: ${P}) { ${nest(n - 2, 'via { ', 'id')} } }`), ...TOO_COMPLEX);
  for (const n of range(4, 12, 2)) {
    add('deep nesting', `user → boards → owner, ${n} times`, post(`{ user(id: ${U}) { ${nest(n, 'boards(first: 1) { edges { node { owner { ', 'id', ' } } } }')} } }`), ...TOO_COMPLEX);
  }
  for (const n of range(13, 20)) {
    const frags = repeat(n, (i) => `fragment F${i} on Pin { via { ${i + 1 < n ? `...F${i + 1}` : 'id'} } }`);
    add('deep nesting', `a chain of ${n} fragments`, post(`{ pin(id: ${P}) { ...F0 } } ${frags}`), ...TOO_COMPLEX);
  }
  for (const n of range(14, 30, 4)) add('deep nesting', `inline fragments, ${n} levels`, post(`{ node(id: ${P}) { ${nest(n, '... on Pin { via { ', 'id', ' } }')} } }`), ...TOO_COMPLEX);
  add('deep nesting', 'introspection 20 levels deep (production has none)', post(`{ __schema { types { ${nest(18, 'ofType { ', 'name')} } } }`), ...VALIDATION);

  // Alias floods: the same costly field under many names.
  const aliasShapes: [string, (i: number) => string][] = [
    ['user(id)', (i) => `a${i}: user(id: ${U}) { id }`],
    ['pin likers', (i) => `a${i}: pin(id: ${P}) { likers(first: 1) { edges { cursor } } }`],
    ['node(id)', (i) => `a${i}: node(id: ${B}) { id }`],
    ['user by username', (i) => `a${i}: user(username: ${JSON.stringify(ids.username)}) { id }`],
  ];
  for (const n of [31, 40, 50, 64, 100, 128, 200, 256, 300, 400]) {
    for (const [shape, f] of aliasShapes) add('alias flood', `${n} × ${shape}`, post(`{ ${repeat(n, f)} }`), ...TOO_COMPLEX);
  }
  for (const n of [31, 60, 90, 120, 150]) {
    add('alias flood', `${n} aliases inside a fragment`, post(`{ user(id: ${U}) { ...F } } fragment F on User { ${repeat(n, (i) => `c${i}: pinCount`)} }`), ...TOO_COMPLEX);
  }

  // Directive floods.
  const userFields = ['id', 'username', 'displayName', 'about', 'createdAt', 'boardCount', 'pinCount', 'likeCount', 'followerCount', 'followingCount', 'followedBoardCount', 'viewerFollows'];
  for (const n of [11, 12, 15, 20, 30, 50, 80, 100]) {
    for (const d of ['@include(if: true)', '@skip(if: false)']) {
      add('directive flood', `${n} × ${d}`, post(`{ user(id: ${U}) { ${repeat(n, (i) => `f${i}: ${userFields[i % userFields.length]} ${d}`)} } }`), ...TOO_COMPLEX);
    }
  }
  for (const n of [11, 25, 60]) add('directive flood', `${n} directives on inline fragments`, post(`{ user(id: ${U}) { ${repeat(n, () => '... @include(if: true) { id }')} } }`), ...TOO_COMPLEX);
  add('directive flood', 'an unknown directive, repeated', post(`{ user(id: ${U}) { id ${repeat(3, () => '@nope')} } }`), ...VALIDATION);
  add('directive flood', 'a directive where none may be', post(`query @skip(if: true) { user(id: ${U}) { id } }`), ...VALIDATION);

  // Fragment cycles.
  for (const n of range(1, 10)) {
    const frags = repeat(n, (i) => `fragment C${i} on Pin { id via { ...C${(i + 1) % n} } }`);
    add('fragment cycle', `a cycle of ${n} fragment(s)`, post(`{ pin(id: ${P}) { ...C0 } } ${frags}`), ...VALIDATION);
  }
  for (const n of range(2, 6)) {
    const frags = repeat(n, (i) => `fragment D${i} on Pin { ${repeat(3, (j) => `x${j}: via { ...D${(i + 1) % n} }`)} }`);
    add('fragment cycle', `a branching cycle of ${n} fragments`, post(`{ pin(id: ${P}) { ...D0 } } ${frags}`), ...VALIDATION);
  }
  add('fragment cycle', 'a cycle through a list', post(`{ user(id: ${U}) { ...L } } fragment L on User { boards { edges { node { owner { ...L } } } } }`), ...VALIDATION);
  add('fragment cycle', 'a cycle through an interface', post(`{ node(id: ${P}) { ...N } } fragment N on Node { ... on Pin { via { ...N } } }`), ...VALIDATION);
  add('fragment cycle', 'an undefined fragment', post(`{ pin(id: ${P}) { ...Missing } }`), ...VALIDATION);

  // Huge (or empty) pages, anywhere in the query: refused before the parents' SQL runs.
  const pagePlaces: [string, (first: string) => string][] = [
    ['user.boards', (f) => `{ user(id: ${U}) { boards(first: ${f}) { edges { cursor } } } }`],
    ['user.boards → board.pins', (f) => `{ user(id: ${U}) { boards(first: 1) { edges { node { pins(first: ${f}) { edges { cursor } } } } } } }`],
    ['board.pins → pin.likers (level 3)', (f) => `{ board(id: ${B}) { pins(first: 2) { edges { node { likers(first: ${f}) { edges { cursor } } } } } } }`],
    ['pin.comments', (f) => `{ pin(id: ${P}) { comments(first: ${f}) { edges { cursor } } } }`],
    ['user.followers', (f) => `{ user(id: ${U}) { followers(first: ${f}) { edges { cursor } } } }`],
    ['homeFeed', (f) => `{ homeFeed(first: ${f}) { edges { cursor } } }`],
    ['pin.board.owner.likedPins', (f) => `{ pin(id: ${P}) { board { owner { likedPins(first: ${f}) { edges { cursor } } } } } }`],
    ['node → Board.followers', (f) => `{ node(id: ${B}) { ... on Board { followers(first: ${f}) { edges { cursor } } } } }`],
  ];
  for (const first of ['101', '1000', '1000000', '2147483647', '0', '-1', '-2147483648']) {
    for (const [place, q] of pagePlaces) add('huge first', `first: ${first} in ${place}`, post(q(first)), ...INVALID_ARGUMENT);
  }
  for (const first of [101, 5000, 2147483647, 0, -5]) {
    add('huge first', `first: $n = ${first} (a variable) in board.pins → likers`, post(`query($n: Int) { board(id: ${B}) { pins(first: 1) { edges { node { likers(first: $n) { edges { cursor } } } } } } }`, { n: first }), ...INVALID_ARGUMENT);
    add('huge first', `first: $n = ${first} (a variable) in user.pins`, post(`query($n: Int!) { user(id: ${U}) { pins(first: $n) { edges { cursor } } } }`, { n: first }), ...INVALID_ARGUMENT);
  }
  for (const literal of ['2147483648', '1e10', '1.5', '"10"']) add('huge first', `first: ${literal} (not an Int)`, post(`{ user(id: ${U}) { pins(first: ${literal}) { edges { cursor } } } }`), ...VALIDATION);
  for (const value of [2147483648, 1e12, 1.5, '10']) {
    add('huge first', `first: $n = ${JSON.stringify(value)} (not an Int)`, post(`query($n: Int) { user(id: ${U}) { pins(first: $n) { edges { cursor } } } }`, { n: value }), 400, 'BAD_USER_INPUT');
  }

  // Cost bombs: every page legal, the product not.
  for (const k of [5, 10, 25, 50, 100]) {
    add('cost bomb', `boards(100) → pins(100) → likers(${k})`, post(`{ user(id: ${U}) { boards(first: 100) { edges { node { pins(first: 100) { edges { node { likers(first: ${k}) { edges { cursor } } } } } } } } } }`), ...TOO_COMPLEX);
    add('cost bomb', `followers(100) → following(100) → followers(${k})`, post(`{ user(id: ${U}) { followers(first: 100) { edges { node { following(first: 100) { edges { node { followers(first: ${k}) { edges { cursor } } } } } } } } } }`), ...TOO_COMPLEX);
    add('cost bomb', `pins(100) → likers(100) → likedPins(${k})`, post(`{ board(id: ${B}) { pins(first: 100) { edges { node { likers(first: 100) { edges { node { likedPins(first: ${k}) { edges { cursor } } } } } } } } } }`), ...TOO_COMPLEX);
  }
  for (const n of [3, 5, 10, 20, 30]) {
    add('cost bomb', `${n} aliases × boards(100) → pins(100)`, post(`{ ${repeat(n, (i) => `a${i}: user(id: ${U}) { boards(first: 100) { edges { node { pins(first: 100) { edges { cursor } } } } } }`)} }`), ...TOO_COMPLEX);
    add('cost bomb', `${n} aliases × homeFeed(100) → likers(100)`, post(`{ ${repeat(n, (i) => `f${i}: homeFeed(first: 100) { edges { node { likers(first: 100) { edges { cursor } } } } }`)} }`), ...TOO_COMPLEX);
  }
  for (const depth of [3, 4, 5, 6]) {
    add('cost bomb', `repins(100) nested ${depth} times`, post(`{ pin(id: ${P}) { ${nest(depth, 'repins(first: 100) { edges { node { ', 'id', ' } } }')} } }`), ...TOO_COMPLEX);
    add('cost bomb', `comments(50) → author → pins(50), ${depth - 1} times`, post(`{ pin(id: ${P}) { ${nest(depth - 1, 'comments(first: 50) { edges { node { author { pins(first: 50) { edges { node { ', 'id', ' } } } } } } }')} } }`), ...TOO_COMPLEX);
  }
  add('cost bomb', 'a mutation that then reads 100 × 100 × 100', post(`mutation { likePin(pinId: ${P}) { likers(first: 100) { edges { node { likedPins(first: 100) { edges { node { likers(first: 100) { edges { cursor } } } } } } } } } }`), ...TOO_COMPLEX);
  add('cost bomb', 'a fragment spread 30 times over pages of 100', post(`{ ${repeat(30, (i) => `u${i}: user(id: ${U}) { ...Heavy }`)} } fragment Heavy on User { boards(first: 100) { edges { node { pins(first: 50) { edges { cursor } } } } } }`), ...TOO_COMPLEX);

  // Oversized bodies: refused by size, whatever they hold.
  const big = (bytes: number): string => JSON.stringify({ query: '{ __typename }', variables: { pad: 'x'.repeat(bytes) } });
  for (const bytes of [1_000_001, 1_200_000, 2_000_000, 4_000_000]) add('oversized body', `${bytes} bytes of variables`, { method: 'POST', headers: JSON_HEADERS, body: big(bytes) }, 413, 'INVALID_ARGUMENT');
  add('oversized body', 'a 1.1 MB query text', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ query: `{ ${'__typename '.repeat(100_000)}}` }) }, 413, 'INVALID_ARGUMENT');
  add('oversized body', '1.1 MB of whitespace around a tiny query', { method: 'POST', headers: JSON_HEADERS, body: `${' '.repeat(1_100_000)}{"query":"{ __typename }"}` }, 413, 'INVALID_ARGUMENT');
  add('oversized body', '1.5 MB of text/plain', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(1_500_000) }, 413, 'INVALID_ARGUMENT');
  add('oversized body', 'a batch of 5000 operations (1.2 MB)', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(Array.from({ length: 5000 }, () => ({ query: `{ user(id: ${U}) { boards(first: 100) { edges { cursor } } } }`, variables: { pad: 'x'.repeat(100) } }))) }, 413, 'INVALID_ARGUMENT');

  // Batched arrays: one operation per request.
  for (const n of [1, 2, 3, 5, 10, 11, 20, 50, 100, 1000]) {
    add('batched array', `${n} operation(s)`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(Array.from({ length: n }, () => ({ query: `{ user(id: ${U}) { id } }` }))) }, ...INVALID_ARGUMENT);
  }
  add('batched array', 'an empty array', { method: 'POST', headers: JSON_HEADERS, body: '[]' }, ...INVALID_ARGUMENT);
  add('batched array', 'an array of garbage', { method: 'POST', headers: JSON_HEADERS, body: '[1, "x", null, {}]' }, ...INVALID_ARGUMENT);
  add('batched array', 'nested arrays', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify([[{ query: '{ __typename }' }]]) }, ...INVALID_ARGUMENT);
  add('batched array', 'mutations in a batch', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify([{ query: `mutation { likePin(pinId: ${P}) { id } }` }, { query: `mutation { unlikePin(pinId: ${P}) { id } }` }]) }, ...INVALID_ARGUMENT);

  // Persisted queries that do not exist, or do not match.
  for (let i = 0; i < 20; i++) {
    add('unknown persisted query', `random hash #${i}`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256(`unknown-${i}`) } } }) }, 200, 'PERSISTED_QUERY_NOT_FOUND');
  }
  for (const hash of ['', 'not-a-hash', "' OR 1=1 --", 'a'.repeat(1000), '../../etc/passwd']) {
    add('unknown persisted query', `hash ${JSON.stringify(hash.slice(0, 20))}`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } }) }, 200, 'PERSISTED_QUERY_NOT_FOUND');
  }
  for (const version of [0, 2, 99]) {
    add('unknown persisted query', `protocol version ${version}`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ extensions: { persistedQuery: { version, sha256Hash: sha256('x') } } }) }, 400, 'BAD_REQUEST');
  }
  for (let i = 0; i < 5; i++) {
    add('unknown persisted query', `a hash that does not match its text #${i}`, post(`{ user(id: ${U}) { id } }`, undefined, { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(`other-${i}`) } } }), 400, 'BAD_REQUEST');
  }
  for (let i = 0; i < 3; i++) {
    const search = `?extensions=${encodeURIComponent(JSON.stringify({ persistedQuery: { version: 1, sha256Hash: sha256(`get-${i}`) } }))}`;
    add('unknown persisted query', `by GET, hash #${i}`, { method: 'GET', search, headers: { 'apollo-require-preflight': '1' } }, 200, 'PERSISTED_QUERY_NOT_FOUND');
  }

  // Cross-site requests: simple requests (GET, or a POST a form could send) without a preflight header.
  const getQueries = ['{ __typename }', `{ user(id: ${U}) { id } }`, `{ pin(id: ${P}) { likers { edges { cursor } } } }`, `{ board(id: ${B}) { name } }`, `{ viewer { id } }`];
  for (const q of getQueries) {
    add('cross-site request', `GET text/plain ${q.slice(0, 30)}`, { method: 'GET', search: `?query=${encodeURIComponent(q)}`, headers: { 'content-type': 'text/plain' } }, 400, 'BAD_REQUEST');
    add('cross-site request', `GET, no content type, ${q.slice(0, 30)}`, { method: 'GET', search: `?query=${encodeURIComponent(q)}`, headers: {} }, 400, 'BAD_REQUEST');
  }
  for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    add('cross-site request', `POST ${type}`, { method: 'POST', headers: { 'content-type': type }, body: JSON.stringify({ query: `mutation { likePin(pinId: ${P}) { id } }` }) }, 400, 'BAD_REQUEST');
  }
  add('cross-site request', 'POST with no content type', { method: 'POST', headers: {}, body: JSON.stringify({ query: `{ user(id: ${U}) { id } }` }) }, 400, 'BAD_REQUEST');
  for (const m of ['likePin', 'followUser', 'deleteBoard']) {
    const arg = m === 'likePin' ? `pinId: ${P}` : m === 'followUser' ? `userId: ${U}` : `id: ${B}`;
    add('cross-site request', `a mutation by GET (${m})`, { method: 'GET', search: `?query=${encodeURIComponent(`mutation { ${m}(${arg}) { __typename } }`)}`, headers: { 'apollo-require-preflight': '1' } }, 405, 'BAD_REQUEST');
  }

  // Token floods: small bodies, huge documents.
  const floods: [string, string][] = [
    ['6000 repeated fields', `{ user(id: ${U}) { ${'id '.repeat(6000)}} }`],
    ['6000 __typename', `{ ${'__typename '.repeat(6000)}}`],
    ['a list literal of 6000 items', `{ user(id: ${U}) { id } } query Q($x: [Int] = [${'1,'.repeat(6000)}]) { __typename }`],
    ['3000 variable definitions', `query(${repeat(3000, (i) => `$v${i}: Int`)}) { __typename }`],
    ['an object literal of 3000 fields', `{ user(id: ${U}) { id } } query Q($x: CreateBoardInput = { ${repeat(3000, (i) => `f${i}: 1`)} }) { __typename }`],
    ['5000 operations', repeat(5000, (i) => `query Q${i} { __typename }`)],
    ['5000 fragments', `{ __typename } ${repeat(2500, (i) => `fragment F${i} on Query { __typename }`)}`],
    ['6000 nested brackets', `{ user(id: ${U}) { ${'boards { '.repeat(3000)}id${' }'.repeat(3000)} } }`],
    ['6000 arguments', `{ user(id: ${U}, ${repeat(3000, (i) => `a${i}: 1`, ', ')}) { id } }`],
    ['a flood inside a persisted query registration', `{ ${'__typename '.repeat(7000)}}`],
  ];
  for (const [name, q] of floods) add('token flood', name, post(q), ...TOO_COMPLEX);

  // Malformed requests.
  for (const body of ['{not json', '{"query": "{ __typename }"', '\u0000\u0001', 'null', '"just a string"']) {
    add('malformed', `body ${JSON.stringify(body.slice(0, 20))}`, { method: 'POST', headers: JSON_HEADERS, body }, 400, body === 'null' || body.startsWith('"') ? 'BAD_REQUEST' : 'INVALID_ARGUMENT');
  }
  for (const body of [{ query: 1 }, { query: ['{ __typename }'] }, { query: '{ __typename }', variables: 'x' }, { query: '{ __typename }', variables: [1] }, {}, { operationName: 'X' }]) {
    add('malformed', `JSON ${JSON.stringify(body).slice(0, 40)}`, { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify(body) }, 400, 'BAD_REQUEST');
  }
  for (const q of ['{ user(id: ', '{ viewer { id } } }', 'query { { id } }', '"unterminated', '{ viewer { id } } # ok\n mutation {']) {
    add('malformed', `parse error ${JSON.stringify(q.slice(0, 20))}`, post(q), 400, 'GRAPHQL_PARSE_FAILED');
  }
  add('malformed', 'an operation name that is not there', post('query A { __typename } query B { __typename }', undefined, { operationName: 'C' }), 400, 'OPERATION_RESOLUTION_FAILURE');
  add('malformed', 'two operations and no name', post('query A { __typename } query B { __typename }'), 400, 'OPERATION_RESOLUTION_FAILURE');
  for (const q of [`{ user(id: ${U}) { password } }`, `{ users { id } }`, `{ user(id: ${U}) { boards { edges { node { secret } } } } }`, 'subscription { pins { id } }', `{ pin(id: ${P}) { likers(first: 1, orderBy: "x") { edges { cursor } } } }`]) {
    add('malformed', `unknown field or argument ${q.slice(0, 40)}`, post(q), ...VALIDATION);
  }
  for (const q of ['{ __schema { types { name } } }', '{ __type(name: "User") { fields { name } } }', 'query IntrospectionQuery { __schema { queryType { name } } }']) {
    add('malformed', `introspection ${q.slice(0, 30)}`, post(q), ...VALIDATION);
  }
  add('malformed', 'PUT /graphql', { method: 'PUT', headers: JSON_HEADERS, body: JSON.stringify({ query: '{ __typename }' }) }, 405, 'BAD_REQUEST');

  // Forged or broken credentials: refused before anything runs.
  for (const [name, auth] of [
    ['not a bearer token', 'Basic dXNlcjpwYXNz'],
    ['garbage', 'Bearer garbage'],
    ['a JWT signed with another secret', 'Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIiwiaXNzIjoic2hhcmRxbCJ9.c2lnbmF0dXJl'],
    ['alg none', 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIiwiaXNzIjoic2hhcmRxbCJ9.'],
    ['an SQL payload', "Bearer ' OR 1=1 --"],
    ['a huge token', `Bearer ${'a'.repeat(5000)}`],
  ] as const) {
    add('bad credentials', name, { method: 'POST', headers: { ...JSON_HEADERS, authorization: auth }, body: JSON.stringify({ query: `mutation { likePin(pinId: ${P}) { id } }` }) }, 401, 'UNAUTHENTICATED');
  }

  // Bad IDs: refused by the codec, before a shard is asked.
  const badIds = ['abc', '-1', '01', '1e5', '99999999999999999999', String(1n << 62n), String((1n << 46n) * 4000n + (1n << 36n)), String(999n << 36n), "1' OR '1'='1", '1; DROP TABLE pins', ''];
  for (const id of badIds) add('bad ID', `node(id: ${JSON.stringify(id.slice(0, 20))})`, post('query($id: ID!) { node(id: $id) { id } }', { id }), 200, 'INVALID_ID');
  for (const [field, arg] of [['pin', U], ['board', P], ['user', B]] as const) add('bad ID', `${field}(id:) given the ID of another type`, post(`{ ${field}(id: ${arg}) { id } }`), 200, 'INVALID_ID');
  return out;
}
