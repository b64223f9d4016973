/**
 * Every Redis use on a real 3-primary Redis Cluster (the local stack's, `stack up --redis-cluster`):
 * gateways configured with the cluster serve warm reads (0 SQL) and writes, two gateways' in-process
 * caches stay true through the invalidation log, persisted queries and rate limits are shared, a job
 * runs through a `shardql worker` process, and the keys really spread over the primaries while the
 * keys one script touches share a slot.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { flushCaches, freshEnv, type TestEnv } from '../helpers/env.ts';
import { codes, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { testRedisCluster, type TestRedisCluster } from '../helpers/redisCluster.ts';
import { feedKey, feedMember } from '../../src/cache/redisFeeds.ts';
import { eventually, runCli, startWorkerProcess, type WorkerProcess } from '../helpers/workers.ts';
import { keySlot } from '../../src/core/redisKeySlot.ts';
import { JobQueue } from '../../src/jobs/jobQueue.ts';
import { probeKeys, probeKinds } from '../../src/jobs/kinds/probe.ts';
import { queuePrefix } from '../../src/jobs/queues.ts';
import { JOB_KINDS } from '../../src/jobs/registry.ts';
import { ProductWrites } from '../../src/product/pinterest/writes.ts';
import { listCacheKey } from '../../src/storage/mappingStore.ts';
import { publishTopology } from '../../src/topology/etcdTopology.ts';
import { outdatedRedisServers } from '../../src/redis/redisVersion.ts';

const PROFILE = `query($id: ID!) { user(id: $id) { username pinCount followerCount
  boards(first: 10) { edges { node { id name pinCount
    pins(first: 10) { edges { node { title likeCount likers(first: 3) { edges { node { username } } } } } } } } } } }`;

let env: TestEnv;
let cluster: TestRedisCluster;
let single: Redis;
const gateways: TestGateway[] = [];

async function gateway(name: string, overrides: Parameters<typeof startTestGateway>[2] = {}): Promise<TestGateway> {
  const gw = await startTestGateway(env, name, { redis: cluster.target, ...overrides });
  gateways.push(gw);
  return gw;
}

before(async () => {
  env = await freshEnv({ shards: 16 });
  cluster = await testRedisCluster(env.stack);
  await cluster.flush();
  single = new Redis({ host: env.stack.redis.host, port: env.stack.redis.port });
});

after(async () => {
  for (const gw of gateways) await gw.stop();
  cluster?.close();
  single?.disconnect();
  await env?.close();
});

/** The node (`host:port`) each key was found on. */
function nodeOfEachKey(byNode: Map<string, string[]>): Map<string, string> {
  return new Map([...byNode].flatMap(([node, keys]) => keys.map((k): [string, string] => [k, node])));
}

test("the version check asks each of the cluster's primaries", async () => {
  assert.deepEqual(await outdatedRedisServers(cluster.client), [], 'the stack runs Redis 7');
  const named = await outdatedRedisServers(cluster.client, '99.0.0');
  assert.deepEqual(named.map((n) => n.split(' ')[0]).sort(), cluster.nodes.map((n) => `${n.host}:${n.port}`).sort());
});

