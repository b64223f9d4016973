/**
 * memcached behind a SASL login, as managed memcached services run it: a memcached of this file's
 * own started with `-S` (SASL required, the PLAIN mechanism, a sasldb made with saslpasswd2). The
 * object cache logs in with SHARDQL_MEMCACHED_USERNAME / _PASSWORD and caches there; a wrong login
 * or none is refused, and the gateway and a real worker process say why at start (never the
 * password) while the gateway serves from MySQL. The login comes from the configuration only, never
 * from the MEMCACHIER_* / MEMCACHE_* variables memjs would otherwise read.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import memjs from 'memjs';
import { createCacheLayers, type MemcachedTarget } from '../../src/cache/cacheLayers.ts';
import { loadConfig } from '../../src/config.ts';
import { allocatePorts, LOOPBACK } from '../../src/stack/net.ts';
import { objectCacheKey } from '../../src/storage/objectStore.ts';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { startTestGateway } from '../helpers/gateway.ts';
import { eventually, startWorkerProcess } from '../helpers/workers.ts';

const NAME = 'memcached-auth';
const TOPOLOGY_KEY = `/shardql-test/${NAME}/topology`;
const APP = { username: 'shardql_app', password: 'memcached-password-from-config' };
const WRONG = 'a-wrong-memcached-password';

let dir: string;
let server: ChildProcess;
let servers: string;
let env: TestEnv;
/** This file's own client of the SASL memcached, logged in: what the cache holds, seen from outside. */
let admin: memjs.Client;

const target = (sasl?: { username: string; password: string }): MemcachedTarget => ({ servers, ...(sasl ? { sasl } : {}) });

/** What createCacheLayers says at start about a memcached reached with this login. */
async function startError(t: MemcachedTarget): Promise<string | undefined> {
  const layers = await createCacheLayers({ redis: env.stack.redis, memcached: t, nearEntries: 0 });
  try {
    return layers.memcachedError;
  } finally {
    layers.close();
  }
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'shardql-memcached-sasl-'));
  const sasldb = join(dir, 'sasldb');
  const made = spawnSync('saslpasswd2', ['-p', '-c', '-a', 'memcached', '-f', sasldb, APP.username], { input: APP.password });
  assert.equal(made.status, 0, `saslpasswd2 (sasl2-bin; scripts/ensure-deps.sh installs it): ${made.stderr}`);
  writeFileSync(join(dir, 'memcached.conf'), `mech_list: plain\nsasldb_path: ${sasldb}\n`);
  const [port] = (await allocatePorts(1)) as [number];
  servers = `${LOOPBACK}:${port}`;
  server = spawn('memcached', ['-S', '-l', LOOPBACK, '-p', String(port), '-U', '0', '-m', '16', ...(process.getuid?.() === 0 ? ['-u', 'root'] : [])], {
    env: { ...process.env, SASL_CONF_PATH: dir },
    stdio: 'ignore',
  });
  admin = memjs.Client.create(servers, { username: APP.username, password: APP.password, retries: 0, timeout: 1, conntimeout: 1, logger: { log: () => undefined } } as memjs.ClientOptions);
  await eventually('the SASL memcached to answer its user', async () => ((await admin.set('up', 'yes', {}).catch(() => false)) ? true : undefined), 10_000);
  env = await freshEnv({ shards: 16 });
});

