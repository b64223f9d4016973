import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TopologyDoc } from '../../src/core/topology.ts';
import { startService, stopService } from '../../src/stack/localStack.ts';
import { publishTopology } from '../../src/topology/etcdTopology.ts';
import { createUsers, ms, startLoad, type LoadUser } from '../helpers/load.ts';
import { TOPOLOGY_KEY, topologyEnv, type TopologyEnv } from '../helpers/topologyEnv.ts';

const REFRESH_MS = 500;
let env: TopologyEnv;
let users: LoadUser[];

before(async () => {
  env = await topologyEnv('live', { refreshMs: REFRESH_MS });
  users = await createUsers(env.gql, 20, 'live');
});
after(async () => {
  await env?.close();
});

interface Readiness {
  status: string;
  topology: { revision: string; ageMs: number; rejected?: { revision: string; problem: string } };
}

async function readyz(): Promise<Readiness> {
  return (await (await fetch(`${env.gateway.url}/readyz`)).json()) as Readiness;
}

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${env.gateway.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

/** The map in force with shards `from`–15 closed to new users: a harmless, visible change. */
function closingFrom(from: number): TopologyDoc {
  const doc = env.gateway.topology().doc;
  return { ...doc, shards: { ...doc.shards, open: [{ from: 0, to: from - 1 }] } };
}

describe('Topology: live reconfiguration', () => {
  test('a published change is in force at the gateway at once (watch), and readiness and metrics say which', async () => {
    const started = Date.now();
    const revision = await publishTopology(env.etcd, TOPOLOGY_KEY, closingFrom(15));
    const published = Date.now() - started;
    const took = await env.until('the gateway to serve the new map', () => env.gateway.topology().openShardCount === 15);
    const ready = await readyz();
    assert.equal(ready.topology.revision, revision);
    assert.ok(ready.topology.ageMs < 5 * REFRESH_MS, `age ${ready.topology.ageMs} ms`);
    assert.equal(await metric('shardql_topology_revision'), Number(revision));
    console.log(`# watch: revision ${revision} in force at the gateway ${ms(took)} after publish returned (publish ${ms(published)})`);
  });

  test('an invalid topology is refused and logged; the old map keeps serving', async () => {
    const load = startLoad(env.gql, users, { workers: 3 });
    const good = env.gateway.topology();
    const goodRevision = (await readyz()).topology.revision;

    const notJson = await env.etcd.put(TOPOLOGY_KEY).value('{"format": 1, "hosts": ').exec();
    await env.until('the broken JSON to be refused', async () => (await readyz()).topology.rejected?.revision === notJson.header.revision);
    const doc = good.doc;
    const overlapping = { ...doc, shards: { ...doc.shards, ranges: [...doc.shards.ranges, { from: 3, to: 9, host: 'mysql003' }] } };
    const invalid = await env.etcd.put(TOPOLOGY_KEY).value(JSON.stringify(overlapping)).exec();
    const refusedIn = await env.until(
      'the overlapping ranges to be refused',
      async () => (await readyz()).topology.rejected?.revision === invalid.header.revision,
    );
    const ready = await readyz();
    assert.match(ready.topology.rejected!.problem, /ranges overlap/);
    assert.equal(ready.topology.revision, goodRevision, 'the last good revision is still in force');
    assert.equal(env.gateway.topology(), good, 'the very same map object serves');
    await env.until('some requests on the kept map', () => load.stats.reads + load.stats.writes > 30);

    const fixed = await publishTopology(env.etcd, TOPOLOGY_KEY, closingFrom(14));
    await env.until('the next valid map', () => env.gateway.topology().openShardCount === 14);
    assert.equal((await readyz()).topology.rejected, undefined);
    const stats = await load.stop();
    assert.deepEqual(stats.failures, []);
    console.log(
      `# invalid topology: not-JSON (revision ${notJson.header.revision}) and overlapping ranges (revision ${invalid.header.revision}) refused (the second in ${ms(refusedIn)}), ` +
        `revision ${goodRevision} kept serving: ${stats.reads + stats.writes} requests, 0 failed; the next valid one (revision ${fixed}) taken`,
    );
  });

  test('etcd stopped: no extra errors on the last good map; the newest map is in force shortly after it returns', async () => {
    const load = startLoad(env.gql, users, { workers: 3 });
    await env.until('load before the outage', () => load.stats.reads + load.stats.writes > 20);
    const revisionBefore = env.gateway.topology();

    await stopService(env.dir, 'etcd');
    const stoppedAt = Date.now();
    const servedBefore = load.stats.reads + load.stats.writes;
    // Down for a while: until the gateway has failed several re-reads (its map has aged) and served plenty.
    await env.until(
      'the map to age while etcd is down',
      async () => (await readyz()).topology.ageMs > 4 * REFRESH_MS && load.stats.reads + load.stats.writes - servedBefore > 50,
    );
    const down = await readyz();
    assert.equal(down.status, 'ready', 'MySQL is fine: the gateway stays ready on its last good map');
    const ageMetric = await metric('shardql_topology_age_seconds');
    assert.ok(ageMetric * 1000 >= 4 * REFRESH_MS, `metrics report the age too (${ageMetric} s)`);
    assert.equal(env.gateway.topology(), revisionBefore);
    const servedWhileDown = load.stats.reads + load.stats.writes - servedBefore;

    await startService(env.dir, 'etcd');
    const restartedAt = Date.now();
    const downMs = restartedAt - stoppedAt;
    const revision = await publishTopology(env.etcd, TOPOLOGY_KEY, closingFrom(13));
    const publishedAt = Date.now();
    const inForce = await env.until(
      'the map published after the restart',
      async () => env.gateway.topology().openShardCount === 13 && (await readyz()).topology.revision === revision,
      15_000,
    );
    const stats = await load.stop();
    assert.deepEqual(stats.failures, [], 'no request failed');
    assert.ok((await readyz()).topology.ageMs < 5 * REFRESH_MS);
    console.log(
      `# etcd down ${ms(downMs)}: ${servedWhileDown} requests served meanwhile, 0 failed (${stats.reads + stats.writes} in all); ` +
        `readyz age while down ${ms(down.topology.ageMs)}; after etcd came back, publish took ${ms(publishedAt - restartedAt)} ` +
        `and revision ${revision} was in force at the gateway ${ms(inForce)} later`,
    );
  });
});
