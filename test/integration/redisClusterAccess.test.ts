/**
 * A Redis Cluster behind TLS and an ACL user, as managed Redis services run cluster mode: three
 * primaries of this file's own, TLS only (also on the cluster bus), certificates from a CA made
 * here with openssl, the application's ACL user on every node. The same access options reach every
 * node ioredis discovers from the one it is given: a gateway and a real `shardql worker` process
 * configured through SHARDQL_REDIS_CLUSTER / _USERNAME / _PASSWORD / _TLS_CA cache lists on several
 * nodes, store a feed and fan a pin out, every connection they open on every node logged in as that
 * user; a wrong password or another CA is refused on every node.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { feedKey } from '../../src/cache/redisFeeds.ts';
import { loadConfig } from '../../src/config.ts';
import { keySlot } from '../../src/core/redisKeySlot.ts';
import { createRedisClient, type RedisAccess, type RedisTarget } from '../../src/redis/redisClient.ts';
import { allocatePorts, LOOPBACK } from '../../src/stack/net.ts';
import { slotRange } from '../../src/stack/redisCluster.ts';
import { ensureStackTls } from '../../src/stack/tls.ts';
import { listCacheKey } from '../../src/storage/mappingStore.ts';
import { publishTopology } from '../../src/topology/etcdTopology.ts';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { eventually, TestWorkers } from '../helpers/workers.ts';

const NAME = 'redis-cluster-access';
const TOPOLOGY_KEY = `/shardql-test/${NAME}/topology`;
const PREFIX = 'shardql-test-redis-cluster-access';
const APP = { username: 'shardql_app', password: 'cluster-app-password' };
const ADMIN_PASSWORD = 'cluster-admin-password';

let dir: string;
const servers: ChildProcess[] = [];
let ports: number[];
let ca: string;
let caPath: string;
let otherCa: string;
let env: TestEnv;
/** One admin connection per node (TLS, the default user): what each node holds and who is connected. */
const admins: Redis[] = [];

const clusterTarget = (access: RedisAccess): RedisTarget => ({ cluster: [{ host: LOOPBACK, port: ports[0]! }], access });

function adminOf(port: number): Redis {
  const r = new Redis({ host: LOOPBACK, port, password: ADMIN_PASSWORD, tls: { ca }, lazyConnect: true, maxRetriesPerRequest: 1 });
  r.on('error', () => undefined);
  return r;
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'shardql-redis-cluster-tls-'));
  const good = ensureStackTls(join(dir, 'good'));
  caPath = good.ca;
  ca = readFileSync(good.ca, 'utf8');
  otherCa = readFileSync(ensureStackTls(join(dir, 'other')).ca, 'utf8');
  const all = await allocatePorts(6);
  ports = all.slice(0, 3);
  for (const [i, port] of ports.entries()) {
    const nodeDir = join(dir, `node${i}`);
    mkdirSync(nodeDir);
    const conf = join(nodeDir, 'redis.conf');
    writeFileSync(
      conf,
      [
        'port 0',
        `tls-port ${port}`,
        `bind ${LOOPBACK}`,
        `dir ${nodeDir}`,
        'cluster-enabled yes',
        'cluster-config-file nodes.conf',
        `cluster-port ${all[3 + i]}`,
        'cluster-node-timeout 5000',
        'tls-cluster yes',
        'tls-replication yes',
        `tls-cert-file ${good.cert}`,
        `tls-key-file ${good.key}`,
        `tls-ca-cert-file ${good.ca}`,
        'tls-auth-clients no',
        'save ""',
        'appendonly no',
        'maxmemory-policy noeviction',
        `requirepass ${ADMIN_PASSWORD}`,
        `masterauth ${ADMIN_PASSWORD}`,
        `user ${APP.username} on >${APP.password} ~* &* +@all`,
        '',
      ].join('\n'),
    );
    servers.push(spawn('redis-server', [conf], { stdio: 'ignore' }));
    admins.push(adminOf(port));
  }
  for (const a of admins) await eventually('a cluster node to answer over TLS', async () => ((await a.ping().catch(() => undefined)) === 'PONG' ? true : undefined), 10_000);
  // Formed as operators form one: redis-cli --cluster create, over TLS.
  const formed = spawnSync(
    'redis-cli',
    ['--tls', '--cacert', good.ca, '-a', ADMIN_PASSWORD, '--no-auth-warning', '--cluster', 'create', ...ports.map((p) => `${LOOPBACK}:${p}`), '--cluster-yes'],
    { encoding: 'utf8', timeout: 60_000 },
  );
  assert.equal(formed.status, 0, `redis-cli --cluster create: ${formed.stdout}${formed.stderr}`);
  for (const a of admins) {
    await eventually('every node to see every slot served', async () => (/cluster_state:ok/.test(String(await a.call('CLUSTER', 'INFO'))) ? true : undefined), 20_000);
  }
  env = await freshEnv({ shards: 16 });
  await publishTopology(env.etcd, TOPOLOGY_KEY, env.doc);
});

