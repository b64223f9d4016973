import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { startTestGateway, type GqlResult, type TestGateway } from '../helpers/gateway.ts';
import { injectionPayloads } from '../corpus/injections.ts';
import { encodeId } from '../../src/core/ids.ts';
import { OBJECT_TABLES, type ObjectType, typeNumberOf } from '../../src/core/objectTypes.ts';
import { checkEmail, checkText, checkUrl, checkUsername } from '../../src/core/validate.ts';
import { DECLARED } from '../../src/core/model/declared.ts';
import { objectDef, storedField } from '../../src/services/writePlans.ts';
import { ProductWrites } from '../../src/product/pinterest/writes.ts';

let env: TestEnv;
let gw: TestGateway;
let token: string;
let mallory: string;
let victim: { id: string; board: string; pin: string };
let myBoard: string;
let myPin: string;

type Snapshot = Map<string, Map<string, number>>; // `db.table` → row hash → count

/** Every row of every table of every shard and mod shard, as a multiset of row hashes per table. */
async function snapshot(): Promise<Snapshot> {
  const out: Snapshot = new Map();
  await Promise.all(Object.keys(env.topology.doc.hosts).map(async (host) => {
    const tables = await env.storage.router.query(host, [], `SELECT table_schema AS db, table_name AS t FROM information_schema.tables WHERE table_schema REGEXP '^(db|msdb)[0-9]{5}$' ORDER BY 1, 2`, []);
    for (const { db, t } of tables as { db: string; t: string }[]) {
      const shard = db.startsWith('db') ? [Number(db.slice(2))] : [];
      const rows = await env.storage.router.query(host, shard, `SELECT * FROM ${db}.${t}`, []);
      const hashes = new Map<string, number>();
      for (const r of rows) {
        const h = JSON.stringify(r);
        hashes.set(h, (hashes.get(h) ?? 0) + 1);
      }
      out.set(`${db}.${t}`, hashes);
    }
  }));
  return out;
}

/** Rows added or removed (an update is one of each), per table. */
function diff(a: Snapshot, b: Snapshot): { table: string; row: Record<string, unknown>; change: 'added' | 'removed' }[] {
  const out: { table: string; row: Record<string, unknown>; change: 'added' | 'removed' }[] = [];
  for (const table of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(table) ?? new Map<string, number>();
    const y = b.get(table) ?? new Map<string, number>();
    for (const [h, n] of y) for (let i = (x.get(h) ?? 0); i < n; i++) out.push({ table, row: JSON.parse(h), change: 'added' });
    for (const [h, n] of x) for (let i = (y.get(h) ?? 0); i < n; i++) out.push({ table, row: JSON.parse(h), change: 'removed' });
  }
  return out;
}

const TYPE_OF_TABLE = new Map<string, ObjectType>(Object.entries(OBJECT_TABLES).map(([type, table]) => [table, type as ObjectType]));

/** Whether a changed row belongs only to objects the legitimate mutations own. */
function owned(change: { table: string; row: Record<string, unknown> }, allowed: Set<string>): boolean {
  const [db, table] = change.table.split('.') as [string, string];
  const r = change.row;
  const type = TYPE_OF_TABLE.get(table);
  if (type && db.startsWith('db')) return allowed.has(String(encodeId({ shard: Number(db.slice(2)), type: typeNumberOf(type), local: BigInt(String(r.local_id)) })));
  if ('from_id' in r && 'to_id' in r) return allowed.has(String(r.from_id)) && allowed.has(String(r.to_id));
  if (table === 'counts' || table === 'lookups') return allowed.has(String(r.id));
  // An event (activity, notifications): whose sequence, who did it, to what — all ours.
  if (table === 'events') return [r.user_id, r.actor_id, r.object_id, r.detail_id].every((id) => id === null || id === undefined || allowed.has(String(id)));
  // Write bookkeeping (intents, idempotency keys): every ID it names must be ours.
  const ids = JSON.stringify(r).match(/\d{12,20}/g) ?? [];
  return ids.every((id) => allowed.has(id));
}

