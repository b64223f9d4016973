import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import mysql from 'mysql2/promise';
import type { RowDataPacket } from 'mysql2/promise';
import { isShardqlError } from '../../src/core/errors.ts';
import { parseTopology, shardDatabase, type Endpoint } from '../../src/core/topology.ts';
import { startGateway } from '../../src/server.ts';
import { startService, stopService } from '../../src/stack/localStack.ts';
import { createStorage } from '../../src/storage/index.ts';
import { publishTopology } from '../../src/topology/etcdTopology.ts';
import { servedTestEvents, type TestEnv } from '../helpers/env.ts';
import { assertNoLeak, TEST_JWT_SECRET } from '../helpers/gateway.ts';
import { createUsers, ms, servedWhere, startLoad, type AckedWrite, type LoadUser } from '../helpers/load.ts';
import { TOPOLOGY_KEY, topologyEnv, type TopologyEnv } from '../helpers/topologyEnv.ts';

let env: TopologyEnv;
let users: LoadUser[];
/** Every write acknowledged by the tests below, found again after each later step. */
const acknowledged: AckedWrite[] = [];

before(async () => {
  env = await topologyEnv('failover', { refreshMs: 1000 });
  users = await createUsers(env.gql, 32, 'failover');
});
after(async () => {
  await env?.close();
});

async function sql(server: Endpoint, credentials: { user: string; password: string }, text: string): Promise<unknown> {
  const c = await mysql.createConnection({ host: server.host, port: server.port, user: credentials.user, password: credentials.password });
  try {
    return (await c.query(text))[0];
  } finally {
    await c.end();
  }
}

async function variables(server: Endpoint, sql: string): Promise<Record<string, string>> {
  const admin = env.stack.mysql.admin!;
  const c = await mysql.createConnection({ host: server.host, port: server.port, user: admin.user, password: admin.password });
  try {
    const [rows] = await c.query<RowDataPacket[]>(sql);
    return Object.fromEntries(rows.map((r) => [String(r.Variable_name).toLowerCase(), String(r.Value)]));
  } finally {
    await c.end();
  }
}

