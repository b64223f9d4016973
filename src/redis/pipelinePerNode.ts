import { Cluster, type ChainableCommander } from 'ioredis';
import { groupBy } from '../core/groupBy.ts';
import { keySlot } from '../core/redisKeySlot.ts';
import type { RedisClient } from './redisClient.ts';

/** One command's reply in a pipeline: its error, or its result. */
export type PipelineReply = [error: Error | null, result: unknown];

/**
 * Sends one command per item as a batch, and returns the replies in the items' order. On one Redis
 * that is one pipeline; on a cluster, one pipeline per node serving the items' slots (as the
 * cluster's slot map says), all sent at once — one round trip of latency either way. A cluster
 * refuses a single pipeline whose keys live on several nodes, so a batch over many lists (a level
 * of a query, a fan-out) must come through here.
 *
 * `keyOf` names the one key (or hash tag) each item's command touches; `add` queues that command.
 * A node that fails (or a pipeline that rejects) turns its own items' replies into errors; the
 * other nodes' replies are kept. Throws only what `add` throws.
 *
 *   const replies = await pipelinePerNode(redis, lists, (l) => l, (p, l) => p.hlen(l));
 */
export async function pipelinePerNode<T>(
  client: RedisClient,
  items: readonly T[],
  keyOf: (item: T) => string,
  add: (pipeline: ChainableCommander, item: T) => void,
): Promise<PipelineReply[]> {
  const replies: PipelineReply[] = new Array<PipelineReply>(items.length);
  if (items.length === 0) return replies;
  const indexed = items.map((item, i) => ({ item, i }));
  const groups =
    client instanceof Cluster
      ? [
          ...groupBy(indexed, ({ item }) => {
            const slot = keySlot(keyOf(item));
            // The nodes serving a slot (primary first); before the map is known, the slot itself.
            return client.slots[slot]?.join(',') ?? `slot ${slot}`;
          }).values(),
        ]
      : [indexed];
  await Promise.all(
    groups.map(async (group) => {
      const pipeline = client.pipeline();
      for (const { item } of group) add(pipeline, item);
      try {
        const results = (await pipeline.exec()) ?? [];
        group.forEach(({ i }, j) => (replies[i] = (results[j] as PipelineReply | undefined) ?? [new Error('no reply'), null]));
      } catch (err) {
        const error = err instanceof Error ? err : new Error(String(err));
        for (const { i } of group) replies[i] = [error, null];
      }
    }),
  );
  return replies;
}
