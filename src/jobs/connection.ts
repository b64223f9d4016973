import { createRedisClient, type RedisClient, type RedisTarget } from '../redis/redisClient.ts';

/**
 * The Redis client a process's queues share, on one Redis or a Redis Cluster (each queue's keys
 * share a hash tag: `queuePrefix`). `worker`: for BullMQ workers, whose commands must wait out a
 * Redis restart (BullMQ duplicates this client for each worker's blocking fetch). `producer`
 * (gateway, CLI): a command fails after one retry, or after 1 s unanswered (a hung Redis must not
 * hold a write that committed: its job waits in the write's intent).
 */
export function jobsRedis(target: RedisTarget, role: 'worker' | 'producer'): RedisClient {
  return createRedisClient(target, { role });
}
