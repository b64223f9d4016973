import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { CacheLayer, CacheStats } from './core/cacheStats.ts';
import type { QueueStats } from './jobs/jobQueue.ts';
import type { SqlStats } from './storage/sqlStats.ts';

type CacheKind = 'hit' | 'miss' | 'error' | 'round_trip';

/**
 * Prometheus metrics of one gateway process (prom-client: the standard exposition format and
 * process metrics, which are not worth writing by hand). Served at /metrics.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  /**
   * What every request adds to (requests by outcome, cache operations by layer and kind), summed in
   * plain numbers and handed to prom-client at scrape time: its inc() hashes the labels of every
   * call, ~1.5% of a small read's CPU for three or four counters a request.
   */
  readonly #requestTotals = { ok: 0, error: 0 };
  readonly #cacheTotals: Record<CacheLayer, Record<CacheKind, number>> = {
    local: { hit: 0, miss: 0, error: 0, round_trip: 0 },
    memcached: { hit: 0, miss: 0, error: 0, round_trip: 0 },
    redis: { hit: 0, miss: 0, error: 0, round_trip: 0 },
  };
  readonly #requests: Counter = new Counter({
    name: 'shardql_requests_total',
    help: 'GraphQL requests answered',
    labelNames: ['outcome'],
    registers: [this.registry],
    collect: () => {
      this.#requests.reset();
      for (const [outcome, n] of Object.entries(this.#requestTotals)) if (n > 0) this.#requests.inc({ outcome }, n);
    },
  });
  readonly #duration = new Histogram({
    name: 'shardql_request_duration_seconds',
    help: 'GraphQL request duration',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly #sql = new Counter({ name: 'shardql_sql_round_trips_total', help: 'SQL round trips to shard hosts', registers: [this.registry] });
  readonly #cache: Counter = new Counter({
    name: 'shardql_cache_operations_total',
    help: 'Cache hits, misses, errors and round trips',
    labelNames: ['layer', 'kind'],
    registers: [this.registry],
    collect: () => {
      this.#cache.reset();
      for (const [layer, kinds] of Object.entries(this.#cacheTotals)) for (const [kind, n] of Object.entries(kinds)) if (n > 0) this.#cache.inc({ layer, kind }, n);
    },
  });
  /** Rate-limit decisions: `allowed`, `refused` (429), `error` (Redis failed: the request went through). */
  readonly rateLimit = new Counter({
    name: 'shardql_rate_limit_total',
    help: 'Rate-limit decisions by outcome (allowed, refused; error: the shared limiter failed) and limiter (redis: shared by replicas; local: this process, while Redis cannot answer)',
    labelNames: ['outcome', 'limiter'],
    registers: [this.registry],
  });
  readonly topologyRevision = new Gauge({ name: 'shardql_topology_revision', help: 'etcd revision of the topology in force', registers: [this.registry] });
  readonly topologyAge = new Gauge({ name: 'shardql_topology_age_seconds', help: 'Seconds since the topology in force was confirmed current', registers: [this.registry] });
  readonly #queueJobs = new Gauge({ name: 'shardql_queue_jobs', help: 'Background jobs per queue and state (waiting, active, delayed, failed)', labelNames: ['queue', 'state'], registers: [this.registry] });
  readonly #queueLag = new Gauge({ name: 'shardql_queue_lag_seconds', help: 'How long the oldest waiting job of a queue has been due (0: none waits)', labelNames: ['queue'], registers: [this.registry] });
  readonly #queueStatsErrors = new Counter({ name: 'shardql_queue_stats_errors_total', help: 'Scrapes whose queue gauges could not be read (Redis slow or down: the gauges are left out)', registers: [this.registry] });

  readonly #feedWork = new Gauge({
    name: 'shardql_feed_work_total',
    help: 'Work done on stored home feeds by every worker since Redis last started empty: fanouts, insertions (a pin added to a feed), feedsAbsent (a follower without a stored feed: left absent), bigSources (sources merged at read time instead), retracts, cleans, removals',
    labelNames: ['kind'],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** The queues' gauges as of `stats`; null (Redis did not answer in time): no queue gauge at all rather than stale ones. */
  recordQueues(stats: readonly QueueStats[] | null): void {
    this.#queueJobs.reset();
    this.#queueLag.reset();
    if (stats === null) {
      this.#queueStatsErrors.inc();
      return;
    }
    for (const s of stats) {
      for (const state of ['waiting', 'active', 'delayed', 'failed'] as const) this.#queueJobs.set({ queue: s.queue, state }, s[state]);
      this.#queueLag.set({ queue: s.queue }, (s.lagMs ?? 0) / 1000);
    }
  }

  /** The feed work counters (kept in Redis by the workers); null: Redis did not answer, no series. */
  recordFeedWork(work: Readonly<Record<string, number>> | null): void {
    this.#feedWork.reset();
    if (work) for (const [kind, n] of Object.entries(work)) this.#feedWork.set({ kind }, n);
  }

  recordRequest(seconds: number, failed: boolean, sql: SqlStats, cache: CacheStats): void {
    this.#requestTotals[failed ? 'error' : 'ok']++;
    this.#duration.observe(seconds);
    if (sql.roundTrips > 0) this.#sql.inc(sql.roundTrips);
    for (const layer in cache.layers) {
      const s = cache.layers[layer as CacheLayer];
      const t = this.#cacheTotals[layer as CacheLayer];
      t.hit += s.hits;
      t.miss += s.misses;
      t.error += s.errors;
      t.round_trip += s.roundTrips;
    }
  }
}
