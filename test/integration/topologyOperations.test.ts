/**
 * The topology operations' failure paths on the real stack (real etcd, real MariaDB primaries and
 * replicas, real gateways) — the unit tests run the same operations against in-memory fakes:
 *   - a shard move called off because a gateway lags (a gateway process frozen with SIGSTOP);
 *   - a shard move called off because the copy differs (a row changed on the target between the
 *     copy and its verification);
 *   - a shard move cut by etcd dying (SIGKILL) while it waits for the gateways: the pause stays, the
 *     error and `topology show` say so and how to finish, and the same move run again finishes it;
 *   - an etcd watch cancelled by a real compaction: the gateway re-reads and watches again;
 *   - `topology promote --force` while the primary still answers: fenced, then switched over.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import mysql from 'mysql2/promise';
import type { RowDataPacket } from 'mysql2/promise';
import { isShardqlError } from '../../src/core/errors.ts';
import { parseTopology, shardDatabase, type Endpoint, type TopologyDoc } from '../../src/core/topology.ts';
import { startGateway } from '../../src/server.ts';
import { createStorage } from '../../src/storage/index.ts';
import { shardCopyIo } from '../../src/storage/shardCopy.ts';
import { etcdTopologyStore, publishTopology } from '../../src/topology/etcdTopology.ts';
import { readGateways } from '../../src/topology/etcdTopologySource.ts';
import { TopologyOperationError } from '../../src/topology/operations/errors.ts';
import { moveShards, planMove } from '../../src/topology/operations/moveShards.ts';
import type { ShardCopyIo } from '../../src/core/serverIo.ts';
import { startDelayProxy } from '../helpers/delayProxy.ts';
import { servedTestEvents } from '../helpers/env.ts';
import { TEST_JWT_SECRET } from '../helpers/gateway.ts';
import { createUsers, ms, type LoadUser } from '../helpers/load.ts';
import { TOPOLOGY_KEY, topologyEnv, type TopologyEnv } from '../helpers/topologyEnv.ts';
import { cliArgv } from '../helpers/cli.ts';
import { startService, stopService } from '../../src/stack/localStack.ts';

const ROOT = resolve(import.meta.dirname, '../..');
let env: TopologyEnv;
let users: LoadUser[];
const children: ChildProcess[] = [];

before(async () => {
  env = await topologyEnv('operations', { refreshMs: 1000 });
  users = await createUsers(env.gql, 24, 'ops');
});
after(async () => {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill('SIGCONT');
      c.kill('SIGKILL');
    }
  }
  await env?.close();
});

const admin = (): { user: string; password: string } => env.stack.mysql.admin!;
const host = (name: string): { primary: Endpoint; replica?: Endpoint } => env.stack.mysql.hosts.find((h) => h.name === name)!;
const store = () => etcdTopologyStore(env.etcd, TOPOLOGY_KEY);

async function sql(server: Endpoint, text: string, values: unknown[] = [], credentials = admin()): Promise<RowDataPacket[]> {
  const c = await mysql.createConnection({ host: server.host, port: server.port, user: credentials.user, password: credentials.password });
  try {
    const [rows] = await c.query<RowDataPacket[]>(text, values);
    return rows;
  } finally {
    await c.end();
  }
}

async function readOnly(server: Endpoint): Promise<boolean> {
  return Number((await sql(server, 'SELECT @@global.read_only AS ro'))[0]?.ro) === 1;
}

/** Two neighbouring shards on `host`, the first holding a user (the move copies a real row). */
function spanWithUser(onHost: string): { from: number; to: number; user: LoadUser } {
  const t = env.gateway.topology();
  for (const u of users) {
    if (t.hostOfShard(u.shard) === onHost && t.hostOfShard(u.shard + 1) === onHost) return { from: u.shard, to: u.shard + 1, user: u };
  }
  throw new Error(`no user on two neighbouring shards of ${onHost}`);
}

const databasesOf = (span: { from: number; to: number }): string[] => [span.from, span.to].map(shardDatabase);

