/** The benchmark report: its JSON shape and the terminal table. */
import type { CpuPerRequest } from './cpu.ts';
import type { FanoutResult } from './fanout.ts';
import type { MysqlPerRequest } from './mysqlCounters.ts';
import type { ProfileSummary, Share } from './profile.ts';
import type { SystemKey } from './systems.ts';

export type Phase = 'cold' | 'warm';

export interface Measurement {
  readonly requests: number;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly meanMs: number;
  /** Mean SQL round trips per request over a sample (from extensions.cost); 0 for the floor. */
  readonly sqlRoundTrips: number | null;
  /** Mean cache round trips per request, or null ("n/a") while the gateway reports none. */
  readonly cacheRoundTrips: number | null;
  readonly hitRates: { readonly objects: number | null; readonly lists: number | null };
  /** p99 ÷ p50: how far the tail stands from the median (null without a median). */
  readonly tail: number | null;
  /** Warm runs: CPU ms per request, per process (bench/cpu.ts). */
  readonly cpuMsPerRequest?: CpuPerRequest;
  /** Warm runs of a system that uses MariaDB: statements and durable commits per request, MariaDB's own counters (bench/mysqlCounters.ts). */
  readonly mysqlPerRequest?: MysqlPerRequest;
  readonly errors: number;
  readonly firstError?: string;
}

/** ours ÷ baseline: rps > 1 means ours serves more; p50 < 1 means ours answers faster. */
export interface Ratio {
  readonly rps: number;
  readonly p50: number;
  /** ours ÷ it in CPU ms per request over all processes (warm); < 1 means ours costs less. */
  readonly cpu: number | null;
}

export interface PhaseResult {
  readonly systems: Partial<Record<SystemKey, Measurement>>;
  readonly ratios: Partial<Record<Exclude<SystemKey, 'ours'>, Ratio>>;
}

export interface ScenarioResult {
  readonly key: string;
  readonly title: string;
  readonly mutation: boolean;
  readonly phases: Record<Phase, PhaseResult>;
  /** Per warm system: the cores each tier needs per 10,000 requests/s (bench/cpu.ts). */
  readonly capacity: Partial<Record<SystemKey, Record<string, number>>>;
  /** Per baseline: whether its answers equal ours on the sampled requests (reads only). */
  readonly consistency: Partial<Record<Exclude<SystemKey, 'ours'>, string>>;
  /** Where ours spent its CPU during its measured warm run (absent with --no-profile). */
  readonly profile?: ProfileSummary;
}

export interface BenchReport {
  readonly tool: 'shardql-bench';
  readonly date: string;
  readonly mode: 'quick' | 'full';
  readonly machine: Record<string, unknown>;
  readonly config: Record<string, unknown>;
  readonly dataset: Record<string, unknown>;
  readonly systems: Partial<Record<SystemKey, string>>;
  readonly scenarios: ScenarioResult[];
  /** The cost targets (issue 32), one line per scenario and target (bench/targets.ts). */
  readonly targets: readonly Target[];
  /** The fan-out scenario (ours only: a new pin into its followers' stored feeds through a worker). */
  readonly fanout?: FanoutResult;
  readonly notes: string[];
  readonly totalSeconds: number;
}

/** One cost target of one scenario: its measured value against its limit. */
export interface Target {
  readonly scenario: string;
  /** What is compared, e.g. "req/s ours ÷ floor-jit". */
  readonly target: string;
  /** `>=` or `<=` `limit`. */
  readonly want: '>=' | '<=';
  readonly limit: number;
  /** null when a system it needs was not measured. */
  readonly value: number | null;
  readonly met: boolean | null;
  /** Where a CPU target is missed: ours' milliseconds per request by process, largest first. */
  readonly remaining?: string;
  /** Where a mutation's CPU target is missed: each tier whose milliseconds per request exceed flat's, by how much and why (bench/targets.ts). */
  readonly aboveFlat?: readonly Excess[];
}

