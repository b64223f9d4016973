/**
 * `npm run bench` (entry: bench/run.ts): the gateway against three baselines, scenario by
 * scenario, on the benchmark's own local stack.
 *
 *   tsx bench/run.ts [--quick] [--json FILE] [--users N | --scale K] [--shards N] [--seed N]
 *                    [--connections N] [--warm S] [--warmup S] [--scenarios a,b] [--systems ours,flat]
 *                    [--stack-dir DIR] [--keep-stack] [--force-load] [--cache-timeout-ms MS] [--no-profile] [--rounds N]
 *
 * 1. brings up `.stack-bench` (or uses it running), publishes the slot's topology (64 shards over 2
 *    hosts by default; 16 in --quick), provisions and loads the synthetic data set if missing;
 * 2. starts the gateway in-process (production mode; `x-shardql-cost: 1` on sampled requests gives
 *    the SQL round trips), the N+1 gateway, the in-memory floor and the flat one-database baseline;
 * 3. per scenario, per phase, per system in turn — interleaved, so machine noise hits all alike:
 *    cold = caches flushed and the system restarted, then a first pass (every distinct request of
 *    the scenario once, 8 in flight, each answer's extensions.cost collected); warm = HTTP load
 *    with autocannon (fixed connections and duration, after a discarded warm-up on the same
 *    connections) from a child process, then a sample of requests for their cost and to compare
 *    every baseline's answers with ours;
 *    after ours' measured warm run, a run of its own (up to 5 s, same load) is CPU-profiled in-process
 *    (bench/profile.ts) unless --no-profile, so no measured figure carries the sampler's cost;
 *    every warm run's CPU is read from each process's own accounting (bench/cpu.ts): this process
 *    (serving the system under test), each MariaDB host, Redis, memcached, etcd, and the load
 *    generator apart — CPU ms per request, per process, and the cores each tier needs;
 * 4. prints a table and writes bench/results/latest.json plus a dated copy (--json FILE as well),
 *    and, on a full run, docs/benchmarks-latest.md (bench/markdown.ts) and docs/sizing.md
 *    (bench/sizing.ts) from that report.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync, copyFileSync } from 'node:fs';
import { cpus, freemem, release, totalmem, type as osType } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Etcd3 } from 'etcd3';
import type { GatewayConfig } from '../src/config.ts';
import { parseTopology } from '../src/core/topology.ts';
import { benchAdmin, ensureDataset, slotTopology, stackHosts } from '../src/bulk/dataset.ts';
import { ShardAdmin } from '../src/storage/shardAdmin.ts';
import { publishTopology } from '../src/topology/etcdTopology.ts';
import { makePrimariesWritable } from '../src/topology/operations/primaries.ts';
import { baselineSchema } from './baselines/source.ts';
import { addCounters, CacheProbe, ZERO_COUNTERS, type CacheCounters } from './caches.ts';
import { CpuMeter, coresPer10k, mergeCpu, type CpuPerRequest, type MeteredProcess } from './cpu.ts';
import { addMysql, MysqlProbe, mysqlPerRequest, NO_MYSQL, type MysqlTally } from './mysqlCounters.ts';
import { stackStatus } from '../src/stack/localStack.ts';
import { targetsOf } from './targets.ts';
import { SIZING_PAGE, sizing, sizingPage } from './sizing.ts';
import { addCost, NO_COST, type CostTotals, type DriverPass, type DriverRequest, type DriverResult, type DriverRun } from './driver.ts';
import { mergeRuns } from './runs.ts';
import { datasetChoice } from './load.ts';
import { SAMPLING_INTERVAL_US, startProfile, type ProfileSummary } from './profile.ts';
import { benchmarkMarkdown, LATEST_PAGE } from './markdown.ts';
import { firstDifference, formatFanout, formatTable, mysqlLine, ratio, type BenchReport, type Measurement, type Phase, type PhaseResult, type ScenarioResult } from './report.ts';
import { BOARD_WALK, buildScenarios, NOTIFICATIONS_WALK, walkSizes, type Scenario, type ScenarioRequest } from './scenarios.ts';
import { eventSettings, parseRetentionSettings } from '../src/core/events.ts';
import { PINTEREST_EVENTS } from '../src/product/pinterest/events.ts';
import { benchStack, DEFAULT_BENCH_STACK, ROOT } from './stack.ts';
import { runFanout, type FanoutResult } from './fanout.ts';
import { flatSystem, floorSystem, gatewaySystem, recordFloor, tokenCache, type System, type SystemKey } from './systems.ts';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    json: { type: 'string' },
    users: { type: 'string' },
    scale: { type: 'string' },
    shards: { type: 'string' },
    seed: { type: 'string' },
    connections: { type: 'string' },
    warm: { type: 'string' },
    warmup: { type: 'string' },
    scenarios: { type: 'string' },
    systems: { type: 'string' },
    'stack-dir': { type: 'string' },
    'keep-stack': { type: 'boolean', default: false },
    'force-load': { type: 'boolean', default: false },
    'cache-timeout-ms': { type: 'string' },
    'no-profile': { type: 'boolean', default: false },
    rounds: { type: 'string' },
  },
});

const quick = args.quick ?? false;
const connections = Number(args.connections ?? 8);
// --quick checks that every scenario runs end to end inside `npm test`; its numbers mean nothing. Not
// shorter than 1 s: /proc counts CPU in 10 ms ticks, and the load generator of a slow scenario
// (feed-1000) measured over 0.5 s showed none.
const warmSec = Number(args.warm ?? (quick ? 1 : 10));
// The cold pass leaves each system freshly restarted (JIT, pools, document cache barely started):
// measured from there, warm read 10–15% below steady state, and unevenly across systems.
const warmupSec = Number(args.warmup ?? (quick ? 0.25 : 3));
if (!(warmupSec >= 0)) throw new Error(`--warmup must be a number of seconds, got ${args.warmup}`);
const sampleCount = quick ? 4 : 8;
/** Chains of requests a --quick cold pass sends (a full run sends every distinct request once). */
const QUICK_COLD_CHAINS = 4;
/**
 * Turns each system takes at a warm run (warmSec ÷ rounds each, in turn with the others): the
 * machine's drift over a scenario (a floor-jit board page read 2,250–3,100 req/s in runs minutes
 * apart) then falls on every system alike. --quick: 1.
 */