describe('Redis Cluster: the shared caches', () => {
  let owner: bigint;
  let shared: TestGateway;

  before(async () => {
    const writes = new ProductWrites({ storage: env.storage, topology: () => env.topology });
    owner = (await writes.createUser({ username: 'cluster_owner' })).id;
    const likers = [await writes.createUser({ username: 'cluster_liker_a' }), await writes.createUser({ username: 'cluster_liker_b' })];
    for (let b = 0; b < 3; b++) {
      const board = await writes.createBoard(owner, { name: `b${b}` });
      for (let p = 0; p < 4; p++) {
        const pin = await writes.createPin(owner, board.id, { title: `p${b}.${p}` });
        for (const l of likers) await writes.likePin(l.id, pin.id);
      }
    }
    // The shared layers only (no in-process cache above them): what this describe tests.
    shared = await gateway('cluster-shared', { nearCacheEntries: 0 });
  });

  test('a warm profile costs 0 SQL with its pages and counts spread over the primaries', async () => {
    await flushCaches(env.stack);
    await cluster.flush();
    const cold = await shared.gql(PROFILE, { id: String(owner) });
    assert.equal(cold.body.errors, undefined, JSON.stringify(cold.body.errors));
    assert.ok(cold.body.extensions.cost.sqlRoundTrips > 0);
    const warm = await shared.gql(PROFILE, { id: String(owner) });
    assert.deepEqual(warm.body.data, cold.body.data, 'the cluster answers what MySQL answered');
    const w = warm.body.extensions.cost;
    assert.equal(w.sqlRoundTrips, 0);
    assert.equal(w.cache.redis.misses + w.cache.memcached.misses, 0);
    assert.ok(w.cache.redis.hits > 0);
    assert.ok(w.cache.redis.roundTrips <= 3, `redis: ${w.cache.redis.roundTrips} round trips for 3 list levels (one pipeline per node each, sent together)`);

    const byNode = await cluster.keysByNode('l:*');
    const counts = [...byNode.values()].map((keys) => keys.length);
    console.log(`# cluster: warm profile 0 SQL, ${w.cache.redis.roundTrips} Redis round trips, ${w.cache.redis.hits} hits; list keys per primary: ${counts.join(', ')}`);
    assert.ok(counts.filter((n) => n > 0).length >= 2, `lists on more than one primary: ${counts.join(', ')}`);
    const where = nodeOfEachKey(byNode);
    assert.ok(where.has(listCacheKey('user_has_boards', owner)), 'the boards page is in the cluster');
    // Our slot function agrees with the cluster on every key it placed.
    for (const [key, node] of where) {
      const i = cluster.nodes.findIndex((n) => `${n.host}:${n.port}` === node);
      assert.equal(Number(await cluster.perNode[i]!.call('CLUSTER', 'KEYSLOT', key)), keySlot(key), key);
    }
    assert.equal(await single.dbsize(), 0, 'nothing went to the single Redis');
  });

  test('writes invalidate their lists on whichever primary holds them; the next read shows them, then is warm again', async () => {
    const token = await shared.token(owner);
    const before = (await shared.gql(PROFILE, { id: String(owner) })).body.data.user;
    const board = before.boards.edges[0].node;
    const created = await shared.gql('mutation($b: ID!) { createPin(input: { boardId: $b, title: "fresh" }) { id } }', { b: board.id }, { token });
    assert.equal(created.body.errors, undefined, JSON.stringify(created.body.errors));
    await shared.gql('mutation($b: ID!) { updateBoard(id: $b, input: { name: "renamed" }) { id } }', { b: board.id }, { token });
    const after = await shared.gql(PROFILE, { id: String(owner) });
    const u = after.body.data.user;
    assert.equal(u.pinCount, before.pinCount + 1);
    const b0 = u.boards.edges.find((e: any) => e.node.id === board.id).node;
    assert.equal(b0.name, 'renamed');
    assert.equal(b0.pinCount, board.pinCount + 1);
    assert.equal(b0.pins.edges[0].node.title, 'fresh');
    const again = await shared.gql(PROFILE, { id: String(owner) });
    assert.deepEqual(again.body.data, after.body.data);
    assert.equal(again.body.extensions.cost.sqlRoundTrips, 0, 'warm again');
  });
});