/** One tier's CPU milliseconds per request above flat's, on a missed write target, and why they remain. */
export interface Excess {
  /** `gateway` (ours' server against flat's), `mysql` (every MariaDB host summed), `redis`, `memcached`, `etcd` (bench/cpu.ts tierOf). */
  readonly tier: string;
  readonly ours: number;
  readonly flat: number;
  /** ours − flat, ms per request. */
  readonly above: number;
  readonly why: string;
}

export function ratio(ours: Measurement, base: Measurement): Ratio {
  const a = ours.cpuMsPerRequest?.total;
  const b = base.cpuMsPerRequest?.total;
  return {
    rps: base.rps > 0 ? ours.rps / base.rps : Infinity,
    p50: base.p50Ms > 0 ? ours.p50Ms / base.p50Ms : Infinity,
    cpu: a !== undefined && b !== undefined && b > 0 ? a / b : null,
  };
}

const na = (v: number | null | undefined, digits = 1): string => (v === null || v === undefined ? 'n/a' : v.toFixed(digits));
const pct = (v: number | null): string => (v === null ? 'n/a' : `${(v * 100).toFixed(0)}%`);
const times = (v: number | undefined): string => (v === undefined ? '' : !Number.isFinite(v) ? '∞' : v >= 100 ? `${v.toFixed(0)}×` : v >= 10 ? `${v.toFixed(1)}×` : `${v.toFixed(2)}×`);

