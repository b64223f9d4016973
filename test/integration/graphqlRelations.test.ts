import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { startTestGateway, codes, checkedFetch, TEST_JWT_SECRET, type TestGateway } from '../helpers/gateway.ts';
import { startGateway } from '../../src/server.ts';
import { evenLayout } from '../../src/core/topology.ts';
import { publishTopology } from '../../src/topology/etcdTopology.ts';

let env: TestEnv;
let gw: TestGateway;

before(async () => {
  env = await freshEnv({ shards: 16 });
  gw = await startTestGateway(env, 'relations');
});
after(async () => {
  await gw?.stop();
  await env?.close();
});

const ok: TestGateway['ok'] = (query, variables, token) => gw.ok(query, variables, token);
async function signUp(username: string): Promise<{ id: string; token: string }> {
  const d = await ok('mutation($u: String!) { createUser(input: { username: $u }) { user { id } token } }', { u: username });
  return { id: d.createUser.user.id, token: d.createUser.token };
}
const ids = (conn: any): string[] => conn.edges.map((e: any) => e.node.id);

describe('GraphQL: follows in both directions', () => {
  test('follow and unfollow users: both lists, both counts, viewerFollows, idempotent', async () => {
    const [ann, ben, cat] = [await signUp('ann'), await signUp('ben'), await signUp('cat')];
    const FOLLOW = 'mutation($u: ID!) { followUser(userId: $u) { id followerCount viewerFollows } }';
    await ok(FOLLOW, { u: ben.id }, ann.token);
    const twice = await ok(FOLLOW, { u: ben.id }, ann.token);
    assert.deepEqual(twice.followUser, { id: ben.id, followerCount: 1, viewerFollows: true });
    await ok(FOLLOW, { u: ben.id }, cat.token);
    const Q = 'query($a: ID!, $b: ID!) { a: user(id: $a) { followingCount following(first: 10) { edges { node { id } } } } b: user(id: $b) { followerCount followers(first: 10) { edges { node { id } } } } }';
    const d = await ok(Q, { a: ann.id, b: ben.id });
    assert.deepEqual(ids(d.a.following), [ben.id]);
    assert.equal(d.a.followingCount, 1);
    assert.deepEqual(ids(d.b.followers).sort(), [ann.id, cat.id].sort());
    assert.equal(d.b.followerCount, 2);
    assert.deepEqual(ids(d.b.followers), [cat.id, ann.id], 'most recent follower first');
    const un = await ok('mutation($u: ID!) { unfollowUser(userId: $u) { followerCount viewerFollows } }', { u: ben.id }, ann.token);
    assert.deepEqual(un.unfollowUser, { followerCount: 1, viewerFollows: false });
    await ok('mutation($u: ID!) { unfollowUser(userId: $u) { id } }', { u: ben.id }, ann.token);
    const after = await ok(Q, { a: ann.id, b: ben.id });
    assert.equal(after.a.followingCount, 0);
    assert.deepEqual(ids(after.b.followers), [cat.id]);
    const self = await gw.gql('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: ann.id }, { token: ann.token });
    assert.deepEqual(codes(self), ['INVALID_ARGUMENT']);
  });

  test('follow and unfollow boards: followedBoards, Board.followers, counts', async () => {
    const owner = await signUp('owner');
    const fan = await signUp('fan');
    const board = (await ok('mutation { createBoard(input: { name: "Followed" }) { id } }', {}, owner.token)).createBoard.id;
    const f = await ok('mutation($b: ID!) { followBoard(boardId: $b) { followerCount viewerFollows } }', { b: board }, fan.token);
    assert.deepEqual(f.followBoard, { followerCount: 1, viewerFollows: true });
    const d = await ok('query($u: ID!, $b: ID!) { user(id: $u) { followedBoardCount followedBoards(first: 5) { edges { node { id } } } } board(id: $b) { followers(first: 5) { edges { node { id } } } } }', { u: fan.id, b: board });
    assert.equal(d.user.followedBoardCount, 1);
    assert.deepEqual(ids(d.user.followedBoards), [board]);
    assert.deepEqual(ids(d.board.followers), [fan.id]);
    const u = await ok('mutation($b: ID!) { unfollowBoard(boardId: $b) { followerCount viewerFollows } }', { b: board }, fan.token);
    assert.deepEqual(u.unfollowBoard, { followerCount: 0, viewerFollows: false });
  });

  test('a deleted user disappears from followers and likers', async () => {
    const star = await signUp('star');
    const gone = await signUp('gone');
    const board = (await ok('mutation { createBoard(input: { name: "b" }) { id } }', {}, star.token)).createBoard.id;
    const pin = (await ok('mutation($b: ID!) { createPin(input: { boardId: $b, title: "t" }) { id } }', { b: board }, star.token)).createPin.id;
    await ok('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: star.id }, gone.token);
    await ok('mutation($p: ID!) { likePin(pinId: $p) { id } }', { p: pin }, gone.token);
    await ok('mutation { deleteViewer { deleted } }', {}, gone.token);
    const d = await ok('query($u: ID!, $p: ID!) { user(id: $u) { followers(first: 5) { edges { node { id } } } } pin(id: $p) { likers(first: 5) { edges { node { id } } } } }', { u: star.id, p: pin });
    assert.deepEqual(ids(d.user.followers), []);
    assert.deepEqual(ids(d.pin.likers), []);
  });
});

describe('GraphQL: updates, time ranges and pages under concurrent inserts', () => {
  test('updateBoard and updatePin change fields; null clears an optional one', async () => {
    const me = await signUp('editor');
    const b = (await ok('mutation { createBoard(input: { name: "Old", description: "d" }) { id } }', {}, me.token)).createBoard.id;
    const ub = await ok('mutation($b: ID!) { updateBoard(id: $b, input: { name: "New", description: null }) { name description } }', { b }, me.token);
    assert.deepEqual(ub.updateBoard, { name: 'New', description: null });
    const p = (await ok('mutation($b: ID!) { createPin(input: { boardId: $b, title: "a", link: "https://x.org/" }) { id } }', { b }, me.token)).createPin.id;
    const up = await ok('mutation($p: ID!) { updatePin(id: $p, input: { title: "b" }) { title link } }', { p }, me.token);
    assert.deepEqual(up.updatePin, { title: 'b', link: 'https://x.org/' });
  });

  test('since/until select pins by save time', async () => {
    const me = await signUp('timer');
    const b = (await ok('mutation { createBoard(input: { name: "T" }) { id } }', {}, me.token)).createBoard.id;
    const made: { id: string; createdAt: string }[] = [];
    for (let i = 0; i < 4; i++) {
      made.push((await ok('mutation($b: ID!) { createPin(input: { boardId: $b, title: "t" }) { id createdAt } }', { b }, me.token)).createPin);
      await new Promise((r) => setImmediate(r));
    }
    const since = made[1]!.createdAt;
    const until = made[3]!.createdAt;
    const d = await ok('query($u: ID!, $s: String, $t: String) { user(id: $u) { pins(first: 10, since: $s, until: $t) { edges { node { id createdAt } } } } }', { u: me.id, s: since, t: until });
    for (const e of d.user.pins.edges) assert.ok(e.node.createdAt >= since && e.node.createdAt < until, `${e.node.createdAt} in [${since}, ${until})`);
    const expected = made.filter((m) => m.createdAt >= since && m.createdAt < until).map((m) => m.id);
    assert.deepEqual(ids(d.user.pins).sort(), expected.sort());
  });

  test('walking a board while pins are added concurrently: no gap, no repeat', async () => {
    const me = await signUp('walker');
    const b = (await ok('mutation { createBoard(input: { name: "W" }) { id } }', {}, me.token)).createBoard.id;
    const initial: string[] = [];
    for (let i = 0; i < 30; i++) initial.push((await ok('mutation($b: ID!) { createPin(input: { boardId: $b, title: "x" }) { id } }', { b }, me.token)).createPin.id);
    let writing = true;
    const writer = (async () => {
      let n = 0;
      while (writing && n < 200) {
        await ok('mutation($b: ID!) { createPin(input: { boardId: $b, title: "new" }) { id } }', { b }, me.token);
        n++;
      }
    })();
    const seen: string[] = [];
    let cursor: string | null = null;
    for (;;) {
      const d = await ok('query($b: ID!, $a: String) { board(id: $b) { pins(first: 4, after: $a) { edges { node { id } } pageInfo { hasNextPage endCursor } } } }', { b, a: cursor });
      seen.push(...ids(d.board.pins));
      if (!d.board.pins.pageInfo.hasNextPage) break;
      cursor = d.board.pins.pageInfo.endCursor;
    }
    writing = false;
    await writer;
    assert.equal(new Set(seen).size, seen.length, 'no pin twice');
    for (const id of initial) assert.ok(seen.includes(id), `pin ${id} present before the walk was not skipped`);
  });
});

describe('GraphQL: a host that is down', () => {
  test('fails only the fields that need it, with SHARD_UNAVAILABLE and no address', async () => {
    const me = await signUp('survivor');
    const hostOfMe = env.storage.router.hostOfId(BigInt(me.id));
    let other = await signUp('other0');
    for (let i = 1; env.storage.router.hostOfId(BigInt(other.id)) === hostOfMe; i++) other = await signUp(`other${i}`);
    // The same layout, with my host's primary pointing at a port where nothing listens.
    const hosts = Object.fromEntries(env.stack.mysql.hosts.map((h) => [h.name, { primary: h.name === hostOfMe ? { host: '127.0.0.1', port: 9 } : h.primary }]));
    const key = '/shardql-test/dead-host/topology';
    await publishTopology(env.etcd, key, evenLayout({ hosts, shards: 16, modShards: 8 }));
    const gw2 = await startGateway({
      env: 'development', port: 0, etcdEndpoints: env.stack.etcd.endpoints, topologyKey: key, mysql: env.stack.mysql,
      redis: env.stack.redis, memcached: { servers: `${env.stack.memcached.host}:${env.stack.memcached.port}` }, jwtSecret: TEST_JWT_SECRET,
    }, { log: () => undefined });
    try {
      const res = await checkedFetch(env, `${gw2.url}/graphql`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'query($a: ID!, $b: ID!) { a: user(id: $a) { id } b: user(id: $b) { id } }', variables: { a: me.id, b: other.id } }),
      });
      assert.doesNotMatch(res.text, /:9\b/);
      assert.equal(res.status, 200);
      const body = res.body;
      assert.equal(body.data.a, null);
      assert.deepEqual(body.data.b, { id: other.id }, 'the healthy host still answers');
      assert.deepEqual(body.errors.map((e: any) => [e.extensions.code, e.path]), [['SHARD_UNAVAILABLE', ['a']]]);
      assert.equal(body.errors[0].extensions.retryable, true);
      assert.equal((await checkedFetch(env, `${gw2.url}/readyz`)).status, 503);
    } finally {
      await gw2.stop(500);
    }
  });
});
