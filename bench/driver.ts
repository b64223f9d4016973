/**
 * The load generator, in a child process of its own so that autocannon never shares an event loop
 * with the server it measures. The parent sends one run at a time over IPC:
 *
 *   { id, run: DriverRun }  →  { id, result: DriverResult } | { id, error }
 *
 * Each connection replays one request stream in a loop (stream i % streams.length): a read scenario
 * rotates its requests so connections do not march in step; the mutation mix gives each connection
 * its own viewer. Latencies are kept exactly (µs), not from autocannon's 1 ms histogram. A run may
 * start with a warm-up: the same load on the same connections, without a pause, whose answers
 * count for nothing.
 *
 * A "pass" (the cold phase) is not autocannon: every distinct request exactly once, a fixed number
 * in flight (a chain of requests, e.g. one viewer's like then unlike, stays on one connection),
 * with each answer's cost collected.
 */
import autocannon from 'autocannon';
import { percentile, type MeasuredRun } from './runs.ts';

export interface DriverRequest {
  readonly body: string;
  readonly headers: Record<string, string>;
}

export interface DriverRun {
  readonly url: string;
  readonly connections: number;
  /** Measured seconds, after the warm-up. */
  readonly durationSec: number;
  /**
   * Seconds of load before the measured ones. One continuous run rather than two: requests
   * abandoned at the end of a separate warm-up run would still be executing in the measured one.
   */
  readonly warmupSec?: number;
  /** Connection i loops over streams[i % streams.length]. */
  readonly streams: readonly (readonly DriverRequest[])[];
  /** Return the measured latencies too (`latenciesMs`), for `mergeRuns`. */
  readonly keepLatencies?: boolean;
}

/**
 * A first pass: every request exactly once, `connections` at a time, each answer's
 * `extensions.cost` collected (send them with `x-shardql-cost: 1`).
 */
export interface DriverPass {
  readonly url: string;
  readonly connections: number;
  /** Chains run in parallel, the requests of one chain in order on one connection. */
  readonly chains: readonly (readonly DriverRequest[])[];
}

/** Sums of `extensions.cost` over the answers that carried one. */
export interface CostTotals {
  readonly answers: number;
  readonly sqlRoundTrips: number;
  readonly cacheRoundTrips: number;
  readonly cacheHits: number;
  readonly cacheMisses: number;
  /** Whether any answer reported cache traffic fields at all. */
  readonly cacheReported: boolean;
}

interface CostExtension {
  sqlRoundTrips?: unknown;
  cache?: Record<string, { roundTrips?: unknown; hits?: unknown; misses?: unknown }>;
}

export function addCost(totals: CostTotals, cost: CostExtension | undefined): CostTotals {
  if (!cost || typeof cost.sqlRoundTrips !== 'number') return totals;
  let rt = 0;
  let hits = 0;
  let misses = 0;
  for (const layer of Object.values(cost.cache ?? {})) {
    rt += Number(layer.roundTrips ?? 0);
    hits += Number(layer.hits ?? 0);
    misses += Number(layer.misses ?? 0);
  }
  return {
    answers: totals.answers + 1,
    sqlRoundTrips: totals.sqlRoundTrips + cost.sqlRoundTrips,
    cacheRoundTrips: totals.cacheRoundTrips + rt,
    cacheHits: totals.cacheHits + hits,
    cacheMisses: totals.cacheMisses + misses,
    cacheReported: totals.cacheReported || cost.cache !== undefined,
  };
}

export const NO_COST: CostTotals = { answers: 0, sqlRoundTrips: 0, cacheRoundTrips: 0, cacheHits: 0, cacheMisses: 0, cacheReported: false };

export interface DriverResult extends MeasuredRun {
  /** First passes only: the cost every answer reported. */
  readonly cost?: CostTotals;
}