before(async () => {
  env = await freshEnv({ shards: 16 });
  const writes = new ProductWrites({ storage: env.storage, topology: () => env.topology });
  // The victim: rows nobody else's request may touch.
  const v = await writes.createUser({ username: 'victim', displayName: 'Victim' });
  const vBoard = await writes.createBoard(v.id, { name: 'Private-ish' });
  const vPin = await writes.createPin(v.id, vBoard.id, { title: 'Mine', link: 'https://example.com/v' });
  await writes.likePin(v.id, vPin.id);
  await writes.createComment(v.id, vPin.id, 'first');
  victim = { id: String(v.id), board: String(vBoard.id), pin: String(vPin.id) };
  const m = await writes.createUser({ username: 'mallory' });
  await writes.followUser(m.id, v.id);
  mallory = String(m.id);
  myBoard = String((await writes.createBoard(m.id, { name: 'Workbench' })).id);
  myPin = String((await writes.createPin(m.id, BigInt(myBoard), { title: 'Target' })).id);
  gw = await startTestGateway(env, 'injection');
  token = await gw.token(mallory);
});
after(async () => {
  await gw?.stop();
  await env?.close();
});

/** A write through one string argument: the mutation, and what the stored value must be if it is valid. */
interface TextSlot {
  readonly name: string;
  readonly query: string;
  /** The value the gateway must store (and return) for payload `p`; throws when `p` is invalid. */
  readonly expect: (p: string) => string | undefined;
  /** Where the stored value is in the response data. */
  readonly stored: (data: any) => { id?: string; value: string | null | undefined };
}

/** A declared field's maxLength (`@stored(maxLength:)`): the limit its mutations enforce. */
const maxOf = (type: string, field: string): number => storedField(objectDef(DECLARED, type), field).maxLength!;
const LIMITS = {
  boardNameMax: maxOf('board', 'name'),
  boardDescriptionMax: maxOf('board', 'description'),
  descriptionMax: maxOf('pin', 'description'),
  titleMax: maxOf('pin', 'title'),
  commentMax: maxOf('comment', 'text'),
  displayNameMax: maxOf('user', 'displayName'),
  aboutMax: maxOf('user', 'about'),
};
const text = (max: number, required = false) => (p: string) => checkText(p, 'x', max, { required });
const TEXT_SLOTS: TextSlot[] = [
  { name: 'createBoard.name', query: 'mutation($p: String!) { r: createBoard(input: { name: $p }) { id name } }', expect: text(LIMITS.boardNameMax, true), stored: (d) => ({ id: d.r.id, value: d.r.name }) },
  { name: 'createBoard.description', query: 'mutation($p: String) { r: createBoard(input: { name: "d", description: $p }) { id description } }', expect: text(LIMITS.boardDescriptionMax), stored: (d) => ({ id: d.r.id, value: d.r.description }) },
  { name: 'updateBoard.name', query: 'mutation($p: String, $b: ID!) { r: updateBoard(id: $b, input: { name: $p }) { name } }', expect: text(LIMITS.boardNameMax, true), stored: (d) => ({ value: d.r.name }) },
  { name: 'createPin.title', query: 'mutation($p: String, $b: ID!) { r: createPin(input: { boardId: $b, title: $p }) { id title } }', expect: text(LIMITS.titleMax), stored: (d) => ({ id: d.r.id, value: d.r.title }) },
  { name: 'createPin.description', query: 'mutation($p: String, $b: ID!) { r: createPin(input: { boardId: $b, description: $p }) { id description } }', expect: text(LIMITS.descriptionMax), stored: (d) => ({ id: d.r.id, value: d.r.description }) },
  { name: 'createPin.link', query: 'mutation($p: String, $b: ID!) { r: createPin(input: { boardId: $b, link: $p }) { id link } }', expect: (p) => checkUrl(p, 'link'), stored: (d) => ({ id: d.r.id, value: d.r.link }) },
  { name: 'createPin.imageUrl', query: 'mutation($p: String, $b: ID!) { r: createPin(input: { boardId: $b, imageUrl: $p }) { id imageUrl } }', expect: (p) => checkUrl(p, 'imageUrl'), stored: (d) => ({ id: d.r.id, value: d.r.imageUrl }) },
  { name: 'updatePin.title', query: 'mutation($p: String, $pin: ID!) { r: updatePin(id: $pin, input: { title: $p }) { title } }', expect: text(LIMITS.titleMax), stored: (d) => ({ value: d.r.title }) },
  { name: 'updatePin.link', query: 'mutation($p: String, $pin: ID!) { r: updatePin(id: $pin, input: { link: $p }) { link } }', expect: (p) => checkUrl(p, 'link'), stored: (d) => ({ value: d.r.link }) },
  { name: 'createComment.text', query: 'mutation($p: String!, $pin: ID!) { r: createComment(pinId: $pin, text: $p) { id text } }', expect: text(LIMITS.commentMax, true), stored: (d) => ({ id: d.r.id, value: d.r.text }) },
  { name: 'updateViewer.displayName', query: 'mutation($p: String) { r: updateViewer(input: { displayName: $p }) { displayName } }', expect: text(LIMITS.displayNameMax), stored: (d) => ({ value: d.r.displayName }) },
  { name: 'updateViewer.about', query: 'mutation($p: String) { r: updateViewer(input: { about: $p }) { about } }', expect: text(LIMITS.aboutMax), stored: (d) => ({ value: d.r.about }) },
  { name: 'createUser.username', query: 'mutation($p: String!) { r: createUser(input: { username: $p }) { user { id username } } }', expect: (p) => checkUsername(p), stored: (d) => ({ id: d.r.user.id, value: d.r.user.username }) },
  { name: 'createUser.email', query: 'mutation($p: String, $u: String!) { r: createUser(input: { username: $u, email: $p }) { user { id } } }', expect: (p) => (checkEmail(p), undefined), stored: (d) => ({ id: d.r.user.id, value: undefined }) },
];

