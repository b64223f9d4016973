import { after, describe, test } from 'node:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig, loadWorkerConfig, servedEventSettings } from '../../src/config.ts';
import { NO_EVENTS } from '../../src/core/events.ts';
import { PINTEREST_EVENTS } from '../../src/product/pinterest/events.ts';
import { parseRate } from '../../src/cache/rateLimits.ts';
import { faultAt } from '../../src/services/testFaults.ts';
import type { FaultPoint } from '../../src/services/writeExecutor.ts';

const BASE = {
  SHARDQL_ETCD: 'http://etcd:2379', SHARDQL_MYSQL_USER: 'u', SHARDQL_MYSQL_PASSWORD: 'p', SHARDQL_REDIS: 'redis:6379',
  SHARDQL_MEMCACHED: 'mc:11211', SHARDQL_JWT_SECRET: 'x'.repeat(32),
};

describe('Config: limits and abuse', () => {
  test('rates: requests per window', () => {
    const cases: [string, ReturnType<typeof parseRate>][] = [
      ['600/60s', { limit: 600, windowMs: 60_000 }],
      ['10/1m', { limit: 10, windowMs: 60_000 }],
      ['5/500ms', { limit: 5, windowMs: 500 }],
      ['1000/1h', { limit: 1000, windowMs: 3_600_000 }],
      ['off', undefined],
    ];
    for (const [text, rate] of cases) assert.deepEqual(parseRate(text), rate, text);
    for (const bad of ['600', '600/', '/60s', '0/60s', '600/60', 'ten/60s', '600/60d']) assert.throws(() => parseRate(bad), RangeError, bad);
  });

  test('production: rate limits on (600/60s per viewer and per address), introspection and batching off', () => {
    const c = loadConfig(BASE);
    assert.equal(c.env, 'production');
    assert.deepEqual(c.rateLimit, { perViewer: { limit: 600, windowMs: 60_000 }, perAddress: { limit: 600, windowMs: 60_000 } });
    assert.equal(c.introspection, undefined, 'the default: on in development only');
    assert.equal(c.batchedRequests, undefined);
    assert.equal(c.fastLane, undefined, 'unset: the fast lane is on');
    assert.equal(c.maxCost, undefined);
    assert.equal(c.intentCompletionDelayMs, undefined, 'unset: the writes default to 100 ms');
  });

  test('every limit can be set, and a rate switched off', () => {
    const c = loadConfig({
      ...BASE, SHARDQL_MAX_COST: '1000', SHARDQL_MAX_ROUND_TRIPS: '50', SHARDQL_RATE_LIMIT: '100/10s', SHARDQL_RATE_LIMIT_IP: 'off',
      SHARDQL_QUERY_TIMEOUT_MS: '250', SHARDQL_REQUEST_TIMEOUT_MS: '2000', SHARDQL_INTROSPECTION: '1', SHARDQL_BATCHING: '1',
      SHARDQL_FAST_LANE: '0', SHARDQL_INTENT_COMPLETION_DELAY_MS: '0', SHARDQL_INTENT_REPAIR_EVERY_MS: '0', SHARDQL_INTENT_REPAIR_AGE_MS: '1000',
    });
    assert.equal(c.intentCompletionDelayMs, 0, '0: each completion at once');
    assert.equal(c.intentRepairEveryMs, 0, '0: no repair pass in this gateway');
    assert.equal(c.intentRepairAgeMs, 1000);
    assert.equal(loadConfig(BASE).intentRepairEveryMs, undefined, 'unset: the server keeps its default');
    assert.equal(c.maxCost, 1000);
    assert.equal(c.maxRoundTrips, 50);
    assert.deepEqual(c.rateLimit, { perViewer: { limit: 100, windowMs: 10_000 }, perAddress: undefined });
    assert.equal(c.queryTimeoutMs, 250);
    assert.equal(c.requestTimeoutMs, 2000);
    assert.equal(c.introspection, true);
    assert.equal(c.batchedRequests, true);
    assert.equal(c.fastLane, false);
    assert.throws(() => loadConfig({ ...BASE, SHARDQL_FAST_LANE: 'off' }), /SHARDQL_FAST_LANE must be 1 or 0/);
    assert.equal(loadConfig({ ...BASE, SHARDQL_RATE_LIMIT: 'off' }).rateLimit, undefined);
    assert.equal(loadConfig({ ...BASE, SHARDQL_ENV: 'development' }).rateLimit, undefined, 'development: off unless set');
  });

  test('bad values are refused, naming the variable', () => {
    for (const [name, value] of [['SHARDQL_MAX_COST', 'lots'], ['SHARDQL_MAX_COST', '0'], ['SHARDQL_RATE_LIMIT', '600'], ['SHARDQL_INTROSPECTION', 'yes'], ['SHARDQL_REQUEST_TIMEOUT_MS', '-1'], ['SHARDQL_INTENT_COMPLETION_DELAY_MS', '-5'], ['SHARDQL_INTENT_REPAIR_AGE_MS', '10'], ['SHARDQL_INTENT_REPAIR_EVERY_MS', 'often']] as const) {
      assert.throws(() => loadConfig({ ...BASE, [name]: value }), (err: unknown) => err instanceof ConfigError && err.message.includes(name), `${name}=${value}`);
    }
  });
});

