/** `shardql stack up | down | status`: the local MariaDB/Redis/memcached/etcd stack. */
import { resolve } from 'node:path';
import { INNODB_BUFFER_POOL_MB_RANGE, stackDown, stackStatus, stackUp, type StackInfo } from '../stack/localStack.ts';
import type { CliContext, Command, ParsedArgs } from './command.ts';
import { endpointText, seconds, table } from './format.ts';
import { configFor, println, withEtcd } from './runtime.ts';
import { DEFAULT_STACK_SHARDS, ensurePrimariesWritable, readPublished, stackLayout } from './topologyCommands.ts';

const DIR_OPTION = { type: 'string', value: 'D', help: 'Stack folder (default: $SHARDQL_STACK_DIR, else <project>/.stack)' } as const;

function dirOf(args: ParsedArgs, ctx: CliContext): string {
  return resolve(args.string('dir') ?? ctx.stackDir);
}

/** The addresses of a running stack, one service a line. */
export function stackAddressLines(info: StackInfo): string[] {
  const rows: string[][] = [['SERVICE', 'ADDRESS']];
  for (const h of info.mysql.hosts) {
    rows.push([`${h.name} primary`, endpointText(h.primary)]);
    if (h.replica) rows.push([`${h.name} replica`, endpointText(h.replica)]);
  }
  rows.push(['redis', endpointText(info.redis)]);
  // The form SHARDQL_REDIS_CLUSTER takes.
  if (info.redisCluster) rows.push(['redis cluster', info.redisCluster.nodes.map(endpointText).join(',')]);
  rows.push(['memcached', endpointText(info.memcached)], ['etcd', info.etcd.endpoints.join(',')]);
  return table(rows);
}

/** Brings the stack up (idempotent), with progress on stderr. Shared with `shardql dev`. */
export async function bringStackUp(ctx: CliContext, dir: string, opts: { hosts?: number; replicas?: boolean; redisCluster?: boolean; innodbBufferPoolMb?: number }): Promise<StackInfo> {
  const started = Date.now();
  const info = await stackUp({ dir, ...opts, log: (line) => println(ctx.stderr, `  ${line}`) });
  println(ctx.stdout, `Stack up in ${dir} (${seconds(Date.now() - started)}); MySQL user '${info.mysql.user}', credentials in ${resolve(dir, 'stack.json')}`);
  for (const line of stackAddressLines(info)) println(ctx.stdout, `  ${line}`);
  return info;
}

const up: Command = {
  name: 'stack up',
  summary: 'Start the local stack (MariaDB hosts, Redis, memcached, etcd); reuses a running one',
  options: {
    hosts: { type: 'string', value: 'N', help: 'MariaDB primaries (default: as before, else 2)' },
    replicas: { type: 'boolean', help: 'Give every primary a semi-sync GTID replica' },
    'redis-cluster': { type: 'boolean', help: 'Also run a Redis Cluster of 3 primaries (use it with SHARDQL_REDIS_CLUSTER)' },
    'buffer-pool-mb': { type: 'string', value: 'MIB', help: 'InnoDB buffer pool of every MariaDB instance (default: as before, else 64); resized live' },
    dir: DIR_OPTION,
  },
  details:
    'Ports and passwords are chosen on the first `up` and kept in <dir>/stack.json; later calls restart only\nwhat is not running, and add hosts, replicas or the Redis Cluster when asked for more.',
  async run(args, ctx) {
    const hosts = args.int('hosts', undefined, 1, 64);
    const pool = args.int('buffer-pool-mb', undefined, INNODB_BUFFER_POOL_MB_RANGE.min, INNODB_BUFFER_POOL_MB_RANGE.max);
    const dir = dirOf(args, ctx);
    const info = await bringStackUp(ctx, dir, {
      ...(hosts !== undefined ? { hosts } : {}),
      ...(pool !== undefined ? { innodbBufferPoolMb: pool } : {}),
      ...(args.flag('replicas') ? { replicas: true } : {}),
      ...(args.flag('redis-cluster') ? { redisCluster: true } : {}),
    });
    await writableForMapInForce({ ...ctx, stackDir: dir }, info);
  },
};

