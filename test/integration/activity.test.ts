/**
 * Per-user event sequences on the real stack: order (ties, backfill), time bounds, keyset paging
 * while events arrive, retention (TTL and versions per kind) with the sweep job's handler run
 * against real MariaDB, the events the product's writes append (a crash at every step boundary,
 * then a retry and the repair pass: never lost, never doubled), grouped notifications through the
 * gateway, hiding, who may read them, and the cached first page.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { codes, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { ProductWrites } from '../../src/product/pinterest/writes.ts';
import type { FaultPoint } from '../../src/services/writeExecutor.ts';
import { repairIntents } from '../../src/services/repair.ts';
import { createStorage, type Storage } from '../../src/storage/index.ts';
import { defaultEventRetention, eventOf as eventIn, type EventRetention, type EventSide, type Happening, type SequenceEvent, type StoredKind } from '../../src/core/events.ts';
import { PINTEREST_EVENTS } from '../../src/product/pinterest/events.ts';
import { formatId, shardOf } from '../../src/core/ids.ts';
import { eventSweepShards } from '../../src/jobs/kinds/sweeps.ts';
import type { JobContext } from '../../src/jobs/jobKind.ts';
import type { StoredObject } from '../../src/storage/objectStore.ts';

const DEFAULT_EVENT_RETENTION = defaultEventRetention(PINTEREST_EVENTS);
const eventOf = (h: Happening, user: bigint, side: EventSide) => eventIn(PINTEREST_EVENTS, h, user, side);

let env: TestEnv;
let writes: ProductWrites;
let armed: { point: FaultPoint; kind: string } | undefined;
class InjectedCrash extends Error {}

before(async () => {
  env = await freshEnv({ shards: 16 });
  writes = new ProductWrites({
    storage: env.storage,
    topology: () => env.topology,
    faults: (point, kind) => {
      if (armed && armed.point === point && kind.startsWith(armed.kind)) throw new InjectedCrash(`injected crash at ${point} of ${kind}`);
    },
  });
});
after(async () => {
  await env?.close();
});

let made = 0;
const user = (name: string): Promise<StoredObject> => writes.createUser({ username: `${name}${made++}` });
/** A user on another host than `other`: the write spans hosts. */
async function userAwayFrom(name: string, other: bigint): Promise<StoredObject> {
  for (;;) {
    const u = await user(name);
    if (env.storage.router.hostOfId(u.id) !== env.storage.router.hostOfId(other)) return u;
  }
}

/** A storage over the same stack with its own clock and retention (for TTL and versions). */
function clockedStorage(now: () => number, retention: EventRetention): Storage {
  return createStorage({
    topology: () => env.topology,
    credentials: { user: env.stack.mysql.user, password: env.stack.mysql.password },
    now,
    events: { spec: PINTEREST_EVENTS, retention },
  });
}

/** COMMENT events of `actor`'s activity need no edge to show: the store's rules without the product's. */
function commentEvent(actor: bigint, ts: number, n: number): SequenceEvent {
  const h: Happening = { kind: 'COMMENT', actor, object: BigInt(1000 + n), detail: BigInt(5000 + n), ts };
  return eventOf(h, actor, 'activity');
}

