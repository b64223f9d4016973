/**
 * `shardql import --from mysql://user@host:port/db`: moves an unsharded database into the shards
 * through the job queue (docs/operations.md "Importing an unsharded database"). This process plans a pass,
 * records it in the ledger (the mod shard of the source label), enqueues one job per chunk of each
 * phase, and shows progress; `shardql worker` processes, on any machines, do the work. Killed at
 * any point, it is simply run again: it resumes the unfinished pass, and chunks already done are
 * skipped (and would write nothing if run again).
 */
import { readFileSync } from 'node:fs';
import type { Job } from 'bullmq';
import { importPassword, withSecretFiles } from '../config.ts';
import { chunkName, ImportConfigError, importKey, importNamespace, parseImportConfig, resolveSchema, SOURCE_LABEL, type SourceSchema } from '../core/importSchema.ts';
import { sourceOf, type ImportSpec } from '../core/importSpec.ts';
import { whileRetryable } from '../core/retry.ts';
import type { Topology } from '../core/topology.ts';
import { JobQueue } from '../jobs/jobQueue.ts';
import { JOB_KINDS } from '../jobs/registry.ts';
import { parsePlan, verifyChunk, type Difference, type ImportPlan } from '../services/importer.ts';
import { servedImportSpec } from '../product/served.ts';
import { servedModel } from '../core/model/served.ts';
import { deletesChunkName } from '../jobs/kinds/import.ts';
import { repairIntents } from '../services/repair.ts';
import type { ChunkRecord, ImportRun } from '../storage/importStore.ts';
import { ImportSource, parseSourceUrl, sourceUrl, type SourceLocation } from '../storage/importSource.ts';
import type { Storage } from '../storage/index.ts';
import { CliError, UsageError, type CliContext, type Command } from './command.ts';
import { seconds, table } from './format.ts';
import { configFor, println, publishedTopology, withJobQueue, withStorage } from './runtime.ts';

/**
 * Rows per chunk (one job): big enough that a job's fixed costs vanish, small enough to retry
 * cheaply. A chunk is spread over every shard (one transaction per shard and direction), so its
 * size sets the rows per commit: 20,000 imported the benchmark's flat database at 9,900 rows/s
 * against ~6,400 with 5,000 (`npm run bench:import`; docs/benchmarks.md "Import").
 */
export const DEFAULT_CHUNK_ROWS = 20_000;
/** `--since last` starts this long before the previous pass began (rows whose times lag their commit). */
export const SINCE_LAST_OVERLAP_MS = 60_000;
/**
 * The ledger is read every POLL_MS at first, then less often as a phase runs longer (a twentieth of
 * its time so far, at most MAX_POLL_MS): a delta pass of a cutover notices its end within 250 ms,
 * and a long pass does not spend a few percent of a core reading a growing ledger 4 times a second.
 */
const POLL_MS = 250;
const MAX_POLL_MS = 2000;

/** `last`, an ISO 8601 time, or epoch milliseconds. */
export function parseSince(text: string): number | 'last' {
  if (text === 'last') return 'last';
  if (/^[0-9]{1,15}$/.test(text)) return Number(text);
  const t = Date.parse(text);
  if (Number.isNaN(t)) throw new UsageError(`--since must be last, an ISO 8601 time or epoch milliseconds, got ${JSON.stringify(text)}`);
  return t;
}

export interface TableProgress {
  /** The source table (`pins`, `repins`, `likes`). */
  readonly table: string;
  readonly chunks: number;
  readonly chunksDone: number;
  readonly rowsPlanned: number;
  readonly rowsRead: number;
  readonly written: number;
  readonly rejected: number;
  /** Rows read per second since the table's first chunk began; null before any chunk finished. */
  readonly rowsPerSecond: number | null;
  /** Time left at that rate; 0 when done, null when unknown. */
  readonly etaMs: number | null;
}

