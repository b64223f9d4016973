/**
 * What the writers of a data set read besides the data set itself: its IDs as text and its items
 * grouped by shard and by parent, built once by `indexDataset` (src/bulk/sharded.ts). Its own file
 * so that the events derived from it (src/bulk/events.ts), which the index holds, need not import
 * the writer that builds it.
 */
import type { SequenceEvent } from '../core/events.ts';
import type { Csr, Dataset } from './generate.ts';

/** Items grouped by a key: those of key k are `items[off[k] .. off[k+1])`. */
export type Group = { off: Int32Array; items: Int32Array };

/** Everything derived from a data set that both the sharded and the flat writers read. */
export interface DatasetIndex {
  readonly ds: Dataset;
  readonly userIds: string[];
  readonly boardIds: string[];
  readonly pinIds: string[];
  readonly usernames: string[];
  readonly usersByShard: Group;
  readonly boardsByShard: Group;
  readonly pinsByShard: Group;
  readonly boardPins: Group;
  readonly repins: Group;
  readonly likers: Csr;
  readonly followers: Csr;
  readonly boardFollowers: Csr;
  /** The notified users' notifications (src/bulk/events.ts). */
  readonly events: readonly SequenceEvent[];
}