describe('Redis Cluster: the invalidation log keeps two gateways in-process caches true', () => {
  const BOARD = 'query($b: ID!) { board(id: $b) { name pinCount pins(first: 5) { edges { node { id title likeCount } } } } }';
  let a: TestGateway;
  let b: TestGateway;
  let token: string;
  let board: string;
  let pin: string;

  before(async () => {
    a = await gateway('cluster-near-a');
    b = await gateway('cluster-near-b');
    const me = (await a.gql('mutation { createUser(input: { username: "cluster_near" }) { user { id } token } }')).body.data.createUser;
    token = me.token;
    board = (await a.gql('mutation { createBoard(input: { name: "near" }) { id } }', {}, { token })).body.data.createBoard.id;
    pin = (await a.gql('mutation($b: ID!) { createPin(input: { boardId: $b, title: "p" }) { id } }', { b: board }, { token })).body.data.createPin.id;
  });

  const read = async (gw: TestGateway) => {
    const r = await gw.gql(BOARD, { b: board }, { token });
    assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
    return { data: r.body.data, cost: r.body.extensions.cost };
  };

  test('a warm read is served from memory after one Redis round trip; writes on A show on B next read', async () => {
    const cold = await read(b);
    const warm = await read(b);
    assert.deepEqual(warm.data, cold.data);
    assert.equal(warm.cost.sqlRoundTrips, 0);
    assert.equal(warm.cost.cache.memcached.roundTrips, 0);
    assert.equal(warm.cost.cache.redis.roundTrips, 1, 'the read barrier');
    assert.equal(warm.cost.cache.local.misses, 0);
    assert.ok(warm.cost.cache.local.hits > 0);

    const write = async (q: string, v: Record<string, unknown>) => {
      const r = await a.gql(q, v, { token });
      assert.equal(r.body.errors, undefined, JSON.stringify(r.body.errors));
    };
    await write('mutation($b: ID!) { updateBoard(id: $b, input: { name: "renamed on a" }) { id } }', { b: board });
    assert.equal((await read(b)).data.board.name, 'renamed on a');
    await write('mutation($p: ID!) { likePin(pinId: $p) { id } }', { p: pin });
    const liked = await read(b);
    assert.equal(liked.data.board.pins.edges[0].node.likeCount, 1);
    await write('mutation($b: ID!) { createPin(input: { boardId: $b, title: "second" }) { id } }', { b: board });
    const grown = await read(b);
    assert.equal(grown.data.board.pinCount, 2);
    assert.equal(grown.data.board.pins.edges[0].node.title, 'second');

    // The log's keys, which its scripts touch together, share one slot (one primary).
    const logKeys = [...nodeOfEachKey(await cluster.keysByNode('shardql:{inv}:*'))];
    assert.ok(logKeys.length >= 3, `epoch, position and log exist: ${logKeys.map(([k]) => k).join(', ')}`);
    assert.equal(new Set(logKeys.map(([, node]) => node)).size, 1);
    assert.equal(new Set(logKeys.map(([k]) => keySlot(k))).size, 1);
    assert.ok((await cluster.client.llen('shardql:{inv}:log')) >= 3, 'every write appended');
  });
});

describe('Redis Cluster: persisted queries and rate limits, shared by replicas', () => {
  test('a query registered through one gateway runs by its hash on another', async () => {
    const a = await gateway('cluster-apq-a');
    const b = await gateway('cluster-apq-b');
    const query = `{ user(username: "cluster_owner") { username } } # ${Date.now()}`;
    const hash = createHash('sha256').update(query).digest('hex');
    const ext = { persistedQuery: { version: 1, sha256Hash: hash } };
    assert.deepEqual(codes(await b.gql('', {}, { body: { extensions: ext } })), ['PERSISTED_QUERY_NOT_FOUND']);
    assert.equal((await a.gql('', {}, { body: { query, extensions: ext } })).body.data.user.username, 'cluster_owner');
    assert.equal(await cluster.client.exists(`shardql:apq:${hash}`), 1, 'stored in the cluster');
    assert.equal((await b.gql('', {}, { body: { extensions: ext } })).body.data.user.username, 'cluster_owner');
  });

  test('per viewer, then per address: refused by both replicas; a refused request uses up no bucket', async () => {
    const limits = { rateLimit: { perViewer: { limit: 3, windowMs: 60_000 }, perAddress: { limit: 8, windowMs: 60_000 } } };
    const gw = await gateway('cluster-rl', limits);
    const replica = await gateway('cluster-rl-replica', limits);
    const writes = new ProductWrites({ storage: env.storage, topology: () => env.topology });
    const alice = await writes.createUser({ username: 'cluster_rl_a' });
    const bob = await writes.createUser({ username: 'cluster_rl_b' });
    // The two buckets a request takes from are in different slots: one script over both would be refused (CROSSSLOT).
    assert.notEqual(keySlot(`shardql:rl:v:${alice.id}`), keySlot('shardql:rl:a:127.0.0.1'));
    const ask = async (g: TestGateway, token?: string) => (await g.gql('{ __typename }', {}, token ? { token } : {})).status;
    const a = await gw.token(alice.id);
    const b = await gw.token(bob.id);
    for (let i = 0; i < 3; i++) assert.equal(await ask(gw, a), 200);
    const refused = await gw.gql('{ __typename }', {}, { token: a });
    assert.equal(refused.status, 429);
    assert.equal(refused.body.errors![0]!.extensions!.scope, 'viewer');
    assert.equal(await ask(replica, a), 429, 'the replica shares the bucket');
    // The address bucket (8) counts admitted requests only: 3 (alice) + 3 (bob) + 2 anonymous.
    for (let i = 0; i < 3; i++) assert.equal(await ask(replica, b), 200);
    for (let i = 0; i < 2; i++) assert.equal(await ask(gw), 200);
    const byAddress = await gw.gql('{ __typename }');
    assert.equal(byAddress.status, 429);
    assert.equal(byAddress.body.errors![0]!.extensions!.scope, 'address');
  });
});