after(async () => {
  for (const a of admins) a.disconnect();
  for (const s of servers) s.kill('SIGKILL');
  await env?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `work`, or a failure naming `what` after `ms` (a cluster client that cannot connect queues its commands forever). */
async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Every client connection on every node but the admins': `name user` each. */
async function connections(): Promise<{ node: number; name: string; user: string }[]> {
  const out: { node: number; name: string; user: string }[] = [];
  for (const [node, a] of admins.entries()) {
    const lines = String(await a.call('CLIENT', 'LIST')).trim().split('\n');
    for (const line of lines) {
      const f = Object.fromEntries(line.split(' ').map((kv) => kv.split('=') as [string, string]));
      if (f.user === 'default') continue; // the admins, and the nodes' own links
      out.push({ node, name: f.name ?? '', user: f.user ?? '' });
    }
  }
  return out;
}

describe('A Redis Cluster with an ACL user and TLS', () => {
  test('the access options reach every node the client discovers; a wrong password or another CA is refused', async () => {
    const client = createRedisClient(clusterTarget({ ...APP, tls: { ca } }), { role: 'producer', name: 'test-discovery' });
    try {
      // A key in each third of the slots: one on each primary (redis-cli deals them as slotRange does).
      const keys = [0, 1, 2].map((node) => {
        const [lo, hi] = slotRange(node, 3);
        for (let i = 0; ; i++) {
          const k = `${NAME}:${node}:${i}`;
          if (keySlot(k) >= lo && keySlot(k) <= hi) return k;
        }
      });
      for (const k of keys) await within(5000, `SET ${k}`, client.set(k, k));
      const held = await Promise.all(admins.map(async (a) => ((await a.dbsize()) as number)));
      assert.equal(held.filter((n) => n > 0).length, 3, `keys on every primary: ${held.join(', ')} (slots ${keys.map(keySlot).join(', ')})`);
      for (const k of keys) assert.equal(await client.get(k), k);
      const mine = (await connections()).filter((c) => c.name === 'test-discovery');
      assert.deepEqual([...new Set(mine.map((c) => c.node))].sort(), [0, 1, 2], 'connected to every node');
      assert.deepEqual([...new Set(mine.map((c) => c.user))], [APP.username]);
    } finally {
      client.disconnect();
    }
    for (const [what, access] of [
      ['a wrong password', { ...APP, password: 'not-it', tls: { ca } }],
      ['another CA', { ...APP, tls: { ca: otherCa } }],
    ] as const) {
      const refused = createRedisClient(clusterTarget(access), { role: 'cache' });
      try {
        const err = await refused.connect().then(
          () => undefined,
          (e: unknown) => e,
        );
        assert.ok(err instanceof Error, `${what} is refused`);
      } finally {
        refused.disconnect();
      }
    }
  });

  test('SHARDQL_REDIS_CLUSTER with _USERNAME / _PASSWORD / _TLS_CA: a gateway and a real worker process cache, enqueue and fan out on the TLS cluster', async () => {
    const vars = {
      SHARDQL_REDIS_CLUSTER: `${LOOPBACK}:${ports[0]}`,
      SHARDQL_REDIS_USERNAME: APP.username,
      SHARDQL_REDIS_PASSWORD: APP.password,
      SHARDQL_REDIS_TLS_CA: caPath,
    };
    const config = loadConfig({ ...vars, SHARDQL_ENV: 'development', SHARDQL_ETCD: env.stack.etcd.endpoints.join(','), SHARDQL_MYSQL_USER: 'x', SHARDQL_MYSQL_PASSWORD: 'x', SHARDQL_MEMCACHED: 'x:1', SHARDQL_JWT_SECRET: 'x'.repeat(32) });
    assert.deepEqual(config.redis, clusterTarget({ ...APP, tls: { ca } }));
    const workers = new TestWorkers((extra) => ({
      SHARDQL_STACK_DIR: process.env.SHARDQL_STACK_DIR ?? '',
      SHARDQL_TOPOLOGY_KEY: TOPOLOGY_KEY,
      SHARDQL_QUEUE_PREFIX: PREFIX,
      SHARDQL_WORKER_QUEUES: 'feed',
      SHARDQL_REDIS: '',
      ...vars,
      ...extra,
    }));
    let gw: TestGateway | undefined;
    try {
      gw = await within(20_000, 'the gateway to start', startTestGateway(env, NAME, { redis: config.redis, queuePrefix: PREFIX }, { repair: { intervalMs: 0 } }));
      await within(30_000, 'the worker to start', workers.start());
      const g = gw;
      const newUser = async (u: string) => (await g.ok('mutation($u: String!) { createUser(input: { username: $u }) { user { id } token } }', { u })).createUser;
      const pinner = await newUser('ctls_pinner');
      const reader = await newUser('ctls_reader');
      const boards: string[] = [];
      for (let i = 0; i < 6; i++) boards.push((await g.ok('mutation($n: String!) { createBoard(input: { name: $n }) { id } }', { n: `b${i}` }, pinner.token)).createBoard.id);
      await g.ok('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: pinner.user.id }, reader.token);
      await g.ok('{ homeFeed(first: 5) { edges { node { id } } } }', {}, reader.token);
      // Lists of six boards: cached on the nodes their keys' slots fall on.
      const pins = 'query($b: ID!) { board(id: $b) { pinCount pins(first: 3) { edges { node { id } } } } }';
      for (const b of boards) await g.ok(pins, { b });
      const listNodes = new Set<number>();
      for (const b of boards) {
        const key = listCacheKey('board_has_pins', BigInt(b));
        const on = await Promise.all(admins.map(async (a) => (await a.exists(key).catch(() => 0)) === 1));
        assert.equal(on.filter(Boolean).length, 1, `${key} is cached on one node`);
        listNodes.add(on.indexOf(true));
      }
      assert.ok(listNodes.size >= 2, `the lists spread over the nodes: ${[...listNodes].join(', ')}`);
      // A pin: its fan-out job goes through the queue on the cluster, and the worker process appends it to the stored feed.
      const pin = (await g.ok('mutation($b: ID!) { createPin(input: { boardId: $b, title: "over cluster TLS" }) { id } }', { b: boards[0] }, pinner.token)).createPin.id;
      const member = BigInt(pin).toString().padStart(19, '0');
      await eventually('the fan-out appended the pin to the stored feed', async () => {
        for (const a of admins) {
          const score = await a.zscore(feedKey(BigInt(reader.user.id)), member).catch(() => null);
          if (score !== null) return score;
        }
        return undefined;
      });
      const theirs = await connections();
      assert.ok(theirs.some((c) => c.name === 'shardql-cache') && theirs.some((c) => /worker|producer/.test(c.name)), JSON.stringify(theirs.map((c) => c.name)));
      assert.deepEqual([...new Set(theirs.map((c) => c.user))], [APP.username], 'every connection of the gateway and the worker, on every node, is the ACL user');
      console.log(`# redis cluster over TLS with an ACL user: ${theirs.length} connections on ${new Set(theirs.map((c) => c.node)).size} nodes (${[...new Set(theirs.map((c) => c.name))].join(', ')}), all as ${APP.username}; the pin fanned out`);
    } finally {
      await workers.stopAll('SIGTERM');
      await gw?.stop();
    }
  });
});
