import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { checkedFetch, startTestGateway, codes, type TestGateway } from '../helpers/gateway.ts';
import { encodeId, shardOf } from '../../src/core/ids.ts';
import { ProductWrites } from '../../src/product/pinterest/writes.ts';

let env: TestEnv;
let gw: TestGateway;

before(async () => {
  env = await freshEnv({ shards: 16 });
  gw = await startTestGateway(env, 'graphql');
});
after(async () => {
  await gw?.stop();
  await env?.close();
});

async function signUp(username: string): Promise<{ id: string; token: string }> {
  const r = await gw.gql('mutation($u: String!) { createUser(input: { username: $u, displayName: $u }) { user { id username } token } }', { u: username });
  assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
  return { id: r.body.data.createUser.user.id, token: r.body.data.createUser.token };
}

const ok: TestGateway['ok'] = (query, variables, token) => gw.ok(query, variables, token);

async function fails(query: string, variables: Record<string, unknown>, token: string | undefined, code: string): Promise<void> {
  const r = await gw.gql(query, variables, token ? { token } : {});
  assert.deepEqual(codes(r), [code], JSON.stringify(r.body));
}

const BOARD = 'mutation($n: String!) { createBoard(input: { name: $n }) { id name owner { id } } }';
const PIN = 'mutation($b: ID!, $t: String) { createPin(input: { boardId: $b, title: $t, link: "https://example.com/x" }) { id title board { id } pinner { id } } }';

describe('GraphQL: users', () => {
  test('createUser returns the user and a token that makes them the viewer', async () => {
    const alice = await signUp('alice');
    const data = await ok('{ viewer { id username boardCount } }', {}, alice.token);
    assert.deepEqual(data.viewer, { id: alice.id, username: 'alice', boardCount: 0 });
  });

  test('a username is unique regardless of case', async () => {
    await fails('mutation { createUser(input: { username: "ALICE" }) { user { id } token } }', {}, undefined, 'USERNAME_TAKEN');
  });

  test("createUser sent again with the same Idempotency-Key answers with the same user; another key gets USERNAME_TAKEN", async () => {
    const q = 'mutation { createUser(input: { username: "retrier", email: "retrier@example.com" }) { user { id username } } }';
    const first = await gw.gql(q, {}, { headers: { 'Idempotency-Key': 'sign-up-retrier' } });
    assert.equal(first.body.errors, undefined, JSON.stringify(first.body.errors));
    const again = await gw.gql(q, {}, { headers: { 'Idempotency-Key': 'sign-up-retrier' } });
    assert.equal(again.body.errors, undefined, JSON.stringify(again.body.errors));
    assert.deepEqual(again.body.data, first.body.data);
    const other = await gw.gql(q, {}, { headers: { 'Idempotency-Key': 'sign-up-someone-else' } });
    assert.deepEqual(codes(other), ['USERNAME_TAKEN']);
    // The blob's sign-up mark is not a field anyone can read.
    const r = await gw.gql('query($id: ID!) { node(id: $id) { ... on User { _signUp } } }', { id: first.body.data.createUser.user.id });
    assert.deepEqual(codes(r), ['GRAPHQL_VALIDATION_FAILED']);
  });

  test('user by username and by ID; exactly one of them', async () => {
    const data = await ok('{ user(username: "Alice") { id username } }');
    assert.equal(data.user.username, 'alice');
    const byId = await ok('query($id: ID!) { user(id: $id) { username } }', { id: data.user.id });
    assert.equal(byId.user.username, 'alice');
    await fails('{ user { id } }', {}, undefined, 'INVALID_ARGUMENT');
    assert.equal((await ok('{ user(username: "nobody_here") { id } }')).user, null);
  });

  test('bad usernames are refused with INVALID_ARGUMENT', async () => {
    for (const u of ['ab', 'x'.repeat(31), 'has space', "o'hara", 'émile']) {
      await fails('mutation($u: String!) { createUser(input: { username: $u }) { token } }', { u }, undefined, 'INVALID_ARGUMENT');
    }
  });

  test('updateViewer and deleteViewer act on the viewer only', async () => {
    const zed = await signUp('zed');
    const data = await ok('mutation { updateViewer(input: { about: "hello" }) { about } }', {}, zed.token);
    assert.equal(data.updateViewer.about, 'hello');
    const del = await ok('mutation { deleteViewer { deletedId deleted } }', {}, zed.token);
    assert.deepEqual(del.deleteViewer, { deletedId: zed.id, deleted: true });
    assert.equal((await ok('query($id: ID!) { user(id: $id) { id } }', { id: zed.id })).user, null);
    // The token of a deleted user no longer acts.
    await fails('mutation { createBoard(input: { name: "x" }) { id } }', {}, zed.token, 'UNAUTHENTICATED');
  });
});

