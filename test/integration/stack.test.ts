import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';
import memjs from 'memjs';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import {
  readStackInfo,
  stackDown,
  stackStatus,
  stackUp,
  startService,
  stopService,
  type MysqlEndpoint,
  type StackInfo,
} from '../../src/stack/localStack.ts';

/** Poll `check` until it returns true, failing the test after `timeoutMs`. */
async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await sleep(50);
  }
}

/** As the operator (the admin account): it may run DDL, and write through read_only. */
async function withMysql<T>(info: StackInfo, ep: MysqlEndpoint, fn: (c: Connection) => Promise<T>, as: 'admin' | 'app' = 'admin'): Promise<T> {
  const account = as === 'admin' ? info.mysql.admin! : info.mysql;
  const conn = await createConnection({ host: ep.host, port: ep.port, user: account.user, password: account.password });
  try {
    return await fn(conn);
  } finally {
    await conn.end();
  }
}

async function rowExists(info: StackInfo, ep: MysqlEndpoint, marker: string): Promise<boolean> {
  return withMysql(info, ep, async (c) => {
    try {
      const [rows] = await c.query<RowDataPacket[]>('SELECT 1 FROM stacktest.t WHERE marker = ?', [marker]);
      return rows.length === 1;
    } catch {
      return false; // database/table not replicated yet
    }
  });
}

async function pids(dir: string): Promise<Map<string, number | null>> {
  const { services } = await stackStatus(dir);
  return new Map(services.map((s) => [s.name, s.pid]));
}

