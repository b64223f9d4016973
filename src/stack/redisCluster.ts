/**
 * The local stack's Redis Cluster: forms it from its running nodes (once), and reports its state.
 * Forming is what `redis-cli --cluster create` does, without its one-second waits: each node takes
 * a third of the 16384 slots and a distinct config epoch, the first node meets the others, and the
 * nodes gossip until every one of them sees every slot served.
 */
import { Redis } from 'ioredis';
import { StackError } from './errors.ts';
import { pollUntil } from './processes.ts';
import type { RedisClusterState } from './types.ts';

interface ClusterNode {
  readonly host: string;
  readonly port: number;
  readonly busPort: number;
}

/** How long the nodes get to agree after they met (a few gossip rounds of 100 ms are enough). */
const AGREE_TIMEOUT_MS = 20_000;
const SLOTS = 16384;

/** Node i of n's slots, as redis-cli deals them: 0–5460, 5461–10922, 10923–16383 for 3 nodes. */
export function slotRange(i: number, n: number): [number, number] {
  const per = SLOTS / n;
  return [Math.round(per * i), Math.round(per * (i + 1)) - 1];
}

async function connectTo(node: { host: string; port: number }): Promise<Redis> {
  const client = new Redis({ host: node.host, port: node.port, lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: 1000, retryStrategy: () => null });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

function parseInfo(text: string): RedisClusterState {
  const field = (name: string): string => new RegExp(`^${name}:(\\S+)`, 'm').exec(text)?.[1] ?? '';
  return { state: field('cluster_state'), slotsAssigned: Number(field('cluster_slots_assigned')), knownNodes: Number(field('cluster_known_nodes')), primaries: Number(field('cluster_size')) };
}

const clusterInfo = async (client: Redis): Promise<RedisClusterState> => parseInfo(String(await client.call('CLUSTER', 'INFO')));

const formed = (s: RedisClusterState, n: number): boolean => s.state === 'ok' && s.knownNodes === n && s.slotsAssigned === SLOTS && s.primaries === n;

/**
 * Makes the running nodes one cluster, each a primary of a third of the slots. Idempotent: a formed
 * cluster is left alone; nodes restarted from their nodes.conf are only waited for.
 */
export async function ensureRedisCluster(nodes: readonly ClusterNode[], log: (line: string) => void): Promise<void> {
  const clients: Redis[] = [];
  try {
    for (const node of nodes) clients.push(await connectTo(node));
    const states = await Promise.all(clients.map(clusterInfo));
    if (states.every((s) => formed(s, nodes.length))) return;
    const started = Date.now();
    // A node that knows only itself has not joined yet: it takes its slots (unless an interrupted
    // earlier `up` gave them already) and a config epoch of its own, then the first node meets it.
    const alone = states.map((s) => s.knownNodes === 1);
    if (alone.some(Boolean)) {
      log(`redis cluster: joining ${nodes.length} nodes`);
      await Promise.all(
        clients.map(async (c, i) => {
          if (!alone[i]) return;
          if (states[i]!.slotsAssigned === 0) await c.call('CLUSTER', 'ADDSLOTSRANGE', ...slotRange(i, nodes.length).map(String));
          await c.call('CLUSTER', 'SET-CONFIG-EPOCH', String(i + 1)).catch(() => undefined); // refused once the node has an epoch
        }),
      );
      for (const node of nodes.slice(1)) await clients[0]!.call('CLUSTER', 'MEET', node.host, String(node.port), String(node.busPort));
    }
    let last = states;
    const agreed = await pollUntil(async () => {
      last = await Promise.all(clients.map(clusterInfo));
      return last.every((s) => formed(s, nodes.length));
    }, AGREE_TIMEOUT_MS);
    if (!agreed) {
      const seen = last.map((s, i) => `${nodes[i]!.host}:${nodes[i]!.port} ${s.state}, ${s.knownNodes} nodes, ${s.slotsAssigned} slots`).join('; ');
      throw new StackError(
        `the Redis Cluster did not form within ${AGREE_TIMEOUT_MS / 1000} s (${seen}); stop the stack and delete its redis-cluster-* folders to form it anew`,
        { service: 'redis-cluster' },
      );
    }
    log(`redis cluster: ${nodes.length} primaries agree on 16384 slots (${Date.now() - started} ms)`);
  } finally {
    for (const c of clients) c.disconnect();
  }
}

/** CLUSTER INFO of the first node that answers; null when none does. */
export async function redisClusterState(nodes: readonly { host: string; port: number }[]): Promise<RedisClusterState | null> {
  for (const node of nodes) {
    let client: Redis | undefined;
    try {
      client = await connectTo(node);
      return await clusterInfo(client);
    } catch {
      // try the next node
    } finally {
      client?.disconnect();
    }
  }
  return null;
}
