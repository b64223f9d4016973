/**
 * The local stack's Redis Cluster (3 primaries, `stack up --redis-cluster`), for the tests that run
 * the gateway and workers on a cluster. The default single Redis stays as every other test uses it;
 * the cluster is added to the test stack the first time a cluster test asks for it (~2 s), and is
 * reused after that. Test-only helpers here may do what production code must not (FLUSHALL and
 * SCAN per node).
 */
import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import { stackUp, type StackInfo } from '../../src/stack/localStack.ts';
import { createRedisClient, type RedisClient, type RedisEndpoint, type RedisTarget } from '../../src/redis/redisClient.ts';

export interface TestRedisCluster {
  readonly nodes: readonly RedisEndpoint[];
  /** `{ cluster: nodes }`: what `SHARDQL_REDIS_CLUSTER` decodes to. */
  readonly target: RedisTarget;
  /** The `SHARDQL_REDIS_CLUSTER` value for child processes. */
  readonly env: string;
  /** A cluster client from the project's factory. */
  readonly client: RedisClient;
  /** One plain client per node, to ask a node about itself (DBSIZE, SCAN, CLUSTER …). */
  readonly perNode: readonly Redis[];
  /** Empties every node. */
  flush(): Promise<void>;
  /** Every key on each node, by node (`host:port`), optionally only those matching `pattern`. */
  keysByNode(pattern?: string): Promise<Map<string, string[]>>;
  close(): void;
}

/** Brings the test stack's Redis Cluster up if it has none, waits until it serves every slot, and connects to it. */
export async function testRedisCluster(stack: StackInfo): Promise<TestRedisCluster> {
  const info = stack.redisCluster ? stack : await stackUp({ dir: process.env.SHARDQL_STACK_DIR ?? resolve(import.meta.dirname, '../../.stack'), redisCluster: true });
  const nodes = info.redisCluster?.nodes;
  if (!nodes) throw new Error('the test stack has no Redis Cluster after `stack up --redis-cluster`');
  const target = { cluster: nodes };
  const client = createRedisClient(target, { role: 'producer', name: 'shardql-test' });
  const perNode = nodes.map((n) => {
    const r = new Redis({ host: n.host, port: n.port });
    r.on('error', () => undefined);
    return r;
  });
  return {
    nodes,
    target,
    env: nodes.map((n) => `${n.host}:${n.port}`).join(','),
    client,
    perNode,
    async flush() {
      await Promise.all(perNode.map((r) => r.flushall()));
    },
    async keysByNode(pattern = '*') {
      const out = new Map<string, string[]>();
      await Promise.all(
        perNode.map(async (r, i) => {
          const keys: string[] = [];
          let cursor = '0';
          do {
            const [next, batch] = await r.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
            keys.push(...batch);
            cursor = next;
          } while (cursor !== '0');
          out.set(`${nodes[i]!.host}:${nodes[i]!.port}`, keys);
        }),
      );
      return out;
    },
    close() {
      client.disconnect();
      for (const r of perNode) r.disconnect();
    },
  };
}