describe('Event sequences: the store', () => {
  test('newest first, ties ordered by event ID, backfilled timestamps land in order, appending again adds nothing', async () => {
    const u = await user('seq_order');
    const t = Date.now() - 3_600_000;
    const events = [commentEvent(u.id, t + 50, 1), commentEvent(u.id, t + 90, 2), commentEvent(u.id, t + 90, 3), commentEvent(u.id, t + 90, 4)];
    assert.equal(await env.storage.events.append(events), 4);
    // A backfill: older than everything there, and one in between, appended last.
    const backfill = [commentEvent(u.id, t + 10, 5), commentEvent(u.id, t + 70, 6)];
    assert.equal(await env.storage.events.append(backfill), 2);
    assert.equal(await env.storage.events.append([...events, ...backfill]), 0, 'appending the same events again adds nothing');
    const page = await env.storage.events.page({ user: u.id, kinds: ['commented_on_pin'], first: 10 });
    const ties = [events[1]!, events[2]!, events[3]!].sort((a, b) => (a.id < b.id ? 1 : -1));
    assert.deepEqual(
      page.edges.map((e) => e.event.id),
      [...ties, backfill[1]!, events[0]!, backfill[0]!].map((e) => e.id),
    );
    assert.deepEqual(
      page.edges.map((e) => e.event.ts),
      [t + 90, t + 90, t + 90, t + 70, t + 50, t + 10],
    );
    assert.equal(page.hasNextPage, false);
  });

  test('since is inclusive, until exclusive', async () => {
    const u = await user('seq_range');
    const t = Date.now() - 3_600_000;
    await env.storage.events.append([0, 1, 2, 3, 4].map((i) => commentEvent(u.id, t + i * 1000, i)));
    const page = await env.storage.events.page({ user: u.id, kinds: ['commented_on_pin'], first: 10, since: t + 1000, until: t + 3000 });
    assert.deepEqual(
      page.edges.map((e) => e.event.ts),
      [t + 2000, t + 1000],
    );
  });

  test('keyset pages while events arrive (newer and backfilled): no repeat, nothing that was there is missed', async () => {
    const u = await user('seq_paging');
    const t = Date.now() - 3_600_000;
    const initial = Array.from({ length: 40 }, (_, i) => commentEvent(u.id, t + Math.floor(i / 3) * 1000, i)); // ties in threes
    await env.storage.events.append(initial);
    const seen: bigint[] = [];
    let after: string | null = null;
    let arrivals = 0;
    for (let pages = 0; ; pages++) {
      const page = await env.storage.events.page({ user: u.id, kinds: ['commented_on_pin'], first: 7, after });
      seen.push(...page.edges.map((e) => e.event.id));
      // Between pages: a newer event, and one backfilled into the middle of the sequence.
      await env.storage.events.append([commentEvent(u.id, t + 100_000 + pages, 100 + pages), commentEvent(u.id, t + 5500 + pages, 200 + pages)]);
      arrivals += 2;
      if (!page.hasNextPage) break;
      after = page.endCursor;
    }
    assert.equal(new Set(seen).size, seen.length, 'no event on two pages');
    const ids = new Set(seen);
    assert.deepEqual(
      initial.filter((e) => !ids.has(e.id)),
      [],
      'every event there when paging began was on a page',
    );
    assert.ok(arrivals >= 12);
  });

  test('TTL and versions per kind: never returned once expired or beyond the newest N; the sweep job handler purges them', async () => {
    let now = 1_800_000_000_000;
    const retention: EventRetention = { ...DEFAULT_EVENT_RETENTION, commented_on_pin: { versions: 1000, ttlMs: 60_000 }, liked_pin: { versions: 3, ttlMs: 86_400_000 } };
    const storage = clockedStorage(() => now, retention);
    try {
      const u = await user('seq_ttl');
      // The sweep job's handler, as a worker runs it, against the real shard. It sweeps the whole
      // shard: first once at this clock, so what earlier tests left there (their events are old at it)
      // is gone and the counts below are this user's alone.
      const logged: string[] = [];
      const jobCtx: JobContext = {
        storage,
        topology: () => env.topology,
        jobs: { enqueue: async () => ({ id: 'none' }), encode: () => ({}), enqueueRecorded: async () => ({ id: 'none' }) },
        feeds: undefined,
        importSources: undefined as never,
        log: (event) => void logged.push(event),
        signal: new AbortController().signal,
        jobId: 'test',
        attempt: 1,
        worker: 'test',
      };
      await eventSweepShards.handle({ shards: [shardOf(u.id)], run: 'test-before' }, jobCtx);
      logged.length = 0;
      const fresh = commentEvent(u.id, now - 10_000, 1);
      const old = commentEvent(u.id, now - 50_000, 2);
      await storage.events.append([fresh, old]);
      // Likes: versions are counted per kind; their edges stand (liked_pin shows only while the like does).
      const pins: SequenceEvent[] = [];
      for (let i = 0; i < 5; i++) {
        const ts = now - 1000 * (5 - i);
        const pin = BigInt(9000 + i);
        await env.storage.mappings.apply([{ op: 'add', table: 'user_likes_pins', from: u.id, to: pin, sequence: ts }]);
        pins.push(eventOf({ kind: 'LIKE', actor: u.id, object: pin, detail: null, ts }, u.id, 'activity'));
      }
      await storage.events.append(pins);
      const read = async (kind: StoredKind) => (await storage.events.page({ user: u.id, kinds: [kind], first: 20 })).edges.map((e) => e.event.id);
      assert.deepEqual(await read('commented_on_pin'), [fresh.id, old.id]);
      assert.deepEqual(await read('liked_pin'), [pins[4]!.id, pins[3]!.id, pins[2]!.id], 'the 3 newest versions only');
      assert.deepEqual(
        [...(await storage.events.latest({ user: u.id, kinds: ['liked_pin', 'commented_on_pin'], perKind: 2 })).entries()].map(([k, l]) => [k, l.map((e) => e.id)]),
        [
          ['liked_pin', [pins[4]!.id, pins[3]!.id]],
          ['commented_on_pin', [fresh.id, old.id]],
        ],
        'latest N per kind',
      );
      now += 20_000; // `old` is 70 s old now: past its 60 s TTL
      assert.deepEqual(await read('commented_on_pin'), [fresh.id], 'an expired event is never returned, even before the sweep');
      assert.equal((await storage.events.stored(u.id)).length, 7, 'still stored until the sweep');
      const report = await eventSweepShards.handle({ shards: [shardOf(u.id)], run: 'test' }, jobCtx);
      assert.equal(report.expired, 1);
      assert.equal(report.trimmed, 2);
      assert.deepEqual(logged, ['events_swept']);
      const left = new Set((await storage.events.stored(u.id)).map((e) => e.id));
      assert.deepEqual([...left].sort(), [fresh.id, pins[2]!.id, pins[3]!.id, pins[4]!.id].sort());
      assert.deepEqual(await read('liked_pin'), [pins[4]!.id, pins[3]!.id, pins[2]!.id], 'what was shown is still shown');
    } finally {
      await storage.close();
    }
  });
});

