/**
 * A team's own model whose every table and mutation name is at the longest the model checker allows
 * (issue 42): object and mapping tables of 64 characters (MySQL's limit, the checker's), mutations
 * named with 120 characters (GraphQL names have no limit). The names a write records for itself
 * (`add:<table>`, `remove:<table>`, `cascade:<table>`, a mutation's name) are longer than the
 * intent log's `kind` column: they are fitted to it (core/columnWidths.ts), and sign-up, create,
 * relate, unrelate, the viewer's own delete with its cascade, a repair after a SIGKILLed delete and
 * reconcile all work on it, through a gateway and the CLI of the same build. And a field with no
 * model directive that no attached product resolves (`playCount: Int!`) is refused when the gateway
 * starts, at its file:line:column, instead of failing every read of its object.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shardOf } from '../../src/core/ids.ts';
import { shardDatabase } from '../../src/core/topology.ts';
import { testFaultLine } from '../../src/services/testFaults.ts';
import { freshEnv, testStackDir, type TestEnv } from '../helpers/env.ts';
import { codes, type GqlResult } from '../helpers/gateway.ts';
import { killGatewayProcesses, startGatewayProcess, type GatewayProcess } from '../helpers/gatewayProcess.ts';
import { eventually, runCli } from '../helpers/workers.ts';

const KEY = '/shardql-test/modelLongNames/topology';
const TYPES = { listener: 21, track: 22 };
const TABLE_LIMIT = 64;
const MUTATION_LENGTH = 120;

/** A table name of exactly 64 characters: `head`, a padding word, `tail`. */
const table = (head: string, tail: string): string => `${head}_${'x'.repeat(TABLE_LIMIT - head.length - tail.length - 2)}_${tail}`;
/** A mutation name of 120 characters starting with `head`. */
const mutation = (head: string): string => `${head}${'FromTheListenersPage'.repeat(10)}`.slice(0, MUTATION_LENGTH);

const T = {
  listeners: table('listeners', 'of_the_service'),
  tracks: table('tracks', 'of_the_service'),
  follows: table('listener_follows', 'listeners'),
  followedBy: table('listener_followed_by', 'listeners'),
  published: table('listener_published', 'tracks'),
};
const M = {
  signUp: mutation('signUpAsAListener'),
  publish: mutation('commentOnTrackFromTheListenersPage'),
  follow: mutation('followListener'),
  unfollow: mutation('unfollowListener'),
  leave: mutation('deleteListener'),
};

const SDL = `
type Query {
  viewer: Listener
  node(id: ID!): Node
  listener(id: ID, handle: String): Listener
  track(id: ID!): Track
}
type Mutation {
  ${M.signUp}(input: CreateListenerInput!): CreateListenerPayload! @create(type: "Listener")
  ${M.publish}(input: CreateTrackInput!): Track! @create(type: "Track")
  ${M.follow}(listenerId: ID!): Listener! @relate(relation: "${T.follows}", argument: "listenerId")
  ${M.unfollow}(listenerId: ID!): Listener! @unrelate(relation: "${T.follows}", argument: "listenerId")
  ${M.leave}(id: ID!): DeletePayload! @delete(type: "Listener")
}
interface Node { id: ID! }
type PageInfo { hasNextPage: Boolean! hasPreviousPage: Boolean! startCursor: String endCursor: String }
type Listener implements Node @object(typeNumber: ${TYPES.listener}, table: "${T.listeners}") {
  id: ID!
  handle: String! @stored(format: HANDLE, maxLength: 30, immutable: true, unique: "handle")
  createdAt: String!
  followerCount: Int! @count(relation: "${T.followedBy}")
  followingCount: Int! @count(relation: "${T.follows}")
  trackCount: Int! @count(relation: "${T.published}")
  tracks(first: Int, after: String): TrackConnection! @relation(table: "${T.published}")
  following(first: Int, after: String): ListenerConnection! @relation(table: "${T.follows}", inverse: "${T.followedBy}")
  followers(first: Int, after: String): ListenerConnection! @relation(table: "${T.followedBy}", inverse: "${T.follows}")
}
type Track implements Node @object(typeNumber: ${TYPES.track}, table: "${T.tracks}", placeWith: "artist") {
  id: ID!
  title: String! @stored(maxLength: 100)
  createdAt: String!
  artist: Listener @ref(key: "artist_id", owner: true, listedIn: "${T.published}", onDelete: DELETE)
}
type ListenerEdge { cursor: String! node: Listener! }
type TrackEdge { cursor: String! node: Track! }
type ListenerConnection { edges: [ListenerEdge!]! pageInfo: PageInfo! }
type TrackConnection { edges: [TrackEdge!]! pageInfo: PageInfo! }
type DeletePayload { deletedId: ID! deleted: Boolean! }
type CreateListenerPayload { listener: Listener! token: String! }
input CreateListenerInput { handle: String! }
input CreateTrackInput { title: String! }
`;

