/**
 * Deletes that cascade (services/cascade.ts): a deleted pin, board or user takes its likes,
 * follows, comments, repin edges, boards and pins with it, from every list and every count, on
 * every shard. Then random mixed writes and deletes from several clients, after which every count
 * equals its list for every user, board and pin — read through GraphQL — and reconcile finds
 * nothing to fix.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { startTestGateway, codes, type TestGateway } from '../helpers/gateway.ts';
import { allShards, reconcile } from '../../src/services/repair.ts';

let env: TestEnv;
let gw: TestGateway;

before(async () => {
  env = await freshEnv({ shards: 16 });
  gw = await startTestGateway(env, 'deletes');
});
after(async () => {
  await gw?.stop();
  await env?.close();
});

const ok: TestGateway['ok'] = (query, variables, token) => gw.ok(query, variables, token);
interface Who {
  readonly id: string;
  readonly token: string;
}
async function signUp(username: string): Promise<Who> {
  const d = await ok('mutation($u: String!) { createUser(input: { username: $u }) { user { id } token } }', { u: username });
  return { id: d.createUser.user.id, token: d.createUser.token };
}
const board = async (who: Who, name = 'b'): Promise<string> => (await ok('mutation($n: String!) { createBoard(input: { name: $n }) { id } }', { n: name }, who.token)).createBoard.id;
const pin = async (who: Who, b: string): Promise<string> => (await ok('mutation($b: ID!) { createPin(input: { boardId: $b, title: "t" }) { id } }', { b }, who.token)).createPin.id;
const ids = (conn: any): string[] => conn.edges.map((e: any) => e.node.id);

/** Intents left once the gateway deleted those of the writes it answered (it does so shortly after each answer). */
async function pendingIntents(): Promise<number> {
  await gw.gateway.settled();
  return (await env.storage.intents.pending(allShards(env.topology), 0, 1000)).length;
}

