import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';
import memjs from 'memjs';
import { eventSettings, type EventSettings } from '../../src/core/events.ts';
import { evenLayout, parseTopology, type HostSpec, type Topology, type TopologyDoc } from '../../src/core/topology.ts';
import { readStackInfo, stackStatus, type StackInfo } from '../../src/stack/localStack.ts';
import { servedEvents } from '../../src/product/served.ts';
import { createStorage, type Storage } from '../../src/storage/index.ts';
import { dropAllShards } from '../../src/storage/provision.ts';
import { ShardAdmin } from '../../src/storage/shardAdmin.ts';
import { makePrimariesWritable } from '../../src/topology/operations/primaries.ts';
import { freshShards } from './freshShards.ts';

export interface TestEnv {
  readonly stack: StackInfo;
  readonly doc: TopologyDoc;
  topology: Topology;
  readonly storage: Storage;
  readonly etcd: Etcd3;
  close(): Promise<void>;
}

/** The folder of the local stack the tests run against. */
export function testStackDir(): string {
  return process.env.SHARDQL_STACK_DIR ?? resolve(import.meta.dirname, '../../.stack');
}

export function testStack(): StackInfo {
  const dir = testStackDir();
  const info = readStackInfo(dir);
  if (!info) throw new Error(`No local stack at ${dir}: run the integration tests through \`npm test\` (it starts the stack once)`);
  return info;
}

/** The pid of a running service of the stack (`redis`, `memcached`, `mysql001-primary`, …): what a hang test freezes. */
export async function stackPid(stack: StackInfo, service: string): Promise<number> {
  const pid = (await stackStatus(stack.dir)).services.find((s) => s.name === service)?.pid;
  assert.ok(pid, `${service} runs`);
  return pid;
}

/** The operator's account of the stack (DDL, read_only, replication); the application's is stack.mysql. */
export function adminCredentials(stack: StackInfo): { user: string; password: string } {
  if (!stack.mysql.admin) throw new Error(`The stack in ${stack.dir} has no admin account: run \`shardql stack up\` once to add it`);
  return stack.mysql.admin;
}

/**
 * Makes the primaries of `doc` writable (every server starts read-only), as publishing it would;
 * fails if one cannot be.
 */
export async function writablePrimaries(stack: StackInfo, doc: TopologyDoc): Promise<void> {
  const report = await makePrimariesWritable(new ShardAdmin({ credentials: adminCredentials(stack) }), doc);
  if (report.failed.length > 0) throw new Error(`Primaries not writable: ${report.failed.map((f) => `${f.host}: ${f.error}`).join('; ')}`);
}

export function stackHosts(stack: StackInfo): Record<string, HostSpec> {
  return Object.fromEntries(stack.mysql.hosts.map((h) => [h.name, h.replica ? { primary: h.primary, replica: h.replica } : { primary: h.primary }]));
}

/**
 * Empties Redis and memcached. Fresh shard databases restart their auto-increments, so IDs of
 * earlier tests come back for other objects: their cached copies must go with the databases.
 */
export async function flushCaches(stack: StackInfo): Promise<void> {
  const redis = new Redis({ host: stack.redis.host, port: stack.redis.port });
  try {
    await redis.flushall();
  } finally {
    redis.disconnect();
  }
  const mc = memjs.Client.create(`${stack.memcached.host}:${stack.memcached.port}`, { logger: { log: () => undefined } } as memjs.ClientOptions);
  try {
    await mc.flush();
  } finally {
    mc.close();
  }
}

/**
 * The served product's events (Pinterest's), as a gateway with the default settings has them; null
 * if no attached product declares any. For a test's storage that writes, or repairs, like a gateway.
 */
export function servedTestEvents(): EventSettings | null {
  const spec = servedEvents();
  return spec ? eventSettings(spec) : null;
}

export interface TestEnvOptions {
  /** Shards dealt evenly over the stack's hosts. Default 16. */
  readonly shards?: number;
  readonly modShards?: number;
  readonly poolSize?: number;
}

/**
 * Drops every shard and mod-shard database on the stack's hosts (mod-shard claims with them) and
 * empties the caches: IDs restart with the databases, so cached copies must go too.
 */
export async function dropTestData(stack: StackInfo, topology: Topology): Promise<void> {
  const admin = createStorage({ topology: () => topology, credentials: adminCredentials(stack), events: null });
  try {
    await dropAllShards(admin.router, topology);
    await flushCaches(stack);
  } finally {
    await admin.close();
  }
}

/** Drops every shard and mod-shard database on every host of the stack (the map only names the hosts; see dropTestData). */
export async function dropStackTestData(stack: StackInfo): Promise<void> {
  await dropTestData(stack, parseTopology(evenLayout({ hosts: stackHosts(stack), shards: 16, modShards: 8 })));
}

/**
 * Set by test/run.ts, which drops the test databases once when the integration files are done:
 * then a file's close() leaves them for the next file's freshEnv to empty.
 */
export const RUN_DROPS_AT_END = 'SHARDQL_TEST_RUN_DROPS_AT_END';

/**
 * A fresh sharded database on the shared local stack: the topology's shards and mod shards, empty,
 * with auto-increments restarted, and no other shard database (freshShards: it empties what
 * earlier files wrote rather than dropping and provisioning everything again), DDL run with the
 * admin account (the application's may not run DDL), the caches emptied and the map's primaries
 * made writable. `storage` uses the application's account, like a gateway. `close()` drops the
 * databases (SHARDQL_STACK_KEEP=1 keeps them to look at; under test/run.ts the run drops them once
 * at its end): `shardql dev` shares this stack, and the tests' claims, made with their own
 * mod-shard count, would make it refuse the stack's layout.
 */
export async function freshEnv(opts: TestEnvOptions = {}): Promise<TestEnv> {
  const stack = testStack();
  const doc = evenLayout({ hosts: stackHosts(stack), shards: opts.shards ?? 16, modShards: opts.modShards ?? 8 });
  const env: { topology: Topology } = { topology: parseTopology(doc) };
  const storage = createStorage({
    topology: () => env.topology,
    credentials: { user: stack.mysql.user, password: stack.mysql.password },
    ...(opts.poolSize !== undefined ? { poolSize: opts.poolSize } : {}),
    // As a gateway: the served product's events (Pinterest's), if it declares them.
    events: servedTestEvents(),
  });
  await writablePrimaries(stack, doc);
  // DDL only (freshShards): no event kinds.
  const admin = createStorage({ topology: () => env.topology, credentials: adminCredentials(stack), events: null });
  try {
    const started = Date.now();
    const r = await freshShards(admin.router, env.topology);
    console.log(`# fresh shards in ${Date.now() - started} ms: ${r.kept} kept, ${r.emptiedTables} tables emptied, ${r.dropped} dropped, ${r.created} created`);
  } finally {
    await admin.close();
  }
  await flushCaches(stack);
  const etcd = new Etcd3({ hosts: [...stack.etcd.endpoints] });
  return Object.assign(env, {
    stack,
    doc,
    storage,
    etcd,
    async close() {
      await storage.close();
      etcd.close();
      // On every host of the stack, whatever map a test published since.
      if (process.env.SHARDQL_STACK_KEEP !== '1' && process.env[RUN_DROPS_AT_END] !== '1') await dropStackTestData(stack);
    },
  });
}
