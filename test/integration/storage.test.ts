import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { adminCredentials, freshEnv, type TestEnv } from '../helpers/env.ts';
import { SqlStats } from '../../src/storage/sqlStats.ts';
import { isActive } from '../../src/storage/objectStore.ts';
import { decodeId, shardOf, MAX_LOCAL_ID, encodeId } from '../../src/core/ids.ts';
import { isShardqlError } from '../../src/core/errors.ts';
import { provision } from '../../src/storage/provision.ts';
import { createUser } from '../../src/product/pinterest/users.ts';
import { pendingClaimToken } from '../../src/storage/modShardStore.ts';
import { shardDatabase } from '../../src/core/topology.ts';

let env: TestEnv;
before(async () => {
  env = await freshEnv({ shards: 16 });
});
after(async () => {
  await env?.close();
});

describe('Storage: provisioning', () => {
  test('a second run finds every database complete and creates nothing', async () => {
    const report = await provision({ router: env.storage.router, topology: env.topology });
    assert.equal(report.created, 0);
    assert.equal(report.databases, 16 + 8);
  });
});

describe('Storage: objects', () => {
  test('create, read, update, soft delete', async () => {
    const { objects } = env.storage;
    const pin = await objects.create('pin', 3, { title: 'New Star Wars character', link: 'http://webpage.com/asdf' });
    assert.equal(shardOf(pin.id), 3);
    assert.equal(decodeId(pin.id).type, 1);
    const read = await objects.get(pin.id);
    assert.equal(read?.data.title, 'New Star Wars character');
    const updated = await objects.update(pin.id, (cur) => ({ ...cur.data, title: 'edited' }));
    assert.equal(updated.data.title, 'edited');
    assert.equal((await objects.get(pin.id))?.data.title, 'edited');
    assert.equal(await objects.softDelete(pin.id), true);
    assert.equal(await objects.softDelete(pin.id), false, 'deleting twice changes nothing');
    const gone = await objects.get(pin.id);
    assert.ok(gone && !isActive(gone), 'the row stays, marked inactive');
    await assert.rejects(objects.update(pin.id, (c) => c.data), (e) => isShardqlError(e, 'NOT_FOUND'));
  });

  test('fetching 200 objects spread over 16 shards on 2 hosts costs exactly 2 SQL round trips', async () => {
    const { objects } = env.storage;
    const ids: bigint[] = [];
    for (let i = 0; i < 200; i++) {
      const type = i % 3 === 0 ? 'user' : i % 3 === 1 ? 'board' : 'pin';
      ids.push((await objects.create(type, i % 16, { n: i })).id);
    }
    assert.equal(new Set(ids.map(shardOf)).size, 16);
    const stats = new SqlStats();
    const found = await objects.getMany(ids, { stats });
    assert.equal(found.size, 200);
    assert.equal(stats.roundTrips, 2, 'one round trip per host');
    assert.equal(stats.hosts.size, 2);
    assert.equal(stats.shards.size, 16);
    assert.equal(stats.rows, 200);
    for (const [i, id] of ids.entries()) assert.equal(found.get(id)?.data.n, i);
  });

  test('a local ID past 36 bits is an error, and no row is left behind', async () => {
    const { objects, router } = env.storage;
    const host = router.hostOfShard(5);
    // DDL: the admin account (the application's may only read and write rows).
    const { createStorage } = await import('../../src/storage/index.ts');
    const admin = createStorage({ topology: () => env.topology, credentials: adminCredentials(env.stack), events: null });
    try {
      await admin.router.query(host, [5], `ALTER TABLE ${shardDatabase(5)}.comments AUTO_INCREMENT = ${MAX_LOCAL_ID + 1n}`, []);
    } finally {
      await admin.close();
    }
    await assert.rejects(objects.create('comment', 5, { text: 'x' }), (e) => isShardqlError(e, 'LOCAL_ID_OVERFLOW'));
    const rows = await router.query(host, [5], `SELECT COUNT(*) AS n FROM ${shardDatabase(5)}.comments`, []);
    assert.equal(Number(rows[0]?.n), 0);
  });

  test('concurrent read-modify-writes of one object lose no update', async () => {
    const { objects } = env.storage;
    const o = await objects.create('board', 2, { n: 0 });
    await Promise.all(Array.from({ length: 40 }, () => objects.update(o.id, (cur) => ({ ...cur.data, n: Number(cur.data.n) + 1 }))));
    assert.equal((await objects.get(o.id))?.data.n, 40);
  });

  test('an ID on a shard no range covers is refused before any SQL', async () => {
    const stats = new SqlStats();
    await assert.rejects(env.storage.objects.getMany([encodeId({ shard: 999, type: 1, local: 1n })], { stats }), (e) => isShardqlError(e, 'INVALID_ID'));
    assert.equal(stats.roundTrips, 0);
  });
});

