/**
 * CPU per request, per process, from the processes' own accounting: `/proc/<pid>/stat` (user +
 * system time of every thread, in clock ticks) for the stack's servers and the load generator, and
 * `process.cpuUsage()` (microseconds) for this process, which serves the system under test (every
 * system runs in it, one measured at a time while the others idle).
 *
 * A window is opened after a run's warm-up and closed when the run ends; its CPU divided by the
 * requests the run measured is that process's milliseconds per request. The load generator is
 * measured too but kept apart from the total: it is the client, not the system.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** A process measured by pid: its name in the report ("mysql001-primary", "redis", …). */
export interface MeteredProcess {
  readonly name: string;
  readonly pid: number;
}

export interface CpuPerRequest {
  /** Sum over the system's processes (the load generator excluded), ms per request. */
  readonly total: number;
  /** ms per request per process: `server` is the process serving the system under test. */
  readonly byProcess: Readonly<Record<string, number>>;
  /** The load generator's ms per request (not in `total`). */
  readonly loadGenerator: number | null;
}

let clockTicks: number | undefined;

/** Clock ticks per second (`getconf CLK_TCK`; 100 on Linux almost everywhere). */
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/**
 * CPU milliseconds a process has used so far (all its threads), or null when it is gone.
 * `/proc/<pid>/stat`: "pid (comm) state …" — comm may hold spaces and parentheses, so the fields
 * are counted from the last ')': utime and stime are fields 14 and 15 of the line.
 */
export function processCpuMs(pid: number): number | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  return cpuMsOfStat(text, ticksPerSecond());
}

/** utime + stime of a `/proc/<pid>/stat` line, in ms. */
export function cpuMsOfStat(stat: string, ticks: number): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After "pid (comm) ", fields[0] is the state (field 3): utime is field 14, stime field 15.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`not a /proc stat line: ${stat.slice(0, 80)}`);
  return ((utime + stime) * 1000) / ticks;
}

/** This process's CPU so far, ms (all threads: the GC's and the profiler's too). */
function selfCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

interface Snapshot {
  readonly self: number;
  readonly others: ReadonlyMap<string, number | null>;
  readonly loadGenerator: number | null;
}

export class CpuMeter {
  readonly #processes: readonly MeteredProcess[];
  readonly #loadGenerator: number | undefined;

  /** `processes`: the stack's servers; `loadGenerator`: the client's pid, measured apart. */
  constructor(processes: readonly MeteredProcess[], loadGenerator?: number) {
    this.#processes = processes;
    this.#loadGenerator = loadGenerator;
  }

  /** Opens a window: call `close(requests)` on what this returns when the measured run ends. */
  open(): { close(requests: number): CpuPerRequest } {
    const before = this.#snapshot();
    return { close: (requests) => perRequest(before, this.#snapshot(), requests) };
  }

  #snapshot(): Snapshot {
    return {
      self: selfCpuMs(),
      others: new Map(this.#processes.map((p) => [p.name, processCpuMs(p.pid)])),
      loadGenerator: this.#loadGenerator === undefined ? null : processCpuMs(this.#loadGenerator),
    };
  }
}

const round = (ms: number): number => Math.round(ms * 10_000) / 10_000;

function perRequest(before: Snapshot, after: Snapshot, requests: number): CpuPerRequest {
  const n = Math.max(1, requests);
  const byProcess: Record<string, number> = { server: round((after.self - before.self) / n) };
  for (const [name, a] of after.others) {
    const b = before.others.get(name);
    if (a === null || b === null || b === undefined) continue; // gone (or restarted) during the window
    byProcess[name] = round((a - b) / n);
  }
  const total = round(Object.values(byProcess).reduce((s, v) => s + v, 0));
  const lg = after.loadGenerator !== null && before.loadGenerator !== null ? round((after.loadGenerator - before.loadGenerator) / n) : null;
  return { total, byProcess, loadGenerator: lg };
}

/**
 * The tier a process belongs to, for sizing: MariaDB hosts (primary or replica) are `mysql`, the
 * server of the system under test `gateway`, the rest by name (redis, memcached, etcd).
 */
export function tierOf(processName: string): string {
  if (processName === 'server') return 'gateway';
  if (/^mysql\d+/.test(processName)) return 'mysql';
  return processName.replace(/-\d+$/, '');
}

/**
 * Cores each tier needs per 10,000 requests/s: ms of CPU per request × 10,000 req/s ÷ 1,000 ms
 * per core-second.
 */
export function coresPer10k(cpu: CpuPerRequest): Record<string, number> {
  const tiers: Record<string, number> = {};
  for (const [name, ms] of Object.entries(cpu.byProcess)) tiers[tierOf(name)] = (tiers[tierOf(name)] ?? 0) + ms * 10;
  for (const k of Object.keys(tiers)) tiers[k] = Math.round(tiers[k]! * 100) / 100;
  return tiers;
}

/**
 * One system's CPU windows taken in turns with the others' (bench/main.ts's rounds) as one: each
 * process's milliseconds summed over the windows ÷ all their requests. A process missing from a
 * window (gone or restarted during it) counts nothing for that window.
 */
export function mergeCpu(windows: readonly { readonly cpu: CpuPerRequest; readonly requests: number }[]): CpuPerRequest {
  if (windows.length === 0) throw new Error('mergeCpu: no window');
  if (windows.length === 1) return windows[0]!.cpu;
  const requests = Math.max(1, windows.reduce((n, w) => n + w.requests, 0));
  const ms: Record<string, number> = {};
  let lg: number | null = 0;
  for (const { cpu, requests: n } of windows) {
    for (const [name, perRequest] of Object.entries(cpu.byProcess)) ms[name] = (ms[name] ?? 0) + perRequest * n;
    lg = lg === null || cpu.loadGenerator === null ? null : lg + cpu.loadGenerator * n;
  }
  const byProcess: Record<string, number> = {};
  for (const [name, total] of Object.entries(ms)) byProcess[name] = round(total / requests);
  return { total: round(Object.values(byProcess).reduce((s, v) => s + v, 0)), byProcess, loadGenerator: lg === null ? null : round(lg / requests) };
}
