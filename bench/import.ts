/**
 * `npm run bench:import`: `shardql import` of the benchmark's flat database (`bench_flat`: 100,000
 * users, ~4.2M rows) into fresh shards, with 1 and then 2 `shardql worker` processes, then
 * `--verify`, then the scenario check: the imported shards answer the benchmark's read scenarios
 * exactly as the generated shards do.
 *
 *   tsx bench/import.ts [--stack-dir DIR] [--target-dir DIR] [--workers 1,2] [--chunk-rows N] [--concurrency N]
 *                       [--no-verify] [--no-scenarios] [--no-profile] [--keep-target] [--sample N]
 *
 * Source: the flat database of the benchmark stack (`--stack-dir`, default `.stack-bench`; brought
 * up if down, never reloaded: run `npm run bench` or `tsx bench/load.ts` once to load it), read
 * through a read-only account this bench creates (SELECT on that database only).
 *
 * Target: a stack of its own (`--target-dir`, default `.stack-import`: two MariaDB hosts without
 * replicas, like the benchmark stack), slot `import` (shards 2048–2111: 64 shards over the 2
 * hosts, 64 mod shards), topology key /shardql-bench/import/topology, queue prefix
 * shardql-bench-import, source label `benchimp`. Not the benchmark stack itself: its 64 mod shards
 * are shared by every slot and already hold bench_flat's usernames (claimed by the main slot),
 * so an import there would see every username taken. Dropped and provisioned anew before each run.
 *
 * Per run: wall time of the CLI (planning included), rows/s overall, per table and per phase
 * (from the ledger), the CLI's progress lines (rows/s, ETA), the CPU seconds of every process
 * (workers, CLI, each mysqld, Redis) over the run, and, in the first run, a CPU profile of the
 * worker (node --cpu-prof) by package and by project file (bench/profile.ts). A report goes to
 * bench/results/import-<date>.json (with the machine's 1-minute load average at the start and the
 * end: a shared machine shows there); a table to stdout; and, after a whole successful run (not
 * `--workers 0`, `--no-verify` or `--no-scenarios`), the page docs/benchmarks-import.md from that
 * report (bench/importMarkdown.ts). Exit 1 on any failure: the import's, a difference `--verify`
 * reports, or a scenario answer that differs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem, type } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';
import memjs from 'memjs';
import mysql, { type RowDataPacket } from 'mysql2/promise';
import { benchAdmin, SLOT_SPAN, slotFor, slotTopology, stackHosts, type DatasetInfo, type Slot } from '../src/bulk/dataset.ts';
import type { GatewayConfig } from '../src/config.ts';
import { parseRetentionSettings } from '../src/core/events.ts';
import { decodeId } from '../src/core/ids.ts';
import { importKey, importNamespace } from '../src/core/importSchema.ts';
import { servedImportSpec } from '../src/product/served.ts';
import { typeName } from '../src/core/objectTypes.ts';
import { parseTopology } from '../src/core/topology.ts';
import { startGateway, type RunningGateway } from '../src/server.ts';
import { stackStatus, type StackInfo } from '../src/stack/localStack.ts';
import { createStorage, type Storage } from '../src/storage/index.ts';
import { dropAllShards, provision } from '../src/storage/provision.ts';
import { ShardAdmin } from '../src/storage/shardAdmin.ts';
import { loadTopology, publishTopology } from '../src/topology/etcdTopology.ts';
import { makePrimariesWritable } from '../src/topology/operations/primaries.ts';
import { IMPORT_PAGE, importMarkdown, type ImportReport, type ImportRunReport, type ImportScenarioCheck, type ImportVerifyReport } from './importMarkdown.ts';
import { attribute, type CpuProfile } from './profile.ts';
import { firstDifference } from './report.ts';
import { BOARD_PAGE, BOARD_WALK, buildScenarios, HOME_FEED, PIN_DETAIL, PROFILE, walkSizes, type ScenarioRequest } from './scenarios.ts';
import { benchStack, DEFAULT_BENCH_STACK, ROOT } from './stack.ts';
import { tokenCache } from './systems.ts';

const { values: args } = parseArgs({
  options: {
    'stack-dir': { type: 'string' },
    'target-dir': { type: 'string' },
    workers: { type: 'string', default: '1,2' },
    'chunk-rows': { type: 'string' },
    concurrency: { type: 'string' },
    sample: { type: 'string', default: '40' },
    'no-verify': { type: 'boolean', default: false },
    'no-scenarios': { type: 'boolean', default: false },
    'no-profile': { type: 'boolean', default: false },
    'keep-target': { type: 'boolean', default: false },
  },
});

const SOURCE_SLOT = slotFor('main');
const TARGET_SLOT: Slot = { name: 'import', shardBase: 2 * SLOT_SPAN, shards: 64, flatDatabase: '-', topologyKey: '/shardql-bench/import/topology' };
const LABEL = 'benchimp';
const QUEUE_PREFIX = 'shardql-bench-import';
const READER = 'shardql_import_reader';
const started = Date.now();
/** The machine's 1-minute load average before this run added any work: other work on a shared machine shows here. */
const LOAD_AT_START = loadavg()[0]!;
/** This run's command line, as the report and the page state it. */
const COMMAND = ['node', ...process.execArgv, relative(ROOT, process.argv[1] ?? 'bench/import.ts'), ...process.argv.slice(2)].join(' ');
const log = (line: string): void => void process.stderr.write(`[bench:import ${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);
const n = (v: number): string => Math.round(v).toLocaleString('en-US');

// `--workers 0`: no import; --verify and the scenario check of what the target holds (the last run's import, with --keep-target).
const workerCounts = args.workers === '0' ? [] : args.workers.split(',').map(Number);
if (workerCounts.some((w) => !Number.isInteger(w) || w < 1 || w > 8)) throw new Error(`--workers must be a comma-separated list of 1..8 (or 0), got ${args.workers}`);
const sampleSize = Number(args.sample);

// --- processes and their CPU time ---

const CLK_TCK = 100;

/** utime + stime of a live process and its waited-for children, seconds (Linux /proc). */
function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 14–17 of stat (1-based), i.e. 11–14 after the state field: utime stime cutime cstime.
    return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / CLK_TCK;
  } catch {
    return null;
  }
}

interface Child {
  readonly name: string;
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  stdout: string;
  stderr: string;
  /** Last CPU reading while alive. */
  cpu: number;
}

function childEnv(target: StackInfo, dir: string, password: string): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...process.env };
  for (const k of Object.keys(out)) if (k.startsWith('SHARDQL_')) delete out[k];
  return {
    ...out,
    NODE_ENV: 'production',
    SHARDQL_STACK_DIR: dir,
    SHARDQL_TOPOLOGY_KEY: TARGET_SLOT.topologyKey,
    SHARDQL_QUEUE_PREFIX: QUEUE_PREFIX,
    SHARDQL_WORKER_QUEUES: 'import',
    ...(args.concurrency ? { SHARDQL_WORKER_CONCURRENCY: `import=${Number(args.concurrency)}` } : {}),
    SHARDQL_IMPORT_PASSWORD: password,
    SHARDQL_LOG_LEVEL: 'warn',
    SHARDQL_MYSQL_USER: target.mysql.user,
    SHARDQL_MYSQL_PASSWORD: target.mysql.password,
  };
}

function startChild(name: string, nodeFlags: string[], cliArgs: string[], env: Record<string, string | undefined>): Child {
  const child = spawn(process.execPath, ['--max-semi-space-size=64', ...nodeFlags, '--import', 'tsx', resolve(ROOT, 'src/cli.ts'), ...cliArgs], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const c: Child = { name, child, exited: new Promise((res) => child.once('exit', (code) => res(code))), stdout: '', stderr: '', cpu: 0 };
  child.stdout!.on('data', (d: Buffer) => (c.stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (c.stderr += d.toString()));
  return c;
}

async function waitForWorker(w: Child): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!/"worker_started"|worker_started/.test(w.stdout + w.stderr)) {
    if (w.child.exitCode !== null) throw new Error(`worker ${w.name} exited (${w.child.exitCode}) before starting: ${w.stderr.slice(-2000)}`);
    if (Date.now() > deadline) throw new Error(`worker ${w.name} did not start within 30 s: ${w.stderr.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// --- the source ---

async function sourceConnection(stack: StackInfo): Promise<mysql.Connection> {
  const h = stack.mysql.hosts[0]!;
  const admin = benchAdmin(stack);
  return mysql.createConnection({ host: h.primary.host, port: h.primary.port, user: admin.user, password: admin.password, supportBigNumbers: true, bigNumberStrings: true });
}

/** The main slot's data set as the benchmark recorded it (never loaded here: the lead's benchmark owns it). */
async function mainDataset(conn: mysql.Connection): Promise<DatasetInfo> {
  const [rows] = await conn.query<RowDataPacket[]>(`SELECT status, info FROM bench_meta.datasets WHERE slot = ?`, [SOURCE_SLOT.name]);
  if (rows[0]?.status !== 'complete') throw new Error(`the benchmark stack has no complete '${SOURCE_SLOT.name}' data set: load it first (tsx bench/load.ts or npm run bench)`);
  return JSON.parse(String(rows[0].info)) as DatasetInfo;
}

const SOURCE_TABLES = ['users', 'boards', 'pins', 'likes', 'follows', 'board_follows'] as const;

// --- one import run ---

async function resetTarget(target: StackInfo, storage: Storage): Promise<void> {
  const topology = storage.router.topology;
  await dropAllShards(storage.router, topology);
  await provision({ router: storage.router, topology });
  await flushCaches(target);
}

/** Empties the target's Redis and memcached (its own stack: nothing else uses them). */
async function flushCaches(target: StackInfo): Promise<void> {
  const redis = new Redis({ host: target.redis.host, port: target.redis.port, lazyConnect: true });
  try {
    await redis.connect();
    await redis.flushall();
  } finally {
    redis.disconnect();
  }
  const mc = memjs.Client.create(`${target.memcached.host}:${target.memcached.port}`);
  try {
    await mc.flush();
  } finally {
    mc.close();
  }
}

function mysqldPids(status: Awaited<ReturnType<typeof stackStatus>>, prefix: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of status.services) if (s.pid !== null && (s.name.startsWith('mysql') || s.name === 'redis')) out[`${prefix}${s.name}`] = s.pid;
  return out;
}

async function importRun(opts: { sourceRows: number; workers: number; source: StackInfo; sourceDir: string; target: StackInfo; targetDir: string; storage: Storage; url: string; password: string; profile: boolean }): Promise<ImportRunReport> {
  const env = childEnv(opts.target, opts.targetDir, opts.password);
  const profileDir = mkdtempSync(join(tmpdir(), 'shardql-import-prof-'));
  const workers: Child[] = [];
  for (let i = 0; i < opts.workers; i++) {
    const flags = opts.profile && i === 0 ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
    workers.push(startChild(`worker${i + 1}`, flags, ['worker'], env));
  }
  await Promise.all(workers.map(waitForWorker));
  const services = { ...mysqldPids(await stackStatus(opts.sourceDir), 'source '), ...mysqldPids(await stackStatus(opts.targetDir), 'target ') };
  const before = Object.fromEntries(Object.entries(services).map(([k, pid]) => [k, cpuSeconds(pid) ?? 0]));
  const workerBefore = workers.map((w) => cpuSeconds(w.child.pid!) ?? 0);
  const t0 = Date.now();
  // --progress: the CLI's own progress table on stderr (every 5 s), the JSON result on stdout. (This
  // bench used to run `import --status` every 20 s instead: a process start costing ~2 CPU-s each,
  // ~5% of the machine taken from the import it measured.)
  const cli = startChild('cli', [], ['import', '--from', opts.url, '--name', LABEL, ...(args['chunk-rows'] ? ['--chunk-rows', args['chunk-rows']] : []), '--json', '--progress'], env);
  const progressLines: string[] = [];
  const loads: number[] = [];
  const poll = setInterval(() => {
    for (const c of [cli, ...workers]) c.cpu = cpuSeconds(c.child.pid!) ?? c.cpu;
    loads.push(Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]));
  }, 500);
  // The last whole table the CLI printed (one begins at each header line), shown and kept every 20 s.
  let table: string[] = [];
  let lastWhole: string[] = [];
  createInterface({ input: cli.child.stderr! }).on('line', (line) => {
    if (line.startsWith('table ')) (lastWhole = table), (table = []);
    table.push(line);
  });
  const status = setInterval(() => {
    if (lastWhole.length === 0) return;
    progressLines.push(`+${((Date.now() - t0) / 1000).toFixed(0)} s`, ...lastWhole);
    for (const l of lastWhole) log(`  ${l}`);
    lastWhole = [];
  }, 20_000);
  const code = await cli.exited;
  const wallMs = Date.now() - t0;
  clearInterval(poll);
  clearInterval(status);
  const after = Object.fromEntries(Object.entries(services).map(([k, pid]) => [k, cpuSeconds(pid) ?? 0]));
  const workerAfter = workers.map((w) => cpuSeconds(w.child.pid!) ?? 0);
  for (const w of workers) w.child.kill('SIGTERM');
  const codes = await Promise.all(workers.map((w) => w.exited));
  if (code !== 0) throw new Error(`shardql import exited ${code}: ${cli.stderr.slice(-3000)}`);
  if (codes.some((c) => c !== 0)) log(`note: worker exit codes ${codes.join(', ')}`);

  const result = JSON.parse(cli.stdout.trim().split('\n').at(-1)!) as {
    read: number;
    written: number;
    rejected: number;
    ms: number;
    notes: string[];
    tables: { table: string; chunks: number; rowsRead: number; written: number; rejected: number; rowsPerSecond: number | null }[];
  };
  if (result.rejected > 0) throw new Error(`the import rejected ${result.rejected} rows: ${result.notes.slice(0, 5).join('; ')}`);

  // Per table and per phase, from the ledger's chunk records.
  const run = (await opts.storage.imports.latestRun(LABEL))!;
  const chunks = await opts.storage.imports.chunks(LABEL, run.run);
  const span = (prefix: (t: string) => boolean): { ms: number; rows: number } => {
    let first = Infinity;
    let last = 0;
    let rows = 0;
    for (const [name, c] of chunks) {
      if (!prefix(name.slice(0, name.lastIndexOf('.')))) continue;
      first = Math.min(first, c.startedAt);
      last = Math.max(last, c.finishedAt);
      rows += c.rowsRead;
    }
    return { ms: Number.isFinite(first) ? last - first : 0, rows };
  };
  const tables = result.tables.map((t) => ({ ...t, ms: span((x) => x === t.table).ms }));
  const phases = servedImportSpec().phases.map((phase) => {
    const s = span((x) => (phase as readonly string[]).includes(x));
    return { phase: phase.join('+'), ms: s.ms, rows: s.rows, rowsPerSecond: s.ms > 0 ? Math.round((s.rows * 1000) / s.ms) : 0 };
  }).filter((p) => p.rows > 0);

  const cpu: Record<string, number> = { cli: cli.cpu };
  workers.forEach((w, i) => (cpu[w.name] = Math.round((workerAfter[i]! - workerBefore[i]! || w.cpu) * 10) / 10));
  for (const k of Object.keys(services)) cpu[k] = Math.round((after[k]! - before[k]!) * 10) / 10;
  const coresBusy = Object.values(cpu).reduce((s, v) => s + v, 0) / (wallMs / 1000);

  let profile: ImportRunReport['profile'];
  if (opts.profile) {
    const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
    if (file) {
      const saved = join(ROOT, 'bench/results', `import-worker-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`);
      const text = readFileSync(join(profileDir, file), 'utf8');
      writeFileSync(saved, text);
      profile = { ...attribute(JSON.parse(text) as CpuProfile, ROOT), file: saved };
    } else log('note: the profiled worker wrote no .cpuprofile');
  }
  rmSync(profileDir, { recursive: true, force: true });
  return {
    workers: opts.workers,
    wallMs,
    chunksMs: result.ms,
    planMs: Math.max(0, wallMs - result.ms),
    rowsRead: result.read,
    rowsWritten: result.written,
    rejected: result.rejected,
    rowsPerSecond: Math.round((opts.sourceRows * 1000) / wallMs),
    rowsPerSecondOfChunks: result.ms > 0 ? Math.round((result.read * 1000) / result.ms) : 0,
    tables,
    phases,
    cpu,
    coresBusy: Math.round(coresBusy * 100) / 100,
    loadAverage: loads.length > 0 ? Math.round((loads.reduce((a, b) => a + b, 0) / loads.length) * 10) / 10 : 0,
    progressLines,
    ...(profile ? { profile } : {}),
  };
}