describe('Storage: mappings', () => {
  /** A real, active object to own a list: an edge is never added to the list of a missing or deleted one. */
  const listOwner = async (type: 'user' | 'board', shard: number): Promise<bigint> => (await env.storage.objects.create(type, shard, {})).id;
  let timedUser: bigint;

  test('adding to the list of a missing or deleted object is refused: no row, no count', async () => {
    const { mappings, objects } = env.storage;
    const ghost = encodeId({ shard: 1, type: 3, local: 999_999n });
    const gone = await listOwner('user', 1);
    await objects.softDelete(gone);
    const pin = encodeId({ shard: 9, type: 1, local: 5n });
    for (const owner of [ghost, gone]) {
      assert.deepEqual(await mappings.applyOne({ op: 'add', table: 'user_likes_pins', from: owner, to: pin }), { changed: false, refused: true });
      assert.equal((await mappings.existing('user_likes_pins', [{ from: owner, to: pin }])).size, 0);
      assert.equal((await mappings.counts([{ id: owner, kind: 'user_likes_pins' }])).get(`${owner}:user_likes_pins`) ?? 0, 0);
    }
  });

  test('adding an edge twice is one edge and one count; removing it twice is none', async () => {
    const { mappings } = env.storage;
    const user = await listOwner('user', 1);
    const pin = encodeId({ shard: 9, type: 1, local: 5n });
    assert.deepEqual(await mappings.apply([{ op: 'add', table: 'user_likes_pins', from: user, to: pin }]), [true]);
    assert.deepEqual(await mappings.apply([{ op: 'add', table: 'user_likes_pins', from: user, to: pin }]), [false]);
    const counts = await mappings.counts([{ id: user, kind: 'user_likes_pins' }]);
    assert.equal(counts.get(`${user}:user_likes_pins`), 1);
    assert.deepEqual(await mappings.apply([{ op: 'remove', table: 'user_likes_pins', from: user, to: pin }]), [true]);
    assert.deepEqual(await mappings.apply([{ op: 'remove', table: 'user_likes_pins', from: user, to: pin }]), [false]);
    assert.equal((await mappings.counts([{ id: user, kind: 'user_likes_pins' }])).get(`${user}:user_likes_pins`), 0);
  });

  test('pages walk a list newest first with ties broken on to_id, with no gap or repeat', async () => {
    const { mappings } = env.storage;
    const board = await listOwner('board', 4);
    const pins = Array.from({ length: 23 }, (_, i) => encodeId({ shard: 4, type: 1, local: BigInt(100 + i) }));
    // Three pins share each sequence: order must still be total.
    await mappings.apply(pins.map((to, i) => ({ op: 'add' as const, table: 'board_has_pins' as const, from: board, to, sequence: 1000 + Math.floor(i / 3) })));
    const seen: bigint[] = [];
    let after: string | null = null;
    for (let guard = 0; guard < 10; guard++) {
      const [page] = await mappings.pages([{ table: 'board_has_pins', from: board, first: 5, after }]);
      seen.push(...page!.edges.map((e) => e.to));
      if (!page!.hasNextPage) break;
      after = page!.endCursor;
    }
    const expected = pins.map((to, i) => ({ to, seq: 1000 + Math.floor(i / 3) })).sort((a, b) => b.seq - a.seq || (a.to < b.to ? 1 : -1)).map((x) => x.to);
    assert.deepEqual(seen, expected);
    const counts = await mappings.counts([{ id: board, kind: 'board_has_pins' }]);
    assert.equal(counts.get(`${board}:board_has_pins`), 23);
  });

  test('backward pages (last/before) walk the same list from its end: together with forward pages, no gap or repeat, in both orders', async () => {
    const { mappings } = env.storage;
    const board = await listOwner('board', 4);
    const pins = Array.from({ length: 23 }, (_, i) => encodeId({ shard: 4, type: 1, local: BigInt(300 + i) }));
    // Ties on the sequence (three pins each): the order must be total both ways.
    await mappings.apply(pins.map((to, i) => ({ op: 'add' as const, table: 'board_has_pins' as const, from: board, to, sequence: 2000 + Math.floor(i / 3) })));
    await mappings.move('board_has_pins', board, pins[0]!, null); // an owner's order unlike the time order
    for (const order of ['time', 'owner'] as const) {
      const forward: bigint[][] = [];
      let after: string | null = null;
      let last: { startCursor: string | null; hasPreviousPage: boolean } | undefined;
      for (let guard = 0; guard < 10; guard++) {
        const [page] = await mappings.pages([{ table: 'board_has_pins', from: board, first: 5, after, order }]);
        forward.push(page!.edges.map((e) => e.to));
        assert.equal(page!.hasPreviousPage, false, 'a forward page does not compute hasPreviousPage');
        assert.equal(page!.startCursor, page!.edges[0]!.cursor);
        last = page!;
        if (!page!.hasNextPage) break;
        after = page!.endCursor;
      }
      const all = forward.flat();
      assert.equal(all.length, 23);
      assert.equal(new Set(all).size, 23);
      // From the end: the last 5, then the 5 before each page's start, until nothing precedes.
      const backward: bigint[][] = [];
      let before: string | null = null;
      for (let guard = 0; guard < 10; guard++) {
        const [page] = await mappings.pages([{ table: 'board_has_pins', from: board, first: 5, backward: true, before, order }]);
        backward.unshift(page!.edges.map((e) => e.to));
        assert.equal(page!.hasNextPage, false, 'a backward page does not compute hasNextPage');
        if (!page!.hasPreviousPage) break;
        before = page!.startCursor;
      }
      assert.deepEqual(backward.flat(), all, `${order}: backward pages give the forward list, in its order`);
      assert.deepEqual(backward[0], all.slice(0, 3), `${order}: the first page from the end holds what is left (23 = 4 × 5 + 3)`);
      // Turning back: the page before the last forward page's start is the forward page before it.
      const [prev] = await mappings.pages([{ table: 'board_has_pins', from: board, first: 5, backward: true, before: last!.startCursor, order }]);
      assert.deepEqual(prev!.edges.map((e) => e.to), forward.at(-2));
      assert.equal(prev!.hasPreviousPage, true);
      // after and before together: the items strictly between them, from either end.
      const [firstTwo] = await mappings.pages([{ table: 'board_has_pins', from: board, first: 2, order }]);
      const [between] = await mappings.pages([{ table: 'board_has_pins', from: board, first: 50, after: firstTwo!.endCursor, before: last!.startCursor, order }]);
      assert.deepEqual(between!.edges.map((e) => e.to), all.slice(2, 20));
      const [tail] = await mappings.pages([{ table: 'board_has_pins', from: board, first: 4, backward: true, after: between!.edges[0]!.cursor, before: last!.startCursor, order }]);
      assert.deepEqual(tail!.edges.map((e) => e.to), all.slice(16, 20));
      assert.equal(tail!.hasPreviousPage, true);
    }
    // A cursor of the time order is refused by the owner's, backward as forward.
    const [timePage] = await mappings.pages([{ table: 'board_has_pins', from: board, first: 1 }]);
    await assert.rejects(mappings.pages([{ table: 'board_has_pins', from: board, first: 1, backward: true, before: timePage!.endCursor, order: 'owner' }]), (e) => isShardqlError(e, 'INVALID_CURSOR'));
    // Time ranges hold backward too.
    const [ranged] = await mappings.pages([{ table: 'board_has_pins', from: board, first: 2, backward: true, since: 2001, until: 2003 }]);
    assert.deepEqual(ranged!.edges.map((e) => e.sequence), [2001, 2001]);
    assert.equal(ranged!.hasPreviousPage, true);
  });

  test('time ranges select by sequence: since inclusive, until exclusive', async () => {
    const { mappings } = env.storage;
    const user = (timedUser = await listOwner('user', 6));
    await mappings.apply([10, 20, 30, 40].map((seq) => ({ op: 'add' as const, table: 'user_has_pins' as const, from: user, to: BigInt(seq), sequence: seq })));
    const [page] = await mappings.pages([{ table: 'user_has_pins', from: user, first: 10, since: 20, until: 40 }]);
    assert.deepEqual(page!.edges.map((e) => e.sequence), [30, 20]);
  });

  test('a cursor from one list is refused by another', async () => {
    const { mappings } = env.storage;
    const user = timedUser;
    const [page] = await mappings.pages([{ table: 'user_has_pins', from: user, first: 1 }]);
    await assert.rejects(mappings.pages([{ table: 'user_likes_pins', from: user, first: 1, after: page!.endCursor }]), (e) => isShardqlError(e, 'INVALID_CURSOR'));
  });

  test("the owner's order: new pins first, moves change one row", async () => {
    const { mappings } = env.storage;
    const board = await listOwner('board', 7);
    const [a, b, c, d] = [1n, 2n, 3n, 4n].map((l) => encodeId({ shard: 7, type: 1, local: l })) as [bigint, bigint, bigint, bigint];
    await mappings.apply([a, b, c, d].map((to, i) => ({ op: 'add' as const, table: 'board_has_pins' as const, from: board, to, sequence: 100 + i })));
    const order = async (): Promise<bigint[]> => (await mappings.pages([{ table: 'board_has_pins', from: board, first: 10, order: 'owner' }]))[0]!.edges.map((e) => e.to);
    assert.deepEqual(await order(), [d, c, b, a]);
    await mappings.move('board_has_pins', board, a, null);
    assert.deepEqual(await order(), [a, d, c, b]);
    await mappings.move('board_has_pins', board, d, b);
    assert.deepEqual(await order(), [a, c, b, d]);
    // Squeeze many moves into one gap: positions run out of room and the tail shifts, order stays right.
    for (let i = 0; i < 14; i++) {
      await mappings.move('board_has_pins', board, i % 2 === 0 ? b : d, a);
    }
    assert.deepEqual(await order(), [a, d, b, c]);
    await assert.rejects(mappings.move('board_has_pins', board, 999n, a), (e) => isShardqlError(e, 'NOT_FOUND'));
    // Time order is untouched by moves.
    assert.deepEqual((await mappings.pages([{ table: 'board_has_pins', from: board, first: 10 }]))[0]!.edges.map((e) => e.to), [d, c, b, a]);
  });

  test('page 150 of a 10,000-pin board is one indexed query reading what page 1 reads', async () => {
    // A single-connection pool so session status counters belong to our queries only; the admin
    // account, which may FLUSH STATUS (RELOAD).
    const { createStorage } = await import('../../src/storage/index.ts');
    const storage = createStorage({ topology: () => env.topology, credentials: adminCredentials(env.stack), poolSize: 1, events: null });
    try {
      const board = encodeId({ shard: 8, type: 2, local: 1n });
      const host = storage.router.hostOfShard(8);
      const table = `${shardDatabase(8)}.board_has_pins`;
      for (let start = 0; start < 10_000; start += 1000) {
        const rows = Array.from({ length: 1000 }, (_, k) => start + k);
        await storage.router.query(host, [8], `INSERT INTO ${table} (from_id, to_id, sequence) VALUES ${rows.map(() => '(?, ?, ?)').join(',')}`,
          rows.flatMap((n) => [board, encodeId({ shard: 8, type: 1, local: BigInt(n + 1) }), 1_700_000_000_000 + Math.floor(n / 2)]));
      }
      const readsFor = async (after: string | null): Promise<{ rows: number; stats: SqlStats; cursor: string | null; first: bigint }> => {
        await storage.router.query(host, [], 'FLUSH STATUS', []);
        const stats = new SqlStats();
        const [page] = await storage.mappings.pages([{ table: 'board_has_pins', from: board, first: 50, after }], { stats });
        const status = await storage.router.query(host, [], "SHOW SESSION STATUS LIKE 'Handler_read%'", []);
        const rows = status.reduce((n, r) => n + (['Handler_read_first', 'Handler_read_key', 'Handler_read_next', 'Handler_read_prev', 'Handler_read_last'].includes(String(r.Variable_name)) ? Number(r.Value) : 0), 0);
        return { rows, stats, cursor: page!.endCursor, first: page!.edges[0]!.to };
      };
      const page1 = await readsFor(null);
      let cursor = page1.cursor;
      for (let p = 2; p < 150; p++) cursor = (await storage.mappings.pages([{ table: 'board_has_pins', from: board, first: 50, after: cursor }]))[0]!.endCursor;
      const page150 = await readsFor(cursor);
      assert.equal(page150.first, encodeId({ shard: 8, type: 1, local: BigInt(10_000 - 149 * 50) }), 'page 150 starts where it should');
      assert.equal(page1.stats.roundTrips, 1);
      assert.equal(page150.stats.roundTrips, 1);
      console.log(`# handler reads: page 1 = ${page1.rows}, page 150 = ${page150.rows}`);
      assert.ok(page150.rows <= 60, `page 150 read ${page150.rows} index entries, expected about 51`);
      assert.ok(page150.rows <= page1.rows + 4, `page 150 (${page150.rows}) reads no more than page 1 (${page1.rows})`);
      const explain = await storage.router.query(host, [], `EXPLAIN SELECT to_id FROM ${table} FORCE INDEX (by_sequence) WHERE from_id = ? AND (sequence < ? OR (sequence = ? AND to_id < ?)) ORDER BY sequence DESC, to_id DESC LIMIT 51`, [board, 1_700_000_000_100, 1_700_000_000_100, 5n]);
      assert.equal(explain[0]?.key, 'by_sequence');
      assert.equal(explain[0]?.type, 'range');
      // Backward: the same index read the other way reads what a forward page reads, from the end or from a cursor.
      const backwardReads = async (before: string | null): Promise<{ rows: number; stats: SqlStats; last: bigint }> => {
        await storage.router.query(host, [], 'FLUSH STATUS', []);
        const stats = new SqlStats();
        const [page] = await storage.mappings.pages([{ table: 'board_has_pins', from: board, first: 50, backward: true, before }], { stats });
        const status = await storage.router.query(host, [], "SHOW SESSION STATUS LIKE 'Handler_read%'", []);
        const rows = status.reduce((n, r) => n + (['Handler_read_first', 'Handler_read_key', 'Handler_read_next', 'Handler_read_prev', 'Handler_read_last'].includes(String(r.Variable_name)) ? Number(r.Value) : 0), 0);
        assert.equal(page!.edges.length, 50);
        return { rows, stats, last: page!.edges.at(-1)!.to };
      };
      const end = await backwardReads(null);
      assert.equal(end.last, encodeId({ shard: 8, type: 1, local: 1n }), 'the last page ends with the oldest pin');
      const mid = await backwardReads(cursor);
      // `cursor` is page 149's last pin (local 2551): the page before it ends with the pin right above it.
      assert.equal(mid.last, encodeId({ shard: 8, type: 1, local: BigInt(10_000 - 149 * 50 + 2) }), 'the page before a cursor ends right above it');
      console.log(`# handler reads backward: from the end = ${end.rows}, before page 150 = ${mid.rows}`);
      for (const b of [end, mid]) {
        assert.equal(b.stats.roundTrips, 1);
        assert.ok(b.rows <= 60, `a backward page read ${b.rows} index entries, expected about 51`);
      }
      const explainBack = await storage.router.query(host, [], `EXPLAIN SELECT to_id FROM ${table} FORCE INDEX (by_sequence) WHERE from_id = ? AND (sequence > ? OR (sequence = ? AND to_id > ?)) ORDER BY sequence ASC, to_id ASC LIMIT 51`, [board, 1_700_000_000_100, 1_700_000_000_100, 5n]);
      assert.equal(explainBack[0]?.key, 'by_sequence');
      assert.equal(explainBack[0]?.type, 'range');
    } finally {
      await storage.close();
    }
  });
});

