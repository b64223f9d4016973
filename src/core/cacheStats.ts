/** What one request cost in cache traffic, per layer: round trips, hits, misses, errors. */
export type CacheLayer = 'local' | 'memcached' | 'redis';

export class CacheStats {
  readonly layers: Record<CacheLayer, { roundTrips: number; hits: number; misses: number; errors: number }> = {
    local: { roundTrips: 0, hits: 0, misses: 0, errors: 0 },
    memcached: { roundTrips: 0, hits: 0, misses: 0, errors: 0 },
    redis: { roundTrips: 0, hits: 0, misses: 0, errors: 0 },
  };

  roundTrip(layer: CacheLayer, n = 1): void {
    this.layers[layer].roundTrips += n;
  }
  hits(layer: CacheLayer, n: number): void {
    this.layers[layer].hits += n;
  }
  misses(layer: CacheLayer, n: number): void {
    this.layers[layer].misses += n;
  }
  error(layer: CacheLayer): void {
    this.layers[layer].errors++;
  }
}

/** Process-wide totals, for /metrics. */
export interface CacheCounters {
  add(layer: CacheLayer, what: 'hits' | 'misses' | 'errors' | 'roundTrips', n: number): void;
}
