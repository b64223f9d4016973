/**
 * GraphiQL on the real gateway, in headless Chromium: the development page opens with the sample
 * query and a viewer token, runs a query through the gateway to the shards, and shows the result,
 * with no request leaving the machine. A browser opening /graphql itself gets GraphiQL in
 * development, and in production a short page saying where the API is (or a 404, by configuration).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshEnv, type TestEnv } from '../helpers/env.ts';
import { checkedFetch, TEST_JWT_SECRET } from '../helpers/gateway.ts';
import { runGraphiqlSmoke } from '../helpers/graphiqlSmoke.ts';
import { publishTopology } from '../../src/topology/etcdTopology.ts';
import { startGateway, type RunningGateway } from '../../src/server.ts';
import { mintToken } from '../../src/auth/tokens.ts';
import { seedDemo } from '../../src/demo/seed.ts';
import { launchBrowser } from '../helpers/browser.ts';
import { startTestGateway } from '../helpers/gateway.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let env: TestEnv;
let gateway: RunningGateway;
let token: string;

before(async () => {
  env = await freshEnv({ shards: 16 });
  const { users } = await seedDemo(env.storage, () => env.topology);
  token = await mintToken(TEST_JWT_SECRET, users[0]!.id, 3600);
  const topologyKey = '/shardql-test/graphiql/topology';
  await publishTopology(env.etcd, topologyKey, env.doc);
  gateway = await startGateway({
    env: 'development', port: 0, etcdEndpoints: env.stack.etcd.endpoints, topologyKey,
    mysql: env.stack.mysql, redis: env.stack.redis, memcached: { servers: `${env.stack.memcached.host}:${env.stack.memcached.port}` },
    jwtSecret: TEST_JWT_SECRET,
  }, { log: () => undefined, graphiqlToken: token });
});

after(async () => {
  await gateway?.stop(1000);
  await env?.close();
});

test('the gateway serves GraphiQL that runs a query against the shards with no internet', async () => {
  const result = await runGraphiqlSmoke(gateway.url, {
    // Edits the sample operation (GraphiQL keeps the selected operation name across edits).
    query: 'query Profile { viewer { username boards(first: 1) { edges { node { name pinCount } } } } }',
    expectText: '"username": "alice"',
    expectDefaultQuery: 'query Profile',
    expectHeaderText: ['Authorization'],
  });
  assert.deepEqual(result.consoleErrors, []);
  assert.ok(result.requests.every((u) => u.startsWith(gateway.url)), 'every request went to the gateway');
  console.log(`# screenshot: ${result.screenshot}`);
});

test('an unknown path is a 404 with a code', async () => {
  const res = await checkedFetch(env, `${gateway.url}/nope`);
  assert.equal(res.status, 404);
  assert.equal(res.body.errors[0].extensions.code, 'NOT_FOUND');
});

test('a browser opening /graphql gets GraphiQL in development', async () => {
  const result = await runGraphiqlSmoke(gateway.url, {
    path: '/graphql',
    query: 'query Profile { viewer { username } }',
    expectText: '"username": "alice"',
    expectDefaultQuery: 'query Profile',
  });
  assert.deepEqual(result.consoleErrors, []);
  assert.ok(result.requests.every((u) => u.startsWith(gateway.url)), 'every request went to the gateway');
});

test('in production a browser opening /graphql gets a short page saying where the API is; or a 404 by configuration', async () => {
  const prod = await startTestGateway(env, 'landing-prod', { env: 'production' });
  const off = await startTestGateway(env, 'landing-off', { env: 'production', landingPage: false });
  const browser = await launchBrowser();
  try {
    const context = await browser.newContext();
    const requests: string[] = [];
    const consoleErrors: string[] = [];
    context.on('request', (r) => requests.push(r.url()));
    const page = await context.newPage();
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
    const response = await page.goto(`${prod.url}/graphql`, { waitUntil: 'load' });
    assert.equal(response?.status(), 200);
    assert.equal(await page.locator('h1').innerText(), 'GraphQL API');
    const text = await page.locator('body').innerText();
    assert.match(text, /POST/);
    assert.match(text, /\/graphql/);
    // The page is not an explorer: no schema, no script, nothing fetched but itself.
    assert.equal(await page.locator('script').count(), 0);
    assert.deepEqual(requests, [`${prod.url}/graphql`]);
    assert.deepEqual(consoleErrors, []);
    const shot = join(tmpdir(), `landing-page-${process.pid}.png`);
    await page.screenshot({ path: shot });
    console.log(`# screenshot: ${shot}`);
    await context.close();

    const html = await checkedFetch(env, `${prod.url}/graphql`, { headers: { accept: 'text/html,application/xhtml+xml' } });
    assert.equal(html.status, 200);
    assert.match(html.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(html.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    // It names nothing of the schema (schema privacy) and loads no explorer.
    assert.doesNotMatch(html.text, /graphiql|viewer|User|Board|Pin/i);
    // GraphQL clients are unaffected: a GET with a query and the preflight header still runs it.
    const get = await checkedFetch(env, `${prod.url}/graphql?query=${encodeURIComponent('{ __typename }')}`, { headers: { accept: 'application/json', 'apollo-require-preflight': '1' } });
    assert.deepEqual(get.body, { data: { __typename: 'Query' } });
    // Turned off: a 404 with a code, for browsers only.
    const gone = await checkedFetch(env, `${off.url}/graphql`, { headers: { accept: 'text/html' } });
    assert.equal(gone.status, 404);
    assert.equal(gone.body.errors[0].extensions.code, 'NOT_FOUND');
    assert.equal((await off.gql('{ __typename }')).body.data.__typename, 'Query');
  } finally {
    await browser.close();
    await prod.stop();
    await off.stop();
  }
});
