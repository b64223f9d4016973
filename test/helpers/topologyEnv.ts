/**
 * A private stack for the topology tests (they kill servers, stop etcd and promote replicas, so they
 * never touch the shared .stack): <root>/.stack-topology/<name>-<pid>, 3 MariaDB hosts with replicas,
 * brought up fresh by each test file, stopped and deleted at its end (SHARDQL_STACK_KEEP=1 keeps the
 * data; SHARDQL_TOPOLOGY_LOG=1 prints the gateway's log). One folder per file and process: files, and
 * whole test runs, may run side by side; folders of processes that died are cleaned up first.
 * Shards 0–15 live on mysql001/mysql002; mysql003 is in the map with no shard.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { Etcd3 } from 'etcd3';
import { evenLayout, parseTopology, type HostSpec, type Topology, type TopologyDoc } from '../../src/core/topology.ts';
import type { GatewayConfig } from '../../src/config.ts';
import { startGateway, type RunningGateway } from '../../src/server.ts';
import { stackDown, stackUp, type StackInfo } from '../../src/stack/localStack.ts';
import { createStorage } from '../../src/storage/index.ts';
import { provision } from '../../src/storage/provision.ts';
import { ShardAdmin } from '../../src/storage/shardAdmin.ts';
import { publishTopology } from '../../src/topology/etcdTopology.ts';
import { assertNoLeak, type GqlResult, TEST_JWT_SECRET } from './gateway.ts';
import type { AckedWrite } from './load.ts';
import { writablePrimaries, type TestEnv } from './env.ts';
import { cliArgv } from './cli.ts';

const root = resolve(import.meta.dirname, '../..');
export const TOPOLOGY_STACKS_DIR = resolve(root, '.stack-topology');
export const TOPOLOGY_KEY = '/shardql/topology';

export interface TopologyEnv {
  readonly dir: string;
  readonly stack: StackInfo;
  readonly etcd: Etcd3;
  readonly admin: ShardAdmin;
  readonly gateway: RunningGateway;
  readonly initial: TopologyDoc;
  gql(query: string, variables?: Record<string, unknown>, token?: string, headers?: Record<string, string>): Promise<GqlResult>;
  /**
   * `shardql <args>` in a child process against this stack; stdin is not a terminal. A command that
   * serves until a signal (`dev`) is given `serving`: once its stdout matches `ready`, `then` runs
   * with the match and the process gets SIGINT.
   */
  cli(args: readonly string[], opts?: CliOptions): Promise<{ code: number; stdout: string; stderr: string; ms: number }>;
  /**
   * Acknowledged pins missing from MySQL (the pin row, or its board_has_pins edge), read on the hosts
   * of `topology` (default: the map in force at the gateway), past every cache.
   */
  lostWrites(acked: readonly AckedWrite[], topology?: Topology): Promise<string[]>;
  /** Polls `check` every 20 ms until it holds, failing after `timeoutMs`; returns the ms it took. */
  until(what: string, check: () => boolean | Promise<boolean>, timeoutMs?: number): Promise<number>;
  close(): Promise<void>;
}

export interface CliOptions {
  /** Added to the child's environment. */
  readonly env?: Readonly<Record<string, string>>;
  readonly serving?: { readonly ready: RegExp; then(match: RegExpExecArray): Promise<void> };
}

export function stackHostSpecs(stack: StackInfo): Record<string, HostSpec> {
  return Object.fromEntries(stack.mysql.hosts.map((h) => [h.name, h.replica ? { primary: h.primary, replica: h.replica } : { primary: h.primary }]));
}

