import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { shardOf } from '../../src/core/ids.ts';
import { shardDatabase } from '../../src/core/topology.ts';
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