/** Per-table progress of a pass from its plan and the chunks the ledger has, in the spec's phase order. Pure. */
export function progressOf(spec: ImportSpec, plan: ImportPlan, done: ReadonlyMap<string, ChunkRecord>, now: number): TableProgress[] {
  const out: TableProgress[] = [];
  for (const phase of spec.phases) {
    for (const t of phase) {
      const chunks = plan.chunks[t];
      if (!chunks) continue;
      let chunksDone = 0;
      let rowsRead = 0;
      let plannedDone = 0;
      let written = 0;
      let rejected = 0;
      let first = Infinity;
      let last = 0;
      chunks.forEach((c, i) => {
        const r = done.get(chunkName(t, i));
        if (!r) return;
        chunksDone++;
        rowsRead += r.rowsRead;
        plannedDone += c.rows;
        written += r.rowsWritten;
        rejected += r.rejected;
        first = Math.min(first, r.startedAt);
        last = Math.max(last, r.finishedAt);
      });
      const rowsPlanned = chunks.reduce((n, c) => n + c.rows, 0);
      const finished = chunksDone === chunks.length;
      const elapsed = (finished ? last : now) - first;
      const rate = chunksDone > 0 && elapsed > 0 ? (rowsRead * 1000) / elapsed : null;
      out.push({
        table: t,
        chunks: chunks.length,
        chunksDone,
        rowsPlanned,
        rowsRead,
        written,
        rejected,
        rowsPerSecond: rate === null ? null : Math.round(rate),
        etaMs: finished ? 0 : rate ? Math.round(((rowsPlanned - plannedDone) * 1000) / rate) : null,
      });
    }
  }
  return out;
}

const n = (v: number): string => v.toLocaleString('en-US');

function progressTable(progress: readonly TableProgress[]): string[] {
  return table([
    ['table', 'chunks', 'rows read/planned', 'written', 'rejected', 'rows/s', 'ETA'],
    ...progress.map((p) => [
      p.table,
      `${p.chunksDone}/${p.chunks}`,
      `${n(p.rowsRead)}/${n(p.rowsPlanned)}`,
      n(p.written),
      n(p.rejected),
      p.rowsPerSecond === null ? '-' : n(p.rowsPerSecond),
      p.etaMs === null ? '-' : p.etaMs === 0 ? 'done' : seconds(p.etaMs),
    ]),
  ]);
}

function runTitle(run: ImportRun, plan: ImportPlan): string {
  const kind = plan.since === null ? 'full pass' : `delta pass since ${new Date(plan.since).toISOString()}`;
  const state = run.finishedAt === null ? 'running' : `finished ${new Date(run.finishedAt).toISOString()}`;
  return `import ${run.source} run ${run.run} (${kind}, ${plan.url}): ${state}, started ${new Date(run.startedAt).toISOString()}`;
}

interface Setup {
  readonly spec: ImportSpec;
  readonly label: string;
  readonly location: SourceLocation;
  readonly source: ImportSource;
  readonly schema: SourceSchema;
  readonly notes: string[];
}

async function openSource(ctx: CliContext, from: string, configFile: string | undefined, name: string | undefined, shards: { user: string; password: string }): Promise<Setup> {
  let location: SourceLocation;
  try {
    location = parseSourceUrl(from);
  } catch (err) {
    throw new UsageError(`--from: ${(err as Error).message}`);
  }
  const label = (name ?? location.database).toLowerCase();
  if (!SOURCE_LABEL.test(label)) throw new UsageError(`--name must be 1-48 of a-z 0-9 _ . - (it names the source in the shards), got ${JSON.stringify(label)}`);
  const spec = servedImportSpec();
  let parsed;
  try {
    parsed = parseImportConfig(configFile === undefined ? undefined : JSON.parse(readFileSync(configFile, 'utf8')), spec);
  } catch (err) {
    throw new CliError(`--config ${configFile}: ${(err as Error).message}`);
  }
  let source: ImportSource;
  try {
    source = new ImportSource(location, importPassword(withSecretFiles(ctx.env).SHARDQL_IMPORT_PASSWORD ?? null, location.user, shards));
  } catch (err) {
    throw new CliError(`cannot read the source ${sourceUrl(location)}: ${(err as Error).message}`);
  }
  try {
    const types = await source.columnTypes();
    const { schema, notes } = resolveSchema(parsed, (t) => {
      const cols = types.get(t);
      return cols ? new Set(cols.keys()) : undefined;
    });
    return { spec, label, location, source, schema, notes };
  } catch (err) {
    await source.close();
    if (err instanceof ImportConfigError) throw new CliError(err.message);
    throw new CliError(`cannot read the source ${sourceUrl(location)}: ${(err as Error).message}`);
  }
}

/** The tables a schema has rows for, in phase order: a last pass only when its reference has a column. */
function tablesOf(spec: ImportSpec, schema: SourceSchema): string[] {
  return spec.sources
    .filter((s) => (s.kind === 'selfRef' ? (schema.tables[s.object]?.roles[s.field] ?? null) !== null : (schema.tables[s.alias] ?? null) !== null))
    .map((s) => s.alias);
}