/** Reads through one string or ID argument: all must come back empty or refused, never a row. */
const READ_QUERY = `query($p: String, $id: ID!, $v: ID!, $vb: ID!) {
  byName: user(username: $p) { id }
  node(id: $id) { id }
  pin(id: $id) { id }
  board(id: $id) { id }
  user(id: $id) { id }
  boardsAfter: user(id: $v) { boards(after: $p) { edges { node { id } } } }
  pinsSince: user(id: $v) { pins(since: $p) { edges { node { id } } } }
  likedUntil: user(id: $v) { likedPins(until: $p) { edges { node { id } } } }
  boardPinsAfter: board(id: $vb) { pins(after: $p) { edges { node { id } } } }
  followersAfter: user(id: $v) { followers(after: $p) { edges { node { id } } } }
}`;

/** Mutations through one ID argument (each its own request: a refused non-null field ends a mutation). */
const ID_SLOTS: [string, string][] = [
  ['likePin.pinId', 'mutation($id: ID!) { likePin(pinId: $id) { id } }'],
  ['unlikePin.pinId', 'mutation($id: ID!) { unlikePin(pinId: $id) { id } }'],
  ['followUser.userId', 'mutation($id: ID!) { followUser(userId: $id) { id } }'],
  ['followBoard.boardId', 'mutation($id: ID!) { followBoard(boardId: $id) { id } }'],
  ['repin.pinId', 'mutation($id: ID!, $b: ID!) { repin(pinId: $id, boardId: $b) { id } }'],
  ['repin.boardId', 'mutation($id: ID!, $pin: ID!) { repin(pinId: $pin, boardId: $id) { id } }'],
  ['movePin.afterPinId', 'mutation($id: ID, $b: ID!, $pin: ID!) { movePin(boardId: $b, pinId: $pin, afterPinId: $id) { id } }'],
  ['createPin.boardId', 'mutation($id: ID!) { createPin(input: { boardId: $id, title: "x" }) { id } }'],
  ['deletePin.id', 'mutation($id: ID!) { deletePin(id: $id) { deleted } }'],
  ['deleteBoard.id', 'mutation($id: ID!) { deleteBoard(id: $id) { deleted } }'],
  ['deleteComment.id', 'mutation($id: ID!) { deleteComment(id: $id) { deleted } }'],
  ['updateBoard.id', 'mutation($id: ID!) { updateBoard(id: $id, input: { name: "x" }) { id } }'],
];