describe('Config: the test-only fault', () => {
  const DEV = { ...BASE, SHARDQL_ENV: 'development' };

  test('honoured only with the explicit test switch, in development: <kind>@<point>[#n]', () => {
    const armed = (fault: string) => loadConfig({ ...DEV, SHARDQL_ALLOW_TEST_FAULTS: '1', SHARDQL_TEST_FAULT: fault }).testFault;
    assert.deepEqual(armed('add:user_likes_pins@in-first-transaction#3'), { kind: 'add:user_likes_pins', point: 'in-first-transaction', nth: 3 });
    assert.deepEqual(armed('repin@after-step-0'), { kind: 'repin', point: 'after-step-0', nth: 1 });
    assert.deepEqual(armed('deletePin@before-complete#12'), { kind: 'deletePin', point: 'before-complete', nth: 12 });
    assert.equal(loadConfig(DEV).testFault, undefined, 'unset: no fault');
    assert.equal(loadConfig({ ...DEV, SHARDQL_ALLOW_TEST_FAULTS: '1' }).testFault, undefined, 'the switch alone arms nothing');
  });

  test('refused without the switch, in production, or malformed: the gateway does not start', () => {
    const refused: [Record<string, string>, RegExp][] = [
      [{ ...DEV, SHARDQL_TEST_FAULT: 'repin@after-step-0' }, /SHARDQL_ALLOW_TEST_FAULTS=1/],
      [{ ...DEV, SHARDQL_TEST_FAULT: 'repin@after-step-0', SHARDQL_ALLOW_TEST_FAULTS: 'yes' }, /SHARDQL_ALLOW_TEST_FAULTS=1/],
      [{ ...BASE, SHARDQL_TEST_FAULT: 'repin@after-step-0', SHARDQL_ALLOW_TEST_FAULTS: '1' }, /production/],
      ...['repin', 'repin@somewhere', 'repin@after-step-0#0', '@before-complete', 'repin@after-step-x', 'repin@before-complete#2#3'].map(
        (bad): [Record<string, string>, RegExp] => [{ ...DEV, SHARDQL_TEST_FAULT: bad, SHARDQL_ALLOW_TEST_FAULTS: '1' }, /expected <kind>@<point>\[#n\]/],
      ),
    ];
    for (const [env, message] of refused) {
      assert.throws(() => loadConfig(env), (err: unknown) => err instanceof ConfigError && message.test(err.message), JSON.stringify(env.SHARDQL_TEST_FAULT));
    }
  });

  test('the fault plays its crash the n-th time its write reaches its point, and only then', () => {
    class Played extends Error {}
    const hook = faultAt({ kind: 'repin', point: 'after-step-0', nth: 3 }, (line) => {
      throw new Played(line);
    });
    const crashes = (point: FaultPoint, kind: string): boolean => {
      const crash = hook(point, kind, `key-of-${kind}`);
      if (crash === undefined) return false;
      assert.equal(typeof crash, 'function');
      assert.throws(() => (crash as () => never)(), (e: unknown) => e instanceof Played && e.message === 'shardql test fault: SIGKILL at after-step-0 of repin (time 3 it was reached), the write with Idempotency-Key key-of-repin');
      return true;
    };
    const seen = [
      crashes('after-step-0', 'repin'),
      crashes('after-first-commit', 'repin'),
      crashes('after-step-0', 'deletePin'),
      crashes('after-step-0', 'repin'),
      crashes('after-step-0', 'repin'),
      crashes('after-step-0', 'repin'),
    ];
    assert.deepEqual(seen, [false, false, false, false, true, false], 'other points and kinds do not count');
  });
});

describe('Config: one Redis or a Redis Cluster', () => {
  const { SHARDQL_REDIS: _single, ...noRedis } = BASE;
  const cases: { name: string; env: Record<string, string>; want: unknown }[] = [
    { name: 'SHARDQL_REDIS: one server', env: { SHARDQL_REDIS: 'redis:6379' }, want: { host: 'redis', port: 6379 } },
    { name: 'SHARDQL_REDIS_CLUSTER: host:port list', env: { SHARDQL_REDIS_CLUSTER: 'a:7000,b:7001, c:7002' }, want: { cluster: [{ host: 'a', port: 7000 }, { host: 'b', port: 7001 }, { host: 'c', port: 7002 }] } },
    { name: 'SHARDQL_REDIS_CLUSTER: URL list', env: { SHARDQL_REDIS_CLUSTER: 'redis://10.0.0.1:6379,redis://10.0.0.2:6379/' }, want: { cluster: [{ host: '10.0.0.1', port: 6379 }, { host: '10.0.0.2', port: 6379 }] } },
    { name: 'an empty SHARDQL_REDIS counts as unset', env: { SHARDQL_REDIS: '', SHARDQL_REDIS_CLUSTER: 'a:7000' }, want: { cluster: [{ host: 'a', port: 7000 }] } },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual(loadConfig({ ...noRedis, ...c.env }).redis, c.want));

  const refused: { name: string; env: Record<string, string>; message: RegExp }[] = [
    { name: 'both set', env: { SHARDQL_REDIS: 'redis:6379', SHARDQL_REDIS_CLUSTER: 'a:7000' }, message: /both set; set one/ },
    { name: 'neither set, and no local stack', env: {}, message: /SHARDQL_REDIS \(or SHARDQL_REDIS_CLUSTER\) is not set/ },
    { name: 'a node without a port', env: { SHARDQL_REDIS_CLUSTER: 'a:7000,b' }, message: /host:port,host:port,… \(or redis:\/\/host:port,…\), got "b" in "a:7000,b"/ },
    { name: 'an empty item', env: { SHARDQL_REDIS_CLUSTER: 'a:7000,' }, message: /got "" in/ },
    { name: 'port 0', env: { SHARDQL_REDIS_CLUSTER: 'a:0' }, message: /got "a:0"/ },
    { name: 'a URL with credentials (not supported)', env: { SHARDQL_REDIS_CLUSTER: 'redis://u:p@a:7000' }, message: /got "redis:\/\/u:p@a:7000"/ },
  ];
  for (const c of refused) test(`refused: ${c.name}`, () => assert.throws(() => loadConfig({ ...noRedis, ...c.env }), (err) => err instanceof ConfigError && c.message.test(err.message)));
});

describe('Config: getting into Redis (password, ACL user, TLS), memcached (SASL), etcd (TLS, auth) and MySQL (TLS)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'shardql-config-'));
  const pem = join(dir, 'ca.pem');
  writeFileSync(pem, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
  const notPem = join(dir, 'ca.txt');
  writeFileSync(notPem, 'hello');
  after(() => rmSync(dir, { recursive: true, force: true }));
  const cases: { name: string; env: Record<string, string>; want: unknown }[] = [
    { name: 'none: no access', env: {}, want: { host: 'redis', port: 6379 } },
    { name: 'a password (the default user)', env: { SHARDQL_REDIS_PASSWORD: 's3cret' }, want: { host: 'redis', port: 6379, access: { password: 's3cret' } } },
    { name: 'an ACL user', env: { SHARDQL_REDIS_USERNAME: 'app', SHARDQL_REDIS_PASSWORD: 's3cret' }, want: { host: 'redis', port: 6379, access: { username: 'app', password: 's3cret' } } },
    { name: "TLS with Node's CA bundle", env: { SHARDQL_REDIS_TLS: '1' }, want: { host: 'redis', port: 6379, access: { tls: {} } } },
    { name: 'TLS with a CA file (read at start)', env: { SHARDQL_REDIS_TLS_CA: pem }, want: { host: 'redis', port: 6379, access: { tls: { ca: readFileSync(pem, 'utf8') } } } },
    { name: 'TLS=0 is no TLS', env: { SHARDQL_REDIS_TLS: '0' }, want: { host: 'redis', port: 6379 } },
    { name: 'the same for a cluster', env: { SHARDQL_REDIS: '', SHARDQL_REDIS_CLUSTER: 'a:7000', SHARDQL_REDIS_PASSWORD: 'p', SHARDQL_REDIS_TLS: '1' }, want: { cluster: [{ host: 'a', port: 7000 }], access: { password: 'p', tls: {} } } },
  ];
  for (const c of cases) test(c.name, () => assert.deepEqual(loadConfig({ ...BASE, ...c.env }).redis, c.want));
  const refused: { name: string; env: Record<string, string>; message: RegExp }[] = [
    { name: 'a user without a password', env: { SHARDQL_REDIS_USERNAME: 'app' }, message: /SHARDQL_REDIS_USERNAME is set without SHARDQL_REDIS_PASSWORD/ },
    { name: 'TLS neither 1 nor 0', env: { SHARDQL_REDIS_TLS: 'yes' }, message: /SHARDQL_REDIS_TLS must be 1 or 0, got "yes"/ },
    { name: 'a CA with TLS off', env: { SHARDQL_REDIS_TLS: '0', SHARDQL_REDIS_TLS_CA: pem }, message: /SHARDQL_REDIS_TLS_CA is set but SHARDQL_REDIS_TLS=0/ },
    { name: 'a CA file that is not there', env: { SHARDQL_REDIS_TLS_CA: join(dir, 'missing.pem') }, message: /cannot be read: ".*missing\.pem" \(ENOENT\)/ },
    { name: 'a CA file with no certificate', env: { SHARDQL_REDIS_TLS_CA: notPem }, message: /must name a PEM file of certificates/ },
  ];
  for (const c of refused) test(`refused: ${c.name}`, () => assert.throws(() => loadConfig({ ...BASE, ...c.env }), (err) => err instanceof ConfigError && c.message.test(err.message)));

  test('secrets from files: <name>_FILE, one trailing newline dropped; refused when both are set, unreadable or empty', () => {
    const file = (name: string, text: string): string => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    };
    const c = loadConfig({
      ...BASE,
      SHARDQL_MYSQL_PASSWORD: '',
      SHARDQL_MYSQL_PASSWORD_FILE: file('mysql', 'from a file\n'),
      SHARDQL_JWT_SECRET: '',
      SHARDQL_JWT_SECRET_FILE: file('jwt', `${'j'.repeat(40)}\r\n`),
      SHARDQL_REDIS_PASSWORD_FILE: file('redis', 'r\n\n'),
    });
    assert.equal(c.mysql.password, 'from a file');
    assert.equal(c.jwtSecret, 'j'.repeat(40));
    assert.deepEqual(c.redis, { host: 'redis', port: 6379, access: { password: 'r\n' } }, 'only one newline is dropped');
    assert.equal(loadWorkerConfig({ SHARDQL_IMPORT_PASSWORD_FILE: file('import', 'src-pw\n') }).importPassword, 'src-pw');
    assert.throws(() => loadConfig({ ...BASE, SHARDQL_MYSQL_PASSWORD_FILE: file('m2', 'x') }), /SHARDQL_MYSQL_PASSWORD and SHARDQL_MYSQL_PASSWORD_FILE are both set; set one/);
    assert.throws(() => loadConfig({ ...BASE, SHARDQL_ETCD_PASSWORD_FILE: join(dir, 'none') }), /SHARDQL_ETCD_PASSWORD_FILE names a file that cannot be read: ".*none" \(ENOENT\)/);
    assert.throws(() => loadConfig({ ...BASE, SHARDQL_REDIS_PASSWORD_FILE: file('blank', '\n') }), /SHARDQL_REDIS_PASSWORD_FILE names an empty file/);
  });

  test('memcached: servers, and a SASL login from its two variables only', () => {
    assert.deepEqual(loadConfig(BASE).memcached, { servers: 'mc:11211' });
    assert.deepEqual(loadConfig({ ...BASE, SHARDQL_MEMCACHED: 'a:11211,b' }).memcached, { servers: 'a:11211,b' });
    assert.deepEqual(loadConfig({ ...BASE, SHARDQL_MEMCACHED_USERNAME: 'app', SHARDQL_MEMCACHED_PASSWORD: 's3cret' }).memcached, {
      servers: 'mc:11211',
      sasl: { username: 'app', password: 's3cret' },
    });
    const refused: [Record<string, string>, RegExp][] = [
      [{ SHARDQL_MEMCACHED_USERNAME: 'app' }, /SHARDQL_MEMCACHED_USERNAME and SHARDQL_MEMCACHED_PASSWORD must be set together/],
      [{ SHARDQL_MEMCACHED_PASSWORD: 's3cret' }, /SHARDQL_MEMCACHED_USERNAME and SHARDQL_MEMCACHED_PASSWORD must be set together/],
      [{ SHARDQL_MEMCACHED: 'app:pw@mc:11211' }, /SHARDQL_MEMCACHED must list host:port only; put the login in SHARDQL_MEMCACHED_USERNAME/],
      [{ SHARDQL_MEMCACHED: 'mc:port' }, /SHARDQL_MEMCACHED must be host:port\[,host:port\], got "mc:port"/],
      [{ SHARDQL_MEMCACHED: 'a:1, b:2' }, /SHARDQL_MEMCACHED must be host:port/],
    ];
    for (const [env, message] of refused) assert.throws(() => loadConfig({ ...BASE, ...env }), (err) => err instanceof ConfigError && message.test(err.message), JSON.stringify(env));
    writeFileSync(join(dir, 'mc'), 'from-file\n');
    assert.equal(loadConfig({ ...BASE, SHARDQL_MEMCACHED_USERNAME: 'app', SHARDQL_MEMCACHED_PASSWORD_FILE: join(dir, 'mc') }).memcached.sasl?.password, 'from-file');
  });

  test('etcd: https:// endpoints, a user and password, and a CA', () => {
    const c = loadConfig({ ...BASE, SHARDQL_ETCD: 'https://e1:2379,https://e2:2379', SHARDQL_ETCD_USERNAME: 'app', SHARDQL_ETCD_PASSWORD: 'pw', SHARDQL_ETCD_TLS_CA: pem });
    assert.deepEqual([c.etcdEndpoints, c.etcdAccess], [['https://e1:2379', 'https://e2:2379'], { username: 'app', password: 'pw', ca: readFileSync(pem, 'utf8') }]);
    assert.deepEqual(loadConfig({ ...BASE, SHARDQL_ETCD: 'https://e1:2379' }).etcdAccess, undefined, "https:// alone: the system's roots, nothing to carry");
    assert.equal(loadConfig(BASE).etcdAccess, undefined);
    assert.throws(() => loadConfig({ ...BASE, SHARDQL_ETCD_USERNAME: 'app' }), /SHARDQL_ETCD_USERNAME and SHARDQL_ETCD_PASSWORD must be set together/);
    assert.throws(() => loadConfig({ ...BASE, SHARDQL_ETCD_TLS_CA: pem }), /SHARDQL_ETCD_TLS_CA is set, so SHARDQL_ETCD must list https:\/\/ endpoints, got http:\/\/etcd:2379/);
    assert.throws(() => loadConfig({ ...BASE, SHARDQL_ETCD: 'https://e1:2379,http://e2:2379' }), /mixes https:\/\/ and plain endpoints/);
  });

  test('MySQL: SHARDQL_MYSQL_TLS / _TLS_CA apply to the application and the admin account alike', () => {
    const admin = { SHARDQL_MYSQL_ADMIN_USER: 'adm', SHARDQL_MYSQL_ADMIN_PASSWORD: 'ap' };
    const c = loadConfig({ ...BASE, ...admin, SHARDQL_MYSQL_TLS_CA: pem });
    const tls = { ca: readFileSync(pem, 'utf8') };
    assert.deepEqual([c.mysql, c.mysqlAdmin], [{ user: 'u', password: 'p', tls }, { user: 'adm', password: 'ap', tls }]);
    assert.deepEqual(loadConfig({ ...BASE, SHARDQL_MYSQL_TLS: '1' }).mysql, { user: 'u', password: 'p', tls: {} });
    assert.deepEqual(loadConfig(BASE).mysql, { user: 'u', password: 'p' }, 'no TLS unless asked');
    assert.throws(() => loadConfig({ ...BASE, SHARDQL_MYSQL_TLS: 'true' }), /SHARDQL_MYSQL_TLS must be 1 or 0, got "true"/);
    assert.throws(() => loadConfig({ ...BASE, SHARDQL_MYSQL_TLS_CA: notPem }), /SHARDQL_MYSQL_TLS_CA must name a PEM file/);
  });
});

describe('Config: running it in production', () => {
  test('nothing set: HS256 only, socket addresses, no tracing, the defaults left to the gateway', () => {
    const c = loadConfig(BASE);
    for (const key of ['identityProvider', 'trustedProxies', 'tracing', 'logLevel', 'logPretty', 'landingPage', 'schemaPrivacy'] as const) assert.equal(c[key], undefined, key);
  });

  test('an identity provider: JWKS URL, issuer and audience together; claim and skew optional', () => {
    const idp = { SHARDQL_JWKS_URL: 'https://id.example.com/.well-known/jwks.json', SHARDQL_JWT_ISSUER: 'https://id.example.com/', SHARDQL_JWT_AUDIENCE: 'shardql-api' };
    assert.deepEqual(loadConfig({ ...BASE, ...idp }).identityProvider, { jwksUrl: idp.SHARDQL_JWKS_URL, issuer: idp.SHARDQL_JWT_ISSUER, audience: 'shardql-api' });
    assert.deepEqual(loadConfig({ ...BASE, ...idp, SHARDQL_JWT_USER_CLAIM: 'https://example.com/uid', SHARDQL_JWT_CLOCK_SKEW_S: '10' }).identityProvider, {
      jwksUrl: idp.SHARDQL_JWKS_URL, issuer: idp.SHARDQL_JWT_ISSUER, audience: 'shardql-api', userClaim: 'https://example.com/uid', clockSkewSeconds: 10,
    });
    const refused: Record<string, string | undefined>[] = [
      { ...idp, SHARDQL_JWT_ISSUER: undefined },
      { ...idp, SHARDQL_JWT_AUDIENCE: undefined },
      { ...idp, SHARDQL_JWKS_URL: 'ftp://id.example.com/jwks' },
      { ...idp, SHARDQL_JWKS_URL: 'not a url' },
      { ...idp, SHARDQL_JWT_ISSUER: 'shardql' },
      { ...idp, SHARDQL_JWT_CLOCK_SKEW_S: '3600' },
      { ...idp, SHARDQL_JWT_USER_CLAIM: 'a claim with spaces' },
      { SHARDQL_JWT_ISSUER: 'https://id.example.com/' },
    ];
    for (const env of refused) assert.throws(() => loadConfig({ ...BASE, ...env }), ConfigError, JSON.stringify(env));
  });

  test('trusted proxies: addresses, CIDRs and names; a typo is refused at start, not ignored', () => {
    assert.deepEqual(loadConfig({ ...BASE, SHARDQL_TRUSTED_PROXIES: '10.0.0.0/8, 192.168.1.7,loopback,fd00::/8' }).trustedProxies, ['10.0.0.0/8', '192.168.1.7', 'loopback', 'fd00::/8']);
    for (const bad of ['10.0.0.0/33', 'proxy.internal', '300.1.1.1']) assert.throws(() => loadConfig({ ...BASE, SHARDQL_TRUSTED_PROXIES: bad }), ConfigError, bad);
  });

  test('logs, traces, landing page, schema privacy', () => {
    const c = loadConfig({
      ...BASE, SHARDQL_LOG_LEVEL: 'warn', SHARDQL_LOG_PRETTY: '1', SHARDQL_OTLP_ENDPOINT: 'http://collector:4318/v1/traces', SHARDQL_TRACE_SAMPLE_RATIO: '0.25',
      SHARDQL_SERVICE_NAME: 'shardql-eu', SHARDQL_LANDING_PAGE: 'off', SHARDQL_SCHEMA_PRIVACY: '0',
    });
    assert.equal(c.logLevel, 'warn');
    assert.equal(c.logPretty, true);
    assert.deepEqual(c.tracing, { otlpEndpoint: 'http://collector:4318/v1/traces', sampleRatio: 0.25, serviceName: 'shardql-eu' });
    assert.equal(c.landingPage, false);
    assert.equal(c.schemaPrivacy, false);
    for (const [name, bad] of [['SHARDQL_LOG_LEVEL', 'verbose'], ['SHARDQL_TRACE_SAMPLE_RATIO', '2'], ['SHARDQL_LANDING_PAGE', 'yes'], ['SHARDQL_SCHEMA_PRIVACY', 'true'], ['SHARDQL_LOG_PRETTY', 'on']] as const) {
      assert.throws(() => loadConfig({ ...BASE, SHARDQL_OTLP_ENDPOINT: 'http://collector:4318/v1/traces', [name]: bad }), ConfigError, `${name}=${bad}`);
    }
  });
});

describe('Config: the web app', () => {
  test('SHARDQL_WEB_APP names the built app to serve at /app; unset or empty, none is served', () => {
    assert.equal(loadConfig({ ...BASE, SHARDQL_WEB_APP: '/srv/shardql/dist/web' }).webApp, '/srv/shardql/dist/web');
    assert.equal(loadConfig(BASE).webApp, undefined);
    assert.equal(loadConfig({ ...BASE, SHARDQL_WEB_APP: '' }).webApp, undefined);
  });
});

describe("The web app's sign-in with the identity provider", () => {
  const provider = { SHARDQL_JWKS_URL: 'https://id.example.test/jwks', SHARDQL_JWT_ISSUER: 'https://id.example.test/', SHARDQL_JWT_AUDIENCE: 'shardql' };
  const signIn = { SHARDQL_OIDC_CLIENT_ID: 'web', SHARDQL_OIDC_AUTHORIZATION_URL: 'https://id.example.test/authorize', SHARDQL_OIDC_TOKEN_URL: 'https://id.example.test/token', SHARDQL_OIDC_NAME: 'Example ID' };
  test('all four with the provider: scope openid by default, or the one given', () => {
    assert.deepEqual(loadConfig({ ...BASE, ...provider, ...signIn }).webSignIn, { name: 'Example ID', clientId: 'web', authorizationUrl: 'https://id.example.test/authorize', tokenUrl: 'https://id.example.test/token', scope: 'openid' });
    assert.equal(loadConfig({ ...BASE, ...provider, ...signIn, SHARDQL_OIDC_SCOPE: 'openid profile' }).webSignIn?.scope, 'openid profile');
    assert.equal(loadConfig({ ...BASE, ...provider }).webSignIn, undefined);
    assert.equal(loadConfig({ ...BASE, ...provider, ...signIn, SHARDQL_OIDC_AUDIENCE: 'https://api.example.test/' }).webSignIn?.audience, 'https://api.example.test/');
    assert.equal('audience' in loadConfig({ ...BASE, ...provider, ...signIn, SHARDQL_OIDC_AUDIENCE: '' }).webSignIn!, false, 'empty: no audience parameter');
  });
  const refused: { name: string; env: Record<string, string>; message: RegExp }[] = [
    { name: 'without the provider', env: signIn, message: /SHARDQL_OIDC_CLIENT_ID needs SHARDQL_JWKS_URL/ },
    { name: 'a scope without the provider', env: { SHARDQL_OIDC_SCOPE: 'openid' }, message: /SHARDQL_OIDC_SCOPE needs SHARDQL_JWKS_URL/ },
    { name: 'one missing', env: { ...provider, ...signIn, SHARDQL_OIDC_TOKEN_URL: '' }, message: /missing SHARDQL_OIDC_TOKEN_URL/ },
    { name: 'a token endpoint that is no URL', env: { ...provider, ...signIn, SHARDQL_OIDC_TOKEN_URL: 'token' }, message: /SHARDQL_OIDC_TOKEN_URL must be an http\(s\) URL/ },
    { name: 'an audience without the provider', env: { SHARDQL_OIDC_AUDIENCE: 'api' }, message: /SHARDQL_OIDC_AUDIENCE needs SHARDQL_JWKS_URL/ },
    { name: 'an audience with a space', env: { ...provider, ...signIn, SHARDQL_OIDC_AUDIENCE: 'my api' }, message: /SHARDQL_OIDC_AUDIENCE must be one identifier/ },
    { name: 'a scope with a quote', env: { ...provider, ...signIn, SHARDQL_OIDC_SCOPE: 'openid "x"' }, message: /SHARDQL_OIDC_SCOPE must be space-separated scope names/ },
  ];
  for (const c of refused) test(`refused: ${c.name}`, () => assert.throws(() => loadConfig({ ...BASE, ...c.env }), (err) => err instanceof ConfigError && c.message.test(err.message)));
});

describe('Config: event retention, checked against the served product\'s kinds', () => {
  test("a kind of the spec is set; the others keep the spec's defaults", () => {
    const s = servedEventSettings(loadConfig({ ...BASE, SHARDQL_EVENT_RETENTION: 'liked_pin=50/7d' }), PINTEREST_EVENTS);
    assert.equal(s.spec, PINTEREST_EVENTS);
    assert.deepEqual(s.retention.liked_pin, { versions: 50, ttlMs: 7 * 86_400_000 });
    assert.deepEqual(s.retention.pin_liked, { versions: 1000, ttlMs: 90 * 86_400_000 });
  });
  const refused: [string, string, typeof PINTEREST_EVENTS | typeof NO_EVENTS, RegExp][] = [
    ['a kind no product declares', 'nope=1/1d', PINTEREST_EVENTS, /^SHARDQL_EVENT_RETENTION: event retention: unknown kind "nope" \(kinds: pin_liked, .*, followed_board, notifications, activity, \*\)$/],
    ["Pinterest's kind against a spec without it", 'liked_pin=50/7d', NO_EVENTS, /^SHARDQL_EVENT_RETENTION: event retention: unknown kind "liked_pin"/],
  ];
  for (const [name, value, spec, message] of refused) {
    test(`refused at start: ${name}`, () => {
      const config = loadConfig({ ...BASE, SHARDQL_EVENT_RETENTION: value }); // the syntax is fine
      assert.throws(() => servedEventSettings(config, spec), (err: unknown) => err instanceof ConfigError && message.test(err.message));
    });
  }
});