function row(cells: string[], widths: number[], right: boolean[]): string {
  return cells.map((c, i) => (right[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
}

const shares = (list: readonly Share[]): string => list.map((s) => `${s.name} ${s.pct.toFixed(s.pct >= 10 ? 0 : 1)}%`).join(' · ') || 'none';

function profileLines(p: ProfileSummary): string[] {
  const idle = p.samples > 0 ? p.idleSamples / p.samples : 0;
  return [
    `  profile  ours warm: GC ${pct(p.gcShareOfCpu)} of CPU (${pct(p.gcShareOfWall)} of wall) · CPU ${(p.cpuMs / 1000).toFixed(1)} s in ${(p.wallMs / 1000).toFixed(1)} s · ${p.samples} samples, ${pct(idle)} idle`,
    ...(p.gcPauses
      ? [
          `           GC pauses ${p.gcPauses.count}, longest ${p.gcPauses.maxMs} ms (${Object.entries(p.gcPauses.byKind)
            .map(([k, v]) => `${k} ${v.count}× ${v.ms} ms, max ${v.maxMs}`)
            .join('; ')}) · event-loop delay p50 ${p.loopDelay.p50Ms} ms, p99 ${p.loopDelay.p99Ms} ms, max ${p.loopDelay.maxMs} ms`,
        ]
      : []),
    `           ${shares(p.byPackage)}`,
    `           ${shares(p.byFile)}`,
  ];
}

/** The table printed at the end of a run. */
export function formatFanout(f: FanoutResult): string {
  return [
    `fan-out (ours, one worker ${f.workerConcurrency}): createPin → in all ${f.followers} followers' stored feeds: p50 ${f.latencyMs.p50.toFixed(0)} ms, p99 ${f.latencyMs.p99.toFixed(0)} ms (${f.latencyMs.samples} pins one after another)`,
    `  burst of ${f.burst.pins} pins: ${f.burst.insertions} feed insertions in ${f.burst.seconds.toFixed(2)} s = ${f.burst.insertionsPerSecond.toFixed(0)} insertions/s (workers counted ${f.burst.countedInsertions})`,
  ].join('\n');
}

export function formatTable(report: BenchReport): string {
  const out: string[] = [];
  const header = ['phase', 'system', 'req/s', 'p50 ms', 'p99 ms', 'p99/p50', 'CPU ms/req', 'SQL rt/req', 'cache rt/req', 'hit obj/list', 'ours÷it req/s', 'ours÷it p50', 'ours÷it CPU', 'errors'];
  const right = [false, false, true, true, true, true, true, true, true, true, true, true, true, true];
  for (const s of report.scenarios) {
    const rows: string[][] = [];
    for (const phase of ['cold', 'warm'] as const) {
      const p = s.phases[phase];
      for (const [key, m] of Object.entries(p.systems) as [SystemKey, Measurement][]) {
        const r = key === 'ours' ? undefined : p.ratios[key as Exclude<SystemKey, 'ours'>];
        rows.push([
          phase,
          key,
          m.rps >= 100 ? m.rps.toFixed(0) : m.rps.toFixed(1),
          m.p50Ms.toFixed(2),
          m.p99Ms.toFixed(2),
          na(m.tail),
          na(m.cpuMsPerRequest?.total, 3),
          na(m.sqlRoundTrips),
          na(m.cacheRoundTrips),
          `${pct(m.hitRates.objects)}/${pct(m.hitRates.lists)}`,
          times(r?.rps),
          times(r?.p50),
          times(r?.cpu ?? undefined),
          String(m.errors),
        ]);
      }
    }
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    out.push('', `${s.title}  [${s.key}]`);
    out.push(`  ${row(header, widths, right)}`);
    for (const r of rows) out.push(`  ${row(r, widths, right)}`);
    const diffs = Object.entries(s.consistency).filter(([, v]) => v !== 'same');
    if (diffs.length > 0) out.push(`  answers differ from ours: ${diffs.map(([k, v]) => `${k}: ${v}`).join('; ')}`);
    for (const [key, m] of Object.entries(s.phases.warm.systems) as [SystemKey, Measurement][]) {
      if (!m.cpuMsPerRequest) continue;
      out.push(`  CPU ms/req ${key.padEnd(9)} ${byProcess(m.cpuMsPerRequest.byProcess)}${m.cpuMsPerRequest.loadGenerator === null ? '' : `  (load generator ${m.cpuMsPerRequest.loadGenerator.toFixed(3)}, not counted)`}`);
    }
    for (const [key, m] of Object.entries(s.phases.warm.systems) as [SystemKey, Measurement][]) {
      if (m.mysqlPerRequest) out.push(`  MariaDB per request ${key.padEnd(9)} ${mysqlLine(m.mysqlPerRequest)}`);
    }
    for (const [key, tiers] of Object.entries(s.capacity)) out.push(`  cores per 10k req/s ${key.padEnd(9)} ${Object.entries(tiers).map(([t, c]) => `${t} ${c.toFixed(2)}`).join(' · ')}`);
    if (s.profile) out.push(...profileLines(s.profile));
  }
  if (report.targets.length > 0) {
    out.push('', 'targets (ours, warm; issue 32)');
    for (const t of report.targets) {
      const mark = t.met === null ? 'n/a ' : t.met ? 'met ' : 'MISS';
      out.push(`  ${mark} ${t.scenario.padEnd(21)} ${t.target} = ${na(t.value, 2)} (want ${t.want} ${t.limit})${t.remaining && !t.met ? `; ours' ms/req: ${t.remaining}` : ''}`);
      for (const e of t.aboveFlat ?? []) out.push(`       ${e.tier} +${e.above.toFixed(3)} ms/req above flat (${e.ours.toFixed(3)} vs ${e.flat.toFixed(3)}): ${e.why}`);
    }
  }
  return out.join('\n');
}

/** ms per request by process, largest first. */
/** "12.3 statements · 1.50 commits": what a system asked of MariaDB per request. */
export function mysqlLine(m: MysqlPerRequest): string {
  return `${m.statements.toFixed(1)} statements · ${m.commits.toFixed(2)} commits`;
}

export function byProcess(ms: Readonly<Record<string, number>>): string {
  return Object.entries(ms)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v.toFixed(3)}`)
    .join(' · ');
}

/** First path where two JSON values differ, or undefined when equal. */
export function firstDifference(a: unknown, b: unknown, path = '$'): string | undefined {
  if (a === b) return undefined;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return `${path}: ${JSON.stringify(a)?.slice(0, 60)} vs ${JSON.stringify(b)?.slice(0, 60)}`;
  if (Array.isArray(a) !== Array.isArray(b)) return `${path}: array vs object`;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return `${path}: ${a.length} items vs ${bb.length}`;
    for (let i = 0; i < a.length; i++) {
      const d = firstDifference(a[i], bb[i], `${path}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) {
    const d = firstDifference(ao[k], bo[k], `${path}.${k}`);
    if (d) return d;
  }
  return undefined;
}