describe('Topology: a primary killed with kill -9, then its replica promoted', () => {
  test('replication is semi-synchronous (AFTER_SYNC), durable, and replicas are read-only', async () => {
    const host = env.stack.mysql.hosts[0]!;
    const p = await variables(
      host.primary,
      "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('rpl_semi_sync_master_enabled', 'rpl_semi_sync_master_wait_point', 'sync_binlog', 'innodb_flush_log_at_trx_commit', 'read_only', 'gtid_strict_mode')",
    );
    const ps = await variables(host.primary, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Rpl_semi_sync_master_status', 'Rpl_semi_sync_master_clients')");
    const r = await variables(host.replica!, "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('read_only', 'rpl_semi_sync_slave_enabled')");
    assert.deepEqual(
      { ...p, ...ps, replica_read_only: r.read_only, replica_semi_sync: r.rpl_semi_sync_slave_enabled },
      {
        rpl_semi_sync_master_enabled: 'ON',
        rpl_semi_sync_master_wait_point: 'AFTER_SYNC',
        sync_binlog: '1',
        innodb_flush_log_at_trx_commit: '1',
        read_only: 'OFF',
        gtid_strict_mode: 'ON',
        rpl_semi_sync_master_status: 'ON',
        rpl_semi_sync_master_clients: '1',
        replica_read_only: 'ON',
        replica_semi_sync: 'ON',
      },
    );
  });

  test('every write acknowledged before the kill is readable after the promotion; the other host never fails', async () => {
    const t0 = env.gateway.topology();
    const hostOf = (u: { shard: number }): string => t0.hostOfShard(u.shard)!;
    const victim = env.stack.mysql.hosts[0]!;
    assert.ok(users.some((u) => hostOf(u) === 'mysql001') && users.some((u) => hostOf(u) === 'mysql002'));

    const load = startLoad(env.gql, users, { workers: 4, writeShare: 0.4 });
    await env.until('writes on both hosts', () => ['mysql001', 'mysql002'].every((h) => load.stats.acked.filter((a) => hostOf(a) === h).length >= 10), 60_000);
    const semi = await variables(
      victim.primary,
      "SHOW GLOBAL STATUS WHERE Variable_name IN ('Rpl_semi_sync_master_status', 'Rpl_semi_sync_master_no_tx', 'Rpl_semi_sync_master_yes_tx')",
    );
    assert.equal(semi.rpl_semi_sync_master_status, 'ON', 'semi-sync is active: every acknowledged commit is on the replica');

    const killedAt = Date.now();
    await stopService(env.dir, `${victim.name}-primary`, 'SIGKILL');
    const ackedBeforeKill = load.stats.acked.filter((a) => a.at < killedAt);
    await env.until('requests failing on the dead host', () => load.stats.failures.some((f) => f.at > killedAt));

    const promotion = await env.cli(['topology', 'promote', '--host', victim.name, '--yes']);
    assert.equal(promotion.code, 0, `${promotion.stdout}\n${promotion.stderr}`);
    assert.match(promotion.stdout, /does not answer/);
    const received = /received (\S+), applied (\S+);/.exec(promotion.stdout);
    assert.ok(received && received[1] === received[2], `the replica applied everything it received: ${promotion.stdout}`);
    const inForce = await env.until('the promoted map at the gateway', () => {
      const spec = env.gateway.topology().doc.hosts[victim.name]!;
      return spec.primary.port === victim.replica!.port && spec.replica === undefined;
    });
    const promotedAt = Date.now();
    await env.until('writes to the promoted host', () => load.stats.acked.filter((a) => hostOf(a) === 'mysql001' && a.at > promotedAt).length >= 5);
    const stats = await load.stop();
    acknowledged.push(...stats.acked);

    const otherHost = stats.failures.filter((f) => hostOf(f) !== 'mysql001');
    assert.deepEqual(otherHost, [], 'nothing failed on mysql002');
    const lateFailures = stats.failures.filter((f) => f.at > promotedAt + 1000);
    assert.deepEqual(lateFailures, [], 'nothing fails once the promoted map is in force');
    assert.ok(
      stats.failures.every((f) => f.code === 'SHARD_UNAVAILABLE'),
      `failures on the dead host are retryable: ${[...new Set(stats.failures.map((f) => f.code))].join(', ')}`,
    );
    const lost = await env.lostWrites(stats.acked);
    assert.deepEqual(lost, [], 'every acknowledged write is on the promoted primary (or the other host)');
    const pinQuery = `query($id: ID!) { pin(id: $id) { title } }`;
    for (const a of ackedBeforeKill.filter((x) => hostOf(x) === 'mysql001').slice(-5)) {
      const r = await env.gql(pinQuery, { id: a.pinId }, users[0]!.token);
      assert.equal(r.body.data?.pin?.title, a.title);
    }
    const failedOn1 = stats.failures.length;
    const firstFail = Math.min(...stats.failures.map((f) => f.at));
    const lastFail = Math.max(...stats.failures.map((f) => f.at));
    console.log(
      `# kill -9 mysql001's primary under load, then promote: ${ackedBeforeKill.length} writes acknowledged before the kill ` +
        `(${ackedBeforeKill.filter((a) => hostOf(a) === 'mysql001').length} on mysql001), 0 lost (${stats.acked.length} acknowledged in all, 0 lost); ` +
        `mysql002: ${servedWhere(stats, (s) => t0.hostOfShard(s) === 'mysql002')} requests served, 0 failed; mysql001: ${servedWhere(stats, (s) => t0.hostOfShard(s) === 'mysql001')} served, ` +
        `unavailable for ${ms(lastFail - firstFail)} (${failedOn1} retryable SHARD_UNAVAILABLE); promote command ${ms(promotion.ms)}, map in force at the gateway ${ms(inForce)} after it returned; ` +
        `replica had received and applied ${received[1]}; semi-sync acked ${semi.rpl_semi_sync_master_yes_tx} commits, ${semi.rpl_semi_sync_master_no_tx} without ack`,
    );
  });

  test('the demoted primary restarts read-only: every write is refused (gateway, storage, its own account); the promoted one is made writable again by `topology writable`', async () => {
    const victim = env.stack.mysql.hosts[0]!;
    const app = { user: env.stack.mysql.user, password: env.stack.mysql.password };
    const stale = parseTopology(env.initial);
    const owner = users.find((u) => stale.hostOfShard(u.shard) === victim.name)!;
    // Killed in the previous test; started again by the stack's own process management.
    await startService(env.dir, `${victim.name}-primary`);
    assert.equal((await variables(victim.primary, "SHOW GLOBAL VARIABLES LIKE 'read_only'")).read_only, 'ON', 'a restarted server is read-only');

    // Its own account, straight to the server: no write, and no way to lift read_only.
    await assert.rejects(
      sql(victim.primary, app, `INSERT INTO ${shardDatabase(owner.shard)}.counts (id, kind, n) VALUES (1, 'split-brain', 1)`),
      (e: { errno?: number }) => e.errno === 1290,
    );
    await assert.rejects(sql(victim.primary, app, 'SET GLOBAL read_only = 0'), (e: { errno?: number }) => e.errno === 1227);
    await assert.rejects(sql(victim.primary, app, `DELETE FROM ${shardDatabase(owner.shard)}.boards`), (e: { errno?: number }) => e.errno === 1290);

    // A gateway still on the old map (it watches a key where the old map stayed) writes there: a
    // clear, retryable error, nothing internal in the answer.
    const staleKey = '/shardql-test/stale/topology';
    await publishTopology(env.etcd, staleKey, env.initial);
    const staleGateway = await startGateway(
      {
        env: 'production',
        port: 0,
        etcdEndpoints: env.stack.etcd.endpoints,
        topologyKey: staleKey,
        mysql: app,
        redis: env.stack.redis,
        memcached: { servers: `${env.stack.memcached.host}:${env.stack.memcached.port}` },
        jwtSecret: TEST_JWT_SECRET,
      },
      { log: () => undefined, repair: { intervalMs: 0 } },
    );
    try {
      const res = await fetch(`${staleGateway.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
        body: JSON.stringify({ query: `mutation($b: ID!) { createPin(input: { boardId: $b, title: "split brain" }) { id } }`, variables: { b: owner.boardId } }),
      });
      const text = await res.text();
      assertNoLeak(text, { stack: env.stack } as unknown as TestEnv);
      const body = JSON.parse(text) as { data?: { createPin: unknown }; errors?: { message: string; extensions?: { code?: string } }[] };
      assert.equal(body.data?.createPin ?? null, null);
      assert.deepEqual(body.errors?.map((e) => e.extensions?.code), ['SHARD_UNAVAILABLE']);
      assert.match(body.errors![0]!.message, /read-only right now; retry later/);
    } finally {
      await staleGateway.stop(1000);
    }
    // The storage layer says why, and asks for a re-read of the map.
    const readOnlyHosts: string[] = [];
    const storage = createStorage({ topology: () => stale, credentials: app, events: servedTestEvents(), onReadOnly: (h) => readOnlyHosts.push(h) });
    try {
      await assert.rejects(
        storage.objects.create('board', owner.shard, { name: 'split brain' }),
        (e) => isShardqlError(e, 'SHARD_UNAVAILABLE') && e.details.readOnly === true,
      );
      assert.deepEqual(readOnlyHosts, [victim.name]);
    } finally {
      await storage.close();
    }

    // The promoted primary, restarted, is read-only too until the map's primaries are made writable
    // again — which leaves the demoted one read-only: no map names it.
    await stopService(env.dir, `${victim.name}-replica`);
    await startService(env.dir, `${victim.name}-replica`);
    assert.equal((await variables(victim.replica!, "SHOW GLOBAL VARIABLES LIKE 'read_only'")).read_only, 'ON');
    const pin = `mutation($b: ID!) { createPin(input: { boardId: $b, title: "after restart" }) { id } }`;
    await env.until('the gateway to reach the restarted primary', async () => {
      const r = await env.gql(pin, { b: owner.boardId }, owner.token);
      return r.body.errors?.[0]?.extensions?.code === 'SHARD_UNAVAILABLE' && /read-only/.test(r.body.errors[0].message);
    });
    const writable = await env.cli(['topology', 'writable']);
    assert.equal(writable.code, 0, `${writable.stdout}\n${writable.stderr}`);
    assert.match(writable.stdout, new RegExp(`${victim.name} \\(${victim.replica!.host}:${victim.replica!.port}\\): made writable`));
    assert.doesNotMatch(writable.stdout, new RegExp(`:${victim.primary.port}\\b`), 'the demoted primary is not named');
    const accepted = await env.gql(pin, { b: owner.boardId }, owner.token);
    assert.equal(accepted.body.errors, undefined, JSON.stringify(accepted.body.errors));
    assert.equal((await variables(victim.primary, "SHOW GLOBAL VARIABLES LIKE 'read_only'")).read_only, 'ON', 'the demoted primary stays read-only');

    // `topology fence` still refuses a primary of the map, and fences a server that is none (a no-op here).
    const refused = await env.cli(['topology', 'fence', '--server', `${victim.replica!.host}:${victim.replica!.port}`, '--yes']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /primary in the published map/);
    const fence = await env.cli(['topology', 'fence', '--server', `${victim.primary.host}:${victim.primary.port}`, '--yes']);
    assert.equal(fence.code, 0, fence.stderr);
    console.log(
      `# demoted primary restarted read-only: refused the application's INSERT and DELETE (1290) and SET GLOBAL read_only (1227); a stale gateway answered SHARD_UNAVAILABLE; ` +
        `the restarted promoted primary took writes again after \`topology writable\` (${ms(writable.ms)})`,
    );
  });

  test('`stack up` and `shardql dev` after the promotion serve the promoted map: every acknowledged write is found, the demoted primary stays read-only', async () => {
    const victim = env.stack.mysql.hosts[0]!;
    const published = async (): Promise<{ revision: string; doc: unknown }> => {
      const kv = (await env.etcd.get(TOPOLOGY_KEY).exec()).kvs[0]!;
      return { revision: kv.mod_revision, doc: JSON.parse(kv.value.toString()) };
    };
    const promoted = await published();
    const hostOf = (u: { shard: number }): string => parseTopology(promoted.doc).hostOfShard(u.shard)!;
    const readOnly = async (server: Endpoint): Promise<string> => (await variables(server, "SHOW GLOBAL VARIABLES LIKE 'read_only'")).read_only!;

    const load = startLoad(env.gql, users, { workers: 4, writeShare: 0.5 });
    const since = Date.now();
    // The load stops whether or not the writes came (a load left running keeps the test process alive).
    const reached = await env.until('writes on the promoted host', () => load.stats.acked.filter((a) => hostOf(a) === victim.name && a.at > since).length >= 10, 60_000).catch((e: unknown) => e);
    const stats = await load.stop();
    if (reached instanceof Error) throw reached;
    assert.deepEqual(stats.failures, [], 'nothing fails on the promoted map');
    acknowledged.push(...stats.acked);

    const up = await env.cli(['stack', 'up']);
    assert.equal(up.code, 0, `${up.stdout}\n${up.stderr}`);
    assert.equal(await readOnly(victim.primary), 'ON', '`stack up` leaves the demoted primary read-only');

    // `dev` as an operator runs it, until its gateway has answered a read of the last write on the promoted host.
    const last = stats.acked.filter((a) => hostOf(a) === victim.name).at(-1)!;
    let served: unknown;
    const dev = await env.cli(['dev'], {
      env: { SHARDQL_PORT: '0' },
      serving: {
        ready: /GraphQL: +(http:\/\/\S+\/graphql)/,
        async then(match) {
          const res = await fetch(match[1]!, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query: 'query($id: ID!) { pin(id: $id) { title } }', variables: { id: last.pinId } }),
          });
          served = ((await res.json()) as { data?: unknown }).data;
        },
      },
    });
    assert.equal(dev.code, 0, `${dev.stdout}\n${dev.stderr}`);
    assert.deepEqual(served, { pin: { title: last.title } }, "dev's gateway reads the write from the promoted primary");
    assert.equal(await readOnly(victim.primary), 'ON', 'the demoted primary is still read-only');
    assert.equal(await readOnly(victim.replica!), 'OFF', 'the promoted primary takes writes');
    const now = await published();
    assert.deepEqual(await env.lostWrites(acknowledged, parseTopology(now.doc)), [], 'every acknowledged write, before and after the promotion, is on the published map');
    assert.deepEqual(now, promoted, 'the promoted map is still the published one, at the same revision');
    assert.deepEqual(await env.lostWrites(acknowledged), [], 'and on the map in force at the gateway');
    assert.match(dev.stdout, new RegExp(`Serving the topology at ${TOPOLOGY_KEY} \\(revision ${promoted.revision}\\)`));
    assert.doesNotMatch(dev.stdout, /Published revision/);
    console.log(
      `# after the promotion: ${stats.acked.length} writes acknowledged, then \`stack up\` (${ms(up.ms)}) and \`dev\` (served, stopped: ${ms(dev.ms)}); ` +
        `map still revision ${promoted.revision}, demoted primary read-only, 0 of ${acknowledged.length} acknowledged writes lost`,
    );
  });
});