async function planPass(setup: Setup, topology: Topology, since: number | null, chunkRows: number, deletes: boolean): Promise<ImportPlan> {
  const { spec } = setup;
  const chunks: Record<string, { range: { after: string | null; upTo: string | null }; rows: number }[]> = {};
  for (const t of tablesOf(spec, setup.schema)) chunks[t] = await setup.source.plan(setup.schema, sourceOf(spec, t), since, chunkRows);
  const deleted: Record<string, { range: { after: string | null; upTo: string | null }; rows: number }[]> = {};
  // The whole key space of each table, whatever `since`: a deleted row has no time to select it by.
  if (deletes) for (const t of spec.deletePhases.flat()) if ((setup.schema.tables[t] ?? null) !== null) deleted[t] = await setup.source.plan(setup.schema, sourceOf(spec, t), null, chunkRows);
  return {
    version: 2,
    source: setup.label,
    url: sourceUrl(setup.location),
    schema: setup.schema,
    openShards: Array.from({ length: topology.openShardCount }, (_, i) => topology.nthOpenShard(i)),
    since,
    chunks,
    ...(deletes ? { deletes: deleted } : {}),
  };
}

/** One chunk of a pass as the driver sees it: its name in the ledger, its job, and how to enqueue it. */
interface PassChunk {
  readonly name: string;
  readonly jobId: string;
  readonly enqueue: (queue: JobQueue<typeof JOB_KINDS>) => Promise<unknown>;
}

function importChunksOf(run: ImportRun, plan: ImportPlan, tables: readonly string[]): PassChunk[] {
  return tables.flatMap((table) =>
    (plan.chunks[table] ?? []).map((_, index) => {
      const payload = { source: run.source, run: run.run, table, index };
      return { name: chunkName(table, index), jobId: JOB_KINDS['import.chunk'].jobId!(payload), enqueue: (q: JobQueue<typeof JOB_KINDS>) => q.enqueue('import.chunk', payload) };
    }),
  );
}

function deleteChunksOf(run: ImportRun, plan: ImportPlan, tables: readonly string[]): PassChunk[] {
  return tables.flatMap((table) =>
    (plan.deletes?.[table] ?? []).map((_, index) => {
      const payload = { source: run.source, run: run.run, table, index };
      return { name: deletesChunkName(table, index), jobId: JOB_KINDS['import.deletes'].jobId!(payload), enqueue: (q: JobQueue<typeof JOB_KINDS>) => q.enqueue('import.deletes', payload) };
    }),
  );
}

/**
 * Runs one pass to the end: phase by phase (the import's, then the deletes pass's if planned),
 * enqueue what the ledger does not have yet, then wait for it, showing progress. A chunk whose job
 * failed for good is retried once per run of this command; failing again, the command stops with
 * its reason.
 */
async function drive(ctx: CliContext, spec: ImportSpec, storage: Storage, queue: JobQueue<typeof JOB_KINDS>, run: ImportRun, plan: ImportPlan, quiet: boolean): Promise<void> {
  const bullQueue = queue.queue('import');
  const retried = new Set<string>();
  let lastPrint = 0;
  let lastRows = -1;
  let idleSince = Date.now();
  let hinted = false;
  const phases = [
    ...spec.phases.map((phase) => {
      const tables = phase.filter((t) => plan.chunks[t] !== undefined);
      return { chunks: importChunksOf(run, plan, tables), lines: (done: ReadonlyMap<string, ChunkRecord>) => progressTable(progressOf(spec, plan, done, Date.now()).filter((p) => p.chunksDone > 0 || tables.includes(p.table))) };
    }),
    ...spec.deletePhases.map((phase) => {
      const tables = phase.filter((t) => plan.deletes?.[t] !== undefined);
      return { chunks: deleteChunksOf(run, plan, tables), lines: (done: ReadonlyMap<string, ChunkRecord>) => deletesProgress(plan, done, tables) };
    }),
  ];
  for (const phase of phases) {
    if (phase.chunks.length === 0) continue;
    let done = await storage.imports.chunks(run.source, run.run);
    for (const c of phase.chunks) {
      if (done.has(c.name)) continue;
      const job: Job | undefined = await bullQueue.getJob(c.jobId);
      if (job && (await job.getState()) === 'failed') {
        retried.add(job.id!);
        await job.retry('failed');
      } else {
        await c.enqueue(queue);
      }
    }
    const phaseStarted = Date.now();
    for (;;) {
      done = await storage.imports.chunks(run.source, run.run);
      const left = phase.chunks.filter((c) => !done.has(c.name));
      const rows = [...done.values()].reduce((s, c) => s + c.rowsRead, 0) + done.size;
      if (rows !== lastRows) (lastRows = rows), (idleSince = Date.now());
      if (!quiet && (Date.now() - lastPrint >= (ctx.stderr.isTTY ? 1000 : 5000) || left.length === 0)) {
        lastPrint = Date.now();
        for (const line of phase.lines(done)) println(ctx.stderr, line);
      }
      if (left.length === 0) break;
      // A chunk whose job ran out of attempts: once more, then give up with its reason.
      for (const job of await bullQueue.getJobs(['failed'], 0, 100, false)) {
        const id = job.id ?? '';
        if (!left.some((c) => c.jobId === id)) continue;
        if (retried.has(id)) throw new CliError(`chunk job ${id} failed ${job.attemptsMade} times: ${job.failedReason ?? 'no reason recorded'} (fix it and run the same command again: the pass resumes)`);
        retried.add(id);
        await job.retry('failed');
      }
      if (!hinted && Date.now() - idleSince > 15_000) {
        hinted = true;
        println(ctx.stderr, 'No chunk has finished for 15 s: is a worker serving the import queue? Start one: shardql worker (or shardql worker --queues import)');
      }
      await new Promise((r) => setTimeout(r, Math.min(MAX_POLL_MS, Math.max(POLL_MS, (Date.now() - phaseStarted) / 20))));
    }
  }
}

