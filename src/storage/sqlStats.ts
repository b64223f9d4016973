import type { CacheStats } from '../core/cacheStats.ts';
import type { NearView } from '../cache/nearCache.ts';
import type { Topology } from '../core/topology.ts';
import type { OpTrace } from '../core/trace.ts';

/**
 * What one operation (usually one GraphQL request) cost in SQL: round trips, and the shards and
 * hosts they touched. Passed down explicitly; the router adds to it on every round trip.
 */
export class SqlStats {
  roundTrips = 0;
  rows = 0;
  readonly shards = new Set<number>();
  readonly hosts = new Set<string>();

  record(host: string, shards: Iterable<number>, rows: number): void {
    this.roundTrips++;
    this.rows += rows;
    this.hosts.add(host);
    for (const s of shards) this.shards.add(s);
  }

  toJSON(): { roundTrips: number; rows: number; shards: number; hosts: number } {
    return { roundTrips: this.roundTrips, rows: this.rows, shards: this.shards.size, hosts: this.hosts.size };
  }
}

/** Per-operation context handed to every store call. */
export interface OpContext {
  readonly stats?: SqlStats;
  readonly cache?: CacheStats;
  /**
   * The map the request started with: reads resolve hosts with it, so a request in flight during a
   * topology swap finishes on one map. Writes always follow the newest map (ShardRouter).
   */
  readonly topology?: Topology;
  /** Epoch ms after which no new SQL starts for this operation (REQUEST_TIMEOUT). */
  readonly deadline?: number;
  /**
   * Where this operation's in-process cache view is kept: taken by the first read that wants it
   * (one read barrier) and shared by every later read of the operation. Absent: no L1 reads.
   */
  readonly near?: { view?: Promise<NearView | undefined>; current?: NearView | undefined };
  /**
   * Where this operation's spans go (SQL round trips, cache calls), under the span of whoever
   * called; absent when tracing is off — then no span is made at all.
   */
  readonly trace?: OpTrace | undefined;
}

/** The attributes of one SQL round trip's span (OpenTelemetry's database names where there is one). */
export function sqlSpanAttributes(host: string, shards: readonly number[], statements: number): Record<string, string | number> {
  return { 'db.system.name': 'mariadb', 'server.address': host, 'shardql.shard_count': shards.length, 'shardql.statements': statements };
}