let env: TestEnv;
let dir: string;
let gateway: GatewayProcess;

const VARS = (): Record<string, string> => ({ SHARDQL_STACK_DIR: testStackDir(), SHARDQL_TOPOLOGY_KEY: KEY, SHARDQL_MODEL: dir, SHARDQL_QUEUE_PREFIX: 'modelLongNames' });
const cli = (...args: string[]) => runCli(VARS(), args);

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'shardql-long-names-'));
  writeFileSync(join(dir, 'schema.graphql'), SDL);
  env = await freshEnv({ shards: 16, modShards: 8 });
  await env.etcd.put(KEY).value(JSON.stringify({ ...env.doc, idLayout: { ...env.doc.idLayout, types: TYPES } })).exec();
  const provisioned = await cli('provision');
  assert.equal(provisioned.code, 0, provisioned.stderr + provisioned.stdout);
  // No background repair pass: the interrupted delete below is left to `shardql repair`.
  gateway = await startGatewayProcess(env, { topologyKey: KEY, vars: { SHARDQL_QUEUE_PREFIX: 'modelLongNames', SHARDQL_INTENT_REPAIR_EVERY_MS: '0' }, args: ['--model', dir], timeoutMs: 60_000 });
});
after(async () => {
  await killGatewayProcesses();
  await env?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Listener {
  readonly id: string;
  readonly token: string;
}

function ok(r: GqlResult, gw = gateway): Record<string, any> {
  const logged = () => gw.stdout().split('\n').filter((l) => l.includes('internal_error')).slice(-2).join('\n');
  assert.equal(r.body.errors, undefined, r.body.errors ? `${r.text}\n${logged()}` : '');
  return r.body.data;
}
const gql = (q: string, v: Record<string, unknown> = {}, who?: Listener, gw = gateway) => gw.gql(q, v, who ? { token: who.token } : {});
const ids = (conn: { edges: { node: { id: string } }[] }): string[] => conn.edges.map((e) => e.node.id);
const LISTENER = 'query($id: ID!) { listener(id: $id) { followerCount followingCount trackCount followers(first: 10) { edges { node { id } } } following(first: 10) { edges { node { id } } } tracks(first: 10) { edges { node { id } } } } }';
const listener = async (id: string) => ok(await gql(LISTENER, { id })).listener;

async function signUp(handle: string): Promise<Listener> {
  const made = ok(await gql(`mutation($h: String!) { ${M.signUp}(input: { handle: $h }) { listener { id } token } }`, { h: handle }))[M.signUp];
  return { id: made.listener.id, token: made.token };
}
async function publish(who: Listener, title: string): Promise<string> {
  return ok(await gql(`mutation($t: String!) { ${M.publish}(input: { title: $t }) { id artist { id } } }`, { t: title }, who))[M.publish].id;
}
const follow = async (who: Listener, whom: Listener, m = M.follow) => ok(await gql(`mutation($l: ID!) { ${m}(listenerId: $l) { id } }`, { l: whom.id }, who))[m].id;

/** Rows of one column on one shard (`DB` stands for its database). */
async function rows(shard: number, sql: string, args: string[]): Promise<string[]> {
  const { router } = env.storage;
  return (await router.query(router.writableHostOfShard(shard), [shard], sql.replaceAll('DB', shardDatabase(shard)), args)).map((r) => String(Object.values(r)[0]));
}

/** A statement that changes rows on one shard, as an operator's SQL would. */
async function change(shard: number, sql: string, args: string[]): Promise<void> {
  const { router } = env.storage;
  await router.query(router.writableHostOfShard(shard), [shard], sql.replaceAll('DB', shardDatabase(shard)), args);
}

/** Waits until the intent logs of these listeners' shards are empty (deferred completions done): fails after 15 s. */
async function noIntentsLeft(who: readonly Listener[]): Promise<void> {
  for (const s of new Set(who.map((l) => shardOf(BigInt(l.id))))) {
    await eventually(`the intents on shard ${s} completed`, async () => ((await rows(s, 'SELECT kind FROM DB.intents', [])).length === 0 ? true : undefined));
  }
}

describe('a model whose table and mutation names are at the longest the checker allows', () => {
  test('the names are at the limits: 64-character tables, 120-character mutations', () => {
    for (const t of Object.values(T)) assert.equal(t.length, TABLE_LIMIT, t);
    for (const m of Object.values(M)) assert.equal(m.length, MUTATION_LENGTH, m);
  });

  test('sign-up, create, relate and unrelate work, and their counts equal their lists', async () => {
    const [ann, ben] = [await signUp('ann'), await signUp('ben')];
    const tracks = [await publish(ann, 'one'), await publish(ann, 'two')];
    assert.equal(await follow(ben, ann), ann.id);
    let a = await listener(ann.id);
    assert.deepEqual([a.followerCount, ids(a.followers), a.trackCount, ids(a.tracks)], [1, [ben.id], 2, [...tracks].reverse()]);
    assert.equal(await follow(ben, ann, M.unfollow), ann.id);
    a = await listener(ann.id);
    const b = await listener(ben.id);
    assert.deepEqual([a.followerCount, ids(a.followers), b.followingCount, ids(b.following)], [0, [], 0, []]);
    // Every intent these writes recorded is completed (a relation's after its answer: deferred).
    await noIntentsLeft([ann, ben]);
  });

  test("deleting the viewer's own account takes its tracks and its follows (the cascade of a 64-character list)", async () => {
    const [cat, dan] = [await signUp('cat'), await signUp('dan')];
    const tracks = [await publish(cat, 'a'), await publish(cat, 'b')];
    await follow(dan, cat);
    await follow(cat, dan);
    // The viewer's type owns itself: only the account deletes itself.
    assert.deepEqual(codes(await gql(`mutation($id: ID!) { ${M.leave}(id: $id) { deleted } }`, { id: cat.id }, dan)), ['FORBIDDEN']);
    const deleted = ok(await gql(`mutation($id: ID!) { ${M.leave}(id: $id) { deletedId deleted } }`, { id: cat.id }, cat))[M.leave];
    assert.deepEqual(deleted, { deletedId: cat.id, deleted: true });
    for (const t of tracks) assert.equal(ok(await gql('query($t: ID!) { track(id: $t) { id } }', { t })).track, null, `track ${t} went with its artist`);
    const d = await listener(dan.id);
    assert.deepEqual([d.followerCount, ids(d.followers), d.followingCount, ids(d.following)], [0, [], 0, []]);
    await noIntentsLeft([cat, dan]);
    // Its token stops: no viewer, no write. Its handle stays taken (a unique value is never released).
    assert.equal(ok(await gql('{ viewer { id } }', {}, cat)).viewer, null);
    assert.deepEqual(codes(await gql(`mutation($l: ID!) { ${M.follow}(listenerId: $l) { id } }`, { l: dan.id }, cat)), ['UNAUTHENTICATED']);
    assert.deepEqual(codes(await gql(`mutation { ${M.signUp}(input: { handle: "cat" }) { token } }`)), ['HANDLE_TAKEN']);
  });

  test('a gateway SIGKILLed after a delete\'s first commit; shardql repair completes its cascade', async () => {
    const eve = await signUp('eve');
    const tracks = [await publish(eve, 'x'), await publish(eve, 'y')];
    const doomed = await startGatewayProcess(env, {
      topologyKey: KEY,
      vars: { ...VARS(), SHARDQL_ALLOW_TEST_FAULTS: '1', SHARDQL_TEST_FAULT: `${M.leave}@after-first-commit` },
      timeoutMs: 60_000,
    });
    let cut = false;
    try {
      await gql(`mutation($id: ID!) { ${M.leave}(id: $id) { deleted } }`, { id: eve.id }, eve, doomed);
    } catch {
      cut = true;
    }
    assert.ok(cut, 'the request got no answer');
    assert.deepEqual(await doomed.exited, { code: null, signal: 'SIGKILL' });
    assert.ok(doomed.stderr().includes(testFaultLine({ kind: M.leave, point: 'after-first-commit', nth: 1 }, undefined)), doomed.stderr());
    const shard = shardOf(BigInt(eve.id));
    const recorded = await rows(shard, 'SELECT kind FROM DB.intents', []);
    assert.equal(recorded.length, 1, recorded.join(', '));
    assert.ok(recorded[0]!.startsWith(M.leave.slice(0, 20)) && recorded[0]!.length === 32, `the kind fitted to its column: ${recorded[0]}`);
    assert.deepEqual((await rows(shard, `SELECT to_id FROM DB.${T.published} WHERE from_id = ? ORDER BY to_id`, [eve.id])).sort(), [...tracks].sort(), 'the tracks wait for the repair');

    const repaired = await cli('repair', '--min-age', '0');
    assert.equal(repaired.code, 0, repaired.stderr + repaired.stdout);
    assert.match(repaired.stdout, /^1 intents completed, 0 failed$/m);
    assert.deepEqual(await rows(shard, 'SELECT kind FROM DB.intents', []), []);
    for (const t of tracks) assert.equal(ok(await gql('query($t: ID!) { track(id: $t) { id } }', { t })).track, null, `track ${t} went with its artist`);
    assert.deepEqual(await rows(shard, `SELECT to_id FROM DB.${T.published} WHERE from_id = ?`, [eve.id]), []);
  });

  test('shardql reconcile puts back a mirror row deleted by SQL, and then finds nothing to fix', async () => {
    const [fay, gus] = [await signUp('fay'), await signUp('gus')];
    await follow(gus, fay);
    const s = shardOf(BigInt(fay.id));
    await change(s, `DELETE FROM DB.${T.followedBy} WHERE from_id = ? AND to_id = ?`, [fay.id, gus.id]);
    await change(s, `UPDATE DB.counts SET n = n - 1 WHERE id = ? AND kind = '${T.followedBy}'`, [fay.id]);
    const fixed = await cli('reconcile');
    assert.equal(fixed.code, 0, fixed.stderr + fixed.stdout);
    assert.match(fixed.stdout, new RegExp(`added ${T.followedBy}\\(${fay.id} → ${gus.id}\\) mirroring ${T.follows}`));
    assert.match(fixed.stdout, /16 shards checked, 1 fixes: /);
    const f = await listener(fay.id);
    assert.deepEqual([f.followerCount, ids(f.followers)], [1, [gus.id]]);
    const again = await cli('reconcile');
    assert.equal(again.code, 0, again.stderr + again.stdout);
    assert.match(again.stdout, /16 shards checked, 0 fixes/);
  });
});

describe('a field with no model directive that no product resolves', () => {
  test('the gateway refuses to start, naming the field at its file:line:column (exit 1)', async () => {
    const bad = mkdtempSync(join(tmpdir(), 'shardql-play-count-'));
    try {
      const sdl = SDL.replace('  title: String! @stored(maxLength: 100)\n', '  title: String! @stored(maxLength: 100)\n  playCount: Int!\n');
      writeFileSync(join(bad, 'schema.graphql'), sdl);
      const line = sdl.slice(0, sdl.indexOf('playCount')).split('\n').length;
      await assert.rejects(
        startGatewayProcess(env, { topologyKey: KEY, args: ['--model', bad], timeoutMs: 60_000 }),
        new RegExp(`ended before it listened \\(exit 1\\)[^]*schema\\.graphql:${line}:3: Track\\.playCount has no model directive and no product is attached, expected @stored, @ref, @relation, @count or @viewerEdge, or a field a product resolves`),
      );
    } finally {
      rmSync(bad, { recursive: true, force: true });
    }
  });
});
