/**
 * Redis behind a password and TLS, as managed Redis services run it: a redis-server of this file's
 * own with TLS only (no plain port), certificates from a CA made here with openssl, an ACL user for
 * the application and a password on the default user. Every client role connects as that user over
 * TLS, and is refused with a wrong password, an unknown CA or no TLS; a gateway and a real
 * `shardql worker` process configured through SHARDQL_REDIS_USERNAME / _PASSWORD / _TLS_CA cache
 * lists, enqueue and run a fan-out job there, every connection they open logged in as the ACL user.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRedisClient, type RedisAccess, type RedisClient, type RedisRole, type RedisTarget } from '../../src/redis/redisClient.ts';
import { allocatePorts, LOOPBACK } from '../../src/stack/net.ts';
import { loadConfig } from '../../src/config.ts';
import { feedKey } from '../../src/cache/redisFeeds.ts';
import { ensureStackTls } from '../../src/stack/tls.ts';
import { publishTopology } from '../../src/topology/etcdTopology.ts';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { eventually, startWorkerProcess, TestWorkers } from '../helpers/workers.ts';

const NAME = 'redis-access';
const TOPOLOGY_KEY = `/shardql-test/${NAME}/topology`;
const PREFIX = 'shardql-test-redis-access';
const APP = { username: 'shardql_app', password: 'app-password-from-config' };

let dir: string;
let server: ChildProcess;
let port: number;
let ca: string;
let otherCa: string;
let env: TestEnv;
let admin: RedisClient;

const target = (access: RedisAccess | undefined): RedisTarget => ({ host: LOOPBACK, port, ...(access ? { access } : {}) });

/** A client of `role` on this file's Redis: connected (or refused) and answering PING, else the error. */
async function tryClient(role: RedisRole, access: RedisAccess | undefined): Promise<{ whoami: string } | { error: string }> {
  const client = createRedisClient(target(access), { role });
  let reason: string | undefined;
  client.on('error', (err: Error) => (reason ??= err.message));
  try {
    if (role === 'cache') await client.connect();
    // The other roles connect by themselves and queue commands meanwhile: bound the wait.
    const whoami = await Promise.race([
      client.call('ACL', 'WHOAMI') as Promise<string>,
      sleep(3000).then(() => {
        throw new Error('no answer within 3 s');
      }),
    ]);
    return { whoami };
  } catch (err) {
    // The client's first error says why (a refused login closes the connection: "Connection is closed.").
    return { error: `${err instanceof Error ? err.message : String(err)} (${reason ?? 'no error event'})` };
  } finally {
    client.disconnect();
  }
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'shardql-redis-tls-'));
  // A CA and a certificate for 127.0.0.1 it signed, made with openssl as the local stack makes its own; and a CA that signed nothing here.
  const good = ensureStackTls(join(dir, 'good'));
  otherCa = readFileSync(ensureStackTls(join(dir, 'other')).ca, 'utf8');
  ca = readFileSync(good.ca, 'utf8');
  const serverKey = good.key;
  const serverCert = good.cert;
  [port] = (await allocatePorts(1)) as [number];
  const conf = join(dir, 'redis.conf');
  writeFileSync(
    conf,
    [
      'port 0',
      `tls-port ${port}`,
      `bind ${LOOPBACK}`,
      `tls-cert-file ${serverCert}`,
      `tls-key-file ${serverKey}`,
      `tls-ca-cert-file ${good.ca}`,
      'tls-auth-clients no',
      'save ""',
      'appendonly no',
      'maxmemory-policy noeviction',
      'requirepass admin-password',
      `user ${APP.username} on >${APP.password} ~* &* +@all`,
      '',
    ].join('\n'),
  );
  server = spawn('redis-server', [conf], { stdio: 'ignore' });
  const adminAccess: RedisAccess = { password: 'admin-password', tls: { ca } };
  let up: { whoami: string } | { error: string } = { error: 'not tried' };
  for (let i = 0; i < 100 && 'error' in up; i++) {
    up = await tryClient('cache', adminAccess);
    if ('error' in up) await sleep(50);
  }
  assert.deepEqual(up, { whoami: 'default' }, 'the TLS Redis answers its default user');
  admin = createRedisClient(target(adminAccess), { role: 'producer', name: 'test-admin' });
  env = await freshEnv({ shards: 16 });
  await publishTopology(env.etcd, TOPOLOGY_KEY, env.doc);
});

