import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { codes, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { compileRelayApp, relayOperations, type RelayOperation } from '../helpers/relayCompiler.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getIntrospectionQuery } from 'graphql';
import { CLIENT_SCHEMA_FILE, INTROSPECTION_OPTIONS, printIntrospection } from '../../src/graphql/clientSchema.ts';
import { PROJECT_ROOT } from '../../src/core/projectRoot.ts';
import { execFile } from 'node:child_process';
import { cliArgv } from '../helpers/cli.ts';

/**
 * The operations relay-compiler generates from the small Relay app (test/fixtures/relay-app), run
 * against a gateway as the Relay runtime sends them: a screen query for the first (or last) page,
 * then the generated pagination query (`node(id:)` with first/after or last/before, the other
 * direction's variables null) for the rest, and the generated `node` refetch queries.
 */
let env: TestEnv;
let gw: TestGateway;
let ops: Map<string, RelayOperation>;
/** The API's SDL kept for client tools (`shardql schema print`): what the Relay app compiles against. */
const clientSchema = readFileSync(join(PROJECT_ROOT, CLIENT_SCHEMA_FILE), 'utf8');

before(async () => {
  const compiled = compileRelayApp(clientSchema);
  try {
    assert.equal(compiled.status, 0, compiled.output);
    ops = relayOperations(compiled);
  } finally {
    compiled.remove();
  }
  env = await freshEnv({ shards: 16 });
  gw = await startTestGateway(env, 'relay');
});
after(async () => {
  await gw?.stop();
  await env?.close();
});

async function run(name: string, variables: Record<string, unknown>, token?: string): Promise<any> {
  const op = ops.get(name);
  assert.ok(op, `no generated operation ${name}`);
  return gw.ok(op.text, variables, token);
}

interface Conn {
  edges: { cursor: string; node: any }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

const PAGE = 2;
const keyOf = (e: { cursor: string; node: any }): string => e.node.id ?? e.cursor;

/** Checks a page's PageInfo against its edges (every list here shows every row it reads). */
function checkPage(c: Conn, direction: 'forward' | 'backward'): string[] {
  assert.equal(c.pageInfo.startCursor, c.edges[0]?.cursor ?? null, 'startCursor is the first edge’s');
  assert.equal(c.pageInfo.endCursor, c.edges.at(-1)?.cursor ?? null, 'endCursor is the last edge’s');
  if (direction === 'forward') assert.equal(c.pageInfo.hasPreviousPage, false, 'a forward page does not compute hasPreviousPage');
  else assert.equal(c.pageInfo.hasNextPage, false, 'a backward page does not compute hasNextPage');
  return c.edges.map(keyOf);
}

/** Every page forward: from the screen query's first page, then the pagination query after each end. */
async function walkForward(first: Conn, next: (after: string) => Promise<Conn>): Promise<string[]> {
  const out = checkPage(first, 'forward');
  let page = first;
  for (let guard = 0; page.pageInfo.hasNextPage; guard++) {
    assert.ok(guard < 50, 'the walk ends');
    page = await next(page.pageInfo.endCursor!);
    assert.ok(page.edges.length > 0, 'hasNextPage promised a page with items');
    out.push(...checkPage(page, 'forward'));
  }
  return out;
}

/** Every page backward: from the screen query's last page, then the pagination query before each start. */
async function walkBackward(last: Conn, previous: (before: string) => Promise<Conn>): Promise<string[]> {
  const out = checkPage(last, 'backward');
  let page = last;
  for (let guard = 0; page.pageInfo.hasPreviousPage; guard++) {
    assert.ok(guard < 50, 'the walk ends');
    page = await previous(page.pageInfo.startCursor!);
    assert.ok(page.edges.length > 0, 'hasPreviousPage promised a page with items');
    out.unshift(...checkPage(page, 'backward'));
  }
  return out;
}

const sorted = (xs: readonly string[]): string[] => [...xs].sort();

async function signUp(username: string): Promise<{ id: string; token: string }> {
  const d = await gw.ok('mutation($u: String!) { createUser(input: { username: $u }) { user { id } token } }', { u: username });
  return { id: d.createUser.user.id, token: d.createUser.token };
}

describe('Relay: compiled operations against the gateway', () => {
  test(`the development gateway's introspection is ${CLIENT_SCHEMA_FILE}, the file the app compiled against`, async () => {
    // A plain POST: gql's leak check would take the schema's own words ("sharded MySQL") for a leaked driver name.
    const res = await fetch(`${gw.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: getIntrospectionQuery(INTROSPECTION_OPTIONS) }),
    });
    const answer = (await res.json()) as { data?: any; errors?: unknown };
    assert.equal(res.status, 200);
    assert.equal(answer.errors, undefined);
    assert.equal(printIntrospection(answer.data), clientSchema);
  });

  test('`shardql schema print` prints that file for schema/, and another model its own API; --check says which', async () => {
    // Not spawnSync: the gateway of the other tests answers from this process's event loop.
    const cli = (...args: string[]) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((done) => {
        execFile(process.execPath, cliArgv(...args), { cwd: PROJECT_ROOT, encoding: 'utf8' }, (err, stdout, stderr) => done({ status: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }));
      });
    const printed = await cli('schema', 'print');
    assert.equal(printed.status, 0, printed.stderr);
    assert.equal(printed.stdout, clientSchema);
    const current = await cli('schema', 'print', '--check', CLIENT_SCHEMA_FILE);
    assert.deepEqual([current.status, current.stdout], [0, `${CLIENT_SCHEMA_FILE}: current\n`], current.stderr);
    const qa = await cli('schema', 'print', '--model', 'examples/qa');
    assert.equal(qa.status, 0, qa.stderr);
    assert.match(qa.stdout, /^type Question\b/m);
    assert.doesNotMatch(qa.stdout, /@(object|create)\b/);
    const stale = await cli('schema', 'print', '--model', 'examples/qa', '--check', CLIENT_SCHEMA_FILE);
    assert.equal(stale.status, 1);
    assert.match(stale.stderr, /schema\/client\/schema\.graphql is not the API of the model in .*examples\/qa: write it with `shardql schema print --out /);
  });

  // What each list must hold, from the writes below.
  const want: Record<string, string[]> = {};
  let alice: { id: string; token: string };
  let board0: string;
  let pin0: string;

  before(async () => {
    alice = await signUp('relay_alice');
    const others = [];
    for (let i = 1; i <= 6; i++) others.push(await signUp(`relay_u${i}`));
    const token = alice.token;
    const boards: string[] = [];
    for (let b = 0; b < 5; b++) boards.push((await gw.ok('mutation($n: String!) { createBoard(input: { name: $n }) { id } }', { n: `board ${b}` }, token)).createBoard.id);
    board0 = boards[0]!;
    const pins: string[] = [];
    for (let p = 0; p < 7; p++) {
      pins.push((await gw.ok('mutation($b: ID!, $t: String!) { createPin(input: { boardId: $b, title: $t }) { id } }', { b: board0, t: `pin ${p}` }, token)).createPin.id);
    }
    pin0 = pins[0]!;
    // An owner's order unlike the time order.
    await gw.ok('mutation($b: ID!, $p: ID!, $a: ID) { movePin(boardId: $b, pinId: $p, afterPinId: $a) { id } }', { b: board0, p: pins[6], a: pins[2] }, token);
    const otherBoards: string[] = [];
    const repins: string[] = [];
    const comments: string[] = [];
    for (const [i, u] of others.entries()) {
      const ub = (await gw.ok('mutation { createBoard(input: { name: "theirs" }) { id } }', {}, u.token)).createBoard.id;
      otherBoards.push(ub);
      await gw.ok('mutation($p: ID!) { likePin(pinId: $p) { id } }', { p: pin0 }, u.token);
      comments.push((await gw.ok('mutation($p: ID!, $t: String!) { createComment(pinId: $p, text: $t) { id } }', { p: pin0, t: `comment ${i}` }, u.token)).createComment.id);
      await gw.ok('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: alice.id }, u.token);
      await gw.ok('mutation($b: ID!) { followBoard(boardId: $b) { id } }', { b: board0 }, u.token);
      if (i < 5) repins.push((await gw.ok('mutation($p: ID!, $b: ID!) { repin(pinId: $p, boardId: $b) { id } }', { p: pin0, b: ub }, u.token)).repin.id);
      if (i < 5) await gw.ok('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: u.id }, token);
      if (i < 3) await gw.ok('mutation($b: ID!) { followBoard(boardId: $b) { id } }', { b: ub }, token);
    }
    for (const p of repins) await gw.ok('mutation($p: ID!) { likePin(pinId: $p) { id } }', { p }, token);
    want.boards = boards;
    want.pins = pins;
    want.likedPins = repins;
    want.followers = others.map((u) => u.id);
    want.following = others.slice(0, 5).map((u) => u.id);
    want.followedBoards = otherBoards.slice(0, 3);
    want.boardPins = pins;
    want.boardFollowers = others.map((u) => u.id);
    want.likers = others.map((u) => u.id);
    want.comments = comments;
    want.repins = repins;
    // The home feed: the repins of the five users alice follows.
    want.homeFeed = repins;
  });

  const userLists: [string, string][] = [
    ['boards', 'UserBoardsPaginationQuery'],
    ['pins', 'UserPinsPaginationQuery'],
    ['likedPins', 'UserLikedPinsPaginationQuery'],
    ['followers', 'UserFollowersPaginationQuery'],
    ['following', 'UserFollowingPaginationQuery'],
    ['followedBoards', 'UserFollowedBoardsPaginationQuery'],
  ];

  test('every list of a user, both ways: forward from the first page and backward from the last give the whole list, no gap, no repeat', async () => {
    const forwardScreen = (await run('UserScreenQuery', { username: 'relay_alice', first: PAGE, after: null, last: null, before: null }, alice.token)).user;
    const backwardScreen = (await run('UserScreenQuery', { username: 'relay_alice', first: null, after: null, last: PAGE, before: null }, alice.token)).user;
    for (const [field, pagination] of userLists) {
      const next = async (v: Record<string, unknown>): Promise<Conn> => (await run(pagination, { id: alice.id, ...v }, alice.token)).node[field];
      const forward = await walkForward(forwardScreen[field], (after) => next({ first: PAGE, after, last: null, before: null }));
      const backward = await walkBackward(backwardScreen[field], (before) => next({ first: null, after: null, last: PAGE, before }));
      assert.equal(new Set(forward).size, forward.length, `${field}: no repeat`);
      assert.deepEqual(sorted(forward), sorted(want[field]!), `${field}: every item`);
      assert.deepEqual(backward, forward, `${field}: backward pages give the forward list`);
    }
  });

  test('a board’s pins (both orders) and followers, a pin’s likers, comments and repins, both ways', async () => {
    const lists: [string, 'board' | 'pin', string, string, Record<string, unknown>][] = [
      ['pins', 'board', 'BoardPinsPaginationQuery', 'boardPins', { order: 'NEWEST' }],
      ['pins', 'board', 'BoardPinsPaginationQuery', 'boardPins', { order: 'OWNER' }],
      ['followers', 'board', 'BoardFollowersPaginationQuery', 'boardFollowers', {}],
      ['likers', 'pin', 'PinLikersPaginationQuery', 'likers', {}],
      ['comments', 'pin', 'PinCommentsPaginationQuery', 'comments', {}],
      ['repins', 'pin', 'PinRepinsPaginationQuery', 'repins', {}],
    ];
    const orders: string[][] = [];
    for (const [field, of, pagination, wanted, extra] of lists) {
      const id = of === 'board' ? board0 : pin0;
      const screen = async (v: Record<string, unknown>): Promise<Conn> =>
        (of === 'board' ? (await run('BoardScreenQuery', { id, ...extra, ...v }, alice.token)).board : (await run('PinScreenQuery', { id, ...v }, alice.token)).pin)[field];
      const next = async (v: Record<string, unknown>): Promise<Conn> => (await run(pagination, { id, ...extra, ...v }, alice.token)).node[field];
      const forward = await walkForward(await screen({ first: PAGE, after: null, last: null, before: null }), (after) => next({ first: PAGE, after, last: null, before: null }));
      const backward = await walkBackward(await screen({ first: null, after: null, last: PAGE, before: null }), (before) => next({ first: null, after: null, last: PAGE, before }));
      assert.equal(new Set(forward).size, forward.length, `${field}: no repeat`);
      assert.deepEqual(sorted(forward), sorted(want[wanted]!), `${field}: every item`);
      assert.deepEqual(backward, forward, `${field} ${JSON.stringify(extra)}: backward pages give the forward list`);
      if (field === 'pins') orders.push(forward);
    }
    assert.notDeepEqual(orders[0], orders[1], 'the owner’s order is not the time order (a pin was moved)');
  });

  test('forward-only lists (home feed, activity, notifications) page forward to the end with no repeat; hasPreviousPage is false', async () => {
    const home = (await run('HomeScreenQuery', { first: PAGE, after: null }, alice.token)).homeFeed;
    const feed = await walkForward(home, async (after) => (await run('HomeFeedPaginationQuery', { first: PAGE, after }, alice.token)).homeFeed);
    assert.deepEqual(sorted(feed), sorted(want.homeFeed!));
    const screen = await run('UserScreenQuery', { username: 'relay_alice', first: PAGE, after: null, last: null, before: null }, alice.token);
    const activity = await walkForward(screen.user.activity, async (after) => (await run('UserActivityPaginationQuery', { id: alice.id, first: PAGE, after }, alice.token)).node.activity);
    // alice's own doings: 5 likes, 5 user follows, 3 board follows.
    assert.equal(activity.length, 13);
    assert.equal(new Set(activity).size, activity.length);
    const notifications = await walkForward(screen.viewer.notifications, async (after) => (await run('ViewerNotificationsPaginationQuery', { id: alice.id, first: PAGE, after }, alice.token)).node.notifications);
    assert.equal(new Set(notifications).size, notifications.length);
    // Groups of one window: likes of pin0, comments on it, repins of it, follows of alice, follows of board0.
    assert.equal(notifications.length, 5);
  });

  test('node refetch answers what the screen query answered, for every refetchable fragment', async () => {
    const user = (await run('UserScreenQuery', { username: 'relay_alice', first: PAGE, after: null, last: null, before: null }, alice.token)).user;
    const board = (await run('BoardScreenQuery', { id: board0, first: PAGE, after: null, last: null, before: null }, alice.token)).board;
    const pin = (await run('PinScreenQuery', { id: pin0, first: PAGE, after: null, last: null, before: null }, alice.token)).pin;
    const comment = pin.comments.edges[0].node;
    const refetches: [string, any][] = [
      ['UserProfileRefetchQuery', user],
      ['BoardDetailsRefetchQuery', board],
      ['PinDetailsRefetchQuery', pin],
      ['CommentBodyRefetchQuery', comment],
    ];
    for (const [name, original] of refetches) {
      const { node } = await run(name, { id: original.id }, alice.token);
      const { __typename, ...fields } = node;
      assert.ok(Object.keys(fields).length >= 5, `${name}: the fragment's fields`);
      for (const [k, v] of Object.entries(fields)) assert.deepEqual(v, original[k], `${name}: ${k}`);
    }
    // A connection refetched through node is the page the screen query gave.
    const page = (await run('UserBoardsPaginationQuery', { id: alice.id, first: PAGE, after: null, last: null, before: null }, alice.token)).node.boards;
    assert.deepEqual(page, user.boards);
  });

  test('first with last, a size out of range and a foreign cursor are refused with their codes', async () => {
    const both = await gw.gql(ops.get('UserBoardsPaginationQuery')!.text, { id: alice.id, first: 2, last: 2 }, { token: alice.token });
    assert.deepEqual(codes(both), ['INVALID_ARGUMENT']);
    assert.match(both.body.errors![0]!.message, /Expected first or last, not both, got first 2 and last 2/);
    const big = await gw.gql(ops.get('UserBoardsPaginationQuery')!.text, { id: alice.id, last: 101 }, { token: alice.token });
    assert.deepEqual(codes(big), ['INVALID_ARGUMENT']);
    assert.equal(big.body.errors![0]!.extensions!.argument, 'last');
    const pins = (await run('UserPinsPaginationQuery', { id: alice.id, first: 1 }, alice.token)).node.pins;
    const foreign = await gw.gql(ops.get('UserBoardsPaginationQuery')!.text, { id: alice.id, last: 2, before: pins.pageInfo.endCursor }, { token: alice.token });
    assert.deepEqual(codes(foreign), ['INVALID_CURSOR']);
  });

  test('a delete names what it deleted by deletedId, never as an id of its own: Relay deletes the record', async () => {
    const u = await signUp('relay_deleter');
    const board = (await gw.ok('mutation { createBoard(input: { name: "gone soon" }) { id } }', {}, u.token)).createBoard.id;
    const pin = (await gw.ok('mutation($b: ID!) { createPin(input: { boardId: $b, title: "gone" }) { id } }', { b: board }, u.token)).createPin.id;
    const comment = (await gw.ok('mutation($p: ID!) { createComment(pinId: $p, text: "bye") { id } }', { p: pin }, u.token)).createComment.id;
    const r = await gw.ok('mutation($id: ID!) { deleteComment(id: $id) { __typename deletedId deleted } }', { id: comment }, u.token);
    assert.deepEqual(r, { deleteComment: { __typename: 'DeletePayload', deletedId: comment, deleted: true } });
    const withId = await gw.gql('mutation($id: ID!) { deletePin(id: $id) { id } }', { id: pin }, { token: u.token });
    assert.deepEqual(codes(withId), ['GRAPHQL_VALIDATION_FAILED'], 'DeletePayload has no id');
    assert.deepEqual((await run('DeletePinMutation', { id: pin }, u.token)).deletePin, { deleted: true, deletedId: pin });
    assert.deepEqual((await run('DeletePinMutation', { id: pin }, u.token)).deletePin, { deleted: false, deletedId: pin });
    assert.deepEqual((await run('DeleteBoardMutation', { id: board }, u.token)).deleteBoard, { deleted: true, deletedId: board });
    assert.deepEqual((await run('DeleteViewerMutation', {}, u.token)).deleteViewer, { deleted: true, deletedId: u.id });
  });
});
