import { ShardqlError } from './errors.ts';

/**
 * The mod-shard count is fixed once claims exist, like a type number. A username or email is claimed
 * in mod shard `md5(key) mod count` (modShard.ts): under another count the same key is looked for in
 * another database, so every claim made before is missed and a second claimant wins.
 * Example: "alice" claimed with 8 mod shards is in msdb00004 (md5 mod 8 = 4); with 16 it is looked for
 * in msdb00012 (md5 mod 16 = 12), is not found, and a second "alice" is created — while
 * "alice@example.com" (mod 8 = mod 16 = 0) is still found taken.
 */

/** Why publishing `next` over `published` is refused, or undefined when the count is kept. */
export function modShardCountChange(published: number, next: number): string | undefined {
  if (published === next) return undefined;
  return (
    `The map changes modShard.count from ${published} to ${next}: refused. Usernames and emails are claimed in ` +
    `mod shard md5(key) mod count, so with ${next} every claim made with ${published} would be looked for in ` +
    `another mod shard database: look-ups would miss and uniqueness would break. The count never changes ` +
    `once published; keep modShard.count ${published}`
  );
}

/**
 * Throws INVALID_TOPOLOGY when `next` changes the mod-shard count of the published map (null: nothing
 * published, or not a valid map, so no count to keep).
 */
export function assertModShardCountKept(published: { readonly modShard: { readonly count: number } } | null, next: { readonly modShard: { readonly count: number } }): void {
  if (published === null) return;
  const problem = modShardCountChange(published.modShard.count, next.modShard.count);
  if (problem !== undefined) throw new ShardqlError('INVALID_TOPOLOGY', problem);
}

/** A mod shard database that records another count than the map's. */
export interface RecordedCountMismatch {
  readonly database: string;
  readonly host: string;
  readonly recorded: number;
}

/**
 * Why a map cannot be served over databases provisioned with another count. Example: msdb00000 on
 * mysql001 records 8, the map has 16 → "Mod shard database msdb00000 on mysql001 records 8 mod shards;
 * this map has 16. …"
 */
export function recordedCountProblem(mismatch: RecordedCountMismatch, mapCount: number, others = 0): string {
  const also = others > 0 ? ` (and ${others} more database(s))` : '';
  return (
    `Mod shard database ${mismatch.database} on ${mismatch.host} records ${mismatch.recorded} mod shards${also}; this map has ${mapCount}. ` +
    `Its claims (usernames, emails) are hashed over ${mismatch.recorded} (md5(key) mod ${mismatch.recorded}): with ${mapCount} they would be ` +
    `looked for in other databases and uniqueness would break. Publish a map with modShard.count ${mismatch.recorded}, or drop these ` +
    `databases first if they hold nothing to keep`
  );
}
