import { Redis } from 'ioredis';

/**
 * The Redis client a process's queues share. `worker`: for BullMQ workers, whose commands must wait
 * out a Redis restart rather than fail (BullMQ requires `maxRetriesPerRequest: null` there; it
 * duplicates this client for each worker's blocking fetch). Otherwise (gateway, CLI) a command
 * fails after one retry and callers bound their waits. Both reconnect by themselves.
 */
export function jobsRedis(addr: { readonly host: string; readonly port: number }, role: 'worker' | 'producer'): Redis {
  const redis = new Redis({
    host: addr.host,
    port: addr.port,
    connectionName: `shardql-${role}`,
    maxRetriesPerRequest: role === 'worker' ? null : 1,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(100 * times, 2000),
  });
  // Errors surface on the commands that fail; without a listener ioredis would print each one.
  redis.on('error', () => undefined);
  return redis;
}
