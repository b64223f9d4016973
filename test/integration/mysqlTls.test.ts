/**
 * MySQL over TLS, as managed databases ask for it: the local stack's MariaDB servers offer TLS with
 * the stack's own CA (`<stack>/tls/ca.pem`, src/stack/tls.ts); this file adds an account that
 * `REQUIRE SSL` (on every server: the app account's grants), so only a TLS connection gets in. The
 * router's pools, ShardAdmin and a shard copy's `mariadb` client, and a gateway configured through
 * SHARDQL_MYSQL_TLS_CA, all connect with it; without TLS, or checking against another CA, they are
 * refused.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { loadConfig } from '../../src/config.ts';
import { stackTlsFiles } from '../../src/stack/tls.ts';
import { APP_DATABASE_PATTERNS, APP_PRIVILEGES } from '../../src/stack/mysql.ts';
import { createStorage, type Storage } from '../../src/storage/index.ts';
import { ShardAdmin } from '../../src/storage/shardAdmin.ts';
import { allShards } from '../../src/services/repair.ts';
import { clientOptionFile, findClientProgram } from '../../src/storage/shardCopy.ts';
import { ImportSource, parseSourceUrl } from '../../src/storage/importSource.ts';
import { mysqlSslOption, type MysqlCredentials } from '../../src/storage/shardRouter.ts';
import { freshEnv, servedTestEvents, type TestEnv } from '../helpers/env.ts';
import { startTestGateway } from '../helpers/gateway.ts';

const TLS_USER = 'shardql_tls';
const TLS_PASSWORD = 'tls-only-password';

let env: TestEnv;
let ca: string;
let dir: string;

/** Every server of the stack, primaries and replicas. */
const servers = () => env.stack.mysql.hosts.flatMap((h) => [h.primary, ...(h.replica ? [h.replica] : [])]);

before(async () => {
  env = await freshEnv({ shards: 8 });
  ca = readFileSync(stackTlsFiles(env.stack.dir).ca, 'utf8');
  dir = mkdtempSync(join(tmpdir(), 'shardql-mysql-tls-'));
  const admin = env.stack.mysql.admin!;
  // Accounts go in with the binlog off, on every server, as the stack makes its own.
  for (const s of servers()) {
    const conn = await mysql.createConnection({ host: s.host, port: s.port, user: admin.user, password: admin.password });
    try {
      await conn.query('SET SESSION sql_log_bin = 0');
      for (const host of ['127.0.0.1', 'localhost']) {
        await conn.query('CREATE USER IF NOT EXISTS ?@? IDENTIFIED BY ? REQUIRE SSL', [TLS_USER, host, TLS_PASSWORD]);
        for (const pattern of APP_DATABASE_PATTERNS) await conn.query(`GRANT ${APP_PRIVILEGES} ON \`${pattern}\`.* TO ?@?`, [TLS_USER, host]);
      }
    } finally {
      await conn.end();
    }
  }
});

