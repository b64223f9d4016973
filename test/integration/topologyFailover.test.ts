import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import mysql from 'mysql2/promise';
import type { RowDataPacket } from 'mysql2/promise';
import { isShardqlError } from '../../src/core/errors.ts';
import { parseTopology, type Endpoint } from '../../src/core/topology.ts';
import { startService, stopService } from '../../src/stack/localStack.ts';
import { createStorage } from '../../src/storage/index.ts';
import { createUsers, ms, servedWhere, startLoad, type LoadUser } from '../helpers/load.ts';
import { topologyEnv, type TopologyEnv } from '../helpers/topologyEnv.ts';

let env: TopologyEnv;
let users: LoadUser[];

before(async () => {
  env = await topologyEnv('failover', { refreshMs: 1000 });
  users = await createUsers(env.gql, 32, 'failover');
});
after(async () => {
  await env?.close();
});

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
    await env.until('writes on both hosts', () => ['mysql001', 'mysql002'].every((h) => load.stats.acked.filter((a) => hostOf(a) === h).length >= 10));
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

  test('the old primary comes back writable and is fenced; a refused write re-reads the map; the promoted one restarts writable', async () => {
    const victim = env.stack.mysql.hosts[0]!;
    await startService(env.dir, `${victim.name}-primary`);
    const back = await variables(victim.primary, "SHOW GLOBAL VARIABLES LIKE 'read_only'");
    assert.equal(back.read_only, 'OFF', 'a restarted old primary is writable: it must be fenced');

    const refused = await env.cli(['topology', 'fence', '--server', `${victim.replica!.host}:${victim.replica!.port}`, '--yes']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /primary in the published map/);
    const fence = await env.cli(['topology', 'fence', '--server', `${victim.primary.host}:${victim.primary.port}`, '--yes']);
    assert.equal(fence.code, 0, fence.stderr);
    assert.equal((await variables(victim.primary, "SHOW GLOBAL VARIABLES LIKE 'read_only'")).read_only, 'ON');

    // A gateway still on the old map writes to the fenced server: refused as read-only, and told to re-read.
    const stale = parseTopology(env.initial);
    const readOnlyHosts: string[] = [];
    const storage = createStorage({
      topology: () => stale,
      credentials: { user: env.stack.mysql.user, password: env.stack.mysql.password },
      onReadOnly: (h) => readOnlyHosts.push(h),
    });
    try {
      const shard = users.find((u) => stale.hostOfShard(u.shard) === victim.name)!.shard;
      await assert.rejects(
        storage.objects.create('board', shard, { name: 'split brain' }),
        (e) => isShardqlError(e, 'SHARD_UNAVAILABLE') && e.details.readOnly === true,
      );
      assert.deepEqual(readOnlyHosts, [victim.name]);
    } finally {
      await storage.close();
    }
    // The promoted replica, restarted, stays writable: it no longer replicates, so the stack keeps read_only off.
    await stopService(env.dir, `${victim.name}-replica`);
    await startService(env.dir, `${victim.name}-replica`);
    assert.equal((await variables(victim.replica!, "SHOW GLOBAL VARIABLES LIKE 'read_only'")).read_only, 'OFF');
    const owner = users.find((u) => stale.hostOfShard(u.shard) === victim.name)!;
    const writable = await env.until('a write to the restarted primary', async () => {
      const r = await env.gql(`mutation($b: ID!) { createPin(input: { boardId: $b, title: "after restart" }) { id } }`, { b: owner.boardId }, owner.token);
      return r.body.errors === undefined;
    });
    console.log(
      `# old primary restarted writable, fenced by \`topology fence\` in ${ms(fence.ms)}; a write through the stale map was refused (read-only) and asked for a re-read; ` +
        `the promoted primary restarted writable, taking writes ${ms(writable)} after its restart`,
    );
  });
});
