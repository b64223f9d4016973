/**
 * The cost targets of issue 32, read from one run's warm measurements (same run, side by side):
 *   - every read: ours' req/s ≥ 0.8 × floor-jit's (the fastest this executor answers, no I/O);
 *   - every read: ours' CPU per request over all its processes ≤ 0.33 × flat's over all of its own;
 *   - every mutation mix: ours' CPU per request ≤ 1 × flat's;
 *   - every read: ours' p99 ÷ p50 ≤ floor-jit's + 1 (a tail the gateway adds shows above the floor's).
 * A target whose systems were not measured (--systems) reads n/a. Where a CPU target is missed, the
 * line carries ours' milliseconds per request by process, so the report says where they remain.
 */
import { byProcess, type Measurement, type ScenarioResult, type Target } from './report.ts';

export const READ_FLOOR_RPS = 0.8;
export const READ_CPU_VS_FLAT = 0.33;
export const WRITE_CPU_VS_FLAT = 1;
export const TAIL_MARGIN = 1;

function line(scenario: string, target: string, want: '>=' | '<=', limit: number, value: number | null, ours?: Measurement): Target {
  const met = value === null ? null : want === '>=' ? value >= limit : value <= limit;
  return { scenario, target, want, limit, value, met, ...(ours?.cpuMsPerRequest ? { remaining: byProcess(ours.cpuMsPerRequest.byProcess) } : {}) };
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
      out.push(line(s.key, 'CPU ms/req ours ÷ flat', '<=', WRITE_CPU_VS_FLAT, cpuRatio, ours));
      continue;
    }
    out.push(line(s.key, 'req/s ours ÷ floor-jit', '>=', READ_FLOOR_RPS, floorJit && floorJit.rps > 0 ? ours.rps / floorJit.rps : null));
    out.push(line(s.key, 'CPU ms/req ours ÷ flat', '<=', READ_CPU_VS_FLAT, cpuRatio, ours));
    out.push(line(s.key, 'p99/p50 ours − floor-jit', '<=', TAIL_MARGIN, ours.tail !== null && floorJit?.tail != null ? ours.tail - floorJit.tail : null));
  }
  return out;
}
