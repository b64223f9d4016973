/**
 * GraphiQL on the real gateway, in headless Chromium: the development page opens with the sample
 * query and a viewer token, runs a query through the gateway to the shards, and shows the result,
 * with no request leaving the machine.
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