// --- the scenario check ---

/** Every `id` field (at any depth) of an answer. */
function idsOf(value: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(value)) for (const v of value) idsOf(v, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'id' && typeof v === 'string') out.add(v);
      else idsOf(v, out);
    }
  }
  return out;
}

/** The answer with `id` fields mapped and cursors dropped (they encode IDs; each side's own cursor is followed instead). */
function translated(value: unknown, map: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => translated(v, map));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === 'cursor' || k === 'endCursor') continue;
    out[k] = k === 'id' && typeof v === 'string' ? map.get(v) ?? `unmapped:${v}` : translated(v, map);
  }
  return out;
}

async function scenarioCheck(opts: { source: StackInfo; target: StackInfo; info: DatasetInfo; targetStorage: Storage; flat: mysql.Connection }): Promise<{ checks: ImportScenarioCheck[]; skipped: string[] }> {
  const secret = `shardql-bench-import-${randomBytes(8).toString('hex')}`.padEnd(32, '.');
  const gatewayConfig = (stack: StackInfo, topologyKey: string): GatewayConfig => ({
    env: 'production',
    port: 0,
    etcdEndpoints: stack.etcd.endpoints,
    topologyKey,
    mysql: { user: stack.mysql.user, password: stack.mysql.password },
    redis: stack.redis,
    memcached: { servers: `${stack.memcached.host}:${stack.memcached.port}` },
    jwtSecret: secret,
    events: { retention: parseRetentionSettings('notifications=1000/3650d') },
  });
  // The main slot's map, as `npm run bench` publishes it (only if it is missing: never over the lead's).
  const etcd = new Etcd3({ hosts: [...opts.source.etcd.endpoints] });
  try {
    const found = await loadTopology(etcd, SOURCE_SLOT.topologyKey).then(
      () => true,
      () => false,
    );
    if (!found) {
      log(`publishing ${SOURCE_SLOT.topologyKey} (missing)`);
      await publishTopology(etcd, SOURCE_SLOT.topologyKey, slotTopology(stackHosts(opts.source), SOURCE_SLOT));
    }
  } finally {
    etcd.close();
  }
  // The imported gateway reads the shards, not what an earlier check left in the target's caches.
  await flushCaches(opts.target);
  const quiet = (): void => undefined;
  const main: RunningGateway = await startGateway(gatewayConfig(opts.source, SOURCE_SLOT.topologyKey), { log: quiet });
  const imported: RunningGateway = await startGateway(gatewayConfig(opts.target, TARGET_SLOT.topologyKey), { log: quiet });
  const token = tokenCache(secret);
  const send = async (url: string, r: ScenarioRequest): Promise<unknown> => {
    const res = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(r.viewer ? { authorization: `Bearer ${await token(r.viewer)}` } : {}) },
      body: JSON.stringify({ query: r.query, variables: r.variables }),
    });
    const body = (await res.json()) as { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] };
    if (res.status !== 200 || body.errors?.length) throw new Error(`${res.status} ${body.errors?.map((e) => `${e.extensions?.code}: ${e.message}`).join('; ')}`);
    return body.data;
  };
  // Old (flat = generated) ID → imported ID, through the mod shard's import map.
  const newOf = new Map<string, string>();
  const mapIds = async (ids: Iterable<string>): Promise<void> => {
    const byType = new Map<string, string[]>();
    for (const id of ids) {
      if (newOf.has(id)) continue;
      const type = typeName(decodeId(BigInt(id)).type);
      if (!type) throw new Error(`${id} is not an object ID`);
      byType.set(type, [...(byType.get(type) ?? []), id]);
    }
    for (const [type, list] of byType) {
      const found = await opts.targetStorage.imports.lookup(importNamespace(type as never), list.map((id) => importKey(LABEL, id)));
      for (const id of list) {
        const got = found.get(importKey(LABEL, id));
        if (got !== undefined) newOf.set(id, String(got));
      }
    }
  };
  const translateReq = async (r: ScenarioRequest): Promise<ScenarioRequest> => {
    const ids = [...(r.viewer ? [r.viewer] : []), ...Object.values(r.variables).filter((v): v is string => typeof v === 'string' && /^[0-9]+$/.test(v))];
    await mapIds(ids);
    const tr = (id: string): string => {
      const t = newOf.get(id);
      if (t === undefined) throw new Error(`${id} was not imported (no import:${typeName(decodeId(BigInt(id)).type)} lookup ${importKey(LABEL, id)})`);
      return t;
    };
    return { query: r.query, variables: Object.fromEntries(Object.entries(r.variables).map(([k, v]) => [k, k === 'after' ? v : typeof v === 'string' && /^[0-9]+$/.test(v) ? tr(v) : v])), ...(r.viewer ? { viewer: tr(r.viewer) } : {}) };
  };

  // Inputs: the benchmark's own (specials) plus a random sample of the flat database.
  const s = opts.info.specials;
  const pick = async (table: string, where = ''): Promise<string[]> => {
    const [rows] = await opts.flat.query<RowDataPacket[]>(`SELECT id FROM bench_flat.${table} ${where} ORDER BY RAND(7) LIMIT ${sampleSize}`);
    return rows.map((r) => String(r.id));
  };
  const [users, boards, pins] = await Promise.all([pick('users'), pick('boards', 'WHERE pin_count > 0'), pick('pins')]);
  const scenarios = buildScenarios({ info: opts.info, page100: new Map(), notificationsPage2: new Map(), connections: 1 });
  const inputs: { scenario: string; requests: ScenarioRequest[]; walk?: number }[] = [
    { scenario: 'profile', requests: [...s.profileUsers, ...users].map((id) => ({ query: PROFILE, variables: { id } })) },
    { scenario: 'board-page-1', requests: [...s.bigBoards, ...boards].map((id) => ({ query: BOARD_PAGE, variables: { id, after: null } })) },
    // Page 100: each side walks 99 pages with its own cursors first.
    { scenario: 'board-page-100', requests: s.bigBoards.map((id) => ({ query: BOARD_PAGE, variables: { id, after: null } })), walk: 99 },
    { scenario: 'pin-detail', requests: [...s.detailPins, ...pins].map((id) => ({ query: PIN_DETAIL, variables: { id } })) },
    { scenario: 'feed-10', requests: s.feed10Users.map((viewer) => ({ query: HOME_FEED, variables: {}, viewer })) },
    { scenario: 'feed-1000', requests: s.feed1kUsers.map((viewer) => ({ query: HOME_FEED, variables: {}, viewer })) },
  ];
  const covered = new Set(inputs.map((i) => i.scenario));
  const skipped = scenarios
    .filter((x) => !covered.has(x.key))
    .map((x) => (x.mutation ? `${x.key}: a mutation (changes the shards; not an answer to compare)` : `${x.key}: events are not in the flat database's import scope (the import copies users, boards, pins, comments, likes, follows, board follows)`));
  const walk = async (url: string, board: string, pages: number): Promise<string | null> => {
    let after: string | null = null;
    for (const first of walkSizes(pages * 20)) {
      const d = (await send(url, { query: BOARD_WALK, variables: { id: board, first, after } })) as { board: { pins: { pageInfo: { endCursor: string | null; hasNextPage: boolean } } } };
      if (!d.board.pins.pageInfo.hasNextPage) throw new Error(`board ${board} has no page ${pages + 1} of 20`);
      after = d.board.pins.pageInfo.endCursor;
    }
    return after;
  };
  const checks: ImportScenarioCheck[] = [];
  try {
    for (const input of inputs) {
      const check: ImportScenarioCheck = { scenario: input.scenario, compared: 0, same: 0, differences: [] };
      for (const r0 of input.requests) {
        const r1 = await translateReq(r0);
        let a: ScenarioRequest = r0;
        let b: ScenarioRequest = r1;
        if (input.walk) {
          a = { ...r0, variables: { ...r0.variables, after: await walk(main.url, String(r0.variables.id), input.walk) } };
          b = { ...r1, variables: { ...r1.variables, after: await walk(imported.url, String(r1.variables.id), input.walk) } };
        }
        const [want, got] = await Promise.all([send(main.url, a), send(imported.url, b)]);
        await mapIds(idsOf(want, new Set()));
        // Generated answer with its IDs mapped to the imported ones; both without cursors.
        // An answer with nothing in it (an unknown ID on both sides, an empty feed) would compare equal vacuously.
        const wantIds = idsOf(want, new Set());
        if (wantIds.size < 2) {
          check.compared++;
          check.differences.push(`${input.scenario} ${JSON.stringify(r0.variables)}${r0.viewer ? ` viewer ${r0.viewer}` : ''}: the generated shards' answer holds ${wantIds.size} objects: nothing to compare (${JSON.stringify(want).slice(0, 200)})`);
          continue;
        }
        const diff = firstDifference(translated(want, newOf), translated(got, new Map([...idsOf(got, new Set())].map((id) => [id, id]))));
        check.compared++;
        if (diff) check.differences.push(`${input.scenario} ${JSON.stringify(r0.variables)}${r0.viewer ? ` viewer ${r0.viewer}` : ''}: ${diff}`);
        else check.same++;
      }
      log(`scenario ${input.scenario}: ${check.same}/${check.compared} answers the same${check.differences.length ? `; first: ${check.differences[0]}` : ''}`);
      checks.push(check);
    }
  } finally {
    await main.stop(2000);
    await imported.stop(2000);
  }
  return { checks, skipped };
}

