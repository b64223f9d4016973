import { Cluster } from 'ioredis';
import type { RedisClient } from './redisClient.ts';

/**
 * The oldest Redis the gateway's scripts run on: the invalidation log's carry script flags
 * (`#!lua flags=allow-oom`), which Redis reads from 7.0 on. An older Redis fails every append and
 * every read barrier: reads then never use L1 and every write's keys wait in the MySQL outbox.
 */
export const MIN_REDIS_VERSION = '7.0.0';

/** `redis_version` from the text of `INFO server`. */
export function redisVersionOf(info: string): string | undefined {
  return /^redis_version:([0-9][0-9.]*)\s*$/m.exec(info)?.[1];
}

/** Whether dotted version `version` is older than `min` (missing parts count as 0). */
export function olderThan(version: string, min: string): boolean {
  const a = version.split('.').map(Number);
  const b = min.split('.').map(Number);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x < y;
  }
  return false;
}

/** The servers this client writes to (one, or a cluster's primaries) that run a Redis older than `min`: `host:port version`. */
export async function outdatedRedisServers(client: RedisClient, min: string = MIN_REDIS_VERSION): Promise<string[]> {
  const servers = client instanceof Cluster ? client.nodes('master') : [client];
  const out: string[] = [];
  for (const server of servers) {
    const version = redisVersionOf(await server.info('server'));
    if (version !== undefined && olderThan(version, min)) out.push(`${server.options.host}:${server.options.port} ${version}`);
  }
  return out;
}