const warmRounds = Number(args.rounds ?? (quick ? 1 : 2));
if (!(Number.isInteger(warmRounds) && warmRounds >= 1)) throw new Error(`--rounds must be a whole number ≥ 1, got ${args.rounds}`);
/** Warm-up of a system's later rounds: its idle turn let only near pages and connection windows go. */
const LATER_ROUND_WARMUP_SEC = 1;
const profiling = !(args['no-profile'] ?? false);
/** Seconds of ours' profiled run (after its measured one; bench/profile.ts needs ~1,000 samples). */
const profileSec = Math.min(warmSec, 5);
/** SHARDQL_BENCH_PROFILE_DIR: also keep each scenario's raw CPU profile of ours (<dir>/<scenario>.cpuprofile). */
const rawProfileDir = process.env.SHARDQL_BENCH_PROFILE_DIR;
const cacheTimeoutMs = args['cache-timeout-ms'] === undefined ? undefined : Number(args['cache-timeout-ms']);
const stackDir = resolve(args['stack-dir'] ?? DEFAULT_BENCH_STACK);
const dedicatedStack = stackDir === DEFAULT_BENCH_STACK;
const started = Date.now();
const log = (line: string): void => void process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);

/** SHARDQL_EVENT_RETENTION of every system in the benchmark (see the gateway config below). */
const BENCH_EVENT_RETENTION = 'notifications=1000/3650d';

const ALL_SYSTEMS: SystemKey[] = ['ours', 'n+1', 'floor', 'floor-jit', 'flat'];
const wantSystems = new Set<SystemKey>(args.systems ? (args.systems.split(',') as SystemKey[]) : ALL_SYSTEMS);
wantSystems.add('ours');
for (const s of wantSystems) if (!ALL_SYSTEMS.includes(s)) throw new Error(`--systems: unknown system ${s} (${ALL_SYSTEMS.join(', ')})`);

/** One system's warm rounds so far: its runs, CPU windows and cache counters gained. */
interface WarmTally {
  readonly runs: DriverResult[];
  readonly cpu: { cpu: CpuPerRequest; requests: number }[];
  hits: CacheCounters | null;
  /** MariaDB's own statement and commit counters over the measured runs. */
  mysql: MysqlTally | null;
}

/** The load generator child process: one run at a time over IPC. */
class Driver {
  readonly #child: ChildProcess;
  #next = 0;
  readonly #pending = new Map<number, { resolve: (r: DriverResult) => void; reject: (e: Error) => void }>();
  constructor() {
    this.#child = fork(join(ROOT, 'bench/driver.ts'), [], { execArgv: ['--import', 'tsx'], cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.#child.on('message', (msg: { id: number; result?: DriverResult; error?: string }) => {
      const p = this.#pending.get(msg.id);
      this.#pending.delete(msg.id);
      if (msg.error !== undefined) p?.reject(new Error(msg.error));
      else p?.resolve(msg.result!);
    });
    this.#child.on('exit', (code) => {
      for (const p of this.#pending.values()) p.reject(new Error(`load generator exited (${code})`));
      this.#pending.clear();
    });
  }
  run(run: DriverRun): Promise<DriverResult> {
    return this.#send({ run });
  }
  pass(pass: DriverPass): Promise<DriverResult> {
    return this.#send({ pass });
  }
  #send(msg: { run?: DriverRun; pass?: DriverPass }): Promise<DriverResult> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#child.send({ id, ...msg });
    });
  }
  get pid(): number | undefined {
    return this.#child.pid;
  }
  stop(): void {
    if (this.#child.connected) this.#child.disconnect();
  }
}