describe('GraphQL: boards, pins and ownership', () => {
  let alice: { id: string; token: string };
  let bob: { id: string; token: string };
  let board: string;
  before(async () => {
    alice = { id: (await ok('{ user(username: "alice") { id } }')).user.id, token: '' };
    alice.token = await gw.token(alice.id);
    bob = await signUp('bob');
  });

  test('mutations need a viewer; a bad token is refused with 401', async () => {
    await fails(BOARD, { n: 'x' }, undefined, 'UNAUTHENTICATED');
    const r = await gw.gql(BOARD, { n: 'x' }, { token: 'not-a-jwt' });
    assert.equal(r.status, 401);
    assert.deepEqual(codes(r), ['UNAUTHENTICATED']);
    const forged = await gw.gql(BOARD, { n: 'x' }, { headers: { authorization: `Bearer ${(await gw.token(alice.id)).slice(0, -4)}AAAA` } });
    assert.equal(forged.status, 401);
  });

  test("boards and pins go to the owner's shard", async () => {
    const b = await ok(BOARD, { n: 'Tea time' }, alice.token);
    board = b.createBoard.id;
    assert.equal(shardOf(BigInt(board)), shardOf(BigInt(alice.id)));
    const p = await ok(PIN, { b: board, t: 'Teapot' }, alice.token);
    assert.equal(shardOf(BigInt(p.createPin.id)), shardOf(BigInt(alice.id)));
    assert.equal(p.createPin.board.id, board);
    assert.equal(p.createPin.pinner.id, alice.id);
  });

  test('nobody edits or deletes what is not theirs', async () => {
    await fails(PIN, { b: board, t: 'mine now' }, bob.token, 'FORBIDDEN');
    await fails('mutation($b: ID!) { updateBoard(id: $b, input: { name: "x" }) { id } }', { b: board }, bob.token, 'FORBIDDEN');
    await fails('mutation($b: ID!) { deleteBoard(id: $b) { deleted } }', { b: board }, bob.token, 'FORBIDDEN');
    const pin = (await ok('query($b: ID!) { board(id: $b) { pins(first: 1) { edges { node { id } } } } }', { b: board })).board.pins.edges[0].node.id;
    await fails('mutation($p: ID!) { deletePin(id: $p) { deleted } }', { p: pin }, bob.token, 'FORBIDDEN');
    await fails('mutation($p: ID!) { updatePin(id: $p, input: { title: "x" }) { id } }', { p: pin }, bob.token, 'FORBIDDEN');
  });

  test('pin links must be http(s) URLs', async () => {
    for (const link of ['javascript:alert(1)', 'ftp://x.org/a', 'not a url', 'https://user:pw@x.org/']) {
      await fails('mutation($b: ID!, $l: String) { createPin(input: { boardId: $b, link: $l }) { id } }', { b: board, l: link }, alice.token, 'INVALID_ARGUMENT');
    }
  });

  test('likes: liking twice is one like; counts match both directions', async () => {
    const pin = (await ok(PIN, { b: board, t: 'Likeable' }, alice.token)).createPin.id;
    const LIKE = 'mutation($p: ID!) { likePin(pinId: $p) { id likeCount viewerHasLiked } }';
    await ok(LIKE, { p: pin }, bob.token);
    const again = await ok(LIKE, { p: pin }, bob.token);
    assert.deepEqual(again.likePin, { id: pin, likeCount: 1, viewerHasLiked: true });
    const q = await ok('query($p: ID!, $u: String!) { pin(id: $p) { likers(first: 10) { edges { node { username } } } } user(username: $u) { likeCount likedPins(first: 5) { edges { node { id } } } } }', { p: pin, u: 'bob' });
    assert.deepEqual(q.pin.likers.edges.map((e: any) => e.node.username), ['bob']);
    assert.equal(q.user.likeCount, 1);
    assert.deepEqual(q.user.likedPins.edges.map((e: any) => e.node.id), [pin]);
    const un = await ok('mutation($p: ID!) { unlikePin(pinId: $p) { likeCount viewerHasLiked } }', { p: pin }, bob.token);
    assert.deepEqual(un.unlikePin, { likeCount: 0, viewerHasLiked: false });
    await ok('mutation($p: ID!) { unlikePin(pinId: $p) { id } }', { p: pin }, bob.token);
    assert.equal((await ok('{ user(username: "bob") { likeCount } }')).user.likeCount, 0);
  });

  test('repin: a new pin on the repinner board, pointing back', async () => {
    const bobBoard = (await ok(BOARD, { n: 'Saved' }, bob.token)).createBoard.id;
    const original = (await ok(PIN, { b: board, t: 'Original' }, alice.token)).createPin.id;
    const r = await ok('mutation($p: ID!, $b: ID!) { repin(pinId: $p, boardId: $b) { id title via { id } board { id } pinner { username } } }', { p: original, b: bobBoard }, bob.token);
    assert.equal(r.repin.title, 'Original');
    assert.equal(r.repin.via.id, original);
    assert.equal(r.repin.board.id, bobBoard);
    assert.equal(shardOf(BigInt(r.repin.id)), shardOf(BigInt(bobBoard)));
    const o = await ok('query($p: ID!) { pin(id: $p) { repinCount repins(first: 5) { edges { node { id } } } } }', { p: original });
    assert.equal(o.pin.repinCount, 1);
    assert.deepEqual(o.pin.repins.edges.map((e: any) => e.node.id), [r.repin.id]);
    await fails('mutation($p: ID!, $b: ID!) { repin(pinId: $p, boardId: $b) { id } }', { p: original, b: board }, bob.token, 'FORBIDDEN');
  });

  test("movePin changes the owner's order, not the time order", async () => {
    const b = (await ok(BOARD, { n: 'Ordered' }, alice.token)).createBoard.id;
    const ids: string[] = [];
    for (const t of ['one', 'two', 'three']) ids.push((await ok(PIN, { b, t }, alice.token)).createPin.id);
    const order = async (o: string): Promise<string[]> =>
      (await ok(`query($b: ID!) { board(id: $b) { pins(first: 10, order: ${o}) { edges { node { title } } } } }`, { b })).board.pins.edges.map((e: any) => e.node.title);
    assert.deepEqual(await order('OWNER'), ['three', 'two', 'one']);
    await ok('mutation($b: ID!, $p: ID!) { movePin(boardId: $b, pinId: $p, afterPinId: null) { id } }', { b, p: ids[0] }, alice.token);
    assert.deepEqual(await order('OWNER'), ['one', 'three', 'two']);
    await ok('mutation($b: ID!, $p: ID!, $a: ID) { movePin(boardId: $b, pinId: $p, afterPinId: $a) { id } }', { b, p: ids[2], a: ids[1] }, alice.token);
    assert.deepEqual(await order('OWNER'), ['one', 'two', 'three']);
    assert.deepEqual(await order('NEWEST'), ['three', 'two', 'one']);
    await fails('mutation($b: ID!, $p: ID!) { movePin(boardId: $b, pinId: $p, afterPinId: null) { id } }', { b, p: ids[0] }, bob.token, 'FORBIDDEN');
  });

  test('comments: create, list, count, delete by the author', async () => {
    const pin = (await ok(PIN, { b: board, t: 'Discuss' }, alice.token)).createPin.id;
    const c = await ok('mutation($p: ID!) { createComment(pinId: $p, text: "  Nice!  ") { id text author { username } pin { id } } }', { p: pin }, bob.token);
    assert.equal(c.createComment.text, 'Nice!');
    const q = await ok('query($p: ID!) { pin(id: $p) { commentCount comments(first: 5) { edges { node { text } } } } }', { p: pin });
    assert.equal(q.pin.commentCount, 1);
    await fails('mutation($p: ID!) { createComment(pinId: $p, text: "   ") { id } }', { p: pin }, bob.token, 'INVALID_ARGUMENT');
    const carol = await signUp('carol');
    await fails('mutation($c: ID!) { deleteComment(id: $c) { deleted } }', { c: c.createComment.id }, carol.token, 'FORBIDDEN');
    await ok('mutation($c: ID!) { deleteComment(id: $c) { deleted } }', { c: c.createComment.id }, bob.token);
    assert.equal((await ok('query($p: ID!) { pin(id: $p) { commentCount comments(first: 5) { edges { node { id } } } } }', { p: pin })).pin.commentCount, 0);
  });

  test('a deleted pin disappears from every list', async () => {
    const pin = (await ok(PIN, { b: board, t: 'Doomed' }, alice.token)).createPin.id;
    await ok('mutation($p: ID!) { likePin(pinId: $p) { id } }', { p: pin }, bob.token);
    await ok('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: alice.id }, bob.token);
    const lists = 'query($b: ID!, $p: ID!) { pin(id: $p) { id } board(id: $b) { pins(first: 100) { edges { node { id } } } } user(username: "alice") { pins(first: 100) { edges { node { id } } } } bob: user(username: "bob") { likedPins(first: 100) { edges { node { id } } } } homeFeed(first: 100) { edges { node { id } } } }';
    const ids = (d: any): string[][] => [d.board.pins, d.user.pins, d.bob.likedPins, d.homeFeed].map((c: any) => c.edges.map((e: any) => e.node.id));
    const before = await ok(lists, { b: board, p: pin }, bob.token);
    for (const list of ids(before)) assert.ok(list.includes(pin));
    assert.deepEqual((await ok('mutation($p: ID!) { deletePin(id: $p) { deletedId deleted } }', { p: pin }, alice.token)).deletePin, { deletedId: pin, deleted: true });
    assert.deepEqual((await ok('mutation($p: ID!) { deletePin(id: $p) { deletedId deleted } }', { p: pin }, alice.token)).deletePin, { deletedId: pin, deleted: false });
    const afterDelete = await ok(lists, { b: board, p: pin }, bob.token);
    assert.equal(afterDelete.pin, null);
    for (const list of ids(afterDelete)) assert.ok(!list.includes(pin));
    await fails('mutation($p: ID!) { likePin(pinId: $p) { id } }', { p: pin }, bob.token, 'NOT_FOUND');
  });

  test('counts equal the rows they count', async () => {
    const d = await ok('{ user(username: "alice") { pinCount boardCount followerCount pins(first: 100) { edges { node { id } } } boards(first: 100) { edges { node { id pinCount pins(first: 100) { edges { node { id } } } } } } followers(first: 100) { edges { node { id } } } } }');
    assert.equal(d.user.pinCount, d.user.pins.edges.length);
    assert.equal(d.user.boardCount, d.user.boards.edges.length);
    assert.equal(d.user.followerCount, d.user.followers.edges.length);
    for (const b of d.user.boards.edges) assert.equal(b.node.pinCount, b.node.pins.edges.length);
  });

  test('deleting a board deletes its pins', async () => {
    const b = (await ok(BOARD, { n: 'Temporary' }, alice.token)).createBoard.id;
    const p = (await ok(PIN, { b, t: 'temp' }, alice.token)).createPin.id;
    await ok('mutation($b: ID!) { deleteBoard(id: $b) { deleted } }', { b }, alice.token);
    const d = await ok('query($b: ID!, $p: ID!) { board(id: $b) { id } pin(id: $p) { id } user(username: "alice") { boards(first: 100) { edges { node { id } } } } }', { b, p });
    assert.equal(d.board, null);
    assert.equal(d.pin, null);
    assert.ok(!d.user.boards.edges.some((e: any) => e.node.id === b));
  });
});

describe('GraphQL: node(id) and bad input', () => {
  test('node dispatches on the type bits of the ID', async () => {
    const alice = (await ok('{ user(username: "alice") { id boards(first: 1) { edges { node { id } } } } }')).user;
    const d = await ok('query($u: ID!, $b: ID!) { u: node(id: $u) { __typename id } b: node(id: $b) { __typename ... on Board { name } } }', { u: alice.id, b: alice.boards.edges[0].node.id });
    assert.equal(d.u.__typename, 'User');
    assert.equal(d.b.__typename, 'Board');
  });

  const badIds: [string, string][] = [
    ['letters', 'abc'], ['negative', '-1'], ['too large', '99999999999999999999'], ['reserved bits', String(1n << 62n)],
    ['unknown type', String(encodeId({ shard: 1, type: 999, local: 1n }))], ['unknown shard', String(encodeId({ shard: 4000, type: 1, local: 1n }))],
  ];
  for (const [name, id] of badIds) {
    test(`an ID that is ${name} is INVALID_ID`, async () => {
      await fails('query($id: ID!) { node(id: $id) { id } }', { id }, undefined, 'INVALID_ID');
    });
  }

  test('an ID of the wrong type is INVALID_ID; a missing object is null', async () => {
    const alice = (await ok('{ user(username: "alice") { id } }')).user.id;
    await fails('query($id: ID!) { pin(id: $id) { id } }', { id: alice }, undefined, 'INVALID_ID');
    assert.equal((await ok('query($id: ID!) { pin(id: $id) { id } }', { id: String(encodeId({ shard: 3, type: 1, local: 999999n })) })).pin, null);
  });

  test('page sizes are 1..100; cursors must come from the list', async () => {
    await fails('{ user(username: "alice") { pins(first: 1000) { edges { cursor } } } }', {}, undefined, 'INVALID_ARGUMENT');
    await fails('{ user(username: "alice") { pins(first: 0) { edges { cursor } } } }', {}, undefined, 'INVALID_ARGUMENT');
    await fails('{ user(username: "alice") { pins(first: 5, after: "garbage!") { edges { cursor } } } }', {}, undefined, 'INVALID_CURSOR');
    const c = (await ok('{ user(username: "alice") { boards(first: 1) { pageInfo { endCursor } } } }')).user.boards.pageInfo.endCursor;
    await fails('query($c: String) { user(username: "alice") { pins(first: 5, after: $c) { edges { cursor } } } }', { c }, undefined, 'INVALID_CURSOR');
    await fails('{ user(username: "alice") { pins(since: "yesterday") { edges { cursor } } } }', {}, undefined, 'INVALID_ARGUMENT');
  });

  test('a malformed request gets a GraphQL error, not a crash', async () => {
    const r = await gw.gql('{ viewer { nope } }');
    assert.deepEqual(codes(r), ['GRAPHQL_VALIDATION_FAILED']);
    const parse = await gw.gql('{ viewer { ');
    assert.deepEqual(codes(parse), ['GRAPHQL_PARSE_FAILED']);
    const raw = await checkedFetch(env, `${gw.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' });
    assert.equal(raw.status, 400);
    const batch = await checkedFetch(env, `${gw.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[{"query":"{viewer{id}}"}]' });
    assert.equal(batch.status, 400);
  });

  test('responses carry their SQL cost in development', async () => {
    const r = await gw.gql('{ user(username: "alice") { pins(first: 3) { edges { node { id } } } } }');
    const cost = r.body.extensions.cost;
    assert.ok(Number.isInteger(cost.sqlRoundTrips) && Array.isArray(cost.shards));
    assert.ok(cost.sqlRoundTrips + cost.cache.memcached.roundTrips + cost.cache.redis.roundTrips >= 3, JSON.stringify(cost));
  });
});

describe('GraphQL: home feed', () => {
  test('merges followed pinners and boards newest first; pages have no gap or repeat, even with inserts between pages', async () => {
    const reader = await signUp('reader');
    const authors = [await signUp('author1'), await signUp('author2'), await signUp('author3')];
    const boards: string[] = [];
    for (const a of authors) boards.push((await ok(BOARD, { n: 'feed board' }, a.token)).createBoard.id);
    for (const a of authors.slice(0, 2)) await ok('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: a.id }, reader.token);
    await ok('mutation($b: ID!) { followBoard(boardId: $b) { id } }', { b: boards[2] }, reader.token);
    const made: string[] = [];
    for (let i = 0; i < 12; i++) made.push((await ok(PIN, { b: boards[i % 3], t: `p${i}` }, authors[i % 3]!.token)).createPin.id);
    const FEED = 'query($a: String) { homeFeed(first: 5, after: $a) { edges { node { id title } } pageInfo { hasNextPage endCursor } } }';
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const d = await ok(FEED, { a: cursor }, reader.token);
      seen.push(...d.homeFeed.edges.map((e: any) => e.node.id));
      // New pins arrive between pages: they belong above the cursor, so later pages never show them.
      if (page === 0) made.push((await ok(PIN, { b: boards[0], t: 'late' }, authors[0]!.token)).createPin.id);
      if (!d.homeFeed.pageInfo.hasNextPage) break;
      cursor = d.homeFeed.pageInfo.endCursor;
    }
    // Expected: newest first by creation time, ties (same millisecond) broken on the higher ID.
    const created = await Promise.all(made.slice(0, 12).map(async (id) => ({ id, at: Date.parse((await ok('query($p: ID!) { pin(id: $p) { createdAt } }', { p: id })).pin.createdAt) })));
    const expected = created.sort((a, b) => b.at - a.at || (BigInt(b.id) > BigInt(a.id) ? 1 : -1)).map((x) => x.id);
    assert.deepEqual(seen, expected, 'newest first, every pin once');
    const fresh = await ok(FEED, { a: null }, reader.token);
    assert.equal(fresh.homeFeed.edges[0].node.title, 'late');
    await fails('{ homeFeed { edges { cursor } } }', {}, undefined, 'UNAUTHENTICATED');
  });
});

describe('GraphQL: round trips follow the join depth, not the data size', () => {
  const PROFILE = `query($id: ID!) { user(id: $id) { username pinCount followerCount
    boards(first: 20) { edges { node { name pinCount
      pins(first: 25) { edges { node { title likeCount likers(first: 3) { edges { node { username } } } } } } } } } } }`;

  async function profileCost(boardCount: number, pinsPerBoard: number, tag: string): Promise<{ roundTrips: number; hosts: number; pins: number }> {
    const writes = new ProductWrites({ storage: env.storage, topology: () => env.topology });
    // Two likers on each host, alternating, so every pin's likers (the first 2 to 4) span both
    // hosts and both sizes touch the same hosts at the likers level.
    const byHost = new Map<string, bigint[]>();
    for (let i = 0; byHost.size < 2 || [...byHost.values()].some((l) => l.length < 2); i++) {
      const u = await writes.createUser({ username: `${tag}_liker${i}` });
      const host = env.storage.router.hostOfId(u.id);
      byHost.set(host, [...(byHost.get(host) ?? []), u.id]);
    }
    const [h1, h2] = [...byHost.values()] as [bigint[], bigint[]];
    const likers = [h1[0]!, h2[0]!, h1[1]!, h2[1]!];
    const owner = await writes.createUser({ username: `${tag}_owner` });
    for (let b = 0; b < boardCount; b++) {
      const board = await writes.createBoard(owner.id, { name: `board ${b}` });
      for (let p = 0; p < pinsPerBoard; p++) {
        const pin = await writes.createPin(owner.id, board.id, { title: `pin ${b}.${p}` });
        for (const l of likers.slice(0, 2 + ((b + p) % 3))) await writes.likePin(l, pin.id);
      }
    }
    const r = await gw.gql(PROFILE, { id: String(owner.id) });
    assert.equal(r.body.errors, undefined);
    const pins = r.body.data.user.boards.edges.reduce((n: number, e: any) => n + e.node.pins.edges.length, 0);
    return { roundTrips: r.body.extensions.cost.sqlRoundTrips, hosts: r.body.extensions.cost.hosts, pins };
  }

  test('2 boards × 5 pins and 20 boards × 25 pins cost the same SQL round trips', async () => {
    const small = await profileCost(2, 5, 'small');
    const big = await profileCost(20, 25, 'big');
    console.log(`# profile: ${small.pins} pins → ${small.roundTrips} round trips; ${big.pins} pins → ${big.roundTrips} round trips (hosts: ${big.hosts})`);
    assert.equal(small.pins, 10);
    assert.equal(big.pins, 500);
    assert.equal(big.roundTrips, small.roundTrips);
    // Join depth: user, boards, pins, likers — each a page, its counts and its objects.
    const depth = 4 * 3;
    assert.ok(big.roundTrips <= depth * big.hosts, `${big.roundTrips} round trips > depth ${depth} × ${big.hosts} hosts`);
  });
});