describe('Event sequences: written by the product, under the intent log', () => {
  /** Rows of the happening's event in each sequence (exactly 1 each when written once). */
  async function rows(userId: bigint, kind: StoredKind, object: bigint): Promise<number> {
    return (await env.storage.events.stored(userId)).filter((e) => e.kind === kind && e.object === object).length;
  }

  test('a crash at every step boundary, a retry with the same key, then the repair pass: each event once, none lost', async () => {
    const owner = await user('ev_owner');
    const fan = await userAwayFrom('ev_fan', owner.id);
    const ownerBoard = await writes.createBoard(owner.id, { name: 'owned' });
    const fanBoard = await writes.createBoard(fan.id, { name: 'fan' });
    type Case = { kind: string; act: (key: string) => Promise<{ object: bigint }>; mine: StoredKind; theirs: StoredKind; undo?: () => Promise<unknown> };
    let pin!: StoredObject;
    const cases: Case[] = [
      {
        kind: 'add:user_likes_pins',
        act: async (key) => ({ object: (await writes.likePin(fan.id, pin.id, {}, { idempotencyKey: key })).id }),
        mine: 'liked_pin',
        theirs: 'pin_liked',
      },
      {
        kind: 'add:user_follows_boards',
        act: async (key) => ({ object: (await writes.followBoard(fan.id, ownerBoard.id, {}, { idempotencyKey: key })).id }),
        mine: 'followed_board',
        theirs: 'board_followed',
        undo: () => writes.unfollowBoard(fan.id, ownerBoard.id),
      },
      {
        kind: 'add:user_follows_users',
        act: async (key) => ({ object: (await writes.followUser(fan.id, owner.id, {}, { idempotencyKey: key })).id }),
        mine: 'followed_user',
        theirs: 'user_followed',
        undo: () => writes.unfollowUser(fan.id, owner.id),
      },
      {
        kind: 'repin',
        act: async (key) => (await writes.repin(fan.id, pin.id, fanBoard.id, {}, { idempotencyKey: key }), { object: pin.id }),
        mine: 'repinned_pin',
        theirs: 'pin_repinned',
      },
      {
        kind: 'createComment',
        act: async (key) => (await writes.createComment(fan.id, pin.id, 'hello', {}, { idempotencyKey: key }), { object: pin.id }),
        mine: 'commented_on_pin',
        theirs: 'pin_commented',
      },
    ];
    const points: FaultPoint[] = ['in-first-transaction', 'after-first-commit', 'after-step-0', 'after-step-1', 'before-complete'];
    let crashes = 0;
    let keys = 0;
    for (const c of cases) {
      for (const point of points) {
        pin = await writes.createPin(owner.id, ownerBoard.id, { title: `${c.kind} ${point}` });
        await c.undo?.();
        const object = c.kind.includes('follows_users') ? owner.id : c.kind.includes('follows_boards') ? ownerBoard.id : pin.id;
        const before = { mine: await rows(fan.id, c.mine, object), theirs: await rows(owner.id, c.theirs, object) };
        const key = `crash-${keys++}`;
        armed = { point, kind: c.kind };
        let crashed = false;
        try {
          await c.act(key);
        } catch (err) {
          if (!(err instanceof InjectedCrash)) throw err;
          crashed = true;
        } finally {
          armed = undefined;
        }
        if (!crashed) continue; // this write has no such step (e.g. after-step-1 of a like)
        crashes++;
        // The client retries with its key (finishing what the crash left), then the repair pass runs too.
        await c.act(key);
        const repaired = await repairIntents(env.storage, env.topology, { minAgeMs: 0 });
        assert.equal(repaired.failed, 0);
        const now = { mine: await rows(fan.id, c.mine, object), theirs: await rows(owner.id, c.theirs, object) };
        assert.deepEqual(now, { mine: before.mine + 1, theirs: before.theirs + 1 }, `${c.kind} crashed at ${point}: one event in each sequence`);
      }
    }
    assert.ok(crashes >= 20, `crashes injected: ${crashes}`);
    console.log(`# events: ${crashes} crashes at step boundaries of 5 writes, each retried and repaired: every event exactly once in both sequences`);
  });

  test('a crash the client never retries: the repair pass alone appends the owner\'s event', async () => {
    const owner = await user('ev_lone_owner');
    const fan = await userAwayFrom('ev_lone_fan', owner.id);
    const board = await writes.createBoard(owner.id, { name: 'b' });
    const pin = await writes.createPin(owner.id, board.id, { title: 'p' });
    armed = { point: 'after-first-commit', kind: 'add:user_likes_pins' };
    await assert.rejects(writes.likePin(fan.id, pin.id), InjectedCrash);
    armed = undefined;
    assert.equal(await rows(fan.id, 'liked_pin', pin.id), 1, "the liker's event committed with the edge");
    assert.equal(await rows(owner.id, 'pin_liked', pin.id), 0, 'not yet');
    await repairIntents(env.storage, env.topology, { minAgeMs: 0 });
    assert.equal(await rows(owner.id, 'pin_liked', pin.id), 1);
    // Liking again (already liked) appends nothing; unliking erases nothing.
    await writes.likePin(fan.id, pin.id);
    await writes.unlikePin(fan.id, pin.id);
    assert.equal(await rows(fan.id, 'liked_pin', pin.id), 1);
    assert.equal(await rows(owner.id, 'pin_liked', pin.id), 1);
  });
});

