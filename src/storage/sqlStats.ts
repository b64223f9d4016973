import type { CacheStats } from '../cache/cacheStats.ts';

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
}
