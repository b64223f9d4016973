/**
 * The mod-shard count never changes once claims exist: the databases record it at provisioning and
 * every path that publishes or serves a map with another count is refused; `shardql dev` on a stack
 * the tests used starts clean once they closed, and says what to run when their data is left.
 */
import { spawn } from 'node:child_process';
import { Etcd3 } from 'etcd3';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { isShardqlError } from '../../src/core/errors.ts';
import { evenLayout, modShardDatabase, parseTopology, type TopologyDoc } from '../../src/core/topology.ts';
import { startGateway } from '../../src/server.ts';
import { createStorage } from '../../src/storage/index.ts';
import { recordedModShardCounts } from '../../src/storage/modShardCountRecord.ts';
import { provision } from '../../src/storage/provision.ts';
import { etcdTopologyStore, publishTopology, publishTopologyIfUnchanged } from '../../src/topology/etcdTopology.ts';
import { cliArgv } from '../helpers/cli.ts';
import { adminCredentials, dropStackTestData, dropTestData, freshEnv, stackHosts, testStackDir, type TestEnv } from '../helpers/env.ts';
import { TEST_JWT_SECRET } from '../helpers/gateway.ts';
import { runCli } from '../helpers/workers.ts';

const KEY = '/shardql-test/mod-shard-count/topology';
const DEV_KEY = '/shardql-test/mod-shard-count-dev/topology';
let env: TestEnv;
/** Its own client: env.close() closes env's, and the last test closes env. */
let etcd: Etcd3;
let closed = false;

before(async () => {
  env = await freshEnv({ shards: 16, modShards: 8 });
  etcd = new Etcd3({ hosts: [...env.stack.etcd.endpoints] });
  await etcd.delete().prefix('/shardql-test/mod-shard-count').exec();
});
after(async () => {
  await etcd?.delete().prefix('/shardql-test/mod-shard-count').exec();
  etcd?.close();
  // dev's demo data too: the next file, and dev on the stack's own key, start clean.
  if (closed) await dropTestData(env.stack, parseTopology(env.doc));
  else await env?.close();
});

const layout = (modShards: number): TopologyDoc => evenLayout({ hosts: stackHosts(env.stack), shards: 16, modShards });
const cliEnv = (key: string) => ({ SHARDQL_STACK_DIR: testStackDir(), SHARDQL_TOPOLOGY_KEY: key });

/** The databases that exist on `host`, among `names`. */
async function existing(host: string, names: readonly string[]): Promise<string[]> {
  const rows = await env.storage.router.query(host, [], `SELECT schema_name AS db FROM information_schema.schemata WHERE schema_name REGEXP '^msdb[0-9]{5}$'`, []);
  const have = new Set(rows.map((r) => String(r.db)));
  return names.filter((n) => have.has(n));
}

describe('Mod-shard count: recorded in the databases', () => {
  test('provision records the map’s count in every mod-shard database of the map', async () => {
    for (const [host, mods] of env.topology.modShardsByHost()) {
      const names = mods.map(modShardDatabase);
      const recorded = await recordedModShardCounts(env.storage.router, host, names);
      assert.deepEqual(Object.fromEntries(recorded), Object.fromEntries(names.map((n) => [n, 8])), host);
    }
  });

  test('provision with 16 over databases provisioned with 8: refused before anything is created, naming the database and both counts', async () => {
    const sixteen = parseTopology(layout(16));
    const admin = createStorage({ topology: () => sixteen, credentials: adminCredentials(env.stack), events: null });
    try {
      await assert.rejects(provision({ router: admin.router, topology: sixteen }), (err: unknown) => {
        assert.ok(isShardqlError(err, 'INVALID_TOPOLOGY'), String(err));
        assert.match(err.message, /^Mod shard database msdb00000 on mysql001 records 8 mod shards \(and \d+ more database\(s\)\); this map has 16\./);
        assert.match(err.message, /Publish a map with modShard\.count 8/);
        assert.deepEqual({ ...err.details }, { database: 'msdb00000', host: 'mysql001', recorded: 8, mapCount: 16 });
        return true;
      });
    } finally {
      await admin.close();
    }
    // msdb00008–15 live on mysql002 in the 16 layout: none was created.
    const mysql002 = [...sixteen.modShardsByHost().get('mysql002')!].map(modShardDatabase);
    assert.deepEqual(await existing('mysql002', mysql002.filter((n) => n >= 'msdb00008')), []);
  });

  test('`shardql provision` of a published map with 16 is refused with the same message', async () => {
    await publishTopology(etcd, KEY, layout(16)); // a new key: nothing to keep there
    const run = await runCli(cliEnv(KEY), ['provision']);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stderr, /shardql provision: Mod shard database msdb00000 on mysql001 records 8 mod shards .*; this map has 16\./);
  });

  test('a gateway does not start on a map with 16 over databases that record 8', async () => {
    await assert.rejects(
      startGateway(
        {
          env: 'development',
          port: 0,
          etcdEndpoints: env.stack.etcd.endpoints,
          topologyKey: KEY,
          mysql: { user: env.stack.mysql.user, password: env.stack.mysql.password },
          redis: env.stack.redis,
          memcached: { servers: `${env.stack.memcached.host}:${env.stack.memcached.port}` },
          jwtSecret: TEST_JWT_SECRET,
        },
        { log: () => undefined, repair: { intervalMs: 0 } },
      ),
      (err: unknown) => isShardqlError(err, 'INVALID_TOPOLOGY') && /^Mod shard database msdb00000 on mysql001 records 8 mod shards/.test(err.message),
    );
  });
});

