import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { shardOf } from '../../src/core/ids.ts';
import { modShardOf, normalizeLookupKey } from '../../src/core/modShard.ts';
import { modShardDatabase, shardDatabase } from '../../src/core/topology.ts';
import type { GqlResult } from '../helpers/gateway.ts';
import { createUsers, ms, startLoad, type LoadUser } from '../helpers/load.ts';
import { topologyEnv, type TopologyEnv } from '../helpers/topologyEnv.ts';

let env: TopologyEnv;
let users: LoadUser[];

before(async () => {
  env = await topologyEnv('move', { refreshMs: 1000 });
  users = await createUsers(env.gql, 40, 'mover');
});
after(async () => {
  await env?.close();
});

/** The window of `width` shards on `host` holding the most users. */
function busiestSpan(host: string, width: number): { from: number; to: number; users: number } {
  const t = env.gateway.topology();
  const shards = [...Array(16).keys()].filter((s) => t.hostOfShard(s) === host);
  let best = { from: shards[0]!, to: shards[0]! + width - 1, users: -1 };
  for (const from of shards) {
    const to = from + width - 1;
    if (t.hostOfShard(to) !== host) continue;
    const n = users.filter((u) => u.shard >= from && u.shard <= to).length;
    if (n > best.users) best = { from, to, users: n };
  }
  return best;
}

describe('Topology: opening a new range', () => {
  test('open-range provisions and publishes shards on mysql003; new users start landing there', async () => {
    const r = await env.cli(['topology', 'open-range', '--from', '16', '--to', '19', '--host', 'mysql003']);
    assert.equal(r.code, 1, 'without --yes and without a terminal it refuses');
    assert.match(r.stderr, /pass --yes/);
    assert.equal(env.gateway.topology().openShardCount, 16);

    const run = await env.cli(['topology', 'open-range', '--from', '16', '--to', '19', '--host', 'mysql003', '--yes']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /\+ shards 16–19 \(4\) on mysql003/);
    const seenIn = await env.until('the gateway to open shards 16–19', () => env.gateway.topology().openShardCount === 20);
    assert.deepEqual(await env.admin.existingDatabases(env.stack.mysql.hosts[2]!.primary, ['db00016', 'db00019']), ['db00016', 'db00019']);

    let signUps = 0;
    let landed: LoadUser | undefined;
    while (!landed && signUps < 200) {
      const [u] = await createUsers(env.gql, 1, `newcomer${signUps++}`);
      if (u!.shard >= 16) landed = u;
    }
    assert.ok(landed, 'a new user lands on the new range');
    const profile = await env.gql(
      `query($id: ID!) { user(id: $id) { username boards(first: 1) { edges { node { name } } } } }`,
      { id: landed.id },
      landed.token,
    );
    assert.equal(profile.body.data.user.boards.edges[0].node.name, 'main');
    console.log(
      `# open-range 16–19 on mysql003: command ${ms(run.ms)}, in force at the gateway ${ms(seenIn)} after it returned; first user on shard ${landed.shard} after ${signUps} sign-ups`,
    );
  });
});