after(async () => {
  admin?.disconnect();
  server?.kill('SIGKILL');
  await env?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('Redis with a password and TLS', () => {
  test('every client role logs in as the ACL user over TLS; a wrong password, an unknown CA or no TLS is refused', async () => {
    const right: RedisAccess = { ...APP, tls: { ca } };
    for (const role of ['cache', 'producer', 'worker'] as const) {
      assert.deepEqual(await tryClient(role, right), { whoami: APP.username }, role);
    }
    const wrongPassword = await tryClient('cache', { ...APP, password: 'not-it', tls: { ca } });
    assert.ok('error' in wrongPassword && /WRONGPASS/.test(wrongPassword.error), JSON.stringify(wrongPassword));
    const noPassword = await tryClient('cache', { tls: { ca } });
    assert.ok('error' in noPassword && /NOAUTH/.test(noPassword.error), JSON.stringify(noPassword));
    const unknownCa = await tryClient('cache', { ...APP, tls: { ca: otherCa } });
    assert.ok('error' in unknownCa && /certificate/i.test(unknownCa.error), JSON.stringify(unknownCa));
    const plain = await tryClient('cache', APP);
    assert.ok('error' in plain, 'a plain connection to a TLS port gets nowhere');
  });

  test('SHARDQL_REDIS_USERNAME / _PASSWORD / _TLS_CA reach every client: a gateway and a real worker process cache, enqueue and fan out there', async () => {
    const vars = {
      SHARDQL_REDIS: `${LOOPBACK}:${port}`,
      SHARDQL_REDIS_USERNAME: APP.username,
      SHARDQL_REDIS_PASSWORD: APP.password,
      SHARDQL_REDIS_TLS_CA: join(dir, 'good', 'tls', 'ca.pem'),
    };
    const config = loadConfig({ ...vars, SHARDQL_ENV: 'development', SHARDQL_ETCD: env.stack.etcd.endpoints.join(','), SHARDQL_MYSQL_USER: 'x', SHARDQL_MYSQL_PASSWORD: 'x', SHARDQL_MEMCACHED: 'x:1', SHARDQL_JWT_SECRET: 'x'.repeat(32) });
    assert.deepEqual(config.redis, { host: LOOPBACK, port, access: { ...APP, tls: { ca } } });
    const workers = new TestWorkers((extra) => ({
      SHARDQL_STACK_DIR: process.env.SHARDQL_STACK_DIR ?? '',
      SHARDQL_TOPOLOGY_KEY: TOPOLOGY_KEY,
      SHARDQL_QUEUE_PREFIX: PREFIX,
      SHARDQL_WORKER_QUEUES: 'feed',
      ...vars,
      ...extra,
    }));
    let gw: TestGateway | undefined;
    try {
      gw = await startTestGateway(env, NAME, { redis: config.redis, queuePrefix: PREFIX }, { repair: { intervalMs: 0 } });
      await workers.start();
      const g = gw;
      const newUser = async (u: string) => (await g.ok('mutation($u: String!) { createUser(input: { username: $u }) { user { id } token } }', { u })).createUser;
      const pinner = await newUser('tls_pinner');
      const reader = await newUser('tls_reader');
      const board = (await g.ok('mutation { createBoard(input: { name: "b" }) { id } }', {}, pinner.token)).createBoard.id;
      await g.ok('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: pinner.user.id }, reader.token);
      // The reader's feed is built and stored in this Redis; a list read twice comes from it the second time.
      await g.ok('{ homeFeed(first: 5) { edges { node { id } } } }', {}, reader.token);
      assert.equal(await admin.exists(feedKey(BigInt(reader.user.id))), 1, "the reader's stored feed is in the TLS Redis");
      const pins = 'query($b: ID!) { board(id: $b) { pinCount pins(first: 3) { edges { node { id } } } } }';
      await g.ok(pins, { b: board });
      const again = await g.gql(pins, { b: board }, { headers: { 'x-shardql-cost': '1' } });
      assert.ok(again.body.extensions.cost.cache.redis.roundTrips >= 1, JSON.stringify(again.body.extensions.cost.cache));
      // A pin: its fan-out job goes through the queue in this Redis, and the worker process appends it to the stored feed.
      const pin = (await g.ok('mutation($b: ID!) { createPin(input: { boardId: $b, title: "over TLS" }) { id } }', { b: board }, pinner.token)).createPin.id;
      const score = await eventually('the fan-out appended the pin to the stored feed', async () => (await admin.zscore(feedKey(BigInt(reader.user.id)), BigInt(pin).toString().padStart(19, '0'))) ?? undefined);
      assert.ok(Number(score) > 0);
      // Every connection but this test's own logged in as the application's user.
      const clients = String(await admin.call('CLIENT', 'LIST'))
        .trim()
        .split('\n')
        .map((line) => Object.fromEntries(line.split(' ').map((kv) => kv.split('=') as [string, string])));
      const theirs = clients.filter((c) => c.name !== 'test-admin');
      assert.ok(theirs.some((c) => c.name === 'shardql-cache') && theirs.some((c) => /worker|producer/.test(c.name ?? '')), JSON.stringify(theirs.map((c) => c.name)));
      assert.deepEqual([...new Set(theirs.map((c) => c.user))], [APP.username]);
      console.log(`# redis over TLS with an ACL user: ${theirs.length} connections of the gateway and the worker (${[...new Set(theirs.map((c) => c.name))].join(', ')}), all as ${APP.username}; the pin fanned out`);
    } finally {
      await workers.stopAll('SIGTERM');
      await gw?.stop();
    }
  });

  test('a gateway and a worker given a wrong password say why Redis is unavailable (never the password); the gateway serves from MySQL', async () => {
    const logged: Record<string, unknown>[] = [];
    const wrong = 'a-wrong-password-1234';
    const gw = await startTestGateway(env, `${NAME}-wrong`, { redis: target({ username: APP.username, password: wrong, tls: { ca } }) }, { log: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>), repair: { intervalMs: 0 } });
    try {
      const unavailable = logged.filter((l) => l.event === 'redis_unavailable');
      assert.equal(unavailable.length, 1);
      assert.equal(unavailable[0]!.redis, `Redis at ${LOOPBACK}:${port}`);
      assert.match(String(unavailable[0]!.error), /WRONGPASS/);
      assert.ok(!JSON.stringify(logged).includes(wrong), 'the password is in no log line');
      // A worker process given the same wrong password says so too (it then waits for Redis, not started).
      const worker = await startWorkerProcess(
        {
          SHARDQL_STACK_DIR: process.env.SHARDQL_STACK_DIR ?? '',
          SHARDQL_TOPOLOGY_KEY: TOPOLOGY_KEY,
          SHARDQL_QUEUE_PREFIX: PREFIX,
          SHARDQL_WORKER_QUEUES: 'feed',
          SHARDQL_REDIS: `${LOOPBACK}:${port}`,
          SHARDQL_REDIS_USERNAME: APP.username,
          SHARDQL_REDIS_PASSWORD: wrong,
          SHARDQL_REDIS_TLS_CA: join(dir, 'good', 'tls', 'ca.pem'),
        },
        [],
        'redis_unavailable',
      );
      try {
        const said = worker.logs.find((l) => l.event === 'redis_unavailable')!;
        assert.match(String(said.error), /WRONGPASS/);
        assert.equal(said.level, 'error');
        assert.ok(!JSON.stringify(worker.logs).includes(wrong), "the password is in none of the worker's log lines");
      } finally {
        worker.child.kill('SIGKILL');
        await worker.exited;
      }
      const u = (await gw.ok('mutation { createUser(input: { username: "tls_nobody" }) { user { id username } } }')).createUser.user;
      assert.equal((await gw.ok('query($id: ID!) { user(id: $id) { username } }', { id: u.id })).user.username, 'tls_nobody');
    } finally {
      await gw.stop();
    }
  });
});
