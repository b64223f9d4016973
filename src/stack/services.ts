import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { mysqlInstances, mysqlService } from './mysql.ts';
import { httpGetText, probeTcp } from './net.ts';
import { DEFAULT_INNODB_BUFFER_POOL_MB, type StackPlan } from './plan.ts';
import type { ServiceSpec } from './service.ts';

/** Paths every service shares: <stackDir>/<name>/{<name>.pid,<name>.log}. */
function layout(stackDir: string, name: string): { dir: string; pidFile: string; logFile: string } {
  const dir = join(stackDir, name);
  return { dir, pidFile: join(dir, `${name}.pid`), logFile: join(dir, `${name}.log`) };
}

const makeDir = async (dir: string): Promise<void> => {
  mkdirSync(dir, { recursive: true });
};

/**
 * A redis-server with an append-only file fsynced before each reply (`appendfsync always`): besides
 * caches, Redis holds the job queues (an enqueued fan-out is the only record that a pin must still
 * reach its followers' stored feeds) and the stored feeds, so a killed or restarted Redis must come
 * back with everything it acknowledged. (`everysec` would not do: with an fsync in progress Redis
 * may postpone writing the file for up to 2 s while it goes on replying, and a killed server loses
 * those replies' writes.) No RDB snapshots (`--save ""`): the AOF is the record. `cluster`: a
 * Redis Cluster node on its own bus port; it keeps its node ID and slots in nodes.conf (in its data
 * dir), so a restarted node rejoins.
 */
function redisServerService(stackDir: string, name: string, endpoint: { host: string; port: number }, cluster?: { busPort: number }): ServiceSpec {
  const { host, port } = endpoint;
  const paths = layout(stackDir, name);
  const dataDir = join(paths.dir, 'data');
  return {
    name,
    binary: 'redis-server',
    ...paths,
    host,
    ports: cluster ? [port, cluster.busPort] : [port],
    address: `${host}:${port}`,
    stopPhase: 1,
    // --logfile "" logs to stdout, i.e. our log file.
    args: () => [
      '--port', String(port),
      '--bind', host,
      '--save', '',
      '--appendonly', 'yes',
      '--appendfsync', 'always',
      '--daemonize', 'no',
      '--dir', dataDir,
      '--pidfile', paths.pidFile,
      '--logfile', '',
      ...(cluster
        ? ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-port', String(cluster.busPort), '--cluster-node-timeout', '5000']
        : []),
    ],
    isReady: () => probeTcp(host, port, (d) => (d.includes('\r\n') ? d.toString().startsWith('+PONG') : undefined), {
      send: 'PING\r\n',
    }),
    prepare: () => makeDir(dataDir),
  };
}

/** The stack's Redis Cluster nodes, `redis-cluster-1` …, when it has one. */
function redisClusterServices(stackDir: string, plan: StackPlan): ServiceSpec[] {
  const nodes = plan.info.redisCluster?.nodes ?? [];
  return nodes.map((node, i) => {
    const busPort = plan.redisClusterBusPorts?.[i];
    if (busPort === undefined) throw new Error(`plan.json names Redis Cluster node ${i + 1} without its bus port`);
    return redisServerService(stackDir, `${REDIS_CLUSTER_SERVICE}${i + 1}`, node, { busPort });
  });
}

/** Service names of the Redis Cluster's nodes start with this. */
export const REDIS_CLUSTER_SERVICE = 'redis-cluster-';

function memcachedService(stackDir: string, plan: StackPlan): ServiceSpec {
  const { host, port } = plan.info.memcached;
  const paths = layout(stackDir, 'memcached');
  return {
    name: 'memcached',
    binary: 'memcached',
    ...paths,
    host,
    ports: [port],
    address: `${host}:${port}`,
    stopPhase: 1,
    // -U 0: no UDP. memcached refuses to run as root without -u.
    args: () => ['-l', host, '-p', String(port), '-U', '0', '-m', '128', ...(process.getuid?.() === 0 ? ['-u', 'root'] : [])],
    isReady: () =>
      probeTcp(host, port, (d) => (d.includes('\r\n') ? d.toString().startsWith('VERSION ') : undefined), {
        send: 'version\r\n',
      }),
    prepare: () => makeDir(paths.dir),
  };
}

function etcdService(stackDir: string, plan: StackPlan): ServiceSpec {
  const clientUrl = new URL(plan.info.etcd.endpoints[0] ?? '');
  const host = clientUrl.hostname;
  const clientPort = Number(clientUrl.port);
  const peerUrl = `http://${host}:${plan.etcdPeerPort}`;
  const paths = layout(stackDir, 'etcd');
  return {
    name: 'etcd',
    binary: 'etcd',
    ...paths,
    host,
    ports: [clientPort, plan.etcdPeerPort],
    address: clientUrl.origin,
    stopPhase: 1,
    // Tight heartbeat/election: single local member, we want leader election in ~100 ms.
    args: () => [
      '--name', 'shardql',
      '--data-dir', join(paths.dir, 'data'),
      '--listen-client-urls', clientUrl.origin,
      '--advertise-client-urls', clientUrl.origin,
      '--listen-peer-urls', peerUrl,
      '--initial-advertise-peer-urls', peerUrl,
      '--initial-cluster', `shardql=${peerUrl}`,
      '--heartbeat-interval=10',
      '--election-timeout=100',
      '--logger=zap',
      '--log-outputs=stderr',
    ],
    isReady: async () => {
      const body = await httpGetText(host, clientPort, '/health');
      try {
        return body !== null && (JSON.parse(body) as { health?: unknown }).health === 'true';
      } catch {
        return false;
      }
    },
    // etcd creates its data dir itself (it wants mode 0700).
    prepare: () => makeDir(paths.dir),
  };
}

/** All services of a plan, in start order (a replica always after its primary). */
export function buildServices(stackDir: string, plan: StackPlan): ServiceSpec[] {
  const mysql = plan.info.mysql.hosts.flatMap((host, i) => mysqlInstances(stackDir, host, i, plan.innodbBufferPoolMb ?? DEFAULT_INNODB_BUFFER_POOL_MB).map(mysqlService));
  return [
    redisServerService(stackDir, 'redis', plan.info.redis),
    ...redisClusterServices(stackDir, plan),
    memcachedService(stackDir, plan),
    etcdService(stackDir, plan),
    ...mysql,
  ];
}