describe('Topology: moving shards to another host under load', () => {
  test('0 acknowledged writes lost, every read succeeds, the write pause is measured', async () => {
    const span = busiestSpan('mysql001', 3);
    assert.ok(span.users > 0, 'users live on the shards that move');
    const moving = (s: number): boolean => s >= span.from && s <= span.to;
    const target = env.stack.mysql.hosts[2]!.primary;
    const source = env.stack.mysql.hosts[0]!.primary;

    const load = startLoad(env.gql, users, { workers: 4, writeShare: 0.4 });
    await env.until('some load before the move', () => load.stats.acked.filter((a) => moving(a.shard)).length >= 5);
    const beforeMove = load.stats.acked.length;

    const move = await env.cli(['topology', 'move', '--shards', `${span.from}-${span.to}`, '--to', 'mysql003', '--yes']);
    assert.equal(move.code, 0, `${move.stdout}\n${move.stderr}`);
    const flippedAt = Date.now();
    const reported = /Write pause: (\d+) ms \(gateways (\d+) ms, open writes (\d+) ms, copy (\d+) ms, verify (\d+) ms; (\d+) gateway/.exec(move.stdout);
    assert.ok(reported, move.stdout);
    assert.equal(reported[6], '1', 'the in-process gateway registered itself and was waited for');
    assert.equal(env.gateway.topology().hostOfShard(span.from), 'mysql003', 'the gateway serves the flip when the command returns');

    // Keep the load going on the new map, with writes landing on the moved shards.
    await env.until('writes to the moved shards after the flip', () => load.stats.acked.filter((a) => moving(a.shard) && a.at > flippedAt).length >= 5);
    const stats = await load.stop();

    assert.deepEqual(stats.failures, [], 'no read or write failed (WRITES_PAUSED is retried)');
    const lost = await env.lostWrites(stats.acked);
    assert.deepEqual(lost, [], 'every acknowledged write is in MySQL where the map says');
    const movedAcked = stats.acked.filter((a) => moving(a.shard));
    // The new rows are on the target only: the source copy was frozen at the flip.
    const shardList = [...Array(span.to - span.from + 1).keys()].map((i) => span.from + i);
    const [onTarget, onSource] = await Promise.all([
      env.admin.fingerprint(target, shardList.map(shardDatabase)),
      env.admin.fingerprint(source, shardList.map(shardDatabase)),
    ]);
    const pinsOn = (f: Map<string, { rows: number }>): number => shardList.reduce((n, s) => n + (f.get(`${shardDatabase(s)}.pins`)?.rows ?? 0), 0);
    assert.ok(pinsOn(onTarget) >= movedAcked.length, `target holds every pin written to the moved shards (${pinsOn(onTarget)} ≥ ${movedAcked.length})`);
    assert.ok(pinsOn(onSource) < pinsOn(onTarget), 'the source copy is kept, frozen at the flip');
    assert.ok(stats.acked.every((a) => shardOf(BigInt(a.pinId)) === a.shard));

    const clientPause = stats.firstPausedAt !== undefined && stats.lastPausedAt !== undefined ? stats.lastPausedAt - stats.firstPausedAt : 0;
    console.log(
      `# shard move ${span.from}–${span.to} (${span.users} of ${users.length} users) mysql001 → mysql003 under load: ` +
        `${stats.reads} reads and ${stats.writes} writes, 0 failed; ${stats.acked.length} acknowledged (${beforeMove} before the move), 0 lost; ` +
        `write pause ${reported[1]} ms (gateways ${reported[2]} ms, open writes ${reported[3]} ms, copy ${reported[4]} ms, verify ${reported[5]} ms); ` +
        `clients saw WRITES_PAUSED ${stats.pausedRetries} times over ${clientPause} ms; command ${ms(move.ms)}`,
    );
  });

  test('the moved shards can be moved back, dropping the copy they leave', async () => {
    const t = env.gateway.topology();
    const onThree = [...Array(16).keys()].filter((s) => t.hostOfShard(s) === 'mysql003');
    const from = onThree[0]!;
    const to = onThree.at(-1)!;
    const back = await env.cli(['topology', 'move', '--shards', `${from}-${to}`, '--to', 'mysql001', '--drop-source', '--yes']);
    assert.equal(back.code, 0, `${back.stdout}\n${back.stderr}`);
    assert.equal(env.gateway.topology().hostOfShard(from), 'mysql001');
    assert.deepEqual(await env.admin.existingDatabases(env.stack.mysql.hosts[2]!.primary, [shardDatabase(from)]), [], 'dropped on mysql003');
    const all = startLoad(env.gql, users, { workers: 2 });
    await env.until('a few requests', () => all.stats.reads + all.stats.writes > 40);
    const stats = await all.stop();
    assert.deepEqual(stats.failures, []);
    console.log(`# move back ${from}–${to} → mysql001 with --drop-source: ${/Write pause: \d+ ms/.exec(back.stdout)?.[0]}`);
  });
});

/**
 * Sign-ups (each claims a username and an email on the mod shards) and look-ups by username, by a
 * few workers until stopped. A retryable error (WRITES_PAUSED; SHARD_UNAVAILABLE for a statement the
 * move cancelled on the locked source) is retried with the same username, email and Idempotency-Key,
 * as a client should, and counted; any other failure is recorded. Acknowledged: a createUser that returned the user.
 */
function startSignUps(gql: TopologyEnv['gql'], prefix: string, workers = 4) {
  const acked: { username: string; email: string; id: string; at: number }[] = [];
  const failures: { what: string; code: string; message: string }[] = [];
  const retries = new Map<string, number>();
  let lookups = 0;
  let n = 0;
  let running = true;
  const signUp = async (): Promise<void> => {
    const username = `${prefix}${n++}`;
    const email = `${username}@example.com`;
    const started = Date.now();
    for (;;) {
      const r = await gql(`mutation($u: String!, $e: String!) { createUser(input: { username: $u, email: $e }) { user { id } } }`, { u: username, e: email }, undefined, {
        'Idempotency-Key': `sign-up-${username}`,
      });
      const id = r.body.data?.createUser?.user?.id;
      if (id !== undefined && r.body.errors === undefined) {
        acked.push({ username, email, id: String(id), at: Date.now() });
        return;
      }
      const e = r.body.errors?.[0];
      const code = String(e?.extensions?.code);
      if (e?.extensions?.retryable === true && Date.now() - started < 20_000) {
        retries.set(code, (retries.get(code) ?? 0) + 1);
        await new Promise((res) => setTimeout(res, 10));
        continue;
      }
      failures.push({ what: `createUser ${username}`, code: String(e?.extensions?.code ?? 'NO_DATA'), message: e?.message ?? r.text.slice(0, 200) });
      return;
    }
  };
  const lookUp = async (): Promise<void> => {
    const known = acked[Math.floor(Math.random() * acked.length)]!;
    lookups++;
    const r = await gql(`query($u: String!) { user(username: $u) { id } }`, { u: known.username });
    if (r.body.data?.user?.id !== known.id) failures.push({ what: `user(username: ${known.username})`, code: String(r.body.errors?.[0]?.extensions?.code ?? 'WRONG_DATA'), message: r.text.slice(0, 200) });
  };
  const worker = async (): Promise<void> => {
    while (running) await (acked.length > 0 && Math.random() < 0.5 ? lookUp() : signUp());
  };
  const all = Array.from({ length: workers }, worker);
  return {
    acked,
    failures,
    async stop() {
      running = false;
      await Promise.all(all);
      return { acked, failures, retries, lookups };
    },
  };
}

describe('Topology: moving mod shards to another host under load', () => {
  test('sign-ups and look-ups by username go on: 0 acknowledged sign-ups lost, every look-up answers, the write pause is measured', async () => {
    const t0 = env.gateway.topology();
    const count = t0.doc.modShard.count;
    const onFirst = [...Array(count).keys()].filter((m) => t0.hostOfModShard(m) === 'mysql001');
    assert.ok(onFirst.length > 0, 'mysql001 holds mod shards');
    const [from, to] = [onFirst[0]!, onFirst.at(-1)!];
    const moving = (username: string): boolean => onFirst.includes(modShardOf(normalizeLookupKey(username), count));
    const target = env.stack.mysql.hosts[2]!.primary;
    const source = env.stack.mysql.hosts[0]!.primary;

    const load = startSignUps(env.gql, 'modmove');
    let beforeMove = 0;
    let move: Awaited<ReturnType<TopologyEnv['cli']>>;
    let reported: RegExpExecArray | null;
    try {
      await env.until('sign-ups on the mod shards that move', () => load.acked.filter((a) => moving(a.username)).length >= 5, 60_000);
      beforeMove = load.acked.length;

      move = await env.cli(['topology', 'move', '--mod-shards', `${from}-${to}`, '--to', 'mysql003', '--yes']);
      assert.equal(move.code, 0, `${move.stdout}\n${move.stderr}`);
      const flippedAt = Date.now();
      assert.match(move.stdout, new RegExp(`~ mod shards ${from}–${to} \\(${onFirst.length}\\) move mysql001 → mysql003`));
      reported = /Write pause: (\d+) ms \(gateways (\d+) ms, open writes (\d+) ms, copy (\d+) ms, verify (\d+) ms; (\d+) gateway/.exec(move.stdout);
      assert.ok(reported, move.stdout);
      assert.equal(reported[6], '1', 'the in-process gateway registered itself and was waited for');
      const t1 = env.gateway.topology();
      assert.deepEqual(
        onFirst.map((m) => t1.hostOfModShard(m)),
        onFirst.map(() => 'mysql003'),
        'the gateway serves the flip when the command returns',
      );
      assert.equal(t1.doc.pausedModShards, undefined, 'the pause is lifted');
      assert.ok(t1.doc.modShard.ranges.every((r) => r.host !== 'mysql001'), 'mysql001 holds no mod shard any more: drained');

      await env.until('sign-ups on the moved mod shards after the flip', () => load.acked.filter((a) => moving(a.username) && a.at > flippedAt).length >= 5, 60_000);
    } finally {
      await load.stop();
    }
    const stats = await load.stop();
    assert.deepEqual(stats.failures, [], 'no sign-up or look-up failed (retryable answers are retried)');

    // Every acknowledged sign-up: its username and its email are held for its ID, where the map says.
    const resolved: (string | undefined)[] = [];
    for (let i = 0; i < stats.acked.length; i += 10) {
      const chunk = stats.acked.slice(i, i + 10);
      const answers = await Promise.all(chunk.map((a) => env.gql(`query($u: String!) { user(username: $u) { id } }`, { u: a.username })));
      resolved.push(...answers.map((r) => r.body.data?.user?.id as string | undefined));
    }
    assert.deepEqual(resolved, stats.acked.map((a) => a.id), 'every acknowledged username resolves to its user');
    const taken = await env.gql(`mutation($u: String!, $e: String!) { createUser(input: { username: $u, email: $e }) { user { id } } }`, {
      u: `other${Date.now() % 100000}`,
      e: stats.acked.filter((a) => moving(a.email)).at(-1)?.email ?? stats.acked.at(-1)!.email,
    });
    assert.equal(taken.body.errors?.[0]?.extensions?.code, 'EMAIL_TAKEN', 'the emails moved with them');

    // The rows are on the target; the source copy was frozen at the flip (kept: no --drop-source).
    const dbs = onFirst.map(modShardDatabase);
    const [onTarget, onSource] = await Promise.all([env.admin.fingerprint(target, dbs), env.admin.fingerprint(source, dbs)]);
    const lookupsOn = (f: Map<string, { rows: number }>): number => dbs.reduce((k, db) => k + (f.get(`${db}.lookups`)?.rows ?? 0), 0);
    const movedKeys = stats.acked.filter((a) => moving(a.username)).length + stats.acked.filter((a) => moving(a.email)).length;
    assert.ok(lookupsOn(onTarget) >= movedKeys, `the target holds every username and email of the moved mod shards (${lookupsOn(onTarget)} ≥ ${movedKeys})`);
    assert.ok(lookupsOn(onSource) < lookupsOn(onTarget), 'the source copy is kept, frozen at the flip');

    console.log(
      `# mod-shard move ${from}–${to} mysql001 → mysql003 under sign-ups: ${stats.acked.length} sign-ups acknowledged (${beforeMove} before the move), 0 lost; ` +
        `${stats.lookups} look-ups by username, 0 failed; write pause ${reported[1]} ms (gateways ${reported[2]} ms, open writes ${reported[3]} ms, ` +
        `copy ${reported[4]} ms, verify ${reported[5]} ms); clients retried ${[...stats.retries].map(([c, k]) => `${c} ${k}×`).join(', ') || 'nothing'}; command ${ms(move.ms)}`,
    );
  });

  test('the moved mod shards can be moved back, dropping the copy they leave', async () => {
    const t = env.gateway.topology();
    const onThree = [...Array(t.doc.modShard.count).keys()].filter((m) => t.hostOfModShard(m) === 'mysql003');
    const back = await env.cli(['topology', 'move', '--mod-shards', `${onThree[0]}-${onThree.at(-1)}`, '--to', 'mysql001', '--drop-source', '--yes']);
    assert.equal(back.code, 0, `${back.stdout}\n${back.stderr}`);
    assert.equal(env.gateway.topology().hostOfModShard(onThree[0]!), 'mysql001');
    assert.deepEqual(await env.admin.existingDatabases(env.stack.mysql.hosts[2]!.primary, onThree.map(modShardDatabase)), [], 'dropped on mysql003');
    const load = startSignUps(env.gql, 'modback', 2);
    await env.until('a few sign-ups and look-ups', () => load.acked.length >= 10, 60_000);
    const stats = await load.stop();
    assert.deepEqual(stats.failures, []);
    console.log(`# mod shards back ${onThree[0]}–${onThree.at(-1)} → mysql001 with --drop-source: ${/Write pause: \d+ ms/.exec(back.stdout)?.[0]}`);
  });
});

describe('Topology: likes between two shards of one host while the pins\' shard moves to another', () => {
  test('every acknowledged like and unlike holds on both sides after the move, each count equal to its list', async () => {
    const t = env.gateway.topology();
    // Fans on shard `a` and pin owners on shard `b`, both on mysql001: their likes commit both sides in
    // one transaction until `b` (the pins' side, the one a like writes second) moves to mysql003, and in
    // two (one per host) after; while `b` is paused for the move, they must not write it on mysql001.
    const byShard = new Map<number, LoadUser[]>();
    for (const u of users) if (t.hostOfShard(u.shard) === 'mysql001') byShard.set(u.shard, [...(byShard.get(u.shard) ?? []), u]);
    const [a, b] = [...byShard.entries()].sort((x, y) => y[1].length - x[1].length).map(([s]) => s);
    assert.ok(a !== undefined && b !== undefined, 'two shards of mysql001 with users');
    const fans = byShard.get(a)!.slice(0, 3);
    const owners = byShard.get(b)!.slice(0, 2);
    const pins: string[] = [];
    for (const o of owners) {
      for (let i = 0; i < 3; i++) {
        const r = await env.gql(`mutation($board: ID!, $title: String!) { createPin(input: { boardId: $board, title: $title }) { id } }`, { board: o.boardId, title: `liked ${i}` }, o.token);
        assert.equal(r.body.errors, undefined, r.text);
        pins.push(String(r.body.data.createPin.id));
      }
    }
    /** The state each (fan, pin) was last acknowledged in. */
    const liked = new Map<string, boolean>();
    const failures: string[] = [];
    let acked = 0;
    let retried = 0;
    let running = true;
    const toggle = async (fan: LoadUser, pin: string): Promise<void> => {
      const want = !(liked.get(`${fan.id}:${pin}`) ?? false);
      const started = Date.now();
      for (;;) {
        const r = await env.gql(`mutation($p: ID!) { w: ${want ? 'likePin' : 'unlikePin'}(pinId: $p) { id } }`, { p: pin }, fan.token);
        if (r.body.errors === undefined && r.body.data?.w?.id === pin) {
          liked.set(`${fan.id}:${pin}`, want);
          acked++;
          return;
        }
        const e = r.body.errors?.[0];
        // Liking twice is one like (and unliking twice none): a retry after a refusal changes nothing more.
        if (e?.extensions?.retryable === true && Date.now() - started < 20_000) {
          retried++;
          await new Promise((res) => setTimeout(res, 10));
          continue;
        }
        failures.push(`${want ? 'like' : 'unlike'} ${pin} by ${fan.id}: ${r.text.slice(0, 200)}`);
        return;
      }
    };
    const workers = fans.map(async (fan, f) => {
      for (let i = f; running; i++) await toggle(fan, pins[i % pins.length]!);
    });
    await env.until('likes before the move', () => acked >= 20);
    const move = await env.cli(['topology', 'move', '--shards', `${b}-${b}`, '--to', 'mysql003', '--yes']);
    assert.equal(move.code, 0, `${move.stdout}\n${move.stderr}`);
    assert.equal(env.gateway.topology().hostOfShard(b), 'mysql003');
    const atFlip = acked;
    await env.until('likes after the move', () => acked >= atFlip + 20);
    running = false;
    await Promise.all(workers);
    assert.deepEqual(failures, [], 'no like or unlike failed (a retryable refusal is retried)');

    // Both sides as the gateway reads them: every fan's liked pins and count, every pin's likers and count.
    for (const fan of fans) {
      const want = pins.filter((p) => liked.get(`${fan.id}:${p}`) === true).sort();
      const r = await env.gql(`query($id: ID!) { user(id: $id) { likeCount likedPins(first: 50) { edges { node { id } } } } }`, { id: fan.id }, fan.token);
      const got = (r.body.data.user.likedPins.edges as { node: { id: string } }[]).map((e) => e.node.id).sort();
      assert.deepEqual(got, want, `${fan.id}'s liked pins`);
      assert.equal(r.body.data.user.likeCount, want.length, `${fan.id}'s count`);
    }
    for (const pin of pins) {
      const want = fans.filter((f) => liked.get(`${f.id}:${pin}`) === true).map((f) => f.id).sort();
      const r = await env.gql(`query($id: ID!) { pin(id: $id) { likeCount likers(first: 50) { edges { node { id } } } } }`, { id: pin }, fans[0]!.token);
      const got = (r.body.data.pin.likers.edges as { node: { id: string } }[]).map((e) => e.node.id).sort();
      assert.deepEqual(got, want, `${pin}'s likers`);
      assert.equal(r.body.data.pin.likeCount, want.length, `${pin}'s count`);
    }
    console.log(`# likes across shards ${a} and ${b} while ${b} moved mysql001 → mysql003: ${acked} acknowledged (${atFlip} before the flip), ${retried} retried, both sides agree`);
  });
});
