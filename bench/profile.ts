/**
 * Where the gateway spends its CPU during a measured warm run, so that every later change shows
 * where time goes: a V8 CPU profile taken in this process (node:inspector), the GC pauses over the
 * same window (PerformanceObserver 'gc') and the process's CPU time (process.cpuUsage()).
 *
 * The whole benchmark process is profiled, not only the gateway: while `ours` runs under load the
 * other systems are idle and the harness only waits for the load generator, so nearly every
 * sample is the gateway's. Harness files show up as `project:bench` should that ever change.
 */
import { Session } from 'node:inspector/promises';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { constants as perfConstants, monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

/** performance 'gc' entries' detail.kind → a name. */
const GC_KINDS: Record<number, string> = {
  [perfConstants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [perfConstants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [perfConstants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Every 1 ms: enough samples in a 1 s quick run, and a cost near the noise (see the note in bench/main.ts). */
export const SAMPLING_INTERVAL_US = 1000;
const TOP = 8;

export interface Share {
  readonly name: string;
  /** Percent of the non-idle samples, one decimal. */
  readonly pct: number;
}

export interface Attribution {
  /** Samples taken, idle ones included. */
  readonly samples: number;
  readonly idleSamples: number;
  /** Self time by package (`graphql`, `@apollo/server`) or category (`project:src`, `node:internal`, `(native)`, `(garbage collector)`, `(program)`, `other`). */
  readonly byPackage: Share[];
  /** Self time by project file (`src/cache/redisLists.ts`). */
  readonly byFile: Share[];
}

export interface ProfileSummary extends Attribution {
  /** Main-thread GC pauses ÷ process CPU time (all threads) over the window. */
  readonly gcShareOfCpu: number;
  readonly gcShareOfWall: number;
  readonly gcMs: number;
  readonly cpuMs: number;
  readonly wallMs: number;
  readonly intervalUs: number;
  /** Main-thread GC pauses over the window: how many, the longest, and by kind (minor = scavenge, major = mark-compact, incremental = marking steps). */
  readonly gcPauses: { readonly count: number; readonly maxMs: number; readonly byKind: Readonly<Record<string, { count: number; ms: number; maxMs: number }>> };
  /** Event-loop delay over the window (ms): how late a timer ran; a tail here is a tail in every request's latency. */
  readonly loopDelay: { readonly p50Ms: number; readonly p99Ms: number; readonly maxMs: number };
}

/** The part of a V8 CPU profile (Profiler.Profile, a .cpuprofile file) that attribution reads. */
export interface CpuProfile {
  readonly nodes: readonly {
    /** `lineNumber`/`columnNumber`: where the function starts, 0-based (what a bundle's source map is asked). */
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber?: number; readonly columnNumber?: number };
    readonly hitCount?: number | undefined;
  }[];
}

/**
 * The source a bundled frame came from: for a file with a source map beside it (`<file>.map`, as
 * esbuild writes dist/cli.mjs and dist/bench.mjs), the `file://` URL of the original file that
 * holds the function's first character; any other URL as it is. One map read per file.
 */
export function sourceMapper(): (url: string, line: number, column: number) => string {
  const maps = new Map<string, { map: SourceMap; dir: string } | null>();
  const mapOf = (url: string): { map: SourceMap; dir: string } | null => {
    let m = maps.get(url);
    if (m === undefined) {
      m = null;
      try {
        const path = fileURLToPath(url);
        if (existsSync(`${path}.map`)) m = { map: new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')) as SourceMapPayload), dir: dirname(path) };
      } catch {
        m = null;
      }
      maps.set(url, m);
    }
    return m;
  };
  return (url, line, column) => {
    if (!url.startsWith('file:') || !/\.m?js$/.test(url)) return url;
    const m = mapOf(url);
    if (m === null) return url;
    const entry = m.map.findEntry(line, column) as { originalSource?: string };
    const source = entry.originalSource;
    if (source === undefined) return url;
    if (source.startsWith('file:')) return source;
    return pathToFileURL(isAbsolute(source) ? source : resolve(m.dir, source)).href;
  };
}

/**
 * Where one frame's self time goes: its package or category, and its project file if it has one.
 * `root` is the repository's absolute path.
 */
export function frameOwner(url: string, functionName: string, root: string): { category: string; file?: string } {
  // V8's pseudo-frames (GC, native code outside JS, an idle event loop) and, without a URL either,
  // Node's C++ bindings called from JS: socket writes (writev), the microtask queue, hashing. They
  // weigh 20% of a warm run, too much to leave in `other`.
  if (url === '') return { category: functionName.startsWith('(') ? functionName : '(native)' };
  if (url.startsWith('node:') || url.startsWith('internal/')) return { category: 'node:internal' };
  let path: string;
  try {
    // tsx serves project files as file:// URLs of the .ts source, sometimes with a query string.
    path = url.startsWith('file:') ? fileURLToPath(url.replace(/[?#].*$/, '')) : url;
  } catch {
    return { category: 'other' };
  }
  if (!path.startsWith('/')) return { category: 'other' };
  // The last node_modules segment names the package that owns the code, nested or hoisted alike.
  const nm = path.lastIndexOf(`${sep}node_modules${sep}`);
  if (nm >= 0) {
    const [first, second] = path.slice(nm + `${sep}node_modules${sep}`.length).split(sep);
    return { category: first?.startsWith('@') && second ? `${first}/${second}` : first || 'other' };
  }
  const rel = relative(root, path);
  if (rel === '' || rel.startsWith('..') || rel.startsWith(sep)) return { category: 'other' };
  const top = rel.includes(sep) ? rel.slice(0, rel.indexOf(sep)) : '.';
  return { category: `project:${top}`, file: rel.split(sep).join('/') };
}

/**
 * Self time of a profile by package/category and by project file, top 8 each, in percent of
 * non-idle samples. A bundled frame counts for the file its source map names.
 */
export function attribute(profile: CpuProfile, root: string): Attribution {
  const byPackage = new Map<string, number>();
  const byFile = new Map<string, number>();
  const original = sourceMapper();
  let samples = 0;
  let idle = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    samples += hits;
    const { url, functionName, lineNumber, columnNumber } = node.callFrame;
    const { category, file } = frameOwner(original(url, lineNumber ?? 0, columnNumber ?? 0), functionName, root);
    if (category === '(idle)') {
      idle += hits;
      continue;
    }
    byPackage.set(category, (byPackage.get(category) ?? 0) + hits);
    if (file !== undefined) byFile.set(file, (byFile.get(file) ?? 0) + hits);
  }
  const busy = samples - idle;
  const top = (m: Map<string, number>): Share[] =>
    [...m]
      .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
      .slice(0, TOP)
      .map(([name, hits]) => ({ name, pct: Math.round((hits / busy) * 1000) / 10 }));
  return { samples, idleSamples: idle, byPackage: top(byPackage), byFile: top(byFile) };
}

/** Starts profiling this process; `stop()` ends the window and summarizes it. */
export async function startProfile(root: string, intervalUs = SAMPLING_INTERVAL_US, saveAs?: string): Promise<{ stop(): Promise<ProfileSummary> }> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  await session.post('Profiler.start');
  // With a place to save it, also where the garbage comes from (sampled allocations, kept or not).
  // SHARDQL_BENCH_HEAP=live: only what is still alive at the end (what a leak retains); =promoted:
  // what outlived a scavenge (what makes scavenges slow and old space grow); else every allocation.
  const heap = process.env.SHARDQL_BENCH_HEAP;
  if (saveAs !== undefined) {
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 16384,
      includeObjectsCollectedByMajorGC: heap !== 'live',
      includeObjectsCollectedByMinorGC: heap !== 'live' && heap !== 'promoted',
    });
  }
  let gcMs = 0;
  let maxMs = 0;
  let pauses = 0;
  const byKind: Record<string, { count: number; ms: number; maxMs: number }> = {};
  const count = (entries: readonly PerformanceEntry[]): void => {
    for (const e of entries) {
      gcMs += e.duration;
      pauses++;
      maxMs = Math.max(maxMs, e.duration);
      const kind = GC_KINDS[((e as { detail?: { kind?: number } }).detail)?.kind ?? 0] ?? 'other';
      const k = (byKind[kind] ??= { count: 0, ms: 0, maxMs: 0 });
      k.count++;
      k.ms += e.duration;
      k.maxMs = Math.max(k.maxMs, e.duration);
    }
  };
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const gc = new PerformanceObserver((list) => count(list.getEntries()));
  gc.observe({ entryTypes: ['gc'] });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  return {
    async stop() {
      const wallMs = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      // GC entries reach the observer on a later turn of the event loop; those of the window's last
      // turns still belong to it.
      await new Promise((resolve) => setImmediate(resolve));
      count(gc.takeRecords());
      gc.disconnect();
      const { profile } = await session.post('Profiler.stop');
      // The raw profile, for a look function by function (Chrome DevTools, speedscope).
      if (saveAs !== undefined) {
        mkdirSync(dirname(saveAs), { recursive: true });
        writeFileSync(saveAs, JSON.stringify(profile));
        const { profile: heap } = await session.post('HeapProfiler.stopSampling');
        writeFileSync(saveAs.replace(/\.cpuprofile$/, '.heapprofile'), JSON.stringify(heap));
      }
      await session.post('Profiler.disable');
      session.disconnect();
      loop.disable();
      const cpuMs = (cpu.user + cpu.system) / 1000;
      const r3 = (v: number): number => Math.round(v * 1000) / 1000;
      const r1 = (v: number): number => Math.round(v * 10) / 10;
      const ns = (v: number): number => r1(v / 1e6);
      return {
        gcShareOfCpu: cpuMs > 0 ? r3(gcMs / cpuMs) : 0,
        gcShareOfWall: wallMs > 0 ? r3(gcMs / wallMs) : 0,
        gcMs: Math.round(gcMs),
        cpuMs: Math.round(cpuMs),
        wallMs: Math.round(wallMs),
        intervalUs,
        gcPauses: {
          count: pauses,
          maxMs: r1(maxMs),
          byKind: Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, { count: v.count, ms: Math.round(v.ms), maxMs: r1(v.maxMs) }])),
        },
        loopDelay: { p50Ms: ns(loop.percentile(50)), p99Ms: ns(loop.percentile(99)), maxMs: ns(loop.max) },
        ...attribute(profile, root),
      };
    },
  };
}