describe('Storage: mod shard and unique usernames', () => {
  test('username and email lead to the user ID', async () => {
    const deps = { objects: env.storage.objects, lookups: env.storage.lookups, topology: () => env.topology };
    const u = await createUser(deps, { username: 'Alice', email: 'alice@example.com' });
    assert.ok(env.topology.isOpen(shardOf(u.id)));
    const byName = await env.storage.lookups.lookup('username', ['alice', 'ALICE', 'nobody']);
    assert.equal(byName.get('alice'), u.id);
    assert.equal(byName.get('ALICE'), u.id);
    assert.equal(byName.has('nobody'), false);
    assert.equal((await env.storage.lookups.lookup('email', ['alice@example.com'])).get('alice@example.com'), u.id);
  });

  test('of ten concurrent claims to one username exactly one wins; the others leave nothing behind', async () => {
    const deps = { objects: env.storage.objects, lookups: env.storage.lookups, topology: () => env.topology };
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => createUser(deps, { username: 'bob', email: `bob${i}@example.com` })));
    const won = results.filter((r) => r.status === 'fulfilled');
    assert.equal(won.length, 1);
    for (const r of results) if (r.status === 'rejected') assert.ok(isShardqlError(r.reason, 'USERNAME_TAKEN'));
    // No loser's email stays claimed: each is free again.
    const emails = await env.storage.lookups.lookup('email', Array.from({ length: 10 }, (_, i) => `bob${i}@example.com`));
    assert.equal(emails.size, 1);
  });

  test('a taken email releases the username claimed before it', async () => {
    const deps = { objects: env.storage.objects, lookups: env.storage.lookups, topology: () => env.topology };
    await createUser(deps, { username: 'carol', email: 'shared@example.com' });
    await assert.rejects(createUser(deps, { username: 'dave', email: 'shared@example.com' }), (e) => isShardqlError(e, 'EMAIL_TAKEN'));
    assert.equal((await env.storage.lookups.lookup('username', ['dave'])).size, 0);
    const dave = await createUser(deps, { username: 'dave', email: 'dave@example.com' });
    assert.equal((await env.storage.lookups.lookup('username', ['dave'])).get('dave'), dave.id);
  });

  test("a retry with the sign-up's idempotency key takes over the claims its earlier attempt left pending; without the key it is refused", async () => {
    const deps = { objects: env.storage.objects, lookups: env.storage.lookups, topology: () => env.topology };
    // The earlier attempt claimed both names, then lost its answer (a connection cut mid-move).
    const token = pendingClaimToken('signup-erin:createUser');
    assert.equal(await env.storage.lookups.claim('username', 'erin', token), true);
    assert.equal(await env.storage.lookups.claim('email', 'erin@example.com', token), true);
    await assert.rejects(createUser(deps, { username: 'erin', email: 'erin@example.com' }), (e) => isShardqlError(e, 'USERNAME_TAKEN'));
    await assert.rejects(createUser(deps, { username: 'erin', email: 'erin@example.com', idempotencyKey: 'another:createUser' }), (e) => isShardqlError(e, 'USERNAME_TAKEN'));
    const erin = await createUser(deps, { username: 'erin', email: 'erin@example.com', idempotencyKey: 'signup-erin:createUser' });
    assert.equal((await env.storage.lookups.lookup('username', ['erin'])).get('erin'), erin.id);
    assert.equal((await env.storage.lookups.lookup('email', ['erin@example.com'])).get('erin@example.com'), erin.id);
  });

  test('a retry of a sign-up that completed answers with the same user; another key, or none, is refused', async () => {
    const deps = { objects: env.storage.objects, lookups: env.storage.lookups, topology: () => env.topology };
    const first = await createUser(deps, { username: 'frank', email: 'frank@example.com', idempotencyKey: 'k-frank:createUser' });
    const again = await createUser(deps, { username: 'frank', email: 'frank@example.com', idempotencyKey: 'k-frank:createUser' });
    assert.equal(again.id, first.id);
    await assert.rejects(createUser(deps, { username: 'frank', email: 'frank2@example.com', idempotencyKey: 'k-other:createUser' }), (e) => isShardqlError(e, 'USERNAME_TAKEN'));
    await assert.rejects(createUser(deps, { username: 'frank', email: 'frank@example.com' }), (e) => isShardqlError(e, 'USERNAME_TAKEN'));
    // An earlier attempt that stopped between its two confirms: the retry points the email at its user too.
    const token = pendingClaimToken('k-gina:createUser');
    const gina = await createUser(deps, { username: 'gina', idempotencyKey: 'k-gina:createUser' });
    assert.equal(await env.storage.lookups.claim('email', 'gina@example.com', token), true);
    const retried = await createUser(deps, { username: 'gina', email: 'gina@example.com', idempotencyKey: 'k-gina:createUser' });
    assert.equal(retried.id, gina.id);
    assert.equal((await env.storage.lookups.lookup('email', ['gina@example.com'])).get('gina@example.com'), gina.id);
  });

  test('two attempts of one sign-up racing: both answer with one user, and no other user holds a name', async () => {
    const deps = { objects: env.storage.objects, lookups: env.storage.lookups, topology: () => env.topology };
    const results = await Promise.all(Array.from({ length: 4 }, () => createUser(deps, { username: 'hana', email: 'hana@example.com', idempotencyKey: 'k-hana:createUser' }).then(
      (u) => ({ id: u.id }),
      (e: unknown) => ({ error: e }),
    )));
    const ids = new Set(results.flatMap((r) => ('id' in r ? [r.id] : [])));
    assert.equal(ids.size, 1, `one user for every attempt that answered: ${JSON.stringify(results.map((r) => ('id' in r ? String(r.id) : String(r.error))))}`);
    const [id] = [...ids];
    assert.equal((await env.storage.lookups.lookup('username', ['hana'])).get('hana'), id);
    assert.equal((await env.storage.lookups.lookup('email', ['hana@example.com'])).get('hana@example.com'), id);
  });
});
