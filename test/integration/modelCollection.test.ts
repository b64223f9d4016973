/**
 * A model grows by touching only the model (issue 29): a copy of schema/ gains a `Collection` type —
 * its name, owner-only writes, placed on its owner's shard like a board — `user_has_collections`
 * with a count on the user, `collection_has_pins` and its inverse `pin_in_collections` with counts,
 * and the mutations to create, rename and delete a collection and to add and remove a pin. Nothing
 * else changes: the gateway, the CLI and the worker are the same build, started with SHARDQL_MODEL
 * pointing at the copy.
 *
 * What an operator does, in order: a gateway of the grown model is refused by the old topology (it
 * does not list the new type number); `shardql topology publish` of a map listing it (the old
 * gateways keep serving it); `shardql provision` while clients read and write through the old
 * gateway (0 failed requests); then gateways of the new model. Then, through GraphQL on the new
 * gateway: collections made, pins added by two users, both directions paged, counts equal lists,
 * cost reported and over-wide queries refused, a non-owner refused, a delete taking its edges with
 * it (and a deleted pin leaving every collection); and `shardql reconcile` puts back a mirror edge
 * deleted by SQL.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { shardOf } from '../../src/core/ids.ts';
import { shardDatabase } from '../../src/core/topology.ts';
import { freshEnv, testStackDir, type TestEnv } from '../helpers/env.ts';
import { codes, type GqlResult } from '../helpers/gateway.ts';
import { killGatewayProcesses, startGatewayProcess, type GatewayProcess } from '../helpers/gatewayProcess.ts';
import { createUsers, startLoad, type LoadUser } from '../helpers/load.ts';
import { runCli, startWorkerProcess } from '../helpers/workers.ts';

const KEY = '/shardql-test/modelCollection/topology';
const COLLECTION_TYPE = 5;
const NEW_TABLES = ['collections', 'user_has_collections', 'collection_has_pins', 'pin_in_collections'];

/** Inserts `text` after the one line of `sdl` containing `anchor` (refused if it is not exactly one). */
function after1(sdl: string, anchor: string, text: string): string {
  const lines = sdl.split('\n');
  const at = lines.flatMap((l, i) => (l.includes(anchor) ? [i] : []));
  assert.equal(at.length, 1, `one line of the model holds ${anchor}`);
  lines.splice(at[0]! + 1, 0, text);
  return lines.join('\n');
}

/** schema/ copied to a temporary directory, with Collection declared in it: the only change. */
function grownModel(): string {
  const dir = mkdtempSync(join(tmpdir(), 'shardql-model-'));
  const src = resolve(import.meta.dirname, '../../schema');
  for (const f of readdirSync(src)) if (f.endsWith('.graphql')) copyFileSync(join(src, f), join(dir, f));
  let sdl = readFileSync(join(dir, 'schema.graphql'), 'utf8');
  sdl = after1(
    sdl,
    'deleteBoard(id: ID!): DeletePayload! @delete(type: "Board")',
    [
      '  createCollection(input: CreateCollectionInput!): Collection! @create(type: "Collection")',
      '  updateCollection(id: ID!, input: UpdateCollectionInput!): Collection! @update(type: "Collection")',
      '  "Deletes a collection and its pins\' edges (the pins stay)."',
      '  deleteCollection(id: ID!): DeletePayload! @delete(type: "Collection")',
      '  "Adds a pin to one of the viewer\'s collections. Adding twice is one edge."',
      '  addPinToCollection(collectionId: ID!, pinId: ID!): Pin! @relate(relation: "collection_has_pins", argument: "pinId")',
      '  removePinFromCollection(collectionId: ID!, pinId: ID!): Pin! @unrelate(relation: "collection_has_pins", argument: "pinId")',
    ].join('\n'),
  );
  sdl = after1(sdl, 'followedBoardCount: Int! @count(relation: "user_follows_boards")', '  collectionCount: Int! @count(relation: "user_has_collections")');
  sdl = after1(
    sdl,
    '@relation(table: "user_follows_boards", inverse: "board_followed_by_users")',
    '  collections(first: Int, after: String, last: Int, before: String): CollectionConnection! @relation(table: "user_has_collections")',
  );
  sdl = after1(sdl, 'commentCount: Int! @count(relation: "pin_has_comments")', '  collectionCount: Int! @count(relation: "pin_in_collections")');
  sdl = after1(
    sdl,
    '@relation(table: "pin_repinned_as_pins")',
    '  "The collections holding this pin, most recently added first."\n  collections(first: Int, after: String, last: Int, before: String): CollectionConnection! @relation(table: "pin_in_collections", inverse: "collection_has_pins")',
  );
  sdl += `
type Collection implements Node @object(typeNumber: ${COLLECTION_TYPE}, table: "collections", placeWith: "owner") {
  id: ID!
  name: String! @stored(maxLength: 100)
  createdAt: String!
  owner: User @ref(key: "owner_id", owner: true, listedIn: "user_has_collections", onDelete: DELETE)
  pinCount: Int! @count(relation: "collection_has_pins")
  "Most recently added first."
  pins(first: Int, after: String, last: Int, before: String): PinConnection! @relation(table: "collection_has_pins", inverse: "pin_in_collections")
}
type CollectionEdge { cursor: String! node: Collection! }
type CollectionConnection { edges: [CollectionEdge!]! pageInfo: PageInfo! }
input CreateCollectionInput { name: String! }
input UpdateCollectionInput { name: String }
`;
  writeFileSync(join(dir, 'schema.graphql'), sdl);
  return dir;
}