/** Objects and edges a deletes pass removed so far (`rowsWritten` of its chunks). */
function deletedSoFar(done: ReadonlyMap<string, ChunkRecord>): number {
  return [...done.values()].filter((c) => c.chunk.startsWith('deletes:')).reduce((s, c) => s + c.rowsWritten, 0);
}

function deletesProgress(plan: ImportPlan, done: ReadonlyMap<string, ChunkRecord>, tables: readonly string[]): string[] {
  return tables.map((t) => {
    const chunks = plan.deletes?.[t] ?? [];
    const finished = chunks.filter((_, i) => done.has(deletesChunkName(t, i)));
    const removed = chunks.reduce((s, _, i) => s + (done.get(deletesChunkName(t, i))?.rowsWritten ?? 0), 0);
    return `deletes ${t}: ${finished.length}/${chunks.length} chunks, ${n(removed)} deleted in the shards`;
  });
}

/** How often a chunk's comparison is tried when a database answers "retry later" (a busy host, a failover). */
const VERIFY_ATTEMPTS = 5;

/**
 * Runs one read-only comparison again after a retryable refusal (SHARD_UNAVAILABLE: a connection
 * or statement timed out on a busy host), with a growing pause, saying so on stderr; a verify of
 * hours must not die of one slow statement.
 */
function verifiedWithRetries<T>(ctx: CliContext, run: () => Promise<T>, what: string): Promise<T> {
  return whileRetryable(run, {
    attempts: VERIFY_ATTEMPTS,
    pauseMs: (n) => n * 1000,
    onRetry: (err, n) => println(ctx.stderr, `verify: ${what}: ${err.message}; again in ${n} s (${n}/${VERIFY_ATTEMPTS - 1})`),
  });
}

async function verify(ctx: CliContext, storage: Storage, setup: Setup, topology: Topology, chunkRows: number, json: boolean): Promise<number> {
  const plan: ImportPlan = { ...(await planPass(setup, topology, null, chunkRows, false)), chunks: {} };
  const differences: Difference[] = [];
  let checked = 0;
  const started = Date.now();
  for (const t of setup.spec.verified) {
    const ranges = await setup.source.plan(setup.schema, sourceOf(setup.spec, t), null, chunkRows);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < ranges.length) {
        const r = ranges[next++]!;
        const res = await verifiedWithRetries(ctx, () => verifyChunk({ spec: setup.spec, storage, source: setup.source, plan }, t, r.range), `${t} ${JSON.stringify(r.range)}`);
        checked += res.checked;
        differences.push(...res.differences);
      }
    };
    await Promise.all([worker(), worker()]);
  }
  if (json) println(ctx.stdout, JSON.stringify({ checked, differences: differences.length, list: differences.slice(0, 1000) }));
  else {
    for (const d of differences.slice(0, 200)) println(ctx.stdout, d.text);
    if (differences.length > 200) println(ctx.stdout, `… and ${differences.length - 200} more`);
    println(ctx.stdout, `verified ${n(checked)} ${inWords(setup.spec.verified)} of ${setup.label} in ${seconds(Date.now() - started)}: ${differences.length} differences`);
  }
  return differences.length === 0 ? 0 : 1;
}