interface Sampled {
  readonly sqlRoundTrips: number | null;
  readonly cacheRoundTrips: number | null;
  readonly data: unknown[];
  readonly errors: string[];
}

/** Mean round trips per answer that reported its cost; cache n/a when no answer reported cache traffic. */
function perRequest(c: CostTotals): { sqlRoundTrips: number | null; cacheRoundTrips: number | null } {
  if (c.answers === 0) return { sqlRoundTrips: null, cacheRoundTrips: null };
  return { sqlRoundTrips: c.sqlRoundTrips / c.answers, cacheRoundTrips: c.cacheReported ? c.cacheRoundTrips / c.answers : null };
}

async function main(): Promise<void> {
  const machine = {
    nproc: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGiB: +(totalmem() / 2 ** 30).toFixed(1),
    freeMemoryGiB: +(freemem() / 2 ** 30).toFixed(1),
    node: process.version,
    os: `${osType()} ${release()}`,
  };
  const date = new Date().toISOString();
  process.stderr.write(`shardql bench ${quick ? '--quick ' : ''}— ${date} — ${machine.nproc} cores (${machine.cpu}), ${machine.memoryGiB} GiB, node ${machine.node}, ${machine.os}\n`);

  const stack = await benchStack(stackDir, log);
  const systems: System[] = [];
  let driver: Driver | undefined;
  let probe: CacheProbe | undefined;
  let mysqlProbe: MysqlProbe | undefined;
  try {
    // Data set and topology.
    const { slot, params } = datasetChoice({ quick, users: args.users, scale: args.scale, seed: args.seed, shards: args.shards });
    const { info, reused } = await ensureDataset({ stack: stack.info, slot, params, log, force: args['force-load'] ?? false });
    const doc = slotTopology(stackHosts(stack.info), slot);
    const topology = parseTopology(doc);
    const etcd = new Etcd3({ hosts: [...stack.info.etcd.endpoints] });
    try {
      await publishTopology(etcd, slot.topologyKey, doc);
    } finally {
      etcd.close();
    }
    // Servers start read-only; the map's primaries take the scenarios' writes (as `topology publish` does).
    const writable = await makePrimariesWritable(new ShardAdmin({ credentials: benchAdmin(stack.info) }), doc);
    if (writable.failed.length > 0) throw new Error(`primaries not writable: ${writable.failed.map((f) => `${f.host}: ${f.error}`).join('; ')}`);
    log(`topology ${slot.topologyKey}: shards ${slot.shardBase}–${slot.shardBase + slot.shards - 1} over ${stack.info.mysql.hosts.length} hosts`);

    const config: GatewayConfig = {
      env: 'production',
      port: 0,
      etcdEndpoints: stack.info.etcd.endpoints,
      topologyKey: slot.topologyKey,
      mysql: { user: stack.info.mysql.user, password: stack.info.mysql.password },
      redis: stack.info.redis,
      memcached: { servers: `${stack.info.memcached.host}:${stack.info.memcached.port}` },
      jwtSecret: `shardql-bench-secret-${stack.info.mysql.password}`.padEnd(32, '.'),
      // The data set's times are fixed (2023–2024): with the default 90 days every notification would
      // have expired, so they are kept 10 years here (versions as the default, 1,000 per kind).
      events: { retention: parseRetentionSettings(BENCH_EVENT_RETENTION) },
    };
    const token = tokenCache(config.jwtSecret);
    const headersOf = async (r: ScenarioRequest, extra: Record<string, string> = {}): Promise<Record<string, string>> => ({
      'content-type': 'application/json',
      ...(r.viewer ? { authorization: `Bearer ${await token(r.viewer)}` } : {}),
      ...extra,
    });
    const send = async (url: string, r: ScenarioRequest, cost = false): Promise<{ status: number; body: { data?: unknown; errors?: { message: string }[]; extensions?: { cost?: Record<string, unknown> } } }> => {
      const res = await fetch(`${url}/graphql`, { method: 'POST', headers: await headersOf(r, cost ? { 'x-shardql-cost': '1' } : {}), body: JSON.stringify({ query: r.query, variables: r.variables }) });
      return { status: res.status, body: (await res.json()) as never };
    };

    // Systems.
    const gatewayOpts = cacheTimeoutMs === undefined ? {} : { cacheTimeoutMs };
    const ours = await gatewaySystem('ours', config, log, gatewayOpts);
    systems.push(ours);

    // The cursor of page 100 of each big board, by walking pages 1..99 through the gateway.
    const wanted = args.scenarios ? new Set(args.scenarios.split(',')) : undefined;
    const page100 = new Map<string, string>();
    if (!wanted || wanted.has('board-page-100')) await Promise.all(
      info.specials.bigBoards.map(async (board) => {
        let after: string | null = null;
        let walked = 0;
        for (const first of walkSizes(99 * 20)) {
          const res = await send(ours.url, { query: BOARD_WALK, variables: { id: board, first, after } });
          walked += first;
          const pins = (res.body.data as { board?: { pins?: { pageInfo?: { endCursor?: string | null; hasNextPage?: boolean } } } } | undefined)?.board?.pins;
          if (!pins?.pageInfo?.endCursor || !pins.pageInfo.hasNextPage) throw new Error(`board ${board} has no pin after its ${walked}th: ${JSON.stringify(res.body).slice(0, 300)}`);
          after = pins.pageInfo.endCursor;
        }
        page100.set(board, after!);
      }),
    );
    if (page100.size > 0) log(`walked 1,980 pins (99 pages of 20) of ${page100.size} big boards, in pages of 100, for the page-100 cursors`);

    // Each notified user's first page through the gateway: full (else the data set is wrong), and its end cursor for page 2.
    const notificationsPage2 = new Map<string, string>();
    if (!wanted || wanted.has('notifications') || wanted.has('notifications-page-2')) await Promise.all(
      info.specials.notifiedUsers.map(async (viewer) => {
        // On a stack just started, 8 groupings of ~5,400 events at once read a cold buffer pool and can
        // outlast the query timeout (SHARD_UNAVAILABLE, retryable): asked again, as a client would.
        let res = await send(ours.url, { query: NOTIFICATIONS_WALK, variables: {}, viewer });
        for (let attempt = 2; attempt <= 3 && (res.body.errors ?? []).some((e) => (e as { extensions?: { retryable?: boolean } }).extensions?.retryable === true); attempt++) {
          log(`notified user ${viewer}: first page refused as retryable (${JSON.stringify(res.body.errors).slice(0, 160)}); attempt ${attempt}`);
          res = await send(ours.url, { query: NOTIFICATIONS_WALK, variables: {}, viewer });
        }
        type Walk = { viewer?: { notifications?: { edges?: unknown[]; pageInfo?: { hasNextPage?: boolean; endCursor?: string | null } } } };
        const n = (res.body.data as Walk | undefined)?.viewer?.notifications;
        if (n?.edges?.length !== 20 || !n.pageInfo?.hasNextPage || !n.pageInfo.endCursor) throw new Error(`notified user ${viewer} has no full first page of notifications: ${JSON.stringify(res.body).slice(0, 300)}`);
        notificationsPage2.set(viewer, n.pageInfo.endCursor);
      }),
    );
    if (notificationsPage2.size > 0) log(`read the first page of notifications of ${notificationsPage2.size} notified users for the page-2 cursors`);

    const scenarios = buildScenarios({ info, page100, notificationsPage2, connections }).filter((s) => !wanted || wanted.has(s.key));
    const fanoutWanted = !wanted || wanted.has('fan-out');
    if (scenarios.length === 0 && !fanoutWanted) throw new Error(`--scenarios matched nothing`);

    const schema = baselineSchema();
    // The baselines group notifications as the gateway's store does: Pinterest's kinds, the bench's retention.
    const benchEvents = eventSettings(PINTEREST_EVENTS, config.events);
    if (wantSystems.has('n+1')) systems.push(await gatewaySystem('n+1', config, log, gatewayOpts));
    if (wantSystems.has('floor') || wantSystems.has('floor-jit')) {
      const t = Date.now();
      const recordSet = scenarios.flatMap((s) => (s.mutation ? s.prerecord ?? [] : s.samples));
      const data = await recordFloor(schema, stack.info, topology, recordSet, benchEvents);
      log(`floor: recorded ${recordSet.length} requests into memory in ${Date.now() - t} ms (${Object.entries(data.stats()).map(([k, v]) => `${k} ${v}`).join(', ')})`);
      if (wantSystems.has('floor')) systems.push(await floorSystem(schema, data, config.jwtSecret, benchEvents, 'js'));
      if (wantSystems.has('floor-jit')) systems.push(await floorSystem(schema, data, config.jwtSecret, benchEvents, 'jit'));
    }
    if (wantSystems.has('flat')) systems.push(await flatSystem(schema, stack.info, slot.flatDatabase, config.jwtSecret, benchEvents));

    driver = new Driver();
    probe = new CacheProbe(stack.info);
    mysqlProbe = new MysqlProbe(stack.info);
    const databases = mysqlProbe;
    const load = driver;
    const caches = probe;
    // The stack's servers, by their own pids: each MariaDB host, Redis, memcached, etcd.
    const metered: MeteredProcess[] = (await stackStatus(stackDir)).services.flatMap((svc) => (svc.pid !== null && svc.running ? [{ name: svc.name, pid: svc.pid }] : []));
    const cpu = new CpuMeter(metered, driver.pid);
    log(`CPU accounting: this process (the system under test) and ${metered.map((m) => m.name).join(', ')}; the load generator apart`);

    const sample = async (sys: System, s: Scenario): Promise<Sampled> => {
      const reqs = s.samples.slice(0, s.mutation ? sampleCount + (sampleCount % 2) : sampleCount);
      let cost = NO_COST;
      const data: unknown[] = [];
      const errors: string[] = [];
      for (const r of reqs) {
        const res = await send(sys.url, r, true);
        if (res.status !== 200 || res.body.errors?.length) errors.push(`${res.status} ${res.body.errors?.[0]?.message ?? ''}`.trim());
        data.push(res.body.data);
        cost = addCost(cost, res.body.extensions?.cost as never);
      }
      return { ...perRequest(cost), data, errors };
    };

    // Caches may hold another load's rows under the same IDs: start from empty ones.
    if (dedicatedStack) await probe.flush();

    const results: ScenarioResult[] = [];
    for (const s of scenarios) {
      log(`scenario ${s.key}: ${s.title}`);
      const toDriver = (r: ScenarioRequest, extra: Record<string, string> = {}): Promise<DriverRequest> =>
        headersOf(r, extra).then((headers) => ({ body: JSON.stringify({ query: r.query, variables: r.variables }), headers }));
      const streams: DriverRequest[][] = await Promise.all(s.streams.map((stream) => Promise.all(stream.map((r) => toDriver(r)))));
      // --quick's cold pass: the first few chains only (its numbers mean nothing; n+1's cold profile alone took 8 s).
      const passChains = quick ? s.pass.slice(0, QUICK_COLD_CHAINS) : s.pass;
      const chains: DriverRequest[][] = await Promise.all(passChains.map((chain) => Promise.all(chain.map((r) => toDriver(r, { 'x-shardql-cost': '1' })))));
      const phases = {} as Record<Phase, PhaseResult>;
      const warmSamples = new Map<SystemKey, Sampled>();
      let profile: ProfileSummary | undefined;
      // Warm: the systems take turns, `warmRounds` times (warmSec ÷ rounds each), so the machine's
      // drift over a scenario falls on every system alike; a system's rounds make one measurement.
      const warmTallies = new Map<SystemKey, WarmTally>();
      const warmRound = async (sys: System, round: number): Promise<void> => {
        const tally = warmTallies.get(sys.key) ?? { runs: [], cpu: [], hits: ZERO_COUNTERS, mysql: NO_MYSQL };
        warmTallies.set(sys.key, tally);
        // Round one warms the system up from its cold pass; a later one only refills what its idle
        // turn let go (the feeds' near pages, connections' windows).
        const warmup = round === 0 ? warmupSec : Math.min(warmupSec, LATER_ROUND_WARMUP_SEC);
        // A run in which no request finished (a stall as long as the measured seconds: a short
        // --quick run on a busy machine) measures nothing: it is run again, twice as long, at most twice.
        for (let durationSec = warmSec / warmRounds, attempt = 1; ; durationSec *= 2, attempt++) {
          const running = load.run({ url: sys.url, connections, warmupSec: warmup, durationSec, streams, keepLatencies: warmRounds > 1 });
          running.catch(() => undefined); // awaited below; a failure must not go unhandled meanwhile
          // Hit rates and CPU cover the measured seconds only, from the end of the warm-up. This
          // process serves ours: under its load this timer runs late (same steady load either way).
          await sleep(warmup * 1000);
          const before = await caches.counters();
          const sqlBefore = await databases.counters();
          const window = cpu.open();
          const run = await running;
          const cpuWindow = run.requests > 0 ? window.close(run.requests) : undefined;
          const sqlAfter = await databases.counters();
          const after = await caches.counters();
          if (run.requests > 0 || attempt === 3) {
            tally.runs.push(run);
            if (cpuWindow) tally.cpu.push({ cpu: cpuWindow, requests: run.requests });
            tally.hits = addCounters(tally.hits, before, after);
            tally.mysql = addMysql(tally.mysql, sqlBefore, sqlAfter, run.requests);
            if (warmRounds > 1) log(`  warm ${sys.key} round ${round + 1}/${warmRounds}: ${run.requests} req ${run.rps.toFixed(1)} req/s${cpuWindow ? `  CPU ${cpuWindow.total.toFixed(3)} ms/req` : ''}`);
            break;
          }
          log(`  warm ${sys.key}: no request finished in ${durationSec} s; measured again for ${durationSec * 2} s`);
        }
      };
      // Where ours' CPU goes: a run of its own right after its last measured one (same load, the
      // server still warm), so the sampler's cost (7–9% of CPU per request) is in no measured figure
      // and ours is compared with the baselines as they are, unobserved.
      const profileRun = async (sys: System): Promise<ProfileSummary> => {
        const profiled = load.run({ url: sys.url, connections, warmupSec: 0, durationSec: profileSec, streams });
        profiled.catch(() => undefined); // awaited below
        const profiler = await startProfile(ROOT, SAMPLING_INTERVAL_US, rawProfileDir === undefined ? undefined : join(rawProfileDir, `${s.key}.cpuprofile`));
        try {
          await profiled;
        } catch (err) {
          await profiler.stop();
          throw err;
        }
        return profiler.stop();
      };
      for (const phase of ['cold', 'warm'] as const) {
        const measured: Partial<Record<SystemKey, Measurement>> = {};
        if (phase === 'warm') {
          for (let round = 0; round < warmRounds; round++) {
            for (const sys of systems) {
              await warmRound(sys, round);
              if (profiling && sys.key === 'ours' && round === warmRounds - 1) profile = await profileRun(sys);
              // After its last round, while still warm (its near cache unexpired, as a client reading
              // it would find it), the sample; then every round leaves the data as it found it (ours
              // and n+1 share the shards).
              if (round === warmRounds - 1) warmSamples.set(sys.key, await sample(sys, s));
              if (s.cleanup) for (const r of s.cleanup) await send(sys.url, r);
            }
          }
        }
        for (const sys of systems) {
          let run: DriverResult;
          let costs: { sqlRoundTrips: number | null; cacheRoundTrips: number | null };
          let sampleErrors: string[] = [];
          let cpuMsPerRequest: CpuPerRequest | undefined;
          let mysqlCounted: Measurement['mysqlPerRequest'] | undefined;
          let hits: CacheCounters | null;
          if (phase === 'cold') {
            // A first pass: empty caches, a fresh server, every distinct request once, each costed.
            if (sys.usesStackCaches && dedicatedStack) await probe.flush();
            await sys.restart();
            const before = await probe.counters();
            run = await driver.pass({ url: sys.url, connections, chains });
            hits = addCounters(ZERO_COUNTERS, before, await probe.counters());
            costs = perRequest(run.cost ?? NO_COST);
            if (s.cleanup) for (const r of s.cleanup) await send(sys.url, r);
          } else {
            const tally = warmTallies.get(sys.key)!;
            run = mergeRuns(tally.runs);
            if (tally.cpu.length > 0) cpuMsPerRequest = mergeCpu(tally.cpu);
            // The floors touch no database: nothing of theirs to count.
            if (sys.key !== 'floor' && sys.key !== 'floor-jit') mysqlCounted = mysqlPerRequest(tally.mysql) ?? undefined;
            hits = tally.hits;
            const sampled = warmSamples.get(sys.key)!;
            costs = sampled;
            sampleErrors = sampled.errors;
          }
          const errors = run.errors + run.non2xx + run.graphqlErrors + run.timeouts + sampleErrors.length;
          const firstError = run.firstErrorBody ?? sampleErrors[0];
          measured[sys.key] = {
            requests: run.requests,
            rps: run.rps,
            p50Ms: run.p50Ms,
            p99Ms: run.p99Ms,
            meanMs: run.meanMs,
            sqlRoundTrips: sys.key === 'floor' || sys.key === 'floor-jit' ? 0 : costs!.sqlRoundTrips,
            cacheRoundTrips: costs!.cacheRoundTrips,
            hitRates: sys.usesStackCaches ? CacheProbe.rates(ZERO_COUNTERS, hits) : { objects: null, lists: null },
            tail: run.p50Ms > 0 ? run.p99Ms / run.p50Ms : null,
            ...(cpuMsPerRequest ? { cpuMsPerRequest } : {}),
            ...(mysqlCounted ? { mysqlPerRequest: mysqlCounted } : {}),
            errors,
            ...(firstError !== undefined ? { firstError } : {}),
          };
          const m = measured[sys.key]!;
          log(
            `  ${phase} ${sys.key.padEnd(5)} ${String(run.requests).padStart(6)} req ${run.rps.toFixed(1).padStart(8)} req/s  p50 ${run.p50Ms.toFixed(2)} ms  p99 ${run.p99Ms.toFixed(2)} ms` +
              `  SQL ${m.sqlRoundTrips?.toFixed(1) ?? 'n/a'}/req  cache ${m.cacheRoundTrips?.toFixed(1) ?? 'n/a'}/req` +
              `${m.cpuMsPerRequest ? `  CPU ${m.cpuMsPerRequest.total.toFixed(3)} ms/req` : ''}` +
              `${m.mysqlPerRequest ? `  MariaDB ${mysqlLine(m.mysqlPerRequest)}/req` : ''}${errors ? `  ERRORS ${errors}: ${firstError?.slice(0, 200)}` : ''}`,
          );
        }
        const oursM = measured.ours!;
        const ratios: PhaseResult['ratios'] = {};
        for (const [key, m] of Object.entries(measured) as [SystemKey, Measurement][]) if (key !== 'ours') ratios[key as Exclude<SystemKey, 'ours'>] = ratio(oursM, m);
        phases[phase] = { systems: measured, ratios };
      }
      const consistency: ScenarioResult['consistency'] = {};
      const mine = warmSamples.get('ours')!;
      for (const [key, other] of warmSamples) {
        if (key === 'ours') continue;
        if (s.mutation) {
          consistency[key as Exclude<SystemKey, 'ours'>] = 'n/a (mutations)';
          continue;
        }
        let diff: string | undefined;
        for (let i = 0; i < mine.data.length && !diff; i++) diff = firstDifference(mine.data[i], other.data[i]);
        consistency[key as Exclude<SystemKey, 'ours'>] = diff ? `differs at ${diff}` : 'same';
      }
      // Cores per tier per 10,000 req/s, from each warm system's CPU per request.
      const capacity: ScenarioResult['capacity'] = {};
      for (const [key, m] of Object.entries(phases.warm.systems) as [SystemKey, Measurement][]) if (m.cpuMsPerRequest) capacity[key] = coresPer10k(m.cpuMsPerRequest);
      results.push({ key: s.key, title: s.title, mutation: s.mutation, phases, consistency, capacity, ...(profile ? { profile } : {}) });
    }

    // fan-out: createPin → the pin in every follower's stored feed, through a real worker process.
    let fanout: FanoutResult | undefined;
    if (fanoutWanted) {
      log('scenario fan-out: createPin until the pin is in all followers’ stored feeds; the queue’s insertions per second');
      fanout = await runFanout({
        stack: stack.info,
        stackDir,
        topologyKey: slot.topologyKey,
        send: async (query, variables, viewer) => (await send(ours.url, { query, variables, ...(viewer ? { viewer } : {}) })).body as never,
        pinner: info.specials.mutationUsers.at(-1)!,
        followSource: info.specials.feed1kUsers[0]!,
        // Its set-up (each follower follows the pinner, then reads its feed so it is stored) is two
        // requests a follower: with 1,000, 39 s of a --quick run, whose numbers mean nothing.
        followers: quick ? 100 : 1000,
        pins: quick ? 5 : 30,
        burst: quick ? 5 : 20,
        log,
      });
    }

    const report: BenchReport = {
      tool: 'shardql-bench',
      date,
      mode: quick ? 'quick' : 'full',
      machine,
      config: {
        connections,
        cold: 'first pass: every distinct request of the scenario once, after a restart with empty caches',
        warmSeconds: warmSec,
        warmRounds,
        warmupSeconds: warmupSec,
        profileIntervalUs: profiling ? SAMPLING_INTERVAL_US : null,
        samplesPerRun: sampleCount,
        hosts: stack.info.mysql.hosts.length,
        shards: slot.shards,
        modShards: doc.modShard.count,
        topologyKey: slot.topologyKey,
        stackDir,
        gatewayEnv: config.env,
        nodeEnv: process.env.NODE_ENV ?? null,
        // Every system runs in this process: these flags apply to the gateway and the baselines alike.
        nodeFlags: process.execArgv,
        gatewayCacheTimeoutMs: cacheTimeoutMs ?? 'default',
        eventRetention: BENCH_EVENT_RETENTION,
      },
      dataset: { slot: info.slot, reused, users: info.params.users, seed: info.params.seed, summary: info.summary, loadedAt: info.loadedAt, load: info.load ?? null },
      systems: Object.fromEntries(systems.map((s) => [s.key, s.title])),
      scenarios: results,
      targets: targetsOf(results),
      ...(fanout ? { fanout } : {}),
      notes: [
        'ratios are ours ÷ baseline: req/s above 1× and p50 below 1× mean ours is better',
        `cold = a first pass right after the system restarted (new pools, document cache, loaders) with memcached and Redis flushed: every distinct request of the scenario once, 8 in flight; its p99 is over few requests. warm = autocannon for a fixed duration over the same requests, caches filled, after ${warmupSec} s of the same load on the same connections, without a pause, whose answers are discarded (steady state for every system alike; work the previous run left in flight mostly falls into it too)${warmRounds > 1 ? `; in ${warmRounds} rounds of ${warmSec / warmRounds} s, the systems taking turns (a later round after ${Math.min(warmupSec, LATER_ROUND_WARMUP_SEC)} s of warm-up), each system's rounds one measurement (req/s over all its measured seconds, percentiles over all its latencies, CPU over all its requests), so the machine's drift over a scenario falls on every system alike` : ''}. The MariaDB buffer pools are never restarted`,
        'SQL and cache round trips per request: cold = mean over every request of the first pass, warm = mean over a sample after the run (extensions.cost; the flat baseline counts its statements the same way; the floor makes none; only the gateway has caches). Hit rates: memcached (objects) / Redis (pages, counts) server counters over the run',
        'n+1 is the same gateway with batching off and its caches on: in the warm phase its N+1 round trips go mostly to the caches',
        'floor: plain graphql-js execute() on node:http over Maps holding what the scenarios touch, each query text parsed and validated once (as Apollo does); floor-jit: the same schema, resolvers and Maps run by graphql-jit, each document compiled once (the executor the gateway runs): the fastest this executor can answer with no caches, no network and no Apollo',
        `CPU per request (warm): each process's own accounting over the measured run (this process by process.cpuUsage(), the stack's servers by /proc/<pid>/stat user + system time, ${'clock-tick'} resolution) ÷ the run's requests. "server" is this process, which serves the system under test (every system runs in it; the others idle meanwhile)${profiling ? "; ours is profiled in a run of its own after the measured one, so no measured figure carries the sampler's cost" : ''}. The load generator is measured apart, not in the total. Cores per 10,000 req/s = ms per request × 10 (MariaDB hosts summed as one tier)`,
        'flat: one query per level (a list and its objects in one JOIN, counts as columns); the home feed is one JOIN + UNION over follows, board follows and pins, sorted by the database',
        `notifications: the notified users' events are derived from the data set's likes, repins and follows of their things (src/bulk/events.ts); every system keeps them by SHARDQL_EVENT_RETENTION=${BENCH_EVENT_RETENTION} (the data's times are fixed in 2023–2024, past the default 90 days) and groups them per 1-day window. Ours caches each page (Redis, L1; a later page per cursor, dropped with the first). The floor groups each request in memory (the sequence sorted once, walked window by window); flat runs one GROUP BY with a window function per request`,
        profiling
          ? `profile: a run of ours of its own (${profileSec} s, same connections and requests) right after its measured warm run, a V8 CPU profile of this whole process (the other systems idle meanwhile) sampled every ${SAMPLING_INTERVAL_US} µs; self time by package or category and by project file, in percent of non-idle samples; GC = main-thread GC pauses (PerformanceObserver 'gc') ÷ process CPU time (all threads) and ÷ wall time; pauses are wall time, so when the machine is short of CPU, GC ÷ CPU overstates and the (garbage collector) share of samples is the steadier view. The sampler costs ours 4–6% of its req/s and 7–9% of its CPU per request (measured once, pin-detail, 2 s rounds alternately with and without it), which is why no measured run is profiled; --no-profile skips the profiled runs`
          : 'profile: off (--no-profile)',
        `load generator: autocannon in a child process, ${connections} connections, ${warmSec} s warm (after ${warmupSec} s warm-up${warmRounds > 1 ? `; ${warmRounds} rounds in turn` : ''}) per system and scenario, on the same ${machine.nproc}-core machine as the servers and MariaDB`,
      ],
      totalSeconds: Math.round((Date.now() - started) / 1000),
    };

    const table = formatTable(report);
    process.stdout.write(`\nshardql bench (${report.mode}) — ${date}\nmachine: ${machine.nproc} cores (${machine.cpu}), ${machine.memoryGiB} GiB memory, node ${machine.node}, ${machine.os}\n`);
    process.stdout.write(`data: ${info.params.users} users + specials — ${Object.entries(info.summary).map(([k, v]) => `${k} ${v}`).join(', ')}; ${slot.shards} shards on ${stack.info.mysql.hosts.length} hosts${reused ? ' (reused)' : ''}\n`);
    process.stdout.write(`cold: first pass (each distinct request once, empty caches, fresh server); warm: ${warmSec} s of autocannon after ${warmupSec} s warm-up${warmRounds > 1 ? ` (${warmRounds} rounds, systems in turn)` : ''}; ${connections} connections; ratios are ours ÷ baseline\n`);
    const mixed = sizing(report);
    const sized = Object.entries(mixed.cores).filter(([, t]) => t !== null).map(([sys, t]) => `  ${sys.padEnd(9)} ${Object.entries(t!).map(([tier, c]) => `${tier} ${c.toFixed(2)}`).join(' · ')}`);
    const sizingText = sized.length > 0 ? `\ncores per 10,000 req/s of the stated mix (bench/sizing.ts):\n${sized.join('\n')}\n` : '';
    process.stdout.write(`${table}\n${sizingText}${fanout ? `\n${formatFanout(fanout)}\n` : ''}\ntotal ${report.totalSeconds} s\n`);

    const resultsDir = join(ROOT, 'bench/results');
    mkdirSync(resultsDir, { recursive: true });
    const suffix = quick ? '-quick' : '';
    const latest = join(resultsDir, `latest${suffix}.json`);
    writeFileSync(latest, `${JSON.stringify(report, null, 2)}\n`);
    copyFileSync(latest, join(resultsDir, `${date.replace(/[:.]/g, '-')}${suffix}.json`));
    if (args.json) {
      mkdirSync(dirname(resolve(args.json)), { recursive: true });
      writeFileSync(resolve(args.json), `${JSON.stringify(report, null, 2)}\n`);
    }
    log(`report: ${latest}${args.json ? ` and ${resolve(args.json)}` : ''}`);
    // The docs' one home of the latest numbers, and the sizing page from them: only a whole run
    // replaces them (not --quick, which runs inside npm test, nor a run of some scenarios or systems).
    if (!quick && !args.scenarios && !args.systems) {
      writeFileSync(join(ROOT, LATEST_PAGE), benchmarkMarkdown(report, relative(ROOT, latest)));
      writeFileSync(join(ROOT, SIZING_PAGE), sizingPage(report));
      log(`pages: ${LATEST_PAGE}, ${SIZING_PAGE}`);
    }
  } finally {
    driver?.stop();
    probe?.close();
    await mysqlProbe?.close();
    for (const s of systems) await s.stop().catch(() => undefined);
    if (stack.startedHere && !(args['keep-stack'] ?? false)) {
      log('stopping the benchmark stack (this run started it)');
      await stack.stop();
    }
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exit(1);
  },
);