let env: TestEnv;
let model: string;
let users: LoadUser[];
let oldGateway: GatewayProcess;
let gateway: GatewayProcess;

/** A gateway process's client as the load helpers call it: a token, not options. */
const tokenClient = (gw: GatewayProcess) => (q: string, v?: Record<string, unknown>, token?: string) => gw.gql(q, v, token ? { token } : {});

/** The CLI as an operator runs it on this deployment, with the grown model. */
const cli = (...args: string[]) =>
  runCli({ SHARDQL_STACK_DIR: testStackDir(), SHARDQL_TOPOLOGY_KEY: KEY, SHARDQL_MODEL: model, SHARDQL_QUEUE_PREFIX: 'modelCollection' }, args);

before(async () => {
  env = await freshEnv({ shards: 16, modShards: 8 });
  model = grownModel();
  // Today's deployment: the map as published for today's model, a gateway of today's model on it.
  await env.etcd.put(KEY).value(JSON.stringify(env.doc)).exec();
  oldGateway = await startGatewayProcess(env, { topologyKey: KEY });
  users = await createUsers(tokenClient(oldGateway), 8, 'coll');
});
after(async () => {
  await killGatewayProcesses();
  await env?.close();
  if (model) rmSync(model, { recursive: true, force: true });
});

function ok(r: GqlResult): Record<string, any> {
  assert.equal(r.body.errors, undefined, r.text);
  return r.body.data;
}
const ids = (conn: { edges: { node: { id: string } }[] }): string[] => conn.edges.map((e) => e.node.id);

