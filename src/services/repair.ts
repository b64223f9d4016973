import { MAPPING_TABLES, reverseOf, type MappingTable } from '../core/mappings.ts';
import type { Topology } from '../core/topology.ts';
import type { Storage } from '../storage/index.ts';
import { listCacheKey } from '../storage/mappingStore.ts';
import { isActive } from '../storage/objectStore.ts';
import { ShardScan } from '../storage/shardScan.ts';
import type { OpContext } from '../storage/sqlStats.ts';
import { finishSteps } from './writeExecutor.ts';

export interface RepairReport {
  readonly completed: number;
  readonly failed: number;
}

/** Every shard in a range of the topology: where intents may be. */
export function allShards(topology: Topology): number[] {
  return [...topology.shardsByHost().values()].flat().sort((a, b) => a - b);
}

/**
 * The repair pass: completes intents older than `minAgeMs` (writes interrupted after their first
 * transaction). Steps are idempotent, so an intent whose writer is merely slow is harmless to
 * finish twice. Runs in the gateway every few seconds and as `shardql repair`.
 */
export async function repairIntents(
  storage: Storage,
  topology: Topology,
  opts: { minAgeMs: number; limit?: number; log?: (line: string) => void },
  ctx: OpContext = {},
): Promise<RepairReport> {
  let completed = 0;
  let failed = 0;
  const shards = allShards(topology);
  for (let i = 0; i < shards.length; i += 512) {
    const pending = await storage.intents.pending(shards.slice(i, i + 512), opts.minAgeMs, opts.limit ?? 1000, ctx);
    for (const intent of pending) {
      try {
        await storage.intents.noteAttempt(intent.shard, intent.id, ctx);
        await finishSteps(storage, intent.steps, ctx);
        await storage.intents.complete(intent.shard, intent.id, ctx);
        completed++;
        opts.log?.(`completed ${intent.kind} intent ${intent.id} on shard ${intent.shard} (${intent.steps.length} steps, attempt ${intent.attempts + 1})`);
      } catch (err) {
        failed++;
        opts.log?.(`could not complete ${intent.kind} intent ${intent.id} on shard ${intent.shard}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
  return { completed, failed };
}

export interface ReconcileReport {
  readonly reversesAdded: number;
  readonly reversesRemoved: number;
  readonly repinEdgesFixed: number;
  readonly countsFixed: number;
  readonly fixes: string[];
}

/** The side written first of each two-sided relation: its reverse is derived from it. */
const AUTHORITATIVE: readonly MappingTable[] = ['user_likes_pins', 'user_follows_users', 'user_follows_boards'];

/**
 * Checks both directions of every two-sided mapping, the repin edges and every count, on `shards`,
 * and repairs what differs: a missing reverse edge is added, a reverse edge without its forward
 * edge removed, a repin edge made to match its pin, a count set to the number of rows. Prints each
 * fix through `log`. Reads shard by shard; fixes go through the same idempotent steps as writes.
 */
export async function reconcile(
  storage: Storage,
  shards: readonly number[],
  opts: { log?: (line: string) => void } = {},
  ctx: OpContext = {},
): Promise<ReconcileReport> {
  const fixes: string[] = [];
  const note = (line: string): void => {
    fixes.push(line);
    opts.log?.(line);
  };
  let reversesAdded = 0;
  let reversesRemoved = 0;
  let repinEdgesFixed = 0;
  let countsFixed = 0;
  const { mappings } = storage;
  const scan = new ShardScan(storage.router);
  const edgesOf = (shard: number, table: MappingTable) => scan.edges(shard, table, ctx);

  for (const shard of shards) {
    // Forward edges whose reverse is missing; reverse edges whose forward is missing.
    for (const forward of AUTHORITATIVE) {
      const reverse = reverseOf(forward)!;
      const fwd = await edgesOf(shard, forward);
      const present = await mappings.existing(
        reverse,
        fwd.map((e) => ({ from: e.to, to: e.from })),
        ctx,
      );
      for (const e of fwd) {
        if (present.has(`${e.to}:${e.from}`)) continue;
        await mappings.apply([{ op: 'add', table: reverse, from: e.to, to: e.from, sequence: e.sequence }], ctx);
        reversesAdded++;
        note(`added ${reverse}(${e.to} → ${e.from}) mirroring ${forward} on shard ${shard}`);
      }
      const rev = await edgesOf(shard, reverse);
      const backed = await mappings.existing(
        forward,
        rev.map((e) => ({ from: e.to, to: e.from })),
        ctx,
      );
      for (const e of rev) {
        if (backed.has(`${e.to}:${e.from}`)) continue;
        await mappings.apply([{ op: 'remove', table: reverse, from: e.from, to: e.to }], ctx);
        reversesRemoved++;
        note(`removed ${reverse}(${e.from} → ${e.to}) on shard ${shard}: no ${forward} edge backs it`);
      }
    }
    // Repin edges: present iff the repin is active and points at the original.
    const repins = await edgesOf(shard, 'pin_repinned_as_pins');
    const repinObjects = await storage.objects.getMany(
      repins.map((e) => e.to),
      ctx,
    );
    for (const e of repins) {
      const p = repinObjects.get(e.to);
      if (p && isActive(p) && p.refs.via === e.from) continue;
      await mappings.apply([{ op: 'remove', table: 'pin_repinned_as_pins', from: e.from, to: e.to }], ctx);
      repinEdgesFixed++;
      note(`removed pin_repinned_as_pins(${e.from} → ${e.to}) on shard ${shard}: the repin is gone`);
    }
    const viaPins = await storage.objects.getMany(await scan.repinIds(shard, ctx), ctx);
    const want = [...viaPins.values()]
      .filter((p) => isActive(p) && p.refs.via !== undefined)
      .map((p) => ({ from: p.refs.via!, to: p.id, sequence: p.createdAt }));
    const have = await mappings.existing('pin_repinned_as_pins', want, ctx);
    for (const e of want) {
      if (have.has(`${e.from}:${e.to}`)) continue;
      await mappings.apply([{ op: 'add', table: 'pin_repinned_as_pins', from: e.from, to: e.to, sequence: e.sequence }], ctx);
      repinEdgesFixed++;
      note(`added pin_repinned_as_pins(${e.from} → ${e.to}) for the repin on shard ${shard}`);
    }
    // Counts equal to rows, for every list on this shard.
    for (const table of MAPPING_TABLES) {
      for (const m of await scan.countMismatches(shard, table, ctx)) {
        await scan.recount(shard, table, m.id, ctx);
        await mappings.invalidate([listCacheKey(table, m.id)], ctx);
        countsFixed++;
        note(`set ${table} count of ${m.id} to ${m.actual} (was ${m.counted}) on shard ${shard}`);
      }
    }
  }
  return { reversesAdded, reversesRemoved, repinEdgesFixed, countsFixed, fixes };
}