/**
 * Every server starts read-only. After `stack up`, the primaries of the map in force take writes:
 * the map published in the stack's etcd, or, before any is published, the stack's own layout (each
 * host's first primary); never the layout over a published map, valid or not. A demoted primary is
 * named by no published map, so it stays read-only. Problems are warnings: the stack itself is up.
 */
async function writableForMapInForce(ctx: CliContext, info: StackInfo): Promise<void> {
  try {
    const config = configFor(ctx);
    const published = await withEtcd(config, (etcd) => readPublished(etcd, config));
    // A map that is published but not valid names no primary anyone can trust: none is made writable.
    if (published.modRevision !== null && published.topology === null) {
      println(ctx.stderr, `Warning: the topology at ${config.topologyKey} (revision ${published.modRevision}) is not valid (${published.problem}); no server was made writable. Publish a valid map (\`shardql topology publish\`)`);
      return;
    }
    const doc = published.topology?.doc ?? stackLayout(info, DEFAULT_STACK_SHARDS);
    const what = published.topology ? `the published map (revision ${published.modRevision})` : "the stack's layout (no map is published yet)";
    await ensurePrimariesWritable(ctx, config, doc, what);
  } catch (err) {
    println(ctx.stderr, `Warning: could not make the primaries writable (${err instanceof Error ? err.message : String(err)}); run \`shardql topology writable\``);
  }
}

const down: Command = {
  name: 'stack down',
  summary: 'Stop every service of the local stack, keeping its data',
  options: { dir: DIR_OPTION },
  async run(args, ctx) {
    const dir = dirOf(args, ctx);
    const before = await stackStatus(dir);
    if (before.services.length === 0) {
      println(ctx.stdout, `No stack in ${dir}: nothing to stop`);
      return;
    }
    const running = before.services.filter((s) => s.pid !== null || s.running).length;
    await stackDown(dir);
    println(ctx.stdout, running === 0 ? `Nothing of the stack in ${dir} was running` : `Stack in ${dir} stopped (${running} services; data kept)`);
  },
};

const status: Command = {
  name: 'stack status',
  summary: 'Show which services of the local stack run, with their pids and addresses',
  options: { dir: DIR_OPTION },
  details: 'Exit status: 0 when every service runs, 3 when some do not or there is no stack.',
  async run(args, ctx) {
    const dir = dirOf(args, ctx);
    const st = await stackStatus(dir);
    if (st.services.length === 0) {
      println(ctx.stdout, `No stack in ${dir}; start one with \`shardql stack up\``);
      return 3;
    }
    const rows = [['SERVICE', 'STATE', 'PID', 'ADDRESS'], ...st.services.map((s) => [s.name, s.running ? 'running' : s.pid !== null ? 'not answering' : 'stopped', s.pid === null ? '-' : String(s.pid), s.address])];
    println(ctx.stdout, `Stack in ${dir}`);
    for (const line of table(rows)) println(ctx.stdout, `  ${line}`);
    const cluster = st.redisCluster;
    if (cluster !== undefined) {
      const nodes = st.info?.redisCluster?.nodes.map(endpointText).join(',') ?? '';
      println(
        ctx.stdout,
        cluster === null
          ? `Redis Cluster: no node answers`
          : `Redis Cluster: ${cluster.state}, ${cluster.primaries} primaries, ${cluster.slotsAssigned} of 16384 slots, ${cluster.knownNodes} nodes (SHARDQL_REDIS_CLUSTER=${nodes})`,
      );
    }
    const stopped = st.services.filter((s) => !s.running).length;
    if (stopped > 0) {
      println(ctx.stdout, `${stopped} of ${st.services.length} services are not running; \`shardql stack up\` restarts them`);
      return 3;
    }
    if (cluster !== undefined && cluster?.state !== 'ok') {
      println(ctx.stdout, 'The Redis Cluster is not serving every slot; `shardql stack up` forms it');
      return 3;
    }
    return 0;
  },
};

export const stackCommands: readonly Command[] = [up, down, status];
