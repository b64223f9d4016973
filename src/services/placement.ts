import { ShardqlError } from '../core/errors.ts';
import type { Topology } from '../core/topology.ts';

/**
 * A new user lands on a random open shard (uniform over every open shard, across gaps between
 * open spans); their boards and pins follow them to that shard.
 */
export function randomOpenShard(topology: Topology, random: () => number = Math.random): number {
  if (topology.openShardCount === 0) throw new ShardqlError('NO_OPEN_SHARD', 'No shard is open for new users');
  return topology.nthOpenShard(Math.min(topology.openShardCount - 1, Math.floor(random() * topology.openShardCount)));
}
