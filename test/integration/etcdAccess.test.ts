/**
 * etcd with TLS and auth, as a production etcd runs: an etcd of this file's own serving clients on
 * https:// only (a CA and a certificate for 127.0.0.1 made with openssl, as the local stack makes
 * its own), auth enabled, and an application user whose role may read and write the keyspace. A
 * client with that user and the CA gets in; without the password, or checking against another CA,
 * it does not. A gateway configured by SHARDQL_ETCD=https://…, SHARDQL_ETCD_USERNAME/_PASSWORD and
 * SHARDQL_ETCD_TLS_CA reads the map, registers itself and follows a new map through its watch; the
 * CLI (`shardql topology show`) reads it with the same variables.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { loadConfig } from '../../src/config.ts';
import { ensureStackTls } from '../../src/stack/tls.ts';
import { allocatePorts, LOOPBACK } from '../../src/stack/net.ts';
import { publishTopology } from '../../src/topology/etcdTopology.ts';
import { etcdAccessOptions, readGateways, type EtcdAccess } from '../../src/topology/etcdTopologySource.ts';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { startTestGateway } from '../helpers/gateway.ts';
import { eventually, runCli } from '../helpers/workers.ts';

const KEY = '/shardql-test/etcd-access/topology';
const APP = { username: 'shardql_app', password: 'etcd-app-password' };
const ROOT_PASSWORD = 'etcd-root-password';

let dir: string;
let server: ChildProcess;
let endpoint: string;
let caFile: string;
let ca: string;
let otherCa: string;
let env: TestEnv;

/** A client with a 2 s deadline per call, so a refused one fails instead of waiting. */
const client = (access: EtcdAccess | undefined): Etcd3 =>
  new Etcd3({ ...etcdAccessOptions(access), hosts: [endpoint], dialTimeout: 2000, defaultCallOptions: (c) => (c.isStream ? {} : { deadline: Date.now() + 2000 }) });

/** What a client gets reading KEY: the value's length, or the error. */
async function tryRead(access: EtcdAccess | undefined): Promise<{ bytes: number } | { error: string }> {
  const c = client(access);
  try {
    return { bytes: ((await c.get(KEY).string()) ?? '').length };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  } finally {
    c.close();
  }
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'shardql-etcd-tls-'));
  const tls = ensureStackTls(join(dir, 'good'));
  caFile = tls.ca;
  ca = readFileSync(tls.ca, 'utf8');
  otherCa = readFileSync(ensureStackTls(join(dir, 'other')).ca, 'utf8');
  const [clientPort, peerPort] = (await allocatePorts(2)) as [number, number];
  endpoint = `https://${LOOPBACK}:${clientPort}`;
  const peer = `http://${LOOPBACK}:${peerPort}`;
  server = spawn(
    'etcd',
    [
      '--name', 'tls', '--data-dir', join(dir, 'data'),
      '--listen-client-urls', endpoint, '--advertise-client-urls', endpoint,
      '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer, '--initial-cluster', `tls=${peer}`,
      '--cert-file', tls.cert, '--key-file', tls.key,
      '--heartbeat-interval=10', '--election-timeout=100', '--logger=zap', '--log-outputs=stderr',
    ],
    { stdio: 'ignore' },
  );
  // Before auth: make root and the application's user (a role that may read and write every key), then turn auth on.
  const setup = client({ ca });
  try {
    await eventually('etcd answers over TLS', async () => ((await setup.get('/probe').string().then(() => true, () => false)) ? true : undefined), 15_000);
    await setup.role('root').create().catch(() => undefined); // exists in some versions
    await (await setup.user('root').create(ROOT_PASSWORD)).addRole('root');
    await setup.role('shardql').create();
    await setup.role('shardql').grant({ permission: 'Readwrite', range: setup.range({ prefix: '/' }) });
    await (await setup.user(APP.username).create(APP.password)).addRole('shardql');
    await (setup as unknown as { auth: { authEnable(): Promise<unknown> } }).auth.authEnable();
  } finally {
    setup.close();
  }
  env = await freshEnv({ shards: 8 });
});