after(async () => {
  const admin = env?.stack.mysql.admin;
  if (admin) {
    for (const s of servers()) {
      const conn = await mysql.createConnection({ host: s.host, port: s.port, user: admin.user, password: admin.password });
      await conn.query('SET SESSION sql_log_bin = 0');
      for (const host of ['127.0.0.1', 'localhost']) await conn.query('DROP USER IF EXISTS ?@?', [TLS_USER, host]);
      await conn.end();
    }
  }
  await env?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The TLS account, checking certificates against `caPem` (default: the stack's CA); `'bundle'`: Node's CA bundle. */
const tlsCredentials = (caPem: string = ca): MysqlCredentials => ({ user: TLS_USER, password: TLS_PASSWORD, tls: caPem === 'bundle' ? {} : { ca: caPem } });

/** Connects as `credentials` to the first primary: the TLS version of the session, or the error. */
async function session(credentials: MysqlCredentials): Promise<{ ssl: string } | { error: string }> {
  const p = env.stack.mysql.hosts[0]!.primary;
  try {
    const conn = await mysql.createConnection({ host: p.host, port: p.port, user: credentials.user, password: credentials.password, ...mysqlSslOption(credentials) });
    try {
      const [rows] = await conn.query<mysql.RowDataPacket[]>("SHOW SESSION STATUS LIKE 'Ssl_version'");
      return { ssl: String(rows[0]?.Value ?? '') };
    } finally {
      await conn.end();
    }
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

describe('MySQL over TLS (an account that requires it)', () => {
  test('TLS checked against the stack CA gets in; a plain connection, or another CA, is refused', async () => {
    const ok = await session(tlsCredentials());
    assert.ok('ssl' in ok && /^TLSv1\.[23]$/.test(ok.ssl), JSON.stringify(ok));
    const plain = await session({ user: TLS_USER, password: TLS_PASSWORD });
    assert.ok('error' in plain && /Access denied/.test(plain.error), JSON.stringify(plain));
    // Another CA: the server's certificate is not trusted, so nothing is sent.
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(dir, 'o.key'), '-out', join(dir, 'o.pem'), '-days', '1', '-subj', '/CN=other'], { stdio: 'ignore' });
    const other = await session(tlsCredentials(readFileSync(join(dir, 'o.pem'), 'utf8')));
    assert.ok('error' in other && /certificate/i.test(other.error), JSON.stringify(other));
    // Node's own CA bundle does not know the stack's CA either.
    const bundle = await session(tlsCredentials('bundle'));
    assert.ok('error' in bundle && /certificate/i.test(bundle.error), JSON.stringify(bundle));
  });

  test("the router's pools and ShardAdmin connect over TLS: writes and reads on every host", async () => {
    let storage: Storage | undefined;
    try {
      storage = createStorage({ topology: () => env.topology, credentials: tlsCredentials(), events: servedTestEvents() });
      const shards = allShards(env.topology);
      const ids: bigint[] = [];
      for (const [i, shard] of shards.entries()) ids.push((await storage.objects.create('board', shard, { name: `tls ${i}` })).id);
      const hosts = new Set(ids.map((id) => storage!.router.hostOfId(id)));
      assert.equal(hosts.size, env.stack.mysql.hosts.length, 'the objects landed on every host');
      for (const [i, id] of ids.entries()) assert.equal((await storage.objects.get(id))?.data.name, `tls ${i}`);
      const admin = new ShardAdmin({ credentials: tlsCredentials() });
      for (const h of env.stack.mysql.hosts) assert.equal(await admin.reachable(h.primary), true, h.name);
      const plainAdmin = new ShardAdmin({ credentials: { user: TLS_USER, password: TLS_PASSWORD } });
      assert.equal(await plainAdmin.reachable(env.stack.mysql.hosts[0]!.primary), false, 'without TLS the account is refused');
    } finally {
      await storage?.close();
    }
  });

  test("a shard copy's mariadb client connects over TLS, checking the server against the CA", () => {
    const p = env.stack.mysql.hosts[0]!.primary;
    const client = findClientProgram(['mariadb', 'mysql']);
    const caFile = join(dir, 'ca.pem');
    writeFileSync(caFile, ca, { mode: 0o600 });
    const run = (options: string) => {
      const file = join(dir, 'client.cnf');
      writeFileSync(file, options, { mode: 0o600 });
      return spawnSync(client, [`--defaults-file=${file}`, '--protocol=TCP', `--host=${p.host}`, `--port=${p.port}`, '--batch', '--skip-column-names', '-e', "SHOW SESSION STATUS LIKE 'Ssl_version'"], { encoding: 'utf8' });
    };
    const withTls = run(clientOptionFile(tlsCredentials(), caFile));
    assert.equal(withTls.status, 0, withTls.stderr);
    assert.match(withTls.stdout, /^Ssl_version\tTLSv1\.[23]$/m);
    // (Without TLS options this client still tries TLS when the server offers it, without checking the
    // certificate: what the option file adds is the check, shown by a CA that did not sign the server's.)
    writeFileSync(join(dir, 'other-ca.pem'), readFileSync(join(dir, 'o.pem')));
    const otherCa = run(clientOptionFile(tlsCredentials(), join(dir, 'other-ca.pem')));
    assert.notEqual(otherCa.status, 0, 'a server certificate the CA did not sign is refused');
    assert.match(otherCa.stderr, /certificate|SSL|TLS/i);
  });

  test("an import's source over TLS: ?tls-ca= in the --from URL", async () => {
    const p = env.stack.mysql.hosts[0]!.primary;
    const admin = env.stack.mysql.admin!;
    const conn = await mysql.createConnection({ host: p.host, port: p.port, user: admin.user, password: admin.password });
    try {
      await conn.query('SET SESSION sql_log_bin = 0');
      await conn.query('DROP DATABASE IF EXISTS tls_source');
      await conn.query('CREATE DATABASE tls_source');
      await conn.query('CREATE TABLE tls_source.users (id BIGINT PRIMARY KEY, username VARCHAR(64) NOT NULL, created_at BIGINT NOT NULL)');
      for (const host of ['127.0.0.1', 'localhost']) await conn.query('GRANT SELECT ON tls_source.* TO ?@?', [TLS_USER, host]);
      const base = `mysql://${TLS_USER}@${p.host}:${p.port}/tls_source`;
      const over = new ImportSource(parseSourceUrl(`${base}?tls-ca=${encodeURIComponent(stackTlsFiles(env.stack.dir).ca)}`), TLS_PASSWORD);
      try {
        assert.deepEqual([...((await over.columnTypes()).get('users')?.keys() ?? [])].sort(), ['created_at', 'id', 'username']);
      } finally {
        await over.close();
      }
      const plain = new ImportSource(parseSourceUrl(base), TLS_PASSWORD);
      try {
        await assert.rejects(plain.columnTypes(), /Access denied/);
      } finally {
        await plain.close();
      }
      assert.throws(() => new ImportSource(parseSourceUrl(`${base}?tls-ca=${encodeURIComponent(join(dir, 'missing.pem'))}`), TLS_PASSWORD), /cannot read the source's CA file .*missing\.pem.* ENOENT/);
    } finally {
      await conn.query('DROP DATABASE IF EXISTS tls_source');
      await conn.end();
    }
  });

  test('SHARDQL_MYSQL_TLS_CA: a gateway whose account requires TLS serves reads and writes', async () => {
    const config = loadConfig({
      SHARDQL_ENV: 'development',
      SHARDQL_ETCD: env.stack.etcd.endpoints.join(','),
      SHARDQL_MYSQL_USER: TLS_USER,
      SHARDQL_MYSQL_PASSWORD: TLS_PASSWORD,
      SHARDQL_MYSQL_TLS_CA: stackTlsFiles(env.stack.dir).ca,
      SHARDQL_REDIS: `${env.stack.redis.host}:${env.stack.redis.port}`,
      SHARDQL_MEMCACHED: `${env.stack.memcached.host}:${env.stack.memcached.port}`,
      SHARDQL_JWT_SECRET: 'x'.repeat(32),
    });
    assert.deepEqual(config.mysql, { user: TLS_USER, password: TLS_PASSWORD, tls: { ca } });
    const gw = await startTestGateway(env, 'mysql-tls', { mysql: config.mysql }, { repair: { intervalMs: 0 } });
    try {
      const u = (await gw.ok('mutation { createUser(input: { username: "tls_user" }) { user { id } token } }')).createUser;
      const board = (await gw.ok('mutation { createBoard(input: { name: "over TLS" }) { id } }', {}, u.token)).createBoard.id;
      const read = await gw.ok('query($id: ID!) { user(id: $id) { username boardCount boards(first: 1) { edges { node { id name } } } } }', { id: u.user.id });
      assert.deepEqual(read.user, { username: 'tls_user', boardCount: 1, boards: { edges: [{ node: { id: board, name: 'over TLS' } }] } });
    } finally {
      await gw.stop();
    }
  });
});