describe('Redis Cluster: the job queue', () => {
  const PREFIX = 'shardql-test-cluster-jobs';
  const TOPOLOGY_KEY = '/shardql-test/cluster-jobs/topology';
  let worker: WorkerProcess | undefined;
  let queue: JobQueue<typeof JOB_KINDS & ReturnType<typeof probeKinds>>;

  const workerEnv = {
    SHARDQL_STACK_DIR: process.env.SHARDQL_STACK_DIR ?? '',
    SHARDQL_TOPOLOGY_KEY: TOPOLOGY_KEY,
    SHARDQL_QUEUE_PREFIX: PREFIX,
    SHARDQL_WORKER_TEST_JOBS: '1',
    SHARDQL_REPAIR_EVERY_MS: '60000',
    SHARDQL_RECONCILE_EVERY_MS: '0',
  };

  before(async () => {
    await publishTopology(env.etcd, TOPOLOGY_KEY, env.doc);
    queue = new JobQueue({ redis: cluster.client, prefix: PREFIX, registry: { ...JOB_KINDS, ...probeKinds(cluster.client, `${PREFIX}:probe`) } });
  });
  after(async () => {
    if (worker && worker.child.exitCode === null && worker.child.signalCode === null) {
      worker.child.kill('SIGTERM');
      await worker.exited;
    }
    await queue?.close();
  });

  test('a worker process on the cluster runs fan-out and sweep jobs; each queue keeps to its own slot', async () => {
    worker = await startWorkerProcess({ ...workerEnv, SHARDQL_REDIS_CLUSTER: cluster.env });
    const probe = probeKeys(`${PREFIX}:probe`);
    await queue.enqueue('probe.feed', { tag: 'on-feed' });
    await queue.enqueue('probe.sweeps', { tag: 'on-sweeps' });
    const reconcile = await queue.enqueue('sweep.reconcile', { shardsPerJob: 8 });
    const effects = await eventually('both probes took effect', async () => {
      const done = await cluster.client.lrange(probe.effects, 0, -1);
      return done.length === 2 ? done.sort() : undefined;
    });
    assert.deepEqual(effects, ['on-feed', 'on-sweeps']);
    const planned = await eventually('the reconcile plan completed', async () =>
      (await queue.queue('sweeps').getJobState(reconcile.id)) === 'completed' ? queue.queue('sweeps').getJob(reconcile.id) : undefined,
    );
    assert.deepEqual(planned?.returnvalue, { shards: 16, chunks: 2 });
    await eventually('both reconcile chunks completed', async () => {
      const chunks = (await queue.queue('sweeps').getJobs(['completed'])).filter((j) => j.name === 'sweep.reconcile-shards');
      return chunks.length === 2 ? chunks : undefined;
    });
    for (const tag of ['on-feed', 'on-sweeps']) {
      const runs = await cluster.client.lrange(probe.starts(tag), 0, -1);
      assert.equal(runs.length, 1, `${tag} ran once`);
      assert.match(runs[0]!, new RegExp(` ${worker.name}$`));
    }

    // Every key of a queue hashes to its queue's slot; the two queues' slots differ.
    const slots = new Map<string, Set<number>>();
    for (const name of ['feed', 'sweeps'] as const) {
      const tag = queuePrefix(PREFIX, name);
      const keys = [...(await cluster.keysByNode(`${tag}:*`)).values()].flat();
      assert.ok(keys.length >= 3, `${name}: ${keys.join(', ')}`);
      slots.set(name, new Set(keys.map(keySlot)));
      assert.equal(slots.get(name)!.size, 1, `${name}'s keys share one slot`);
    }
    assert.notDeepEqual([...slots.get('feed')!], [...slots.get('sweeps')!]);

    // `shardql jobs` reads the same queues through the cluster.
    const cli = await runCli({ ...workerEnv, SHARDQL_REDIS_CLUSTER: cluster.env }, ['jobs', '--json']);
    assert.equal(cli.code, 0, cli.stderr);
    const stats = JSON.parse(cli.stdout) as { queues: { queue: string; failed: number }[] };
    assert.deepEqual(
      stats.queues.map((q) => [q.queue, q.failed]),
      [
        ['feed', 0],
        ['sweeps', 0],
        ['import', 0],
      ],
    );
  });

  test('stored feeds on the cluster: a fan-out by the worker reaches the feeds that exist, and only those', async () => {
    assert.ok(worker, 'the worker of the test before still runs');
    // A gateway on the cluster enqueues on the same queues the worker serves.
    const gw = await startTestGateway(env, 'cluster-jobs', { redis: cluster.target, queuePrefix: PREFIX });
    gateways.push(gw);
    const ok = async (query: string, variables: Record<string, unknown>, token?: string): Promise<any> => {
      const r = await gw.gql(query, variables, token ? { token } : {});
      assert.equal(r.body.errors, undefined, r.text);
      return r.body.data;
    };
    const signUp = async (u: string): Promise<{ id: string; token: string }> => {
      const d = await ok('mutation($u: String!) { createUser(input: { username: $u }) { user { id } token } }', { u });
      return { id: d.createUser.user.id, token: d.createUser.token };
    };
    const [pinner, reader, absent] = [await signUp('cl_pinner'), await signUp('cl_reader'), await signUp('cl_absent')];
    for (const f of [reader, absent]) await ok('mutation($u: ID!) { followUser(userId: $u) { id } }', { u: pinner.id }, f.token);
    const board = (await ok('mutation { createBoard(input: { name: "b" }) { id } }', {}, pinner.token)).createBoard.id;
    const FEED = '{ homeFeed(first: 5) { edges { node { id } } } }';
    assert.deepEqual((await ok(FEED, {}, reader.token)).homeFeed.edges, [], 'the reader builds (and stores) an empty feed');
    const readerKey = feedKey(BigInt(reader.id));
    assert.equal(await cluster.client.exists(readerKey), 1, 'the reader’s feed is stored on the cluster');

    const pin = (await ok('mutation($b: ID!) { createPin(input: { boardId: $b, title: "fanned" }) { id } }', { b: board }, pinner.token)).createPin.id;
    await eventually('the worker appended the pin to the reader’s stored feed', async () =>
      (await cluster.client.zscore(readerKey, feedMember(BigInt(pin)))) !== null ? true : undefined,
    );
    assert.equal(await cluster.client.exists(feedKey(BigInt(absent.id))), 0, 'a feed that did not exist is not made by a fan-out');
    assert.deepEqual((await ok(FEED, {}, reader.token)).homeFeed.edges.map((e: any) => e.node.id), [pin]);
    // Stored on the cluster, not on the single Redis beside it.
    assert.ok([...(await cluster.keysByNode('f:*')).values()].flat().includes(readerKey));
    assert.deepEqual(await single.keys('f:*'), []);
  });
});
