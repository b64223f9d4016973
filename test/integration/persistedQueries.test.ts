import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { checkedFetch, startTestGateway, codes, type TestGateway } from '../helpers/gateway.ts';
import { seedDemo } from '../../src/demo/seed.ts';

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');
const ALLOWED = 'query Alice { user(username: "alice") { username boardCount } }';

let env: TestEnv;
let open: TestGateway;
let trusted: TestGateway;

before(async () => {
  env = await freshEnv({ shards: 16 });
  await seedDemo(env.storage, () => env.topology);
  const dir = mkdtempSync(join(tmpdir(), 'shardql-manifest-'));
  const manifest = join(dir, 'persisted-query-manifest.json');
  writeFileSync(manifest, JSON.stringify({
    format: 'apollo-persisted-query-manifest',
    version: 1,
    operations: [{ id: sha256(ALLOWED), name: 'Alice', type: 'query', body: ALLOWED }],
  }));
  open = await startTestGateway(env, 'apq');
  trusted = await startTestGateway(env, 'trusted', { trustedDocuments: manifest, env: 'production' });
});

after(async () => {
  await open?.stop();
  await trusted?.stop();
  await env?.close();
});

describe('Automatic persisted queries (store in Redis)', () => {
  test('a hash alone is unknown until the text is sent once; then the hash alone runs', async () => {
    const query = `{ user(username: "bob") { username } } # ${Date.now()}`;
    const hash = sha256(query);
    const ext = { persistedQuery: { version: 1, sha256Hash: hash } };
    const first = await open.gql('', {}, { body: { extensions: ext } });
    assert.deepEqual(codes(first), ['PERSISTED_QUERY_NOT_FOUND']);
    const register = await open.gql('', {}, { body: { query, extensions: ext } });
    assert.equal(register.body.data.user.username, 'bob');
    const redis = new Redis({ host: env.stack.redis.host, port: env.stack.redis.port });
    try {
      const keys = await redis.keys(`*${hash}*`);
      assert.equal(keys.length, 1, 'the query is stored in Redis');
    } finally {
      redis.disconnect();
    }
    const byHash = await open.gql('', {}, { body: { extensions: ext } });
    assert.equal(byHash.body.data.user.username, 'bob');
  });

  test('a hash that does not match the text is refused', async () => {
    const r = await open.gql('', {}, { body: { query: '{ viewer { id } }', extensions: { persistedQuery: { version: 1, sha256Hash: sha256('something else') } } } });
    assert.equal(r.status, 400);
    assert.equal(r.body.data, undefined);
  });
});

describe('Trusted documents (manifest allowlist)', () => {
  test('runs a manifest operation by ID (Apollo persistedQuery extension or documentId)', async () => {
    const a = await trusted.gql('', {}, { body: { extensions: { persistedQuery: { version: 1, sha256Hash: sha256(ALLOWED) } } } });
    assert.equal(a.body.data.user.username, 'alice');
    const b = await trusted.gql('', {}, { body: { documentId: sha256(ALLOWED) } });
    assert.equal(b.body.data.user.username, 'alice');
  });

  test('runs the full text of a manifest operation', async () => {
    const r = await trusted.gql(ALLOWED);
    assert.equal(r.body.data.user.username, 'alice');
  });

  test('refuses any other operation, an unknown ID, and GET', async () => {
    const other = await trusted.gql('{ user(username: "alice") { username pinCount } }');
    assert.deepEqual(codes(other), ['PERSISTED_QUERY_NOT_ALLOWED']);
    assert.equal(other.status, 400);
    const unknown = await trusted.gql('', {}, { body: { documentId: sha256('nope') } });
    assert.deepEqual(codes(unknown), ['PERSISTED_QUERY_NOT_FOUND']);
    const get = await checkedFetch(env, `${trusted.url}/graphql?query=${encodeURIComponent(ALLOWED)}`, { headers: { 'apollo-require-preflight': '1' } });
    assert.equal(get.status, 400);
    assert.deepEqual((get.body as { errors: { extensions: { code: string } }[] }).errors.map((e) => e.extensions.code), ['PERSISTED_QUERY_NOT_ALLOWED']);
  });

  test('production hides the SQL cost unless asked for', async () => {
    const r = await trusted.gql(ALLOWED);
    assert.equal(r.body.extensions?.cost, undefined);
    const asked = await trusted.gql(ALLOWED, {}, { headers: { 'x-shardql-cost': '1' } });
    assert.ok(asked.body.extensions.cost.sqlRoundTrips > 0);
    const intro = await open.gql('{ __schema { queryType { name } } }');
    assert.equal(intro.body.data.__schema.queryType.name, 'Query', 'development allows introspection');
  });
});