async function createPin(user: LoadUser, title: string): Promise<string> {
  const r = await env.gql(`mutation($b: ID!, $t: String!) { createPin(input: { boardId: $b, title: $t }) { id title } }`, { b: user.boardId, t: title }, user.token);
  assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
  assert.equal(r.body.data.createPin.title, title);
  return r.body.data.createPin.id as string;
}

async function pinTitle(user: LoadUser, id: string): Promise<unknown> {
  const r = await env.gql(`query($id: ID!) { pin(id: $id) { title } }`, { id }, user.token);
  assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
  return r.body.data.pin?.title;
}

/** `shardql <args>` in its own process against this stack, its output collected as it comes. */
function startCliProcess(...args: string[]): { child: ChildProcess; stdout(): string; stderr(): string; exited: Promise<number> } {
  const childEnv: Record<string, string | undefined> = { ...process.env, SHARDQL_STACK_DIR: env.dir, SHARDQL_PORT: '0' };
  for (const k of Object.keys(childEnv)) if (/^SHARDQL_(ETCD|MYSQL_|TOPOLOGY_KEY|REDIS|MEMCACHED|ENV)/.test(k)) delete childEnv[k];
  const child = spawn(process.execPath, cliArgv(...args), { cwd: ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<number>((resolveExit) => child.once('close', (code) => resolveExit(code ?? -1)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** `shardql serve` in its own process against this stack: a real gateway that registers in etcd. */
async function startGatewayProcess(): Promise<{ child: ChildProcess; id: string; log(): string }> {
  const { child, stdout, stderr } = startCliProcess('serve');
  const { modRevision } = await store().read();
  let id = '';
  await env.until(
    'the gateway process to register the map in force',
    async () => {
      if (child.exitCode !== null) throw new Error(`the gateway process exited (${child.exitCode}): ${stderr()}`);
      const mine = (await readGateways(env.etcd, TOPOLOGY_KEY)).find((g) => g.pid === child.pid);
      id = mine?.revision === modRevision ? mine.id : '';
      return id !== '';
    },
    30_000,
  );
  return { child, id, log: () => `${stdout()}${stderr()}` };
}

describe('Topology move called off on the real stack', () => {
  test('a gateway that lags (a real gateway process, frozen) calls the move off; the map and the data are as they were', async () => {
    const span = spanWithUser('mysql001');
    const source = host('mysql001').primary;
    const target = host('mysql003').primary;
    const before = await store().read();
    const sourceBefore = await env.admin.fingerprint(source, databasesOf(span));
    const lagging = await startGatewayProcess();

    // Frozen as a gateway stuck in a GC pause or a dead event loop would be: registered, alive (its
    // lease outlives the wait), serving the old map, never acknowledging the pause.
    lagging.child.kill('SIGSTOP');
    let error: unknown;
    const started = Date.now();
    try {
      const plan = planMove(before.topology.doc, { shards: span, to: 'mysql003' });
      await moveShards({ store: store(), copier: shardCopyIo(admin()) }, plan, before.modRevision, { gatewayTimeoutMs: 1500 });
    } catch (err) {
      error = err;
    } finally {
      lagging.child.kill('SIGCONT');
    }
    const took = Date.now() - started;
    assert.ok(error instanceof TopologyOperationError, `the move was refused: ${String(error)}`);
    const message = error.message;
    assert.match(message, new RegExp(`^After \\d+ ms, gateways still serve an older map: ${lagging.id} \\(revision ${before.modRevision}\\)\\. `));
    const resumed = /The move was called off: writes resumed \(revision (\d+)\), the map is unchanged, the partial copy on mysql003 was dropped$/.exec(message);
    assert.ok(resumed, message);

    // The map: as it was (only the pause and its lifting were published); every live gateway follows.
    const now = await store().read();
    assert.equal(now.modRevision, resumed[1]);
    assert.deepEqual(now.topology.doc, before.topology.doc);
    await env.until('the in-process gateway to serve the lifted pause', () => env.gateway.topology().doc.pausedShards === undefined && env.gateway.topology().hostOfShard(span.from) === 'mysql001');
    // The data: the source untouched, nothing left on the target.
    assert.deepEqual(await env.admin.fingerprint(source, databasesOf(span)), sourceBefore);
    assert.deepEqual(await env.admin.existingDatabases(target, databasesOf(span)), []);
    // The source still serves reads and writes of those shards.
    const pin = await createPin(span.user, 'after a lagging gateway');
    assert.equal(await pinTitle(span.user, pin), 'after a lagging gateway');
    // The frozen gateway was lagging, not gone: thawed, it catches up.
    const caughtUp = await env
      .until('the thawed gateway to serve the lifted pause', async () =>
        (await readGateways(env.etcd, TOPOLOGY_KEY)).some((g) => g.pid === lagging.child.pid && BigInt(g.revision) >= BigInt(resumed[1]!)),
      )
      .catch(async (err: unknown) => {
        throw new Error(`${String(err)}\n${lagging.log()}\n${JSON.stringify(await readGateways(env.etcd, TOPOLOGY_KEY))} pid ${lagging.child.pid}`);
      });
    // Gone before the next move: a gateway shutting down keeps its entry (serving no new map) until it exits.
    const exited = new Promise((r) => lagging.child.once('exit', r));
    lagging.child.kill('SIGTERM');
    await exited;
    await env.until('the stopped gateway to leave etcd', async () => !(await readGateways(env.etcd, TOPOLOGY_KEY)).some((g) => g.pid === lagging.child.pid));
    console.log(`# move of shards ${span.from}–${span.to} with a frozen gateway: called off after ${ms(took)} ("${message.slice(0, 90)}…"); the thawed gateway caught up in ${ms(caughtUp)}`);
  });

  test('a copy that differs (a row changed on the target after the copy, before the verification) calls the move off', async () => {
    const span = spanWithUser('mysql001');
    const source = host('mysql001').primary;
    const target = host('mysql003').primary;
    const before = await store().read();
    const sourceBefore = await env.admin.fingerprint(source, databasesOf(span));
    const board = await env.gql(`query($id: ID!) { user(id: $id) { boards(first: 1) { edges { node { id name } } } } }`, { id: span.user.id }, span.user.token);
    assert.equal(board.body.data.user.boards.edges[0].node.name, 'main');

    // The real copier, with one step boundary used: once the rows are on the target (and its
    // auto-increments aligned) and before both sides are fingerprinted, a row changes there.
    const real = shardCopyIo(admin());
    const changed: number[] = [];
    const copier: ShardCopyIo = {
      ...real,
      alignAutoIncrements: async (from, to, databases) => {
        const n = await real.alignAutoIncrements(from, to, databases);
        const rows = await sql(to, `SELECT COUNT(*) AS n FROM ${shardDatabase(span.from)}.boards`);
        assert.ok(Number(rows[0]!.n) >= 1, 'the copy holds the board');
        const res = (await sql(to, `UPDATE ${shardDatabase(span.from)}.boards SET data = JSON_SET(data, '$.name', 'changed on the copy') ORDER BY local_id LIMIT 1`)) as unknown as { affectedRows: number };
        changed.push(res.affectedRows);
        return n;
      },
    };
    let error: unknown;
    try {
      await moveShards({ store: store(), copier }, planMove(before.topology.doc, { shards: span, to: 'mysql003' }), before.modRevision, { gatewayTimeoutMs: 5000 });
    } catch (err) {
      error = err;
    }
    assert.deepEqual(changed, [1], `one row was changed on the target, once (the move ended with: ${String(error)})`);
    assert.ok(error instanceof TopologyOperationError, `the move was refused: ${String(error)}`);
    assert.match(
      error.message,
      new RegExp(`^The copy on mysql003 differs from mysql001: ${shardDatabase(span.from)}\\.boards: checksum \\d+ on the source, \\d+ on the target\\. The move was called off: writes resumed \\(revision (\\d+)\\), the map is unchanged, the partial copy on mysql003 was dropped$`),
    );
    const now = await store().read();
    assert.deepEqual(now.topology.doc, before.topology.doc, 'nothing was published but the pause and its lifting');
    await env.until('the gateway to serve the lifted pause', () => env.gateway.topology().doc.pausedShards === undefined);
    assert.equal(env.gateway.topology().hostOfShard(span.from), 'mysql001');
    assert.deepEqual(await env.admin.fingerprint(source, databasesOf(span)), sourceBefore, 'the source is untouched');
    assert.deepEqual(await env.admin.existingDatabases(target, databasesOf(span)), [], 'the differing copy is gone');
    // The source still serves: the board as it was, and new writes.
    const again = await env.gql(`query($id: ID!) { user(id: $id) { boards(first: 1) { edges { node { name } } } } }`, { id: span.user.id }, span.user.token);
    assert.equal(again.body.data.user.boards.edges[0].node.name, 'main');
    const pin = await createPin(span.user, 'after a differing copy');
    assert.equal(await pinTitle(span.user, pin), 'after a differing copy');
    console.log(`# move of shards ${span.from}–${span.to} whose copy was changed before verification: called off ("${error.message.slice(0, 110)}…")`);
  });
});

describe('Topology move interrupted by etcd dying while it waits for the gateways', () => {
  test('the command names the shards left paused and the command that finishes; `topology show` gives the pause its age and that command; the same move run again finishes it', async () => {
    const span = spanWithUser('mysql001');
    const label = `${span.from}–${span.to}`;
    const command = `shardql topology move --shards ${span.from}-${span.to} --to mysql003`;
    const lagging = await startGatewayProcess();
    const startedAt = Date.now();
    const running = startCliProcess('topology', 'move', '--shards', `${span.from}-${span.to}`, '--to', 'mysql003', '--gateway-timeout', '60000', '--yes');
    let frozenAt = 0;
    let pausedSeenAt = 0;
    let move: { code: number; stdout: string; stderr: string };
    try {
      // Frozen once the move has printed its plan (it then creates the tables, and pauses after): the
      // gateway never serves the pause, and is still registered (a 10 s lease) while the move waits for it.
      await env.until('the move to print its plan', () => /^  6\. keep the source databases/m.test(running.stdout()), 30_000);
      lagging.child.kill('SIGSTOP');
      frozenAt = Date.now();
      await env.until(
        'the move to publish the pause',
        async () => ((await store().read()).topology.doc.pausedShards ?? []).some((p) => p.from <= span.from && p.to >= span.to),
        30_000,
      );
      pausedSeenAt = Date.now();
      assert.ok(pausedSeenAt - frozenAt < 6000, `the pause was published ${pausedSeenAt - frozenAt} ms after the gateway froze, well within its lease`);
      await stopService(env.dir, 'etcd', 'SIGKILL');
      move = { code: await running.exited, stdout: running.stdout(), stderr: running.stderr() };
    } finally {
      await startService(env.dir, 'etcd');
      lagging.child.kill('SIGCONT');
    }

    // The command: exit 1, one line naming what failed, the shards left paused, and how to finish.
    assert.equal(move.code, 1, move.stdout);
    const pausedAt = new RegExp(`^Paused writes to shards ${label} \\(revision (\\d+)\\)$`, 'm').exec(move.stdout);
    assert.ok(pausedAt, move.stdout);
    const escaped = command.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    assert.match(
      move.stderr,
      new RegExp(
        `^shardql topology move: Waiting for the gateways to serve the pause failed: .+\\. The move was called off, but lifting the pause failed \\(.+\\): ` +
          `writes to shards ${label} stay paused \\(revision ${pausedAt[1]}; nothing is lost\\)\\. Run \`${escaped}\` again to finish the move: ` +
          'it resumes from the pause \\(`shardql topology show` lists it\\); or publish the map without the pause to call the move off\n$',
      ),
    );

    // The map: still paused, with the record of the move; the gateway refuses writes to those shards.
    const left = await store().read();
    assert.equal(left.modRevision, pausedAt[1], 'nothing was published after the pause');
    const record = left.topology.doc.moves?.find((m) => m.kind === 'shard' && m.to === 'mysql003');
    assert.deepEqual(record?.shards, [{ from: span.from, to: span.to }]);
    const since = Date.parse(record!.since);
    assert.ok(since >= startedAt && since <= pausedSeenAt, `the record says when the pause began (${record!.since})`);
    await env.until('the gateway to serve the pause', () => env.gateway.topology().isPaused(span.from));
    const refused = await env.gql(`mutation($b: ID!) { createPin(input: { boardId: $b, title: "while paused" }) { id } }`, { b: span.user.boardId }, span.user.token);
    assert.equal(refused.body.errors?.[0]?.extensions?.code, 'WRITES_PAUSED', refused.text);

    // `topology show`: the pause, its age, the move holding it and the command that finishes it.
    const show = await env.cli(['topology', 'show']);
    const shownAt = Date.now();
    assert.equal(show.code, 0, show.stderr);
    const line = new RegExp(
      `^Paused shards \\(writes refused\\): ${label} \\(2\\)\\n  ${label}: paused (?:(\\d+) min )?(\\d+) s ago \\(since ${record!.since.replace(/\./g, '\\.')}\\) ` +
        `by a move to mysql003 that has not finished; unless it is still running, finish it: ${escaped}$`,
      'm',
    ).exec(show.stdout);
    assert.ok(line, show.stdout);
    const age = Number(line[1] ?? 0) * 60 + Number(line[2]);
    assert.ok(age >= 0 && age <= Math.ceil((shownAt - since) / 1000), `the age (${age} s) is the time since the pause began`);

    // The thawed gateway catches up with the pause; then the same move, run again, finishes.
    await env.until(
      'every gateway to serve the pause',
      async () => (await readGateways(env.etcd, TOPOLOGY_KEY)).every((g) => BigInt(g.revision) >= BigInt(pausedAt[1]!)),
      30_000,
    );
    const again = await env.cli(['topology', 'move', '--shards', `${span.from}-${span.to}`, '--to', 'mysql003', '--yes']);
    assert.equal(again.code, 0, `${again.stdout}\n${again.stderr}`);
    assert.match(again.stdout, /2\. writes are already paused \(an interrupted move\): resume it/);
    assert.match(again.stdout, new RegExp(`^Writes were already paused to shards ${label} \\(revision ${pausedAt[1]}\\)$`, 'm'));
    assert.match(again.stdout, /^Moved 2 shards to mysql003: /m);
    const done = await store().read();
    assert.equal(done.topology.hostOfShard(span.from), 'mysql003');
    assert.equal(done.topology.doc.pausedShards, undefined);
    assert.equal(done.topology.doc.moves, undefined, 'the record went with the pause');
    await env.until('the gateway to serve the flip', () => env.gateway.topology().hostOfShard(span.from) === 'mysql003' && !env.gateway.topology().isPaused(span.from));
    const pin = await createPin(span.user, 'after the interrupted move');
    assert.equal(await pinTitle(span.user, pin), 'after the interrupted move');
    const shownAfter = await env.cli(['topology', 'show']);
    assert.match(shownAfter.stdout, /^Paused shards \(writes refused\): none\nPaused mod shards \(writes refused\): none$/m);

    const exited = new Promise((r) => lagging.child.once('exit', r));
    lagging.child.kill('SIGTERM');
    await exited;
    await env.until('the stopped gateway to leave etcd', async () => !(await readGateways(env.etcd, TOPOLOGY_KEY)).some((g) => g.pid === lagging.child.pid));
    console.log(`# move of shards ${label}, etcd killed while it waited for a frozen gateway: paused ${ms(pausedSeenAt - frozenAt)} after the freeze, exit 1 ("${move.stderr.slice(0, 100)}…"); shown paused ${age} s; run again: ${/Write pause: \d+ ms/.exec(again.stdout)?.[0]}`);
  });
});

describe('Topology watch cancelled by an etcd compaction', () => {
  test('a gateway cut off from etcd while the history it needs is compacted re-reads the map, watches again and applies a later change', async () => {
    const etcdUrl = new URL(env.stack.etcd.endpoints[0]!);
    const proxy = await startDelayProxy({ host: etcdUrl.hostname, port: Number(etcdUrl.port) });
    const events: Record<string, unknown>[] = [];
    // A re-read period far beyond the test: whatever it sees comes from the watch or its recovery.
    const gateway = await startGateway(
      {
        env: 'development',
        port: 0,
        etcdEndpoints: [`http://127.0.0.1:${proxy.port}`],
        topologyKey: TOPOLOGY_KEY,
        mysql: { user: env.stack.mysql.user, password: env.stack.mysql.password },
        redis: env.stack.redis,
        memcached: { servers: `${env.stack.memcached.host}:${env.stack.memcached.port}` },
        jwtSecret: TEST_JWT_SECRET,
        topologyRefreshMs: 600_000,
      },
      { log: (line: string) => void events.push(JSON.parse(line) as Record<string, unknown>), repair: { intervalMs: 0 } },
    );
    const original = (await store().read()).topology.doc;
    const closing = (from: number): TopologyDoc => ({ ...original, shards: { ...original.shards, open: [{ from: 0, to: from - 1 }] } });
    try {
      assert.equal(gateway.topology().openShardCount, 16);
      proxy.cut = true;
      const missed = await publishTopology(env.etcd, TOPOLOGY_KEY, closing(15));
      // One more revision, so the compaction is past the one the watch would resume from.
      const scratch = await env.etcd.put('/shardql-test/compaction-scratch').value(String(Date.now())).exec();
      await env.etcd.kv.compact({ revision: scratch.header.revision, physical: true });
      await assert.rejects(env.etcd.get(TOPOLOGY_KEY).revision(missed).exec(), /compacted/, 'the history the gateway needs is gone');
      assert.equal(gateway.topology().openShardCount, 16, 'cut off, the gateway never saw the change');

      proxy.cut = false;
      const recovered = await env.until('the gateway to recover the change it missed', () => gateway.topology().openShardCount === 15, 20_000);
      const broken = events.find((e) => e.event === 'topology_watch_broken');
      assert.ok(broken, `the watch was cancelled: ${JSON.stringify(events.map((e) => e.event))}`);
      const from = /^etcd cancelled the watch started at revision (\d+) /.exec(String(broken.error));
      assert.ok(from, String(broken.error));
      assert.ok(BigInt(from[1]!) <= BigInt(missed), `the watch needed revision ${missed} or earlier (it started at ${from[1]})`);
      assert.ok(BigInt(from[1]!) < BigInt(scratch.header.revision), `its start, ${from[1]}, was compacted away (compaction at ${scratch.header.revision})`);
      const reread = events.find((e) => e.event === 'topology_swapped' && e.revision === missed);
      assert.equal(reread?.via, 'read', 'the missed version came from a re-read');

      const later = await publishTopology(env.etcd, TOPOLOGY_KEY, closing(14));
      const watched = await env.until('the gateway to apply a later change', () => gateway.topology().openShardCount === 14, 5000);
      const swap = events.find((e) => e.event === 'topology_swapped' && e.revision === later);
      assert.equal(swap?.via, 'watch', 'the later version came through the new watch');
      console.log(
        `# etcd compacted past a cut-off gateway's watch: recovered the missed revision ${missed} ${ms(recovered)} after etcd was reachable again (watch cancelled: "${String(broken.error).slice(0, 80)}"), then revision ${later} through the new watch in ${ms(watched)}`,
      );
    } finally {
      proxy.cut = false;
      await gateway.stop(1000);
      await proxy.close();
      await publishTopology(env.etcd, TOPOLOGY_KEY, original);
      await env.until('the map restored at the gateway', () => env.gateway.topology().openShardCount === 16);
    }
  });
});

describe('Topology promote --force on the real stack', () => {
  test("a primary that still answers is fenced, its replica catches up and is promoted; writes go to the new primary, the old one refuses them", async () => {
    const victim = host('mysql002');
    const replica = victim.replica!;
    const owner = users.find((u) => env.gateway.topology().hostOfShard(u.shard) === 'mysql002')!;
    const stale = parseTopology(env.initial);
    const acked: string[] = [];
    for (let i = 0; i < 5; i++) acked.push(await createPin(owner, `before promote ${i}`));
    assert.equal(await readOnly(victim.primary), false);
    assert.equal(await readOnly(replica), true);

    const refused = await env.cli(['topology', 'promote', '--host', 'mysql002', '--yes']);
    assert.equal(refused.code, 1, 'without --force a primary that answers is not replaced');
    assert.match(refused.stderr, /answers: promoting its replica now would leave two writable primaries/);

    const promotion = await env.cli(['topology', 'promote', '--host', 'mysql002', '--force', '--yes']);
    assert.equal(promotion.code, 0, `${promotion.stdout}\n${promotion.stderr}`);
    assert.match(promotion.stdout, new RegExp(`Fenced the old primary ${victim.primary.host}:${victim.primary.port} \\(read_only\\); waiting for the replica to reach \\S+`));
    const applied = /received (\S+), applied (\S+);/.exec(promotion.stdout);
    assert.ok(applied && applied[1] === applied[2], promotion.stdout);

    // The new map: mysql002's primary is the old replica, with no replica.
    const now = await store().read();
    assert.deepEqual(now.topology.doc.hosts.mysql002, { primary: replica });
    await env.until('the gateway to serve the promoted map', () => env.gateway.topology().doc.hosts.mysql002!.primary.port === replica.port);
    assert.equal(await readOnly(replica), false, 'the promoted replica is writable');
    assert.equal(await readOnly(victim.primary), true, 'the old primary is fenced');

    // Nothing acknowledged before is lost; writes now land on the new primary only.
    for (const [i, id] of acked.entries()) assert.equal(await pinTitle(owner, id), `before promote ${i}`);
    const after = await createPin(owner, 'after promote');
    // onNew reads; onOld also tries a write, as a gateway on the stale map would.
    const onNew = createStorage({ topology: () => env.gateway.topology(), credentials: { user: env.stack.mysql.user, password: env.stack.mysql.password }, events: null });
    const onOld = createStorage({ topology: () => stale, credentials: { user: env.stack.mysql.user, password: env.stack.mysql.password }, events: servedTestEvents() });
    try {
      assert.equal((await onNew.objects.getMany([BigInt(after)])).get(BigInt(after))?.data.title, 'after promote');
      assert.equal((await onOld.objects.getMany([BigInt(after)])).has(BigInt(after)), false, 'the old primary does not have it');
      // What the old primary does: it answers reads, and refuses every write of the application's account.
      assert.equal((await onOld.objects.getMany([BigInt(acked[0]!)])).get(BigInt(acked[0]!))?.data.title, 'before promote 0');
      await assert.rejects(
        onOld.objects.create('board', owner.shard, { name: 'split brain' }),
        (e) => isShardqlError(e, 'SHARD_UNAVAILABLE') && e.details.readOnly === true,
      );
    } finally {
      await onNew.close();
      await onOld.close();
    }
    const app = { user: env.stack.mysql.user, password: env.stack.mysql.password };
    await assert.rejects(sql(victim.primary, `INSERT INTO ${shardDatabase(owner.shard)}.counts (id, kind, n) VALUES (1, 'x', 1)`, [], app), (e: { errno?: number }) => e.errno === 1290);
    await assert.rejects(sql(victim.primary, 'SET GLOBAL read_only = 0', [], app), (e: { errno?: number }) => e.errno === 1227);
    console.log(`# promote --force of mysql002 (primary answering): fenced, replica caught up to ${applied[1]}, promoted in ${ms(promotion.ms)}; 5 earlier writes kept, new writes on the new primary, the old one refuses the application's writes`);
  });
});