// --- main ---

async function main(): Promise<number> {
  const sourceDir = resolve(args['stack-dir'] ?? DEFAULT_BENCH_STACK);
  const targetDir = resolve(args['target-dir'] ?? join(ROOT, '.stack-import'));
  if (sourceDir === targetDir) throw new Error('--target-dir must differ from --stack-dir (the benchmark stack is the source)');
  const sourceStack = await benchStack(sourceDir, log);
  const targetStack = await benchStack(targetDir, log);
  const source = sourceStack.info;
  const target = targetStack.info;
  const flat = await sourceConnection(source);
  const doc = slotTopology(stackHosts(target), TARGET_SLOT);
  const topology = parseTopology(doc);
  // Provisions the target and reads its import ledger; the import itself runs in `shardql import` (with the served events).
  const storage = createStorage({ topology: () => topology, credentials: benchAdmin(target), events: null });
  let failed = false;
  try {
    const info = await mainDataset(flat);
    const counts: Record<string, number> = {};
    for (const t of SOURCE_TABLES) {
      const [rows] = await flat.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${SOURCE_SLOT.flatDatabase}.${t}`);
      counts[t] = Number(rows[0]!.n);
    }
    const sourceRows = Object.values(counts).reduce((a, b) => a + b, 0);
    // Repins are read twice: as pins (the pin itself), then as repins (its edge to the original, once every pin exists).
    const [repinRows] = await flat.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${SOURCE_SLOT.flatDatabase}.pins WHERE via_pin_id IS NOT NULL`);
    const expectedReads = sourceRows + Number(repinRows[0]!.n);
    log(`source ${SOURCE_SLOT.flatDatabase} on ${source.mysql.hosts[0]!.name} of ${sourceDir}: ${Object.entries(counts).map(([k, v]) => `${k} ${n(v)}`).join(', ')} (${n(sourceRows)} rows)`);

    // A read-only account on the source: SELECT on the flat database, nothing else.
    const password = randomBytes(18).toString('base64url');
    await flat.query(`CREATE USER IF NOT EXISTS '${READER}'@'%' IDENTIFIED BY '${password}'`);
    await flat.query(`ALTER USER '${READER}'@'%' IDENTIFIED BY '${password}'`);
    await flat.query(`REVOKE ALL PRIVILEGES, GRANT OPTION FROM '${READER}'@'%'`);
    await flat.query(`GRANT SELECT ON ${SOURCE_SLOT.flatDatabase}.* TO '${READER}'@'%'`);
    const h = source.mysql.hosts[0]!.primary;
    const url = `mysql://${READER}@${h.host}:${h.port}/${SOURCE_SLOT.flatDatabase}`;

    const etcd = new Etcd3({ hosts: [...target.etcd.endpoints] });
    try {
      await publishTopology(etcd, TARGET_SLOT.topologyKey, doc);
    } finally {
      etcd.close();
    }
    const writable = await makePrimariesWritable(new ShardAdmin({ credentials: benchAdmin(target) }), doc);
    if (writable.failed.length > 0) throw new Error(`target primaries not writable: ${writable.failed.map((f) => `${f.host}: ${f.error}`).join('; ')}`);

    const runs: ImportRunReport[] = [];
    for (const [i, w] of workerCounts.entries()) {
      log(`run ${i + 1}: resetting the target (${TARGET_SLOT.shards} shards ${TARGET_SLOT.shardBase}–${TARGET_SLOT.shardBase + TARGET_SLOT.shards - 1} + 64 mod shards on ${targetDir})`);
      await resetTarget(target, storage);
      log(`run ${i + 1}: importing with ${w} worker process${w > 1 ? 'es' : ''}${i === 0 && !args['no-profile'] ? ' (worker 1 CPU-profiled)' : ''}`);
      const r = await importRun({ sourceRows, workers: w, source, sourceDir, target, targetDir, storage, url, password, profile: i === 0 && !args['no-profile'] });
      if (r.rowsRead !== expectedReads) {
        log(`FAILED: the import read ${r.rowsRead} rows, the source has ${sourceRows} (+ ${expectedReads - sourceRows} repins read again)`);
        failed = true;
      }
      log(`run ${i + 1}: ${n(r.rowsRead)} rows read, ${n(r.rowsWritten)} written in ${(r.wallMs / 1000).toFixed(1)} s: ${n(r.rowsPerSecond)} rows/s (chunks ${n(r.rowsPerSecondOfChunks)} rows/s; planning ${(r.planMs / 1000).toFixed(1)} s); cores busy ${r.coresBusy} (load average ${r.loadAverage}): ${Object.entries(r.cpu).map(([k, v]) => `${k} ${v} s`).join(', ')}`);
      runs.push(r);
    }

    let verify: ImportVerifyReport | undefined;
    if (!args['no-verify']) {
      log('verify: shardql import --verify over every user, board and pin');
      const t = Date.now();
      const v = startChild('verify', [], ['import', '--from', url, '--name', LABEL, '--verify', '--json'], childEnv(target, targetDir, password));
      const code = await v.exited;
      const last = v.stdout.trim().split('\n').at(-1) ?? '';
      // No JSON result (the CLI failed or was killed): a failed run whose report still keeps the imports' numbers.
      const out = (last.startsWith('{') ? JSON.parse(last) : {}) as { checked?: number; differences?: number; list?: { text: string }[] };
      const why = last.startsWith('{') ? [] : [`no JSON result (exit ${code}): ${(v.stderr || v.stdout).slice(-2000)}`];
      verify = { ms: Date.now() - t, checked: out.checked ?? 0, differences: out.differences ?? -1, first: [...why, ...(out.list ?? []).slice(0, 20).map((d) => d.text)] };
      log(`verify: ${n(verify.checked)} checked in ${(verify.ms / 1000).toFixed(1)} s: ${verify.differences} differences (exit ${code})${verify.first.length ? `; first: ${verify.first.slice(0, 5).join(' | ')}` : ''}`);
      if (code !== 0 || verify.differences !== 0) failed = true;
      if (verify.checked !== counts.users! + counts.boards! + counts.pins!) {
        log(`verify checked ${verify.checked} objects, the source has ${counts.users! + counts.boards! + counts.pins!}`);
        failed = true;
      }
    }

    let scenarios: Awaited<ReturnType<typeof scenarioCheck>> | undefined;
    if (!args['no-scenarios']) {
      log('scenario check: the same requests to a gateway on the generated shards (main slot) and one on the imported shards');
      scenarios = await scenarioCheck({ source, target, info, targetStorage: storage, flat });
      for (const c of scenarios.checks) if (c.differences.length > 0 || c.compared === 0) failed = true;
      for (const sk of scenarios.skipped) log(`scenario ${sk}: skipped`);
    }

    const date = new Date().toISOString();
    const report: ImportReport = {
      tool: 'shardql-bench-import',
      date,
      command: COMMAND,
      machine: { nproc: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', memoryGiB: +(totalmem() / 2 ** 30).toFixed(1), node: process.version, os: `${type()} ${release()}` },
      loadAverage1m: { start: LOAD_AT_START, end: loadavg()[0]! },
      source: { stackDir: sourceDir, database: SOURCE_SLOT.flatDatabase, rows: counts, total: sourceRows },
      target: { stackDir: targetDir, shards: `${TARGET_SLOT.shardBase}–${TARGET_SLOT.shardBase + TARGET_SLOT.shards - 1}`, hosts: target.mysql.hosts.length, topologyKey: TARGET_SLOT.topologyKey, queuePrefix: QUEUE_PREFIX, label: LABEL },
      chunkRows: args['chunk-rows'] ? Number(args['chunk-rows']) : 'default',
      jobsPerWorker: args.concurrency ? Number(args.concurrency) : 'default',
      runs,
      verify: verify ?? null,
      scenarios: scenarios ?? null,
      failed,
      totalSeconds: Math.round((Date.now() - started) / 1000),
    };
    const dir = join(ROOT, 'bench/results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `import-${date.replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);

    const out: string[] = [`\nshardql import benchmark — ${date} — ${report.machine.nproc} cores, node ${report.machine.node}`];
    out.push(`source: ${SOURCE_SLOT.flatDatabase}, ${n(sourceRows)} rows (${Object.entries(counts).map(([k, v]) => `${k} ${n(v)}`).join(', ')})`);
    out.push('', `${'workers'.padEnd(8)}${'wall s'.padStart(8)}${'rows/s'.padStart(10)}${'written'.padStart(13)}${'cores'.padStart(7)}   per table rows/s`);
    for (const r of runs) {
      out.push(`${String(r.workers).padEnd(8)}${(r.wallMs / 1000).toFixed(1).padStart(8)}${n(r.rowsPerSecond).padStart(10)}${n(r.rowsWritten).padStart(13)}${r.coresBusy.toFixed(2).padStart(7)}   ${r.tables.map((t) => `${t.table} ${t.rowsPerSecond === null ? '-' : n(t.rowsPerSecond)}`).join(', ')}`);
      out.push(`${''.padEnd(8)}phases: ${r.phases.map((p) => `${p.phase} ${(p.ms / 1000).toFixed(1)} s`).join(', ')}; planning ${(r.planMs / 1000).toFixed(1)} s`);
      out.push(`${''.padEnd(8)}CPU s: ${Object.entries(r.cpu).map(([k, v]) => `${k} ${v}`).join(', ')}`);
      if (r.profile) {
        out.push(`${''.padEnd(8)}worker profile by package: ${r.profile.byPackage.map((p) => `${p.name} ${p.pct}%`).join(', ')}`);
        out.push(`${''.padEnd(8)}by file: ${r.profile.byFile.map((p) => `${p.name} ${p.pct}%`).join(', ')}`);
      }
    }
    if (verify) out.push('', `verify: ${n(verify.checked)} users, boards and pins in ${(verify.ms / 1000).toFixed(1)} s: ${verify.differences} differences`);
    if (scenarios) {
      out.push('', 'scenarios (imported vs generated shards, IDs through the import map):');
      for (const c of scenarios.checks) out.push(`  ${c.scenario.padEnd(16)} ${c.same}/${c.compared} the same${c.differences.length ? `\n    ${c.differences.slice(0, 5).join('\n    ')}` : ''}`);
      for (const sk of scenarios.skipped) out.push(`  skipped ${sk}`);
    }
    out.push('', `load average (1 min): ${report.loadAverage1m.start.toFixed(2)} at the start, ${report.loadAverage1m.end.toFixed(2)} at the end`);
    out.push('', `report: ${file}`, failed ? 'FAILED' : 'ok', '');
    process.stdout.write(out.join('\n'));
    // The docs' one home of the latest import numbers: only a whole successful run replaces it (not
    // --workers 0, --no-verify or --no-scenarios, which leave a part out, nor a failed run).
    if (workerCounts.length > 0 && verify && scenarios && !failed) {
      writeFileSync(join(ROOT, IMPORT_PAGE), importMarkdown(report, relative(ROOT, file)));
      log(`page: ${IMPORT_PAGE}`);
    }
    return failed ? 1 : 0;
  } finally {
    await storage.close();
    await flat.end();
    if (!args['keep-target'] && targetStack.startedHere) {
      log('stopping the target stack (this run started it)');
      await targetStack.stop();
    }
    if (sourceStack.startedHere) {
      log('stopping the benchmark stack (this run started it)');
      await sourceStack.stop();
    }
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench:import failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exit(1);
  },
);