describe('Deletes cascade through every list and count', () => {
  test("the owner deletes the pin, the board, then the account: the fan's counts follow their lists", async () => {
    const a = await signUp('del_owner');
    const b = await signUp('del_fan');
    const ab = await board(a, 'Kitchen');
    const p = await pin(a, ab);
    const keep = await pin(a, ab);
    const bb = await board(b, 'Saved');
    await ok('mutation($p: ID!) { likePin(pinId: $p) { id } }', { p }, b.token);
    await ok('mutation($p: ID!) { likePin(pinId: $p) { id } }', { p: keep }, b.token);
    await ok('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: a.id }, b.token);
    await ok('mutation($b: ID!) { followBoard(boardId: $b) { id } }', { b: ab }, b.token);
    await ok('mutation($p: ID!) { createComment(pinId: $p, text: "nice") { id } }', { p }, b.token);
    const repin = (await ok('mutation($p: ID!, $b: ID!) { repin(pinId: $p, boardId: $b) { id } }', { p, b: bb }, b.token)).repin.id;
    await ok('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: b.id }, a.token);
    await ok('mutation($p: ID!) { likePin(pinId: $p) { id } }', { p: repin }, a.token);

    const FAN = `query($u: ID!) { user(id: $u) {
      likeCount likedPins(first: 10) { edges { node { id } } }
      followingCount following(first: 10) { edges { node { id } } }
      followerCount followers(first: 10) { edges { node { id } } }
      followedBoardCount followedBoards(first: 10) { edges { node { id } } }
      pinCount pins(first: 10) { edges { node { id } } } } }`;
    const before = (await ok(FAN, { u: b.id })).user;
    assert.deepEqual(
      [before.likeCount, before.followingCount, before.followerCount, before.followedBoardCount, before.pinCount],
      [2, 1, 1, 1, 1],
    );

    // The pin: its like (both sides), comment and repin edge go; the repin stays, a pin of its own.
    assert.deepEqual((await ok('mutation($p: ID!) { deletePin(id: $p) { deleted } }', { p }, a.token)).deletePin, { deleted: true });
    let fan = (await ok(FAN, { u: b.id })).user;
    assert.equal(fan.likeCount, 1);
    assert.deepEqual(ids(fan.likedPins), [keep]);
    assert.deepEqual(ids(fan.pins), [repin], 'the repin is its own pin');
    const rp = (await ok('query($p: ID!) { pin(id: $p) { id via { id } likeCount } }', { p: repin })).pin;
    assert.deepEqual(rp, { id: repin, via: null, likeCount: 1 });
    assert.equal(await pendingIntents(), 0);

    // The board: its remaining pin (with B's like) and its follow.
    await ok('mutation($b: ID!) { deleteBoard(id: $b) { deleted } }', { b: ab }, a.token);
    fan = (await ok(FAN, { u: b.id })).user;
    assert.deepEqual([fan.likeCount, fan.followedBoardCount, fan.followingCount], [0, 0, 1]);
    assert.deepEqual([ids(fan.likedPins), ids(fan.followedBoards)], [[], []]);

    // The account: its follows both ways and its like of B's repin.
    await ok('mutation { deleteViewer { deleted } }', {}, a.token);
    fan = (await ok(FAN, { u: b.id })).user;
    assert.deepEqual(
      [fan.likeCount, fan.followingCount, fan.followerCount, fan.followedBoardCount, fan.pinCount],
      [0, 0, 0, 0, 1],
    );
    assert.deepEqual([ids(fan.following), ids(fan.followers)], [[], []]);
    assert.equal((await ok('query($p: ID!) { pin(id: $p) { likeCount likers(first: 5) { edges { node { id } } } } }', { p: repin })).pin.likeCount, 0);
    assert.equal(await pendingIntents(), 0);
    const report = await reconcile(env.storage, allShards(env.topology));
    assert.deepEqual(report.fixes.map((f) => f.text), []);
  });

  test("an account's comments go with it: every pin's count equals its list, and no notification group counts the deleted author", async () => {
    const owner = await signUp('cmt_owner');
    const leaver = await signUp('cmt_leaver');
    const stays = await signUp('cmt_stays');
    const ob = await board(owner);
    const p = await pin(owner, ob);
    const q = await pin(owner, ob);
    const lp = await pin(leaver, await board(leaver));
    const comment = async (who: Who, on: string, text: string): Promise<string> =>
      (await ok('mutation($p: ID!, $t: String!) { createComment(pinId: $p, text: $t) { id } }', { p: on, t: text }, who.token)).createComment.id;
    await comment(leaver, p, 'first');
    const kept = await comment(stays, p, 'second');
    await comment(leaver, q, 'third');
    await comment(leaver, q, 'fourth');
    await comment(stays, lp, 'on the leaver pin');
    const PIN = 'query($p: ID!) { pin(id: $p) { commentCount comments(first: 10) { edges { node { id author { id } } } } } }';
    const NOTES = '{ viewer { notifications(first: 10, kinds: [COMMENT]) { edges { node { count actorCount actors { id } pin { id } } } } } }';
    const groups = async (): Promise<unknown[]> =>
      (await ok(NOTES, {}, owner.token)).viewer.notifications.edges.map((e: any) => e.node).sort((a: any, b: any) => (a.pin.id < b.pin.id ? -1 : 1));
    const byPin = (a: { pin: string }, b: { pin: string }) => (a.pin < b.pin ? -1 : 1);
    // Read before the delete, so the answers after it also show that no cached page kept the author.
    assert.deepEqual(
      await groups(),
      [
        { count: 2, actorCount: 2, actors: [{ id: stays.id }, { id: leaver.id }], pin: p },
        { count: 2, actorCount: 1, actors: [{ id: leaver.id }], pin: q },
      ]
        .sort(byPin)
        .map((g) => ({ ...g, pin: { id: g.pin } })),
    );
    assert.equal((await ok(PIN, { p })).pin.commentCount, 2);

    assert.deepEqual((await ok('mutation { deleteViewer { deleted } }', {}, leaver.token)).deleteViewer, { deleted: true });
    const after = (await ok(PIN, { p })).pin;
    assert.deepEqual(after, { commentCount: 1, comments: { edges: [{ node: { id: kept, author: { id: stays.id } } }] } });
    assert.deepEqual((await ok(PIN, { p: q })).pin, { commentCount: 0, comments: { edges: [] } });
    assert.deepEqual(await groups(), [{ count: 1, actorCount: 1, actors: [{ id: stays.id }], pin: { id: p } }], 'the deleted author counts in no group');
    assert.equal(await pendingIntents(), 0);
    const report = await reconcile(env.storage, allShards(env.topology));
    assert.deepEqual(report.fixes.map((f) => f.text), []);
  });

  test('a like of a pin deleted meanwhile is undone: the liker keeps no count for it', async () => {
    const a = await signUp('race_owner');
    const b = await signUp('race_fan');
    const p = await pin(a, await board(a));
    await ok('mutation($p: ID!) { deletePin(id: $p) { deleted } }', { p }, a.token);
    // The gateway refuses a like of a deleted pin outright; the store-level race is in writes.test.ts.
    const r = await gw.gql('mutation($p: ID!) { likePin(pinId: $p) { id } }', { p }, { token: b.token });
    assert.deepEqual(codes(r), ['NOT_FOUND']);
    assert.equal((await ok('query($u: ID!) { user(id: $u) { likeCount } }', { u: b.id })).user.likeCount, 0);
  });
});

// Random mixed writes and deletes from several clients, then every count against its list.

const USER_LISTS = ['boards:boardCount', 'pins:pinCount', 'likedPins:likeCount', 'followers:followerCount', 'following:followingCount', 'followedBoards:followedBoardCount'];
const BOARD_LISTS = ['pins:pinCount', 'followers:followerCount'];
const PIN_LISTS = ['likers:likeCount', 'comments:commentCount', 'repins:repinCount'];

/** Every list of a node, walked to its end, and its count. */
async function listsOf(type: 'user' | 'board' | 'pin', id: string): Promise<{ field: string; count: number; length: number }[] | null> {
  const lists = type === 'user' ? USER_LISTS : type === 'board' ? BOARD_LISTS : PIN_LISTS;
  const out: { field: string; count: number; length: number }[] = [];
  for (const spec of lists) {
    const [field, countField] = spec.split(':') as [string, string];
    let after: string | null = null;
    let length = 0;
    let count = -1;
    for (;;) {
      const d: any = await ok(
        `query($id: ID!, $after: String) { ${type}(id: $id) { ${countField} ${field}(first: 100, after: $after) { edges { node { id } } pageInfo { hasNextPage endCursor } } } }`,
        { id, after },
      );
      const node = d[type];
      if (!node) return null;
      count = node[countField];
      length += node[field].edges.length;
      if (!node[field].pageInfo.hasNextPage) break;
      after = node[field].pageInfo.endCursor;
    }
    out.push({ field: `${type}.${field}`, count, length });
  }
  return out;
}

describe('Random mixed writes and deletes', () => {
  test('thousands of operations from 8 clients, deletes included: every count equals its list, reconcile finds nothing', async () => {
    let seed = 0x5eed1;
    const rand = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const pick = <T>(xs: readonly T[]): T | undefined => (xs.length === 0 ? undefined : xs[Math.floor(rand() * xs.length)]);
    // What exists, as far as the clients know (they race each other; NOT_FOUND is an expected answer).
    const users: Who[] = [];
    const boards: { id: string; owner: string }[] = [];
    const pins: { id: string; owner: string }[] = [];
    const comments: { id: string; author: string }[] = [];
    const everUser = new Set<string>();
    const everBoard = new Set<string>();
    const everPin = new Set<string>();
    const done = new Map<string, number>();
    const refused = new Map<string, number>();
    let serial = 0;
    const newUser = async (): Promise<Who> => {
      const u = await signUp(`mix${serial++}`);
      users.push(u);
      everUser.add(u.id);
      return u;
    };
    for (let i = 0; i < 12; i++) await newUser();

    type Op = [string, number, (me: Who) => Promise<{ query: string; variables: Record<string, unknown>; onData?: (data: any) => void } | undefined>];
    const others = (me: Who) => users.filter((u) => u.id !== me.id);
    const ops: Op[] = [
      ['createBoard', 6, async () => ({ query: 'mutation { createBoard(input: { name: "m" }) { id owner { id } } }', variables: {}, onData: (d: any) => { boards.push({ id: d.createBoard.id, owner: d.createBoard.owner.id }); everBoard.add(d.createBoard.id); } })],
      ['createPin', 14, async (me) => {
        const b = pick(boards.filter((x) => x.owner === me.id));
        return b && { query: 'mutation($b: ID!) { createPin(input: { boardId: $b, title: "p" }) { id } }', variables: { b: b.id }, onData: (d: any) => { pins.push({ id: d.createPin.id, owner: me.id }); everPin.add(d.createPin.id); } };
      }],
      ['repin', 6, async (me) => {
        const b = pick(boards.filter((x) => x.owner === me.id));
        const p = pick(pins);
        return b && p && { query: 'mutation($p: ID!, $b: ID!) { repin(pinId: $p, boardId: $b) { id } }', variables: { p: p.id, b: b.id }, onData: (d: any) => { pins.push({ id: d.repin.id, owner: me.id }); everPin.add(d.repin.id); } };
      }],
      ['likePin', 16, async () => { const p = pick(pins); return p && { query: 'mutation($p: ID!) { likePin(pinId: $p) { id } }', variables: { p: p.id } }; }],
      ['unlikePin', 5, async () => { const p = pick(pins); return p && { query: 'mutation($p: ID!) { unlikePin(pinId: $p) { id } }', variables: { p: p.id } }; }],
      ['followUser', 10, async (me) => { const u = pick(others(me)); return u && { query: 'mutation($u: ID!) { followUser(userId: $u) { id } }', variables: { u: u.id } }; }],
      ['unfollowUser', 3, async (me) => { const u = pick(others(me)); return u && { query: 'mutation($u: ID!) { unfollowUser(userId: $u) { id } }', variables: { u: u.id } }; }],
      ['followBoard', 8, async () => { const b = pick(boards); return b && { query: 'mutation($b: ID!) { followBoard(boardId: $b) { id } }', variables: { b: b.id } }; }],
      ['unfollowBoard', 3, async () => { const b = pick(boards); return b && { query: 'mutation($b: ID!) { unfollowBoard(boardId: $b) { id } }', variables: { b: b.id } }; }],
      ['createComment', 8, async (me) => { const p = pick(pins); return p && { query: 'mutation($p: ID!) { createComment(pinId: $p, text: "c") { id } }', variables: { p: p.id }, onData: (d: any) => comments.push({ id: d.createComment.id, author: me.id }) }; }],
      ['deleteComment', 3, async (me) => { const c = pick(comments.filter((x) => x.author === me.id)); return c && { query: 'mutation($c: ID!) { deleteComment(id: $c) { deleted } }', variables: { c: c.id } }; }],
      ['deletePin', 5, async (me) => { const p = pick(pins.filter((x) => x.owner === me.id)); return p && { query: 'mutation($p: ID!) { deletePin(id: $p) { deleted } }', variables: { p: p.id } }; }],
      ['deleteBoard', 2, async (me) => { const b = pick(boards.filter((x) => x.owner === me.id)); return b && { query: 'mutation($b: ID!) { deleteBoard(id: $b) { deleted } }', variables: { b: b.id } }; }],
      ['deleteViewer', 0.4, async () => ({ query: 'mutation { deleteViewer { deleted } }', variables: {} })],
    ];
    /** Stops picking objects known to be gone (a board's pins are found gone when next used). */
    const forget = (gone: readonly string[]): void => {
      for (const list of [boards, pins, comments]) {
        for (let i = list.length - 1; i >= 0; i--) if (gone.includes(list[i]!.id)) list.splice(i, 1);
      }
    };
    const totalWeight = ops.reduce((s, o) => s + o[1], 0);
    const chooseOp = (): Op => {
      let r = rand() * totalWeight;
      for (const o of ops) if ((r -= o[1]) < 0) return o;
      return ops[0]!;
    };

    const PER_CLIENT = 330;
    const CLIENTS = 8;
    const unexpected: string[] = [];
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        let me = await newUser();
        for (let i = 0; i < PER_CLIENT; i++) {
          const [name, , make] = chooseOp();
          const req = await make(me);
          if (!req) continue;
          const r = await gw.gql(req.query, req.variables, { token: me.token });
          if (r.body.errors) {
            const code = codes(r)[0] as string;
            // Racing clients: the pin, board or user may be gone by the time the write arrives.
            if (code !== 'NOT_FOUND') unexpected.push(`${name}: ${JSON.stringify(r.body.errors)}`);
            refused.set(name, (refused.get(name) ?? 0) + 1);
            forget(Object.values(req.variables) as string[]);
            continue;
          }
          done.set(name, (done.get(name) ?? 0) + 1);
          req.onData?.(r.body.data);
          if (name.startsWith('delete')) forget(Object.values(req.variables) as string[]);
          if (name === 'deleteViewer') {
            users.splice(users.findIndex((u) => u.id === me.id), 1);
            me = await newUser();
          }
        }
      }),
    );
    assert.deepEqual(unexpected, []);
    const total = [...done.values()].reduce((a, b) => a + b, 0);
    console.log(`# mixed: ${total} acknowledged writes (${[...done].map(([k, v]) => `${k} ${v}`).join(', ')}); refused as gone: ${[...refused].map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`);
    assert.ok(total >= 2000, `expected at least 2000 acknowledged writes, got ${total}`);
    for (const kind of ['deletePin', 'deleteBoard', 'deleteViewer', 'deleteComment', 'unlikePin', 'repin']) assert.ok((done.get(kind) ?? 0) > 0, `no ${kind} was acknowledged`);

    assert.equal(await pendingIntents(), 0, 'every cascade finished');
    const mismatches: string[] = [];
    const checked = { user: 0, board: 0, pin: 0 };
    for (const [type, set] of [['user', everUser], ['board', everBoard], ['pin', everPin]] as const) {
      for (const id of set) {
        const lists = await listsOf(type, id);
        if (!lists) continue; // deleted
        for (const l of lists) {
          checked[type]++;
          if (l.count !== l.length) mismatches.push(`${l.field} of ${id}: count ${l.count}, list ${l.length}`);
        }
      }
    }
    console.log(`# mixed: ${checked.user + checked.board + checked.pin} lists (users ${checked.user}, boards ${checked.board}, pins ${checked.pin}) of ${everUser.size} users, ${everBoard.size} boards, ${everPin.size} pins checked`);
    assert.deepEqual(mismatches, []);
    // The check is not vacuous: lists of every type survived the deletes. (How many varies with the
    // 8 clients' interleaving: 484–775 lists in all over ten runs, so no fixed total is asserted.)
    for (const [type, n] of Object.entries(checked)) assert.ok(n >= 50, `only ${n} ${type} lists were left to check`);
    const report = await reconcile(env.storage, allShards(env.topology));
    assert.deepEqual(report.fixes.map((f) => f.text), []);
  });
});
