/**
 * What one load run measured, and how runs of one system taken in turns with the others' (the
 * rounds of bench/main.ts) make one measurement. Pure: bench/driver.ts (the load generator's child
 * process) and bench/main.ts both use it.
 */
export interface MeasuredRun {
  readonly requests: number;
  readonly durationMs: number;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
  /** Transport errors, timeouts, non-2xx answers, and 200s that carried GraphQL errors. */
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
  readonly graphqlErrors: number;
  readonly firstErrorBody?: string;
  /** With the run's `keepLatencies`: every measured request's latency, ms, sorted. */
  readonly latenciesMs?: readonly number[];
}

/** The q-quantile of sorted latencies (nearest rank); 0 when there are none. */
export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

/**
 * Runs of one system taken in turns with the others' (bench/main.ts's rounds) as one: requests and
 * seconds summed (req/s = all requests ÷ all measured seconds), percentiles of all the latencies
 * together, errors summed, the first error body kept. Each run must carry `latenciesMs`.
 */
export function mergeRuns(runs: readonly MeasuredRun[]): MeasuredRun {
  if (runs.length === 0) throw new Error('mergeRuns: no run');
  if (runs.length === 1) return runs[0]!;
  const all: number[] = [];
  for (const r of runs) {
    if (r.latenciesMs === undefined) throw new Error('mergeRuns: a run without its latencies (keepLatencies)');
    for (const ms of r.latenciesMs) all.push(ms);
  }
  const sorted = Float64Array.from(all).sort();
  const requests = runs.reduce((n, r) => n + r.requests, 0);
  // Each run's measured seconds, as its req/s was computed over them.
  const seconds = runs.reduce((n, r) => n + (r.rps > 0 ? r.requests / r.rps : r.durationMs / 1000), 0);
  const firstErrorBody = runs.find((r) => r.firstErrorBody !== undefined)?.firstErrorBody;
  return {
    requests,
    durationMs: runs.reduce((n, r) => n + r.durationMs, 0),
    rps: seconds > 0 ? requests / seconds : 0,
    p50Ms: percentile(sorted, 0.5),
    p90Ms: percentile(sorted, 0.9),
    p99Ms: percentile(sorted, 0.99),
    meanMs: requests > 0 ? all.reduce((a, b) => a + b, 0) / requests : 0,
    errors: runs.reduce((n, r) => n + r.errors, 0),
    timeouts: runs.reduce((n, r) => n + r.timeouts, 0),
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
    graphqlErrors: runs.reduce((n, r) => n + r.graphqlErrors, 0),
    ...(firstErrorBody !== undefined ? { firstErrorBody } : {}),
  };
}