describe('local stack (2 hosts + replicas)', () => {
  let dir = '';
  let info: StackInfo;

  before(
    async () => {
      dir = await mkdtemp(join(tmpdir(), 'shardql-stack-'));
      const started = Date.now();
      info = await stackUp({ dir, hosts: 2, replicas: true });
      console.log(`# cold stackUp: ${Date.now() - started} ms`);
    },
    { timeout: 180_000 },
  );

  after(
    async () => {
      if (dir === '') return;
      try {
        await stackDown(dir);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    { timeout: 120_000 },
  );

  test('up describes 2 hosts, each with a replica, and writes stack.json', () => {
    assert.deepEqual(
      info.mysql.hosts.map((h) => h.name),
      ['mysql001', 'mysql002'],
    );
    for (const h of info.mysql.hosts) {
      assert.ok(h.primary.port > 0);
      assert.ok(h.replica && h.replica.port > 0 && h.replica.port !== h.primary.port);
    }
    assert.deepEqual(readStackInfo(dir), info);
  });

  test("every server starts read-only; the application's account may only read and write rows of shard databases", async () => {
    for (const host of info.mysql.hosts) {
      for (const ep of [host.primary, host.replica!]) {
        await withMysql(info, ep, async (c) => {
          const [rows] = await c.query<RowDataPacket[]>('SELECT @@global.read_only AS ro');
          assert.equal(rows[0]?.['ro'], 1, `${host.name} ${ep.port} starts read-only`);
        });
      }
    }
    const primary = info.mysql.hosts[0]!.primary;
    await withMysql(info, primary, (c) => c.query('CREATE DATABASE IF NOT EXISTS db09999'));
    await withMysql(info, primary, (c) => c.query('CREATE TABLE IF NOT EXISTS db09999.t (id INT PRIMARY KEY)'));
    await withMysql(
      info,
      primary,
      async (c) => {
        const [grants] = await c.query<RowDataPacket[]>('SHOW GRANTS');
        assert.deepEqual(
          grants.map((g) => String(Object.values(g)[0]).replace(/ IDENTIFIED BY PASSWORD '[^']*'/, '')).sort(),
          [
            `GRANT SELECT, INSERT, UPDATE, DELETE ON \`db%\`.* TO \`${info.mysql.user}\`@\`127.0.0.1\``,
            `GRANT SELECT, INSERT, UPDATE, DELETE ON \`msdb%\`.* TO \`${info.mysql.user}\`@\`127.0.0.1\``,
            `GRANT USAGE ON *.* TO \`${info.mysql.user}\`@\`127.0.0.1\``,
          ],
        );
        await assert.rejects(c.query('INSERT INTO db09999.t VALUES (1)'), (e: { errno?: number }) => e.errno === 1290, 'read-only refuses its writes');
        await assert.rejects(c.query('SET GLOBAL read_only = 0'), (e: { errno?: number }) => e.errno === 1227, 'it cannot lift read_only');
        await assert.rejects(c.query('CREATE DATABASE stacktest_app'), (e: { errno?: number }) => e.errno === 1290 || e.errno === 1044);
        await assert.rejects(c.query('SELECT COUNT(*) FROM mysql.user'), (e: { errno?: number }) => e.errno === 1142, 'no system tables');
      },
      'app',
    );
    await withMysql(info, primary, (c) => c.query('DROP DATABASE db09999'));
  });

  test('the admin account creates a database on each primary and its rows reach the read-only replica', async () => {
    for (const host of info.mysql.hosts) {
      const replica = host.replica;
      assert.ok(replica);
      const marker = `${host.name}-${Date.now()}`;
      await withMysql(info, host.primary, async (c) => {
        await c.query('CREATE DATABASE IF NOT EXISTS stacktest');
        await c.query('CREATE TABLE IF NOT EXISTS stacktest.t (id INT AUTO_INCREMENT PRIMARY KEY, marker VARCHAR(100))');
        await c.query('INSERT INTO stacktest.t (marker) VALUES (?)', [marker]);
        const [status] = await c.query<RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_clients'");
        assert.equal(status[0]?.['Value'], '1', 'primary should have one semi-sync replica');
      });
      await eventually(`${marker} on ${host.name} replica`, () => rowExists(info, replica, marker));
      await withMysql(info, replica, async (c) => {
        const [rows] = await c.query<RowDataPacket[]>('SELECT @@read_only AS ro');
        assert.equal(rows[0]?.['ro'], 1);
      });
    }
  });

  test('redis answers PING', async () => {
    const redis = new Redis({ host: info.redis.host, port: info.redis.port, lazyConnect: true });
    try {
      await redis.connect();
      assert.equal(await redis.ping(), 'PONG');
    } finally {
      redis.disconnect();
    }
  });

  test('memcached set/get', async () => {
    const mc = memjs.Client.create(`${info.memcached.host}:${info.memcached.port}`, { logger: { log: () => undefined } });
    try {
      assert.equal(await mc.set('stack-test', 'hello', { expires: 60 }), true);
      const { value } = await mc.get('stack-test');
      assert.equal(value?.toString(), 'hello');
    } finally {
      mc.close();
    }
  });

  test('etcd put/get', async () => {
    const etcd = new Etcd3({ hosts: info.etcd.endpoints });
    try {
      await etcd.put('stack-test').value('hello');
      assert.equal(await etcd.get('stack-test').string(), 'hello');
    } finally {
      etcd.close();
    }
  });

  test('a second up is a quick no-op returning identical info', async () => {
    const before = await pids(dir);
    const started = Date.now();
    const again = await stackUp({ dir, hosts: 2, replicas: true });
    const elapsed = Date.now() - started;
    console.log(`# warm stackUp: ${elapsed} ms`);
    assert.deepEqual(again, info);
    assert.ok(elapsed < 2000, `warm up took ${elapsed} ms`);
    assert.deepEqual(await pids(dir), before);
  });

  test('a buffer pool size asked of a running stack is applied live to every instance, kept in the plan, and used at the next start', { timeout: 120_000 }, async () => {
    const pool = async (): Promise<number[]> => {
      const sizes: number[] = [];
      for (const h of info.mysql.hosts) {
        for (const ep of [h.primary, h.replica!]) {
          sizes.push(await withMysql(info, ep, async (c) => Number((await c.query<RowDataPacket[]>('SELECT @@innodb_buffer_pool_size AS b'))[0][0]!['b']) / 2 ** 20));
        }
      }
      return sizes;
    };
    assert.deepEqual(await pool(), [64, 64, 64, 64], 'the default');
    await assert.rejects(stackUp({ dir, innodbBufferPoolMb: 16 }), /innodbBufferPoolMb must be an integer number of MiB between 32 and 1048576 \(got 16\)/);
    const before = await pids(dir);
    assert.deepEqual(await stackUp({ dir, hosts: 2, replicas: true, innodbBufferPoolMb: 256 }), info);
    assert.deepEqual(await pool(), [256, 256, 256, 256], 'resized live');
    assert.deepEqual(await pids(dir), before, 'no process restarted');
    // An up that does not say keeps it; an instance started again reads it from its configuration.
    assert.deepEqual(await stackUp({ dir }), info);
    await stopService(dir, 'mysql002-replica');
    await startService(dir, 'mysql002-replica');
    assert.deepEqual(await pool(), [256, 256, 256, 256], 'kept across an up without it and a restart');
  });

  test('redis keeps what it acknowledged through a SIGKILL (append-only file): job queues and stored feeds are not caches', async () => {
    const connect = async (): Promise<Redis> => {
      const r = new Redis({ host: info.redis.host, port: info.redis.port, lazyConnect: true, maxRetriesPerRequest: 0 });
      await r.connect();
      return r;
    };
    const before = await connect();
    const marker = `persist-${process.pid}-${Date.now()}`;
    try {
      // As BullMQ and the feeds write: a list, a hash, a sorted set, through a script too.
      await before.lpush(`${marker}:wait`, 'job-1', 'job-2');
      await before.hset(`${marker}:job-1`, 'data', '{"pin":"1"}');
      await before.eval("return redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])", 1, `${marker}:feed`, '5', 'pin-5');
    } finally {
      before.disconnect();
    }
    await stopService(dir, 'redis', 'SIGKILL');
    await startService(dir, 'redis');
    const after = await connect();
    try {
      assert.deepEqual(
        [await after.lrange(`${marker}:wait`, 0, -1), await after.hget(`${marker}:job-1`, 'data'), await after.zscore(`${marker}:feed`, 'pin-5')],
        [['job-2', 'job-1'], '{"pin":"1"}', '5'],
      );
      assert.equal((await after.config('GET', 'appendonly'))[1], 'yes');
    } finally {
      after.disconnect();
    }
  });

  test('after stopService(redis), up restarts only redis', async () => {
    const before = await pids(dir);
    await stopService(dir, 'redis');
    const stopped = (await stackStatus(dir)).services.find((s) => s.name === 'redis');
    assert.deepEqual(stopped && { pid: stopped.pid, running: stopped.running }, { pid: null, running: false });

    assert.deepEqual(await stackUp({ dir, hosts: 2, replicas: true }), info);
    const after = await pids(dir);
    for (const [name, pid] of before) {
      if (name === 'redis') assert.ok(after.get(name) !== null && after.get(name) !== pid, 'redis restarted');
      else assert.equal(after.get(name), pid, `${name} kept its process`);
    }
  });

  test('a SIGKILLed primary restarts (read-only) with its data and replication resumes', async () => {
    const host = info.mysql.hosts[0];
    assert.ok(host?.replica);
    await stopService(dir, `${host.name}-primary`, 'SIGKILL');
    await startService(dir, `${host.name}-primary`);
    await withMysql(info, host.primary, async (c) => {
      const [rows] = await c.query<RowDataPacket[]>('SELECT @@global.read_only AS ro');
      assert.equal(rows[0]?.['ro'], 1);
    });
    const marker = `after-restart-${Date.now()}`;
    await withMysql(info, host.primary, (c) => c.query('INSERT INTO stacktest.t (marker) VALUES (?)', [marker]));
    await eventually(`${marker} on replica`, () => rowExists(info, host.replica!, marker));
  });

  test('stopService rejects unknown service names', async () => {
    await assert.rejects(stopService(dir, 'nope'), /Unknown service "nope"/);
  });

  test('down stops every service; status reports them not running', async () => {
    await stackDown(dir);
    const { info: after, services } = await stackStatus(dir);
    assert.deepEqual(after, info, 'stack.json is kept');
    assert.equal(services.length, 7);
    for (const s of services) assert.deepEqual({ name: s.name, running: s.running, pid: s.pid }, { name: s.name, running: false, pid: null });
    await stackDown(dir); // idempotent
  });
});

describe('local stack: replicas added to an existing stack', () => {
  let dir = '';

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shardql-stack-grow-'));
  });

  after(
    async () => {
      if (dir === '') return;
      try {
        await stackDown(dir);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    { timeout: 120_000 },
  );

  test('up with replicas replays data and users created before, and survives down/up', { timeout: 180_000 }, async () => {
    const first = await stackUp({ dir, hosts: 1 });
    const host = first.mysql.hosts[0];
    assert.ok(host && host.replica === undefined);
    await withMysql(first, host.primary, async (c) => {
      await c.query('CREATE DATABASE stacktest');
      await c.query('CREATE TABLE stacktest.t (id INT AUTO_INCREMENT PRIMARY KEY, marker VARCHAR(100))');
      await c.query("INSERT INTO stacktest.t (marker) VALUES ('before-replica')");
      await c.query("CREATE USER 'app'@'127.0.0.1' IDENTIFIED BY 'app-pass'");
    });

    const grown = await stackUp({ dir, replicas: true });
    const replica = grown.mysql.hosts[0]?.replica;
    assert.ok(replica, 'replica added');
    assert.equal(grown.mysql.hosts[0]?.primary.port, host.primary.port, 'primary keeps its port');
    assert.equal(grown.mysql.password, first.mysql.password, 'credentials are kept');
    await eventually('pre-existing row on the new replica', () => rowExists(grown, replica, 'before-replica'));
    const app = await createConnection({ host: replica.host, port: replica.port, user: 'app', password: 'app-pass' });
    await app.end();
    await withMysql(grown, host.primary, async (c) => {
      const [status] = await c.query<RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Rpl_semi_sync_master_clients'");
      assert.equal(status[0]?.['Value'], '1', 'semi-sync enabled on the running primary');
    });

    // Without options, up keeps the shape (1 host, with replica) and restarts everything from disk.
    await stackDown(dir);
    assert.deepEqual(await stackUp({ dir }), grown);
    await withMysql(grown, host.primary, (c) => c.query("INSERT INTO stacktest.t (marker) VALUES ('after-restart')"));
    await eventually('row written after restart on the replica', () => rowExists(grown, replica, 'after-restart'));
  });
});
