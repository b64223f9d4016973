/**
 * Measures provisioning of the seeds' full layout (4096 shards + 4096 mod shards) over 2 local
 * hosts, on a stack of its own so it never touches the one the tests use:
 *   tsx scripts/measure-provision.ts [--shards 4096] [--dir /tmp/shardql-provision]
 */
import { parseArgs } from 'node:util';
import { evenLayout, parseTopology } from '../src/core/topology.ts';
import { stackDown, stackUp } from '../src/stack/localStack.ts';
import { createStorage } from '../src/storage/index.ts';
import { provision } from '../src/storage/provision.ts';

const { values } = parseArgs({ options: { shards: { type: 'string', default: '4096' }, dir: { type: 'string', default: '/tmp/shardql-provision' }, keep: { type: 'boolean', default: false } } });
const shards = Number(values.shards);
const info = await stackUp({ dir: values.dir!, hosts: 2 });
const topology = parseTopology(evenLayout({ hosts: Object.fromEntries(info.mysql.hosts.map((h) => [h.name, { primary: h.primary }])), shards }));
// Provisioning is DDL: the admin account (the application's may only read and write rows).
const storage = createStorage({ topology: () => topology, credentials: info.mysql.admin!, events: null });
try {
  let last = 0;
  const first = await provision({
    router: storage.router, topology, concurrencyPerHost: 4,
    onProgress: (done, total) => {
      const pct = Math.floor((done / total) * 10);
      if (pct > last) (last = pct, console.log(`  ${done}/${total} databases`));
    },
  });
  console.log(`first run: ${first.created} databases created in ${(first.ms / 1000).toFixed(1)} s`);
  const second = await provision({ router: storage.router, topology });
  console.log(`second run: ${second.created} created, ${second.alreadyComplete} already complete, ${(second.ms / 1000).toFixed(1)} s`);
} finally {
  await storage.close();
  if (!values.keep) await stackDown(values.dir!);
}