/** 16 shards and 8 mod shards on mysql001/mysql002; mysql003 known but empty. */
export function initialLayout(stack: StackInfo): TopologyDoc {
  const hosts = stackHostSpecs(stack);
  const { mysql003, ...two } = hosts;
  const doc = evenLayout({ hosts: two, shards: 16, modShards: 8 });
  return parseTopology({ ...doc, hosts: { ...doc.hosts, ...(mysql003 ? { mysql003 } : {}) } }).doc;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Stops and deletes the stacks of test processes that are gone (a run killed before its `after`). */
async function removeOrphanStacks(): Promise<void> {
  if (!existsSync(TOPOLOGY_STACKS_DIR)) return;
  for (const entry of readdirSync(TOPOLOGY_STACKS_DIR)) {
    const pid = /-(\d+)$/.exec(entry)?.[1];
    if (pid === undefined || alive(Number(pid))) continue;
    const dir = resolve(TOPOLOGY_STACKS_DIR, entry);
    await stackDown(dir).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function topologyEnv(name: string, opts: { refreshMs?: number } = {}): Promise<TopologyEnv> {
  await removeOrphanStacks();
  const dir = resolve(TOPOLOGY_STACKS_DIR, `${name}-${process.pid}`);
  const t0 = Date.now();
  const stack = await stackUp({ dir, hosts: 3, replicas: true });
  console.log(`# topology stack (3 hosts + replicas) up in ${Date.now() - t0} ms`);
  const admin = stack.mysql.admin!;
  const initial = initialLayout(stack);
  const topology: Topology = parseTopology(initial);
  await writablePrimaries(stack, initial);
  const storage = createStorage({ topology: () => topology, credentials: admin, events: null });
  try {
    await provision({ router: storage.router, topology });
  } finally {
    await storage.close();
  }
  const etcd = new Etcd3({ hosts: stack.etcd.endpoints });
  // Published as `shardql topology publish` would, primaries made writable above (servers start read-only).
  await publishTopology(etcd, TOPOLOGY_KEY, initial);
  const config: GatewayConfig = {
    env: 'development',
    port: 0,
    etcdEndpoints: stack.etcd.endpoints,
    topologyKey: TOPOLOGY_KEY,
    mysql: { user: stack.mysql.user, password: stack.mysql.password },
    redis: stack.redis,
    memcached: { servers: `${stack.memcached.host}:${stack.memcached.port}` },
    jwtSecret: TEST_JWT_SECRET,
    topologyRefreshMs: opts.refreshMs ?? 1000,
  };
  const logLines: string[] = [];
  const gateway = await startGateway(config, { log: (line: string) => void logLines.push(line), repair: { intervalMs: 0 } });
  const leakEnv = { stack } as unknown as TestEnv;
  const env: TopologyEnv = {
    dir,
    stack,
    etcd,
    admin: new ShardAdmin({ credentials: admin }),
    gateway,
    initial,
    async gql(query, variables = {}, token, headers = {}) {
      const res = await fetch(`${gateway.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
        body: JSON.stringify({ query, variables }),
      });
      const text = await res.text();
      assertNoLeak(text, leakEnv);
      return { status: res.status, body: JSON.parse(text), text };
    },
    cli(args, opts = {}) {
      const started = Date.now();
      const childEnv: Record<string, string | undefined> = { ...process.env, SHARDQL_STACK_DIR: dir };
      for (const k of Object.keys(childEnv)) if (/^SHARDQL_(ETCD|MYSQL_|TOPOLOGY_KEY|REDIS|MEMCACHED)/.test(k)) delete childEnv[k];
      const child = spawn(process.execPath, cliArgv(...args), {
        cwd: root,
        env: { ...childEnv, ...opts.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      let served: Promise<void> | undefined;
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        const match = served === undefined && opts.serving ? opts.serving.ready.exec(stdout) : null;
        if (match && opts.serving) served = opts.serving.then(match).finally(() => child.kill('SIGINT'));
      });
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      return new Promise((resolvePromise, reject) => {
        child.once('error', reject);
        child.once('close', (code) => {
          const result = { code: code ?? -1, stdout, stderr, ms: Date.now() - started };
          if (served === undefined) resolvePromise(result);
          else served.then(() => resolvePromise(result), reject);
        });
      });
    },
    async lostWrites(acked, topology) {
      // Reads only.
      const storage = createStorage({ topology: () => topology ?? gateway.topology(), credentials: { user: stack.mysql.user, password: stack.mysql.password }, events: null });
      try {
        const lost: string[] = [];
        for (let i = 0; i < acked.length; i += 200) {
          const chunk = acked.slice(i, i + 200);
          const found = await storage.objects.getMany(chunk.map((a) => BigInt(a.pinId)));
          const edges = await storage.mappings.existing(
            'board_has_pins',
            chunk.map((a) => ({ from: BigInt(a.boardId), to: BigInt(a.pinId) })),
          );
          for (const a of chunk) {
            if (found.get(BigInt(a.pinId))?.data.title !== a.title) lost.push(`pin ${a.pinId} (${a.title}, shard ${a.shard})`);
            else if (!edges.has(`${a.boardId}:${a.pinId}`)) lost.push(`board_has_pins ${a.boardId} → ${a.pinId} (shard ${a.shard})`);
          }
        }
        return lost;
      } finally {
        await storage.close();
      }
    },
    async until(what, check, timeoutMs = 15_000) {
      const started = Date.now();
      for (;;) {
        if (await check()) return Date.now() - started;
        if (Date.now() - started > timeoutMs) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      await gateway.stop(1000);
      etcd.close();
      await stackDown(dir);
      if (process.env.SHARDQL_STACK_KEEP !== '1') rmSync(dir, { recursive: true, force: true });
      if (process.env.SHARDQL_TOPOLOGY_LOG === '1') console.log(logLines.join('\n'));
    },
  };
  return env;
}