describe('Mod-shard count: fixed once published', () => {
  const refused = (from: number, to: number) => (err: unknown) =>
    isShardqlError(err, 'INVALID_TOPOLOGY') && err.message.startsWith(`The map changes modShard.count from ${from} to ${to}: refused.`);

  test('publishTopology, publishTopologyIfUnchanged and the operations’ store refuse another count and leave the map as it was', async () => {
    const key = `${KEY}-publish`;
    const first = await publishTopology(etcd, key, layout(8));
    await assert.rejects(publishTopology(etcd, key, layout(16)), refused(8, 16));
    await assert.rejects(publishTopologyIfUnchanged(etcd, key, layout(4), first), refused(8, 4));
    await assert.rejects(etcdTopologyStore(etcd, key).publish(layout(16), first), refused(8, 16));
    const kv = (await etcd.get(key).exec()).kvs[0]!;
    assert.equal(kv.mod_revision, first, 'nothing was published');
    // The same count still publishes.
    const again = await publishTopology(etcd, key, { ...layout(8), shards: { ...layout(8).shards, open: [{ from: 0, to: 7 }] } });
    assert.ok(BigInt(again) > BigInt(first));
  });

  test('`shardql topology publish --mod-shards 16 --yes` over a map with 8: refused, saying both counts and why; nothing published', async () => {
    const key = `${KEY}-cli`;
    const first = await publishTopology(etcd, key, layout(8));
    const run = await runCli(cliEnv(key), ['topology', 'publish', '--mod-shards', '16', '--yes']);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stderr, /shardql topology publish: The map changes modShard\.count from 8 to 16: refused\. Usernames and emails are claimed in mod shard md5\(key\) mod count/);
    assert.match(run.stderr, /keep modShard\.count 8\. Nothing was published/);
    assert.equal((await etcd.get(key).exec()).kvs[0]!.mod_revision, first);
  });
});

/**
 * `shardql dev` on this stack, on a key of its own, stopped (SIGINT) once its demo data is loaded
 * (or when it exits by itself).
 */
function runDev(until: RegExp): Promise<{ code: number | null; stdout: string; stderr: string; matched: boolean }> {
  const childEnv: Record<string, string | undefined> = { ...process.env, SHARDQL_STACK_DIR: testStackDir(), SHARDQL_TOPOLOGY_KEY: DEV_KEY, SHARDQL_PORT: '0' };
  for (const k of Object.keys(childEnv)) if (/^SHARDQL_(ETCD|MYSQL_|REDIS|MEMCACHED|ENV)/.test(k)) delete childEnv[k];
  const child = spawn(process.execPath, cliArgv('dev'), { cwd: resolve(import.meta.dirname, '../..'), env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let matched = false;
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
    if (!matched && until.test(stdout)) {
      matched = true;
      child.kill('SIGINT');
    }
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((res, rej) => {
    child.once('error', rej);
    child.once('close', (code) => res({ code, stdout, stderr, matched }));
  });
}

describe('`shardql dev` on a stack the tests used', () => {
  test('with the test databases (8 mod shards) still there: refused before publishing, saying what to run', async () => {
    const dev = await runDev(/Loaded the demo data/);
    assert.equal(dev.matched, false, dev.stdout);
    assert.equal(dev.code, 1, dev.stdout + dev.stderr);
    assert.match(dev.stderr, /Mod shard database msdb00000 on mysql001 records 8 mod shards .*; this map has 16\./);
    assert.match(dev.stderr, new RegExp(`\`bin/shardql stack down && rm -rf ${testStackDir()}\` starts the stack from nothing`));
    assert.equal((await etcd.get(DEV_KEY).exec()).kvs.length, 0, 'dev published nothing');
  });

  test('after the tests ended (their databases dropped): dev publishes its layout, provisions and loads the demo data, whose claims it finds', async () => {
    // What the tests leave at their end: each file closes, and test/run.ts drops their databases
    // once the last file is done (outside test/run.ts, close() drops them itself).
    await env.close();
    await dropStackTestData(env.stack);
    closed = true;
    const dev = await runDev(/Loaded the demo data: (\d+) users/);
    assert.ok(dev.matched, dev.stdout + dev.stderr);
    assert.doesNotMatch(dev.stderr, /is taken/);
    assert.match(dev.stdout, /\+ mod shard count 16/);
    const published = parseTopology(JSON.parse((await etcd.get(DEV_KEY).string())!));
    assert.equal(published.doc.modShard.count, 16);
    const storage = createStorage({ topology: () => published, credentials: { user: env.stack.mysql.user, password: env.stack.mysql.password }, events: null });
    try {
      const byName = await storage.lookups.lookup('username', ['alice', 'bob']);
      const byEmail = await storage.lookups.lookup('email', ['alice@example.com', 'bob@example.com']);
      assert.equal(byName.size, 2);
      assert.equal(byEmail.get('alice@example.com'), byName.get('alice'));
      assert.equal(byEmail.get('bob@example.com'), byName.get('bob'));
      for (const [host, mods] of published.modShardsByHost()) {
        const recorded = await recordedModShardCounts(storage.router, host, mods.map(modShardDatabase));
        assert.deepEqual([...new Set(recorded.values())], [16], `${host} records dev's count`);
        assert.equal(recorded.size, mods.length);
      }
    } finally {
      await storage.close();
    }
  });
});