async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  }));
}

const codesOf = (r: GqlResult): string[] => (r.body.errors ?? []).map((e) => String(e.extensions?.code));

describe('Injection corpus: payloads through every string and ID argument', () => {
  test('change only the rows the legitimate mutation owns, and return no extra rows', async () => {
    const payloads = injectionPayloads(500);
    assert.ok(payloads.length >= 500, `${payloads.length} payloads`);
    const victimProfile = '{ u: user(username: "victim") { id username displayName about pinCount likeCount followerCount boards { edges { node { id name pinCount pins { edges { node { id title link likeCount commentCount comments { edges { node { text } } } } } } } } } } }';
    const profileBefore = (await gw.gql(victimProfile)).body.data;
    const before = await snapshot();
    const allowed = new Set<string>([mallory, myBoard, myPin]);
    const problems: string[] = [];
    const tally = { operations: 0, accepted: 0, refused: new Map<string, number>() };
    const refusedWith = (code: string): void => void tally.refused.set(code, (tally.refused.get(code) ?? 0) + 1);
    const expected = { boards: 1, pins: 1 };
    const byName: { p: string; id: string }[] = [];
    const created = new Map<string, string>(); // user ID → username, of users the corpus created

    await pool(payloads, 4, async (p, i) => {
      // 1. Reads: every string and ID argument of the queries, in one request.
      const read = await gw.gql(READ_QUERY, { p, id: p, v: victim.id, vb: victim.board }, { token });
      tally.operations += 10;
      for (const [field, value] of Object.entries(read.body.data ?? {})) {
        // A payload that is a valid username finds the user another payload created (checked below).
        if (field === 'byName' && value !== null) byName.push({ p, id: (value as { id: string }).id });
        else if (value !== null) problems.push(`read ${field} with ${JSON.stringify(p)} returned ${JSON.stringify(value).slice(0, 100)}`);
      }
      for (const c of codesOf(read)) refusedWith(c);
      if (!codesOf(read).every((c) => ['INVALID_ID', 'INVALID_CURSOR', 'INVALID_ARGUMENT'].includes(c))) problems.push(`read with ${JSON.stringify(p)}: ${read.text.slice(0, 200)}`);
      const feed = await gw.gql('query($p: String) { homeFeed(after: $p) { edges { node { id } } } }', { p }, { token });
      tally.operations++;
      if (feed.body.data != null || codesOf(feed).join() !== 'INVALID_CURSOR') problems.push(`homeFeed(after: ${JSON.stringify(p)}): ${feed.text.slice(0, 200)}`);
      else refusedWith('INVALID_CURSOR');

      // 2. Writes through string arguments: three slots per payload, in turn.
      for (const k of [0, 5, 9]) {
        const slot = TEXT_SLOTS[(i + k) % TEXT_SLOTS.length]!;
        let want: string | undefined;
        let valid = true;
        try {
          want = slot.expect(p);
        } catch {
          valid = false;
        }
        const r = await gw.gql(slot.query, { p, b: myBoard, pin: myPin, u: `inj_${i}_${k}` }, { token });
        tally.operations++;
        if (!valid) {
          if (codesOf(r).join() !== 'INVALID_ARGUMENT') problems.push(`${slot.name} = ${JSON.stringify(p)} should be INVALID_ARGUMENT: ${r.text.slice(0, 200)}`);
          else refusedWith('INVALID_ARGUMENT');
          continue;
        }
        if (r.body.errors) {
          // A valid username may be taken by another payload's user: that is a refusal, not a change.
          if (slot.name.startsWith('createUser') && codesOf(r).join() === 'USERNAME_TAKEN') refusedWith('USERNAME_TAKEN');
          else problems.push(`${slot.name} = ${JSON.stringify(p)} should pass: ${r.text.slice(0, 200)}`);
          continue;
        }
        tally.accepted++;
        const stored = slot.stored(r.body.data);
        if (stored.id) allowed.add(stored.id);
        if (slot.name === 'createUser.username' && stored.id) created.set(stored.id, String(stored.value));
        if (slot.name === 'createBoard.name' || slot.name === 'createBoard.description') expected.boards++;
        if (slot.name.startsWith('createPin.')) expected.pins++;
        // Stored as data: exactly the (trimmed) text, never interpreted.
        if (want !== undefined && stored.value !== want && !(want === '' && stored.value === null)) {
          problems.push(`${slot.name} = ${JSON.stringify(p)} stored ${JSON.stringify(stored.value)}, expected ${JSON.stringify(want)}`);
        }
      }

      // 3. Writes through ID arguments: two slots per payload, in turn.
      for (const k of [0, 7]) {
        const [name, query] = ID_SLOTS[(i + k) % ID_SLOTS.length]!;
        const r = await gw.gql(query, { id: p, b: myBoard, pin: myPin }, { token });
        tally.operations++;
        const codes = codesOf(r);
        if (r.body.data != null || codes.length !== 1 || !['INVALID_ID', 'INVALID_ARGUMENT'].includes(codes[0]!)) problems.push(`${name} = ${JSON.stringify(p)}: ${r.text.slice(0, 200)}`);
        else refusedWith(codes[0]!);
      }
    });

    for (const hit of byName) {
      if (created.get(hit.id)?.toLowerCase() !== hit.p.toLowerCase()) problems.push(`read byName with ${JSON.stringify(hit.p)} returned user ${hit.id}, not one the corpus created under that name`);
    }
    const afterSnap = await snapshot();
    const changes = diff(before, afterSnap);
    const foreign = changes.filter((c) => !owned(c, allowed));
    const tablesChanged = new Set(changes.map((c) => c.table));
    // No extra rows: the viewer's lists hold exactly what was created; the victim's are as they were.
    const mine = (await gw.gql('{ viewer { boards(first: 100) { edges { cursor } } } }', {}, { token })).body.data;
    const myBoardCount = (await gw.gql('{ viewer { boardCount pinCount } }', {}, { token })).body.data.viewer;
    const profileAfter = (await gw.gql(victimProfile)).body.data;
    const refused = [...tally.refused.entries()].sort().map(([c, n]) => `${c} ${n}`).join(', ');
    console.log(`# injection: ${payloads.length} payloads, ${tally.operations} operations through ${TEXT_SLOTS.length} string arguments of mutations, ${ID_SLOTS.length} ID arguments of mutations and 11 arguments of queries (usernames, IDs, cursors, since/until); ${tally.accepted} writes stored verbatim, refused: ${refused}`);
    console.log(`# injection: ${before.size} tables checksummed before/after, ${tablesChanged.size} changed, ${changes.length} rows changed, ${foreign.length} outside the intended rows; ${problems.filter((x) => x.startsWith('read') || x.startsWith('homeFeed')).length} extra rows returned`);
    assert.deepEqual(problems.slice(0, 20), []);
    assert.deepEqual(foreign.slice(0, 10), [], 'no change outside the rows the legitimate mutations own');
    assert.deepEqual(profileAfter, profileBefore, "the victim's data is untouched");
    assert.equal(myBoardCount.boardCount, expected.boards);
    assert.equal(Math.min(mine.viewer.boards.edges.length, 100), Math.min(expected.boards, 100));
    assert.equal(myBoardCount.pinCount, expected.pins);
  });
});
