/**
 * The cost targets of issue 32, read from one run's warm measurements (same run, side by side):
 *   - every read: ours' req/s ≥ 0.8 × floor-jit's (the fastest this executor answers, no I/O);
 *   - every read: ours' CPU per request over all its processes ≤ 0.33 × flat's over all of its own;
 *   - every mutation mix: ours' CPU per request ≤ 1 × flat's;
 *   - every read: ours' p99 ÷ p50 ≤ floor-jit's + 1 (a tail the gateway adds shows above the floor's).
 * A target whose systems were not measured (--systems) reads n/a. Where a CPU target is missed, the
 * line carries ours' milliseconds per request by process, so the report says where they remain;
 * a missed mutation target also says, tier by tier, how many milliseconds remain above flat's and
 * why they cannot go (`WRITE_REASONS`).
 */
import { tierOf, type CpuPerRequest } from './cpu.ts';
import { byProcess, type Excess, type Measurement, type ScenarioResult, type Target } from './report.ts';

export const READ_FLOOR_RPS = 0.8;
export const READ_CPU_VS_FLAT = 0.33;
export const WRITE_CPU_VS_FLAT = 1;
export const TAIL_MARGIN = 1;

/**
 * Why a like/unlike (a relation write) costs more than flat's, per tier (bench/cpu.ts tierOf), as
 * the write path stands (docs/writes.md, src/services/writeExecutor.ts `relate`): what each tier
 * does per write that flat's one-database transaction does not, and what it buys.
 */
export const WRITE_REASONS: Readonly<Record<string, string>> = {
  gateway:
    "two round trips to MariaDB (the edge on the liker's shard, then its mirror on the pin's shard: two transactions on two hosts, one across both databases on one host), where flat runs one transaction on one connection; the intent's delete later, batched with other writes'; the cache kept true for every gateway (one Redis script deletes the changed lists and appends them to the invalidation log) where flat clears its own memory only. They are what sharding and shared caches cost: the write stays repairable and every gateway's L1 stays true",
  mysql:
    "where the liker's and the pin's shards live on two hosts, two local transactions, so two durable commits, where flat commits once on one host (on one host both sides commit in one transaction across their databases: on the benchmark's 2 hosts about half the pairs, on N hosts 1 in N). Each side writes its edge row and its count, the liker's side also the intent (deleted after the answer, batched, or by the pair's next write) and its activity event, the pin's side the owner's notification event; flat writes one row and two counters. A like is 7 statements on each side (on both, the list owner's guard, the edge, its row count kept, the count and the event; on the liker's side the edge's sequence read back and the intent, on the pin's side the mirror's sequence and the count read back for the answer), an unlike 4 and 4, each side with its BEGIN and COMMIT; what MariaDB counted per request is the table's MariaDB column. The intent makes a two-host write repairable after a crash; the events are the product's activity and notifications, which flat does not keep",
  redis: "the invalidation log flat does not have: every request's read barrier and, per write, the one script deleting the changed lists and logging them",
  memcached: 'objects read where the L1 missed (flat keeps them in its own process)',
  etcd: 'no per-request work: the topology watch and lease keep-alives, spread over the requests of the run',
};

/** ms per request by tier (every MariaDB host summed), three decimals. */
function byTier(cpu: CpuPerRequest): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, ms] of Object.entries(cpu.byProcess)) out.set(tierOf(name), (out.get(tierOf(name)) ?? 0) + ms);
  for (const [k, v] of out) out.set(k, Math.round(v * 1000) / 1000);
  return out;
}

/** The tiers where ours' CPU per request exceeds flat's, largest excess first, each with its reason. */
export function aboveFlat(ours: CpuPerRequest, flat: CpuPerRequest, reasons: Readonly<Record<string, string>> = WRITE_REASONS): Excess[] {
  const o = byTier(ours);
  const f = byTier(flat);
  const out: Excess[] = [];
  for (const [tier, ms] of o) {
    const base = f.get(tier) ?? 0;
    const above = Math.round((ms - base) * 1000) / 1000;
    if (above > 0) out.push({ tier, ours: ms, flat: base, above, why: reasons[tier] ?? 'no reason recorded for this tier' });
  }
  return out.sort((a, b) => b.above - a.above);
}

function line(scenario: string, target: string, want: '>=' | '<=', limit: number, value: number | null, ours?: Measurement, flat?: Measurement): Target {
  const met = value === null ? null : want === '>=' ? value >= limit : value <= limit;
  const excess = met === false && ours?.cpuMsPerRequest && flat?.cpuMsPerRequest ? aboveFlat(ours.cpuMsPerRequest, flat.cpuMsPerRequest) : undefined;
  return {
    scenario,
    target,
    want,
    limit,
    value,
    met,
    ...(ours?.cpuMsPerRequest ? { remaining: byProcess(ours.cpuMsPerRequest.byProcess) } : {}),
    ...(excess ? { aboveFlat: excess } : {}),
  };
}

export function targetsOf(scenarios: readonly ScenarioResult[]): Target[] {
  const out: Target[] = [];
  for (const s of scenarios) {
    const warm = s.phases.warm.systems;
    const ours = warm.ours;
    if (!ours) continue;
    const floorJit = warm['floor-jit'];
    const flat = warm.flat;
    const cpuRatio = ours.cpuMsPerRequest && flat?.cpuMsPerRequest && flat.cpuMsPerRequest.total > 0 ? ours.cpuMsPerRequest.total / flat.cpuMsPerRequest.total : null;
    if (s.mutation) {
      out.push(line(s.key, 'CPU ms/req ours ÷ flat', '<=', WRITE_CPU_VS_FLAT, cpuRatio, ours, flat));
      continue;
    }
    out.push(line(s.key, 'req/s ours ÷ floor-jit', '>=', READ_FLOOR_RPS, floorJit && floorJit.rps > 0 ? ours.rps / floorJit.rps : null));
    out.push(line(s.key, 'CPU ms/req ours ÷ flat', '<=', READ_CPU_VS_FLAT, cpuRatio, ours));
    out.push(line(s.key, 'p99/p50 ours − floor-jit', '<=', TAIL_MARGIN, ours.tail !== null && floorJit?.tail != null ? ours.tail - floorJit.tail : null));
  }
  return out;
}