after(async () => {
  admin?.close();
  server?.kill('SIGKILL');
  await env?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('memcached with a SASL login', () => {
  test('the configured login is accepted; a wrong one, none, or one only in MEMCACHIER_* variables is refused', async () => {
    assert.equal(await startError(target(APP)), undefined);
    assert.match(String(await startError(target({ ...APP, password: WRONG }))), new RegExp(`^${servers}: Memcached server authentication failed!$`));
    assert.match(String(await startError(target())), /authentication failed/);
    // memjs reads a login from these when it is given none: the configuration alone decides.
    const saved = { u: process.env.MEMCACHIER_USERNAME, p: process.env.MEMCACHIER_PASSWORD };
    process.env.MEMCACHIER_USERNAME = APP.username;
    process.env.MEMCACHIER_PASSWORD = APP.password;
    try {
      assert.match(String(await startError(target())), /authentication failed/, 'no login configured: none sent, whatever the environment holds');
    } finally {
      for (const [k, v] of [['MEMCACHIER_USERNAME', saved.u], ['MEMCACHIER_PASSWORD', saved.p]] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  test('SHARDQL_MEMCACHED_USERNAME / _PASSWORD reach the gateway: objects are cached there, and a write drops them there', async () => {
    const config = loadConfig({
      SHARDQL_ENV: 'development',
      SHARDQL_ETCD: env.stack.etcd.endpoints.join(','),
      SHARDQL_MYSQL_USER: 'x',
      SHARDQL_MYSQL_PASSWORD: 'x',
      SHARDQL_REDIS: 'r:1',
      SHARDQL_JWT_SECRET: 'x'.repeat(32),
      SHARDQL_MEMCACHED: servers,
      SHARDQL_MEMCACHED_USERNAME: APP.username,
      SHARDQL_MEMCACHED_PASSWORD: APP.password,
    });
    assert.deepEqual(config.memcached, target(APP));
    const logged: Record<string, unknown>[] = [];
    const gw = await startTestGateway(env, NAME, { memcached: config.memcached }, { log: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>), repair: { intervalMs: 0 } });
    try {
      assert.deepEqual(logged.filter((l) => l.event === 'memcached_unavailable'), [], 'no complaint with the right login');
      const made = (await gw.ok('mutation { createUser(input: { username: "sasl_user" }) { user { id } token } }')).createUser;
      const id = BigInt(made.user.id);
      assert.equal((await gw.ok('query($id: ID!) { user(id: $id) { username } }', { id: made.user.id })).user.username, 'sasl_user');
      const cached = await admin.get(objectCacheKey(id));
      assert.ok(cached.value && cached.value.length > 1 && cached.value.includes('sasl_user'), `the user is cached in the SASL memcached: ${String(cached.value)}`);
      // A write drops it (a tombstone: one byte), through the same login.
      await gw.ok('mutation { updateViewer(input: { displayName: "Sasl" }) { id } }', {}, made.token);
      const dropped = await admin.get(objectCacheKey(id));
      assert.ok(!dropped.value || !dropped.value.includes('sasl_user'), `the write dropped the cached user: ${String(dropped.value)}`);
    } finally {
      await gw.stop();
    }
  });

  test('a gateway and a worker with a wrong login say why memcached is unavailable (never the password); the gateway serves from MySQL', async () => {
    const logged: Record<string, unknown>[] = [];
    const gw = await startTestGateway(env, `${NAME}-wrong`, { memcached: target({ ...APP, password: WRONG }) }, { log: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>), repair: { intervalMs: 0 } });
    try {
      const said = logged.filter((l) => l.event === 'memcached_unavailable');
      assert.equal(said.length, 1, JSON.stringify(logged.map((l) => l.event)));
      assert.equal(said[0]!.memcached, servers);
      assert.equal(said[0]!.error, `${servers}: Memcached server authentication failed!`);
      assert.ok(!JSON.stringify(logged).includes(WRONG), 'the password is in no log line');
      const worker = await startWorkerProcess(
        {
          SHARDQL_STACK_DIR: process.env.SHARDQL_STACK_DIR ?? '',
          SHARDQL_TOPOLOGY_KEY: TOPOLOGY_KEY,
          SHARDQL_WORKER_QUEUES: 'feed',
          SHARDQL_MEMCACHED: servers,
          SHARDQL_MEMCACHED_USERNAME: APP.username,
          SHARDQL_MEMCACHED_PASSWORD: WRONG,
        },
        [],
        'memcached_unavailable',
      );
      try {
        const line = worker.logs.find((l) => l.event === 'memcached_unavailable')!;
        assert.equal(line.error, `${servers}: Memcached server authentication failed!`);
        assert.equal(line.level, 'error');
        assert.ok(!JSON.stringify(worker.logs).includes(WRONG), "the password is in none of the worker's log lines");
      } finally {
        worker.child.kill('SIGKILL');
        await worker.exited;
      }
      const u = (await gw.ok('mutation { createUser(input: { username: "sasl_nobody" }) { user { id } } }')).createUser.user;
      assert.equal((await gw.ok('query($id: ID!) { user(id: $id) { username } }', { id: u.id })).user.username, 'sasl_nobody');
      const none = await admin.get(objectCacheKey(BigInt(u.id)));
      assert.equal(none.value, null, 'nothing was cached by a gateway that could not log in');
    } finally {
      await gw.stop();
    }
  });
});