after(async () => {
  server?.kill('SIGKILL');
  await env?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('etcd with TLS and auth', () => {
  test('the application user over TLS gets in; no password, a wrong one, or another CA does not', async () => {
    const app = client({ ...APP, ca });
    try {
      await app.put(KEY).value('probe').exec();
    } finally {
      app.close();
    }
    assert.deepEqual(await tryRead({ ...APP, ca }), { bytes: 5 });
    const anonymous = await tryRead({ ca });
    assert.ok('error' in anonymous && /user name is empty|permission denied|authentication/i.test(anonymous.error), JSON.stringify(anonymous));
    const wrong = await tryRead({ ...APP, password: 'not-it', ca });
    assert.ok('error' in wrong && /authentication failed|invalid user ID or password/i.test(wrong.error), JSON.stringify(wrong));
    const otherRoots = await tryRead({ ...APP, ca: otherCa });
    assert.ok('error' in otherRoots, 'a server certificate the CA did not sign gets nowhere');
  });

  test('a gateway and the CLI configured by SHARDQL_ETCD=https://… and its credentials read, register and follow the map', async () => {
    const vars = { SHARDQL_ETCD: endpoint, SHARDQL_ETCD_USERNAME: APP.username, SHARDQL_ETCD_PASSWORD: APP.password, SHARDQL_ETCD_TLS_CA: caFile };
    const config = loadConfig({ ...vars, SHARDQL_MYSQL_USER: 'x', SHARDQL_MYSQL_PASSWORD: 'x', SHARDQL_REDIS: 'x:1', SHARDQL_MEMCACHED: 'x:1', SHARDQL_JWT_SECRET: 'x'.repeat(32) });
    assert.deepEqual([config.etcdEndpoints, config.etcdAccess], [[endpoint], { ...APP, ca }]);
    const app = client(config.etcdAccess);
    try {
      const first = await publishTopology(app, KEY, env.doc);
      const gw = await startTestGateway(env, 'etcd-access', { etcdEndpoints: config.etcdEndpoints, etcdAccess: config.etcdAccess, topologyKey: KEY }, { repair: { intervalMs: 0 } });
      try {
        const readyz = async () => (await (await fetch(`${gw.url}/readyz`)).json()) as { topology: { revision: string } };
        assert.equal((await readyz()).topology.revision, first);
        const u = (await gw.ok('mutation { createUser(input: { username: "etcd_tls" }) { user { id } } }')).createUser.user;
        assert.ok(u.id);
        const seen = await eventually('the gateway registered in etcd', async () => ((await readGateways(app, KEY)).length > 0 ? readGateways(app, KEY) : undefined));
        assert.equal(seen.length, 1);
        assert.equal(seen[0]!.revision, first);
        // A new map (same layout, a new revision) reaches the gateway through its watch over TLS.
        const second = await publishTopology(app, KEY, env.doc);
        await eventually('the watch delivers the new map', async () => ((await readyz()).topology.revision === second ? true : undefined));
        const cli = await runCli({ ...vars, SHARDQL_TOPOLOGY_KEY: KEY, SHARDQL_STACK_DIR: process.env.SHARDQL_STACK_DIR ?? '' }, ['topology', 'show', '--json']);
        assert.equal(cli.code, 0, cli.stderr);
        assert.ok(cli.stdout.includes(String(env.doc.shards.ranges[0]!.host)), cli.stdout.slice(0, 400));
        // The password from a file, as Docker and Kubernetes secrets give it.
        const secret = join(dir, 'etcd-password');
        writeFileSync(secret, `${APP.password}\n`, { mode: 0o600 });
        const { SHARDQL_ETCD_PASSWORD: _inline, ...withoutPassword } = vars;
        const fromFile = await runCli({ ...withoutPassword, SHARDQL_ETCD_PASSWORD_FILE: secret, SHARDQL_TOPOLOGY_KEY: KEY, SHARDQL_STACK_DIR: process.env.SHARDQL_STACK_DIR ?? '' }, ['topology', 'show', '--json']);
        assert.equal(fromFile.code, 0, fromFile.stderr);
        assert.equal(fromFile.stdout, cli.stdout);
        const refused = await runCli({ ...vars, SHARDQL_ETCD_PASSWORD: 'not-it', SHARDQL_TOPOLOGY_KEY: KEY, SHARDQL_STACK_DIR: process.env.SHARDQL_STACK_DIR ?? '' }, ['topology', 'show']);
        assert.notEqual(refused.code, 0);
        assert.ok(!refused.stderr.includes('not-it') && !refused.stdout.includes('not-it'), 'the password is never printed');
      } finally {
        await gw.stop();
      }
    } finally {
      app.close();
    }
  });
});