/** `users, boards and pins`. */
function inWords(names: readonly string[]): string {
  return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;
}

const importCommand: Command = {
  name: 'import',
  summary: 'Import an unsharded MySQL database into the shards, as jobs run by shardql worker processes',
  options: {
    from: { type: 'string', value: 'URL', help: 'The source: mysql://user@host:port/db (password: $SHARDQL_IMPORT_PASSWORD); ?tls=1 or ?tls-ca=/path/ca.pem for TLS' },
    config: { type: 'string', value: 'FILE', help: 'Column mapping for a source whose tables or columns are named otherwise (JSON; see docs/operations.md)' },
    name: { type: 'string', value: 'LABEL', help: 'Names the source in the shards and the ledger (default: the database name)' },
    since: { type: 'string', value: 'TIME|last', help: 'A delta pass: only rows created or changed at or after TIME (ISO 8601 or epoch ms); last: since the previous pass began' },
    deletes: { type: 'boolean', help: 'Also carry rows deleted in the source into the shards (the product\'s deletes), after the pass; only before the switch (see docs/operations.md)' },
    'chunk-rows': { type: 'string', value: 'N', help: `Rows per job (default ${DEFAULT_CHUNK_ROWS})` },
    status: { type: 'boolean', help: 'Show the progress of the latest pass (rows/s and ETA per table) and exit' },
    verify: { type: 'boolean', help: 'Compare every object of the types that own lists (their counts, object data checksum, unique values) between the source and the shards; exit 1 on any difference' },
    find: { type: 'string', value: 'TYPE:ID', help: 'Print the new ID of an imported object by its old ID, as <type>:<old id> (the mod-shard lookup import:<type>)' },
    json: { type: 'boolean', help: 'Print the result as one JSON object (and no progress, unless --progress)' },
    progress: { type: 'boolean', help: 'With --json: still print the progress table to stderr (stdout keeps only the JSON)' },
  },
  details: [
    'Tables and phases come from the served model (docs/operations.md): an object table after the tables it',
    'references; then each reference of a type to its own type, the last objects and the relations. Each phase is',
    'split into jobs on the import queue, which every `shardql worker` serves: start more workers (on any machine) to',
    'import faster. Killed at any point (this command or a worker), run the same command again: the pass resumes',
    'and finishes with exactly the result an uninterrupted pass gives. A second pass over an unchanged source',
    'writes nothing. --deletes also deletes in the shards, by the product\'s own deletes, what the source deleted',
    '(only before the switch). Cutover: a full pass, delta passes (--since last --deletes) while the old system',
    'still takes writes, pause writes, a last delta pass, --verify, switch.',
  ].join('\n'),
  async run(args, ctx) {
    const from = args.string('from');
    if (from === undefined) throw new UsageError('--from is required (mysql://user@host:port/db)');
    const chunkRows = args.int('chunk-rows', DEFAULT_CHUNK_ROWS, 1, 1_000_000);
    const sinceArg = args.string('since');
    const since = sinceArg === undefined ? null : parseSince(sinceArg);
    const config = configFor(ctx);
    const { topology } = await publishedTopology(config);
    const setup = await openSource(ctx, from, args.string('config'), args.string('name'), config.mysql);
    const json = args.flag('json');
    try {
      for (const note of setup.notes) println(ctx.stderr, `note: ${note}`);
      return await withStorage(
        config,
        topology,
        async (storage) => {
          const find = args.string('find');
          if (find !== undefined) {
            const types = servedModel().objects.map((o) => o.key);
            const m = /^([A-Za-z]+):([0-9]{1,20})$/.exec(find);
            const type = m && types.includes(m[1]!) ? m[1]! : undefined;
            if (!m || !type) throw new UsageError(`--find must look like ${types.at(-1) ?? 'type'}:123 (${types.join(', ')}), got ${JSON.stringify(find)}`);
            const found = (await storage.imports.lookup(importNamespace(type), [importKey(setup.label, m[2]!)])).get(importKey(setup.label, m[2]!));
            if (found === undefined) throw new CliError(`no ${type} ${m[2]} of ${setup.label} was imported`);
            println(ctx.stdout, String(found));
            return 0;
          }
          if (args.flag('verify')) return verify(ctx, storage, setup, topology, chunkRows, json);
          if (args.flag('status')) {
            const run = await storage.imports.latestRun(setup.label);
            if (!run) throw new CliError(`nothing of ${setup.label} was imported yet`);
            const plan = parsePlan(run.plan);
            const progress = progressOf(setup.spec, plan, await storage.imports.chunks(run.source, run.run), Date.now());
            if (json) println(ctx.stdout, JSON.stringify({ run: run.run, finished: run.finishedAt !== null, since: plan.since, tables: progress }));
            else {
              println(ctx.stdout, runTitle(run, plan));
              for (const line of progressTable(progress)) println(ctx.stdout, line);
            }
            return 0;
          }

          // Resume the unfinished pass, or plan a new one.
          let run = await storage.imports.latestRun(setup.label);
          if (run && run.finishedAt === null) {
            println(ctx.stderr, `resuming run ${run.run} of ${setup.label} (started ${new Date(run.startedAt).toISOString()})${since !== null || args.flag('deletes') ? '; --since and --deletes apply to the next pass' : ''}`);
          } else {
            let sinceMs: number | null = null;
            if (since === 'last') {
              const last = await storage.imports.lastFinishedRun(setup.label);
              if (!last) throw new CliError(`--since last: no pass of ${setup.label} has finished yet; run a full pass first`);
              sinceMs = last.sourceClock - SINCE_LAST_OVERLAP_MS;
            } else sinceMs = since;
            const sourceClock = await setup.source.clock();
            const plan = await planPass(setup, topology, sinceMs, chunkRows, args.flag('deletes'));
            const next = (run?.run ?? 0) + 1;
            const startedAt = Date.now();
            if (!(await storage.imports.startRun({ source: setup.label, run: next, since: sinceMs, sourceClock, plan: JSON.stringify(plan), startedAt }))) {
              throw new CliError(`another shardql import of ${setup.label} started run ${next} at the same time; run this command again to follow it`);
            }
            run = (await storage.imports.run(setup.label, next))!;
            println(ctx.stderr, runTitle(run, plan));
          }
          const plan = parsePlan(run.plan);
          await withJobQueue(config, (queue) => drive(ctx, setup.spec, storage, queue, run, plan, json && !args.flag('progress')));
          // A worker killed inside one of the product's deletes leaves that write's intent behind, and the
          // chunk's next run skips the object (deleted already): the pass completes what crashes left, as
          // the gateways' repair pass would a few seconds later, before it says it is done.
          const repaired = plan.deletes
            ? await withJobQueue(config, (jobs) => withStorage(config, topology, (s) => repairIntents(s, topology, { minAgeMs: 0, jobs }), 4, { caches: true }))
            : { completed: 0, failed: 0 };
          if (repaired.failed > 0) throw new CliError(`${repaired.failed} interrupted writes could not be completed; run shardql repair, then this command again`);
          await storage.imports.finishRun(run.source, run.run);
          const done = await storage.imports.chunks(run.source, run.run);
          const progress = progressOf(setup.spec, plan, done, Date.now());
          const total = (k: 'rowsRead' | 'written' | 'rejected'): number => progress.reduce((s, p) => s + p[k], 0);
          const first = Math.min(...[...done.values()].map((c) => c.startedAt));
          const last = Math.max(...[...done.values()].map((c) => c.finishedAt));
          const ms = Number.isFinite(first) ? last - first : 0;
          const notes = [...done.values()].flatMap((c) => (c.notes === '' ? [] : c.notes.split('\n'))).slice(0, 50);
          if (json) {
            println(ctx.stdout, JSON.stringify({ run: run.run, since: plan.since, read: total('rowsRead'), written: total('written'), rejected: total('rejected'), deleted: deletedSoFar(done), repaired: repaired.completed, ms, tables: progress, notes }));
          } else {
            for (const note of notes) println(ctx.stdout, note);
            println(ctx.stdout, `run ${run.run} of ${setup.label}: ${n(total('rowsRead'))} rows read, ${n(total('written'))} rows written, ${n(total('rejected'))} rejected in ${seconds(ms)} (${ms > 0 ? n(Math.round((total('rowsRead') * 1000) / ms)) : '-'} rows/s)${plan.deletes ? `; ${n(deletedSoFar(done))} objects and edges deleted as the source deleted them${repaired.completed > 0 ? `, ${n(repaired.completed)} interrupted deletes completed` : ''}` : ''}`);
          }
          return 0;
        },
        8,
      );
    } finally {
      await setup.source.close();
    }
  },
};

export const importCommands: readonly Command[] = [importCommand];