describe('A model grown by its SDL alone: Collection', () => {
  test('a wrong model is refused at start: file:line:column, exit 1, no stack trace', async () => {
    const wrong = mkdtempSync(join(tmpdir(), 'shardql-model-wrong-'));
    try {
      for (const f of readdirSync(model)) copyFileSync(join(model, f), join(wrong, f));
      const sdl = readFileSync(join(wrong, 'schema.graphql'), 'utf8');
      writeFileSync(join(wrong, 'schema.graphql'), sdl.replace(`typeNumber: ${COLLECTION_TYPE}, table: "collections"`, 'typeNumber: 1, table: "collections"'));
      const r = await runCli({ SHARDQL_STACK_DIR: testStackDir(), SHARDQL_TOPOLOGY_KEY: KEY, SHARDQL_MODEL: wrong }, ['provision']);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /schema\.graphql:\d+:\d+: Collection: type number 1 is already Pin's \(.*schema\.graphql:\d+\), expected a number no other type has/);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    } finally {
      rmSync(wrong, { recursive: true, force: true });
    }
  });

  test('the grown model is refused by a topology that does not list its new type number', async () => {
    let message = '';
    try {
      const gw = await startGatewayProcess(env, { topologyKey: KEY, vars: { SHARDQL_MODEL: model }, timeoutMs: 60_000 });
      await gw.stop();
    } catch (err) {
      message = (err as Error).message;
    }
    assert.match(message, /ended before it listened \(exit 1\)/);
    assert.ok(message.includes(`idLayout.types has no collection, the model declares collection as ${COLLECTION_TYPE}`), message);
  });

  test('publish a map listing it, provision under load (0 failed requests), start gateways of the grown model', async () => {
    const load = startLoad(tokenClient(oldGateway), users, { workers: 3, writeShare: 0.4 });
    try {
      const file = join(model, '..', `${KEY.replaceAll('/', '_')}.json`);
      writeFileSync(file, JSON.stringify({ ...env.doc, idLayout: { ...env.doc.idLayout, types: { ...env.doc.idLayout.types, collection: COLLECTION_TYPE } } }));
      const published = await cli('topology', 'publish', '--file', file, '--yes');
      rmSync(file);
      assert.equal(published.code, 0, published.stderr + published.stdout);
      assert.match(published.stdout, /collection/);

      const provisioned = await cli('provision');
      assert.equal(provisioned.code, 0, provisioned.stderr + provisioned.stdout);
      for (let shard = 0; shard < 16; shard++) {
        const rows = await env.storage.router.query(
          env.storage.router.writableHostOfShard(shard),
          [shard],
          `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = ? AND table_name IN (${NEW_TABLES.map(() => '?').join(', ')})`,
          [shardDatabase(shard), ...NEW_TABLES],
        );
        assert.deepEqual(rows.map((r) => String(r.t)).sort(), [...NEW_TABLES].sort(), `shard ${shard} has the new tables`);
      }
      gateway = await startGatewayProcess(env, { topologyKey: KEY, vars: { SHARDQL_MODEL: model } });
      // A worker of the grown model starts on the new map too (its type numbers checked at start).
      const worker = await startWorkerProcess({ SHARDQL_STACK_DIR: testStackDir(), SHARDQL_TOPOLOGY_KEY: KEY, SHARDQL_MODEL: model, SHARDQL_QUEUE_PREFIX: 'modelCollection' });
      assert.ok(worker.logs.some((l) => l.event === 'worker_started'), JSON.stringify(worker.logs));
      worker.child.kill('SIGKILL');
      await worker.exited;
    } finally {
      const stats = await load.stop();
      assert.deepEqual(stats.failures, [], 'no request failed while the model grew');
      assert.ok(stats.reads > 0 && stats.acked.length > 0, `reads ${stats.reads}, writes acknowledged ${stats.acked.length}`);
    }
    // The old gateway still serves (its model is a subset): a rolling restart, not a stop.
    assert.equal(ok(await oldGateway.gql('query($id: ID!) { user(id: $id) { id } }', { id: users[0]!.id })).user.id, users[0]!.id);
  });

  test('collections through GraphQL: create, add from two users, page both ways, counts equal lists, owner-only, cost, cascade, reconcile', async () => {
    const [alice, bob] = users as [LoadUser, LoadUser];
    const gql = (q: string, v: Record<string, unknown> = {}, who?: LoadUser) => gateway.gql(q, v, who ? { token: who.token } : {});
    const pinOn = async (who: LoadUser, title: string): Promise<string> =>
      ok(await gql('mutation($b: ID!, $t: String!) { createPin(input: { boardId: $b, title: $t }) { id } }', { b: who.boardId, t: title }, who)).createPin.id;
    const alicePins = [await pinOn(alice, 'a1'), await pinOn(alice, 'a2'), await pinOn(alice, 'a3')];
    const bobPins = [await pinOn(bob, 'b1'), await pinOn(bob, 'b2')];

    const create = async (who: LoadUser, name: string): Promise<string> =>
      ok(await gql('mutation($n: String!) { createCollection(input: { name: $n }) { id name owner { id } } }', { n: name }, who)).createCollection.id;
    const ideas = await create(alice, 'Ideas');
    const bobs = await create(bob, 'Bob saves');
    assert.equal(shardOf(BigInt(ideas)), alice.shard, "a collection lives on its owner's shard");
    assert.equal(shardOf(BigInt(bobs)), bob.shard);
    assert.equal(Number((BigInt(ideas) >> 36n) & 0x3ffn), COLLECTION_TYPE);

    const add = (who: LoadUser, c: string, p: string) => gql('mutation($c: ID!, $p: ID!) { addPinToCollection(collectionId: $c, pinId: $p) { id collectionCount } }', { c, p }, who);
    const remove = (who: LoadUser, c: string, p: string) => gql('mutation($c: ID!, $p: ID!) { removePinFromCollection(collectionId: $c, pinId: $p) { id } }', { c, p }, who);
    // Alice saves her pins and one of Bob's; Bob saves his and that same one of Alice's.
    for (const p of [...alicePins, bobPins[0]!]) ok(await add(alice, ideas, p));
    for (const p of [...bobPins, alicePins[0]!]) ok(await add(bob, bobs, p));
    const again = ok(await add(alice, ideas, alicePins[0]!)).addPinToCollection;
    assert.deepEqual(again, { id: alicePins[0], collectionCount: 2 }, 'adding twice is one edge');

    // Pages of a collection's pins, and their count.
    const PAGE = `query($c: ID!, $after: String) { node(id: $c) { ... on Collection { name pinCount owner { id } pins(first: 2, after: $after) { edges { node { id } } pageInfo { hasNextPage endCursor } } } } }`;
    const walk = async (c: string): Promise<{ name: string; pinCount: number; owner: string; pins: string[] }> => {
      const pins: string[] = [];
      let after: string | null = null;
      for (;;) {
        const node: any = ok(await gql(PAGE, { c, after })).node;
        pins.push(...ids(node.pins));
        if (!node.pins.pageInfo.hasNextPage) return { name: node.name, pinCount: node.pinCount, owner: node.owner.id, pins };
        after = node.pins.pageInfo.endCursor;
      }
    };
    const ideasNow = await walk(ideas);
    assert.deepEqual(ideasNow, { name: 'Ideas', pinCount: 4, owner: alice.id, pins: [bobPins[0], ...[...alicePins].reverse()] });
    assert.deepEqual((await walk(bobs)).pins, [alicePins[0], ...[...bobPins].reverse()]);

    // The other direction: a pin's collections, and the owner's list.
    const PIN = `query($p: ID!) { node(id: $p) { ... on Pin { collectionCount collections(first: 10) { edges { node { id name } } } } } }`;
    const shared = ok(await gql(PIN, { p: alicePins[0] })).node;
    assert.equal(shared.collectionCount, 2);
    assert.deepEqual(ids(shared.collections).sort(), [ideas, bobs].sort());
    assert.deepEqual(ok(await gql(PIN, { p: alicePins[1] })).node.collectionCount, 1);
    const MINE = `query($u: ID!) { user(id: $u) { collectionCount collections(first: 5) { edges { node { id } } } } }`;
    assert.deepEqual(ok(await gql(MINE, { u: alice.id })).user, { collectionCount: 1, collections: { edges: [{ node: { id: ideas } }] } });

    // Only the owner writes: Bob may not add to, remove from, rename or delete Alice's collection.
    assert.deepEqual(codes(await add(bob, ideas, bobPins[1]!)), ['FORBIDDEN']);
    assert.deepEqual(codes(await remove(bob, ideas, alicePins[1]!)), ['FORBIDDEN']);
    assert.deepEqual(codes(await gql('mutation($c: ID!) { updateCollection(id: $c, input: { name: "mine" }) { id } }', { c: ideas }, bob)), ['FORBIDDEN']);
    assert.deepEqual(codes(await gql('mutation($c: ID!) { deleteCollection(id: $c) { deleted } }', { c: ideas }, bob)), ['FORBIDDEN']);
    assert.deepEqual(codes(await add(alice, ideas, bobs)), ['INVALID_ID'], "a collection's ID is no pin's");
    assert.equal((await walk(ideas)).pinCount, 4, 'the refused writes changed nothing');
    ok(await gql('mutation($c: ID!) { updateCollection(id: $c, input: { name: "Ideas 2" }) { id } }', { c: ideas }, alice));

    // Removal by the owner: both sides and both counts.
    ok(await remove(alice, ideas, alicePins[1]!));
    assert.deepEqual(await walk(ideas), { name: 'Ideas 2', pinCount: 3, owner: alice.id, pins: [bobPins[0], alicePins[2], alicePins[0]] });
    assert.deepEqual(ok(await gql(PIN, { p: alicePins[1] })).node, { collectionCount: 0, collections: { edges: [] } });

    // Cost: reported on a collection query, and an over-wide one refused before any SQL.
    const costed = await gql(PAGE, { c: ideas, after: null });
    const cost = costed.body.extensions.cost;
    assert.equal(costed.body.errors, undefined, costed.text);
    assert.ok(cost.estimate.rows > 0 && cost.estimate.sqlRoundTrips > 0, JSON.stringify(cost));
    assert.ok(Number.isInteger(cost.sqlRoundTrips) && cost.rows <= cost.estimate.rows, JSON.stringify(cost));
    const wide = await gql('query($u: ID!) { user(id: $u) { collections(first: 100) { edges { node { pins(first: 100) { edges { node { collections(first: 100) { edges { node { name } } } } } } } } } } }', { u: alice.id });
    assert.deepEqual(codes(wide), ['QUERY_TOO_COMPLEX']);
    assert.ok((wide.body.errors![0]!.extensions!.cost as number) > (wide.body.errors![0]!.extensions!.budget as number));

    // Reconcile: a mirror edge deleted by SQL (with its count, as a lost write would leave it) is put back.
    const victim = bobPins[0]!;
    const s = shardOf(BigInt(victim));
    const host = env.storage.router.writableHostOfShard(s);
    const db = shardDatabase(s);
    await env.storage.router.query(host, [s], `DELETE FROM ${db}.pin_in_collections WHERE from_id = ? AND to_id = ?`, [victim, ideas]);
    await env.storage.router.query(host, [s], `UPDATE ${db}.counts SET n = n - 1 WHERE id = ? AND kind = 'pin_in_collections'`, [victim]);
    const repaired = await cli('reconcile');
    assert.equal(repaired.code, 0, repaired.stderr + repaired.stdout);
    assert.match(repaired.stdout, new RegExp(`added pin_in_collections\\(${victim} → ${ideas}\\) mirroring collection_has_pins`));
    assert.match(repaired.stdout, /16 shards checked, 1 fixes: .*1 reverse/);
    const back = ok(await gql(PIN, { p: victim })).node;
    assert.equal(back.collectionCount, 2, 'in both collections again');
    assert.deepEqual(ids(back.collections).sort(), [ideas, bobs].sort());
    assert.match((await cli('reconcile')).stdout, /16 shards checked, 0 fixes/);

    // Deleting a collection takes its edges with it, on every pin's shard; the pins stay.
    assert.deepEqual(ok(await gql('mutation($c: ID!) { deleteCollection(id: $c) { deletedId deleted } }', { c: ideas }, alice)).deleteCollection, { deletedId: ideas, deleted: true });
    assert.equal(ok(await gql('query($c: ID!) { node(id: $c) { id } }', { c: ideas })).node, null);
    assert.deepEqual(ok(await gql(MINE, { u: alice.id })).user, { collectionCount: 0, collections: { edges: [] } });
    for (const p of [alicePins[0]!, alicePins[2]!, bobPins[0]!]) {
      const pin = ok(await gql(PIN, { p })).node;
      const left = p === alicePins[2] ? [] : [bobs]; // Bob's collection holds alicePins[0] and bobPins[0]
      assert.deepEqual({ count: pin.collectionCount, list: ids(pin.collections) }, { count: left.length, list: left }, `pin ${p} after the delete`);
    }
    assert.deepEqual((await walk(bobs)).pins, [alicePins[0], ...[...bobPins].reverse()], "Bob's collection is untouched");
    // Deleting a pin takes it out of every collection holding it.
    ok(await gql('mutation($p: ID!) { deletePin(id: $p) { deleted } }', { p: bobPins[0] }, bob));
    assert.deepEqual(await walk(bobs), { name: 'Bob saves', pinCount: 2, owner: bob.id, pins: [alicePins[0], bobPins[1]] });
    assert.match((await cli('reconcile')).stdout, /16 shards checked, 0 fixes/);
  });
});