export async function runLoad(run: DriverRun): Promise<DriverResult> {
  const latencies: number[] = [];
  let next = 0;
  let firstErrorBody: string | undefined;
  let errors = 0;
  let timeouts = 0;
  let non2xx = 0;
  let graphqlErrors = 0;
  const streams = run.streams.map((s) => s.map((r) => ({ method: 'POST' as const, path: '/graphql', headers: { 'content-type': 'application/json', ...r.headers }, body: r.body })));
  const warmupSec = run.warmupSec ?? 0;
  const measureFrom = Date.now() + warmupSec * 1000;
  // autocannon's totals cover the warm-up too: the measured window's are counted here.
  const measuring = (): boolean => Date.now() >= measureFrom;
  await new Promise<void>((resolve, reject) => {
    const instance = autocannon(
      {
        url: run.url,
        connections: run.connections,
        duration: warmupSec + run.durationSec,
        pipelining: 1,
        timeout: 30,
        requests: streams[0]!,
        setupClient: (client: autocannon.Client) => {
          const stream = streams[next++ % streams.length]!;
          (client as unknown as { setRequests(r: unknown[]): void }).setRequests(stream);
        },
        verifyBody: (raw) => {
          const body = typeof raw === 'string' ? raw : raw === undefined ? '' : raw.toString('utf8');
          const ok = !body.includes('"errors":');
          if (!ok && measuring()) {
            graphqlErrors++;
            firstErrorBody ??= body.slice(0, 500);
          }
          return ok;
        },
      },
      (err) => (err ? reject(err) : resolve()),
    );
    instance.on('response', (_client: unknown, status: number, _bytes: number, responseTime: number) => {
      if (!measuring()) return;
      latencies.push(responseTime);
      if (status < 200 || status > 299) non2xx++;
    });
    instance.on('reqError', (err: Error) => {
      if (!measuring()) return;
      errors++;
      if (err.message === 'request timed out') timeouts++;
    });
  });
  const durationMs = Date.now() - measureFrom;
  const sorted = Float64Array.from(latencies).sort();
  const mean = latencies.length ? latencies.reduce((a, b) => a + b, 0) / latencies.length : 0;
  const requests = latencies.length;
  return {
    requests,
    durationMs,
    rps: requests / (run.durationSec || durationMs / 1000),
    p50Ms: percentile(sorted, 0.5),
    p90Ms: percentile(sorted, 0.9),
    p99Ms: percentile(sorted, 0.99),
    meanMs: mean,
    errors,
    timeouts,
    non2xx,
    graphqlErrors,
    ...(firstErrorBody !== undefined ? { firstErrorBody } : {}),
    ...(run.keepLatencies ? { latenciesMs: Array.from(sorted) } : {}),
  };
}

export async function runPass(pass: DriverPass): Promise<DriverResult> {
  const latencies: number[] = [];
  let next = 0;
  let cost = NO_COST;
  let errors = 0;
  let non2xx = 0;
  let graphqlErrors = 0;
  let firstErrorBody: string | undefined;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < pass.chains.length) {
      for (const r of pass.chains[next++]!) await one(r);
    }
  };
  const one = async (r: DriverRequest): Promise<void> => {
    {
      const t0 = performance.now();
      try {
        const res = await fetch(`${pass.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...r.headers }, body: r.body });
        const text = await res.text();
        latencies.push(performance.now() - t0);
        if (res.status < 200 || res.status > 299) non2xx++;
        const body = JSON.parse(text) as { errors?: unknown[]; extensions?: { cost?: CostExtension } };
        if (body.errors?.length) {
          graphqlErrors++;
          firstErrorBody ??= text.slice(0, 500);
        }
        cost = addCost(cost, body.extensions?.cost);
      } catch (err) {
        errors++;
        firstErrorBody ??= String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(pass.connections, pass.chains.length) }, worker));
  const durationMs = performance.now() - started;
  const sorted = Float64Array.from(latencies).sort();
  return {
    requests: latencies.length,
    durationMs,
    rps: durationMs > 0 ? (latencies.length * 1000) / durationMs : 0,
    p50Ms: percentile(sorted, 0.5),
    p90Ms: percentile(sorted, 0.9),
    p99Ms: percentile(sorted, 0.99),
    meanMs: latencies.length ? latencies.reduce((a, b) => a + b, 0) / latencies.length : 0,
    errors,
    timeouts: 0,
    non2xx,
    graphqlErrors,
    ...(firstErrorBody !== undefined ? { firstErrorBody } : {}),
    cost,
  };
}

if (process.send) {
  process.on('message', (msg: { id: number; run?: DriverRun; pass?: DriverPass }) => {
    (msg.pass ? runPass(msg.pass) : runLoad(msg.run!)).then(
      (result) => process.send!({ id: msg.id, result }),
      (err: unknown) => process.send!({ id: msg.id, error: err instanceof Error ? err.stack ?? err.message : String(err) }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