describe('Notifications and activity through the gateway', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(env, 'activity');
  });
  after(async () => {
    await gw?.stop();
  });

  const NOTIFICATIONS = `query($after: String, $first: Int, $kinds: [ActivityKind!], $since: String, $until: String) { viewer { notifications(first: $first, after: $after, kinds: $kinds, since: $since, until: $until) {
    edges { cursor node { kind count actorCount actors { username } pin { id } board { id } latestAt earliestAt } }
    pageInfo { hasNextPage endCursor } } } }`;
  const ACTIVITY = `query($id: ID!, $after: String, $first: Int, $kinds: [ActivityKind!]) { user(id: $id) { activity(first: $first, after: $after, kinds: $kinds) {
    edges { cursor node { id kind actor { username } pin { id } repin { id } comment { text } board { id } user { id } } }
    pageInfo { hasNextPage endCursor } } } }`;

  test('grouped per target and kind: "X and 2 others liked your pin", newest first; hidden once undone; only the viewer reads them', async () => {
    const owner = await user('n_owner');
    const board = await writes.createBoard(owner.id, { name: 'mine' });
    const pin = await writes.createPin(owner.id, board.id, { title: 'liked' });
    const other = await writes.createPin(owner.id, board.id, { title: 'commented' });
    const fans = [await user('n_fan_a'), await user('n_fan_b'), await user('n_fan_c'), await user('n_fan_d')];
    for (const f of fans) await writes.likePin(f.id, pin.id);
    await writes.createComment(fans[0]!.id, other.id, 'first');
    const doomed = await writes.createComment(fans[1]!.id, other.id, 'second');
    await writes.followUser(fans[2]!.id, owner.id);
    await writes.followBoard(fans[3]!.id, board.id);
    // A like from two days ago, backfilled with its edge: another window, so another group.
    const late = await user('n_fan_old');
    const ts = Date.now() - 2 * 86_400_000;
    await env.storage.mappings.apply([
      { op: 'add', table: 'user_likes_pins', from: late.id, to: pin.id, sequence: ts },
      { op: 'add', table: 'pin_liked_by_users', from: pin.id, to: late.id, sequence: ts },
    ]);
    const h: Happening = { kind: 'LIKE', actor: late.id, object: pin.id, detail: null, ts };
    await env.storage.events.append([eventOf(h, late.id, 'activity'), eventOf(h, owner.id, 'notifications')]);

    const token = await gw.token(owner.id);
    const read = async (vars: Record<string, unknown> = {}) => {
      const r = await gw.gql(NOTIFICATIONS, vars, { token });
      assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
      return r.body.data.viewer.notifications;
    };
    const names = (n: { actors: { username: string }[] }) => n.actors.map((a) => a.username.replace(/[0-9]+$/, ''));
    const summary = (c: any) =>
      c.edges.map((e: any) => `${e.node.kind} ${e.node.pin?.id ?? e.node.board?.id ?? 'you'} ${e.node.count}/${e.node.actorCount} ${names(e.node).join(',')}`);
    const pid = formatId(pin.id);
    const oid = formatId(other.id);
    const bid = formatId(board.id);
    assert.deepEqual(summary(await read()), [
      `FOLLOW_BOARD ${bid} 1/1 n_fan_d`,
      `FOLLOW_USER you 1/1 n_fan_c`,
      `COMMENT ${oid} 2/2 n_fan_b,n_fan_a`,
      `LIKE ${pid} 4/4 n_fan_d,n_fan_c,n_fan_b`,
      `LIKE ${pid} 1/1 n_fan_old`,
    ]);
    assert.deepEqual(summary(await read({ kinds: ['LIKE'] })), [`LIKE ${pid} 4/4 n_fan_d,n_fan_c,n_fan_b`, `LIKE ${pid} 1/1 n_fan_old`], 'kinds filter');
    assert.deepEqual(summary(await read({ kinds: ['LIKE'], until: new Date(ts + 1).toISOString() })), [`LIKE ${pid} 1/1 n_fan_old`], 'until');
    assert.deepEqual(summary(await read({ kinds: ['LIKE'], since: new Date(ts + 1).toISOString() })), [`LIKE ${pid} 4/4 n_fan_d,n_fan_c,n_fan_b`], 'since');

    // Undone: an unlike, an unfollow and a deleted comment no longer count; the history stays stored.
    // Through the gateway, so each write drops the cached first page it changes.
    const as = async (who: StoredObject, mutation: string, id: bigint) => {
      const [argument, selection] = mutation === 'deleteComment' ? ['id', 'deletedId'] : [mutation === 'unlikePin' ? 'pinId' : 'userId', 'id'];
      const r = await gw.gql(`mutation($id: ID!) { ${mutation}(${argument}: $id) { ${selection} } }`, { id: formatId(id) }, { token: await gw.token(who.id) });
      assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
    };
    await as(fans[3]!, 'unlikePin', pin.id);
    await as(fans[2]!, 'unfollowUser', owner.id);
    await as(fans[1]!, 'deleteComment', doomed.id);
    assert.deepEqual(summary(await read()), [`FOLLOW_BOARD ${bid} 1/1 n_fan_d`, `COMMENT ${oid} 1/1 n_fan_a`, `LIKE ${pid} 3/3 n_fan_c,n_fan_b,n_fan_a`, `LIKE ${pid} 1/1 n_fan_old`]);
    assert.equal((await env.storage.events.stored(owner.id)).length, 9, 'nothing erased');

    // Another viewer (or none) is refused; the field is null.
    const stranger = await gw.gql(`query($id: ID!) { user(id: $id) { username notifications { edges { cursor } } } }`, { id: formatId(owner.id) }, { token: await gw.token(fans[0]!.id) });
    assert.deepEqual(codes(stranger), ['FORBIDDEN']);
    assert.equal(stranger.body.data.user.notifications, null);
    assert.match(stranger.body.data.user.username, /^n_owner/);
    const anonymous = await gw.gql(`query($id: ID!) { user(id: $id) { notifications { edges { cursor } } } }`, { id: formatId(owner.id) });
    assert.deepEqual(codes(anonymous), ['UNAUTHENTICATED']);

    // The actor's own activity: newest first, its own kinds, hidden once undone.
    const act = await gw.gql(ACTIVITY, { id: formatId(fans[0]!.id) });
    assert.deepEqual(
      act.body.data.user.activity.edges.map((e: any) => `${e.node.kind} ${e.node.pin?.id} ${e.node.comment?.text ?? ''}`),
      [`COMMENT ${oid} first`, `LIKE ${pid} `],
    );
    const undone = await gw.gql(ACTIVITY, { id: formatId(fans[3]!.id) });
    assert.deepEqual(
      undone.body.data.user.activity.edges.map((e: any) => e.node.kind),
      ['FOLLOW_BOARD'],
      'the unliked like is hidden',
    );
  });

  test('paging groups while events arrive: no repeat, no gap; the first page is cached and an append drops it', async () => {
    const owner = await user('p_owner');
    const board = await writes.createBoard(owner.id, { name: 'many' });
    const pins: StoredObject[] = [];
    for (let i = 0; i < 9; i++) pins.push(await writes.createPin(owner.id, board.id, { title: `p${i}` }));
    const fans = [await user('p_fan'), await user('p_fan'), await user('p_fan')];
    for (const [i, p] of pins.entries()) for (const f of fans.slice(0, 1 + (i % 3))) await writes.likePin(f.id, p.id);
    const token = await gw.token(owner.id);
    const page = async (after: string | null) => {
      const r = await gw.gql(NOTIFICATIONS, { first: 2, after }, { token });
      assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
      return { data: r.body.data.viewer.notifications, sql: r.body.extensions.cost.sqlRoundTrips as number };
    };
    const seen: string[] = [];
    const lates: StoredObject[] = [];
    let after: string | null = null;
    let extra = 0;
    for (;;) {
      const { data } = await page(after);
      seen.push(...data.edges.map((e: any) => e.node.pin.id));
      // Meanwhile: a new like of a pin already read, and of one not read yet.
      const late = await user('p_late');
      lates.push(late);
      await writes.likePin(late.id, pins[extra % pins.length]!.id);
      extra++;
      if (!data.pageInfo.hasNextPage) break;
      after = data.pageInfo.endCursor;
    }
    assert.equal(seen.length, 9, 'one group per pin');
    assert.equal(new Set(seen).size, 9, 'no group twice, none missed');

    // The first page: computed once, then 0 SQL until an append drops it.
    const first = await page(null);
    const again = await page(null);
    assert.equal(again.sql, 0, 'the cached first page costs no SQL');
    assert.deepEqual(again.data, first.data);
    const newcomer = await user('p_new');
    const liked = await gw.gql('mutation($p: ID!) { likePin(pinId: $p) { id } }', { p: formatId(pins[0]!.id) }, { token: await gw.token(newcomer.id) });
    assert.equal(liked.body.errors, undefined, JSON.stringify(liked.body.errors));
    const fresh = await page(null);
    assert.ok(fresh.sql > 0, 'the append dropped the cached page');
    assert.deepEqual(fresh.data.edges[0].node.actors[0].username, newcomer.data.username, 'the new like is on top');

    // A later page is cached per cursor the same way: 0 SQL when asked again, dropped by an unlike
    // that hides one of its events (no append: the like event stays, it no longer stands).
    const second = await page(fresh.data.pageInfo.endCursor);
    assert.ok(second.sql > 0, 'the second page, first asked: SQL');
    const secondAgain = await page(fresh.data.pageInfo.endCursor);
    assert.equal(secondAgain.sql, 0, 'the cached second page costs no SQL');
    assert.deepEqual(secondAgain.data, second.data);
    const target = second.data.edges.map((e: any) => e.node).find((n: any) => n.count >= 2);
    assert.ok(target, 'a group of two likes or more on the second page');
    const liker = [...fans, ...lates].find((u) => u.data.username === target.actors[0].username)!;
    const unliked = await gw.gql('mutation($p: ID!) { unlikePin(pinId: $p) { id } }', { p: target.pin.id }, { token: await gw.token(liker.id) });
    assert.equal(unliked.body.errors, undefined, JSON.stringify(unliked.body.errors));
    const secondAfter = await page(fresh.data.pageInfo.endCursor);
    assert.ok(secondAfter.sql > 0, 'the unlike dropped the cached second page');
    const group = secondAfter.data.edges.find((e: any) => e.node.pin.id === target.pin.id);
    assert.equal(group.node.count, target.count - 1, 'the unliked like no longer counts');
    assert.ok(!group.node.actors.some((a: any) => a.username === liker.data.username), 'nor shows its actor');
  });

  test('latestActivity: the newest perKind shown events of each kind, reading on past deleted comments', async () => {
    const owner = await user('l_owner');
    const board = await writes.createBoard(owner.id, { name: 'l' });
    const pin = await writes.createPin(owner.id, board.id, { title: 'l' });
    const author = await userAwayFrom('l_author', owner.id);
    const comments: StoredObject[] = [];
    for (const text of ['c1', 'c2', 'c3', 'c4', 'c5']) comments.push(await writes.createComment(author.id, pin.id, text));
    await writes.likePin(author.id, pin.id);
    const LATEST = `query($id: ID!, $n: Int, $kinds: [ActivityKind!]) { user(id: $id) { latestActivity(kinds: $kinds, perKind: $n) { kind events { kind comment { text } pin { id } } } } }`;
    const latest = async (n: number, kinds = ['COMMENT', 'LIKE']) => {
      // One column per kind asked, in the schema's order of kinds.
      const r = await gw.gql(LATEST, { id: formatId(author.id), n, kinds });
      assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
      return r.body.data.user.latestActivity.map((c: any) => `${c.kind}: ${c.events.map((e: any) => e.comment?.text ?? e.pin.id).join(',')}`);
    };
    const token = await gw.token(author.id);
    // Through the gateway, as a client deletes.
    const deleteComment = async (c: StoredObject) => {
      const r = await gw.gql('mutation($id: ID!) { deleteComment(id: $id) { __typename } }', { id: formatId(c.id) }, { token });
      assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
    };
    assert.deepEqual(await latest(2), [`LIKE: ${formatId(pin.id)}`, 'COMMENT: c5,c4']);
    // The newest comment deleted: the next one stands in (the store cannot see the deletion: the
    // comment lives on its pin's shard, not the author's).
    await deleteComment(comments[4]!);
    assert.deepEqual(await latest(1), [`LIKE: ${formatId(pin.id)}`, 'COMMENT: c4']);
    // Three more deleted: reads on (1, then 2, then 4 events) to the oldest.
    for (const c of comments.slice(1, 4)) await deleteComment(c);
    assert.deepEqual(await latest(1, ['COMMENT']), ['COMMENT: c1']);
    assert.deepEqual(await latest(3), [`LIKE: ${formatId(pin.id)}`, 'COMMENT: c1']);
    await deleteComment(comments[0]!);
    assert.deepEqual(await latest(1), [`LIKE: ${formatId(pin.id)}`, 'COMMENT: '], 'none left: an empty column');
  });

  test('since later than until is INVALID_ARGUMENT naming both, on every field with the pair; since equal to until is an empty list', async () => {
    const owner = await user('r_owner');
    const board = await writes.createBoard(owner.id, { name: 'r' });
    await writes.likePin(owner.id, (await writes.createPin(owner.id, board.id, { title: 'r' })).id);
    const token = await gw.token(owner.id);
    const since = '2026-11-20T12:00:00Z';
    const until = '2026-11-20T11:00:00Z';
    const fields = [
      ['user', 'pins'], ['user', 'likedPins'], ['user', 'activity'], ['user', 'notifications'], ['board', 'pins'],
    ] as const;
    for (const [parent, field] of fields) {
      const query = `query($id: ID!, $since: String, $until: String) { ${parent}(id: $id) { ${field}(since: $since, until: $until) { edges { cursor } } } }`;
      const id = formatId(parent === 'user' ? owner.id : board.id);
      const r = await gw.gql(query, { id, since, until }, { token });
      assert.deepEqual(codes(r), ['INVALID_ARGUMENT'], `${parent}.${field}: ${r.text}`);
      assert.match(r.body.errors![0]!.message, /since.*"2026-11-20T12:00:00Z".*until.*"2026-11-20T11:00:00Z"/, `${parent}.${field}`);
      assert.deepEqual(r.body.errors![0]!.path, [parent, field]);
      const empty = await gw.gql(query, { id, since, until: since }, { token });
      assert.equal(empty.body.errors, undefined, `${parent}.${field}: ${empty.text}`);
      assert.deepEqual(empty.body.data[parent][field].edges, [], `${parent}.${field}: an empty range, no error`);
    }
  });

  test('a deleted account\'s likes and follows and a deleted repin stop counting at once, cached page or not', async () => {
    const owner = await user('d_owner');
    const board = await writes.createBoard(owner.id, { name: 'd' });
    const pin = await writes.createPin(owner.id, board.id, { title: 'd' });
    const [gone, repinner, stays] = [await user('d_gone'), await user('d_repinner'), await user('d_stays')];
    await writes.likePin(gone.id, pin.id);
    await writes.followUser(gone.id, owner.id);
    await writes.followBoard(gone.id, board.id);
    await writes.likePin(repinner.id, pin.id);
    const theirs = await writes.createBoard(repinner.id, { name: 'saved' });
    const repin = await writes.repin(repinner.id, pin.id, theirs.id);
    await writes.likePin(stays.id, pin.id);
    const token = await gw.token(owner.id);
    const read = async () => {
      const r = await gw.gql(NOTIFICATIONS, { first: 10 }, { token });
      assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
      const groups = r.body.data.viewer.notifications.edges.map((e: any) => `${e.node.kind} ${e.node.count} ${e.node.actors.map((a: any) => a.username.replace(/[0-9]+$/, '')).join(',')}`);
      return { groups: groups.sort(), sql: r.body.extensions.cost.sqlRoundTrips as number };
    };
    const before = await read();
    assert.deepEqual(before.groups, ['FOLLOW_BOARD 1 d_gone', 'FOLLOW_USER 1 d_gone', 'LIKE 3 d_stays,d_repinner,d_gone', 'REPIN 1 d_repinner']);
    assert.equal((await read()).sql, 0, 'the page is cached');

    const as = async (who: StoredObject, mutation: string) => {
      const r = await gw.gql(`mutation { ${mutation} { deleted } }`, {}, { token: await gw.token(who.id) });
      assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
    };
    await as(gone, 'deleteViewer');
    assert.deepEqual((await read()).groups, ['LIKE 2 d_stays,d_repinner', 'REPIN 1 d_repinner'], 'the account\'s like and follows are gone');
    assert.equal((await read()).sql, 0, 'cached again');
    await as(repinner, `deletePin(id: "${formatId(repin.id)}")`);
    assert.deepEqual((await read()).groups, ['LIKE 2 d_stays,d_repinner'], 'the repin is gone');
  });
});
