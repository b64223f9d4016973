/**
 * The import benchmark's report (bench/import.ts) as a Markdown page, docs/benchmarks-import.md: the
 * one place the latest import numbers are written, so no number is copied into the docs by hand. A
 * full successful `npm run bench:import` rewrites the page from the report it has just written.
 *
 * Pure: a report in, the page's text out (bench/import.ts writes it). The report's shape is declared
 * here, where it is read; bench/import.ts builds it.
 */
import type { Attribution } from './profile.ts';

export const IMPORT_PAGE = 'docs/benchmarks-import.md';

/** The import's aim: source rows per second over the wall time, planning included. */
export const IMPORT_AIM_ROWS_PER_SECOND = 50_000;

/**
 * A 1-minute load average at the run's start at or above this means other work already ran on the
 * machine (the benchmark's own idle servers add ~0): its numbers are lower than a quiet machine's.
 */
export const BUSY_AT_START = 1;

/** One table of the source as one run imported it (the CLI's result, its span from the ledger). */
export interface ImportTableResult {
  table: string;
  chunks: number;
  rowsRead: number;
  written: number;
  rejected: number;
  rowsPerSecond: number | null;
  /** First chunk of the table started → its last finished. */
  ms: number;
}

/** One phase of the import (`users`, `boards`, `pins+repins`, …: IMPORT_PHASES), from the ledger. */
export interface ImportPhaseResult {
  phase: string;
  ms: number;
  rows: number;
  rowsPerSecond: number;
}

/** One import with a given number of worker processes. */
export interface ImportRunReport {
  workers: number;
  wallMs: number;
  /** First chunk started → last chunk finished (what the CLI's rows/s is over). */
  chunksMs: number;
  planMs: number;
  /** Rows read: every source row once, repins twice (as pins, then as repins). */
  rowsRead: number;
  rowsWritten: number;
  rejected: number;
  /** Source rows ÷ wall time (planning included). */
  rowsPerSecond: number;
  /** Rows read ÷ the chunks' span (what the CLI prints). */
  rowsPerSecondOfChunks: number;
  tables: ImportTableResult[];
  phases: ImportPhaseResult[];
  /** CPU seconds per process over the run (`cli`, `worker1`, `target mysql001-primary`, …). */
  cpu: Record<string, number>;
  /** Sum of `cpu` ÷ wall time. */
  coresBusy: number;
  /** Mean 1-minute load average of the machine during the run (other work on it shows here). */
  loadAverage: number;
  progressLines: string[];
  /** The first worker's CPU profile (`node --cpu-prof`), unless --no-profile; `file` is the saved profile. */
  profile?: Attribution & { file: string };
}

export interface ImportVerifyReport {
  ms: number;
  /** Users, boards and pins compared. */
  checked: number;
  /** -1 when `--verify` printed no result. */
  differences: number;
  first: string[];
}

/** One read scenario asked of the generated and of the imported shards. */
export interface ImportScenarioCheck {
  scenario: string;
  compared: number;
  same: number;
  differences: string[];
}

/** What bench/import.ts writes to bench/results/import-<date>.json. */
export interface ImportReport {
  tool: 'shardql-bench-import';
  date: string;
  /** The command line of the run (node flags, script, options). */
  command: string;
  machine: { nproc: number; cpu: string; memoryGiB: number; node: string; os: string };
  /** The machine's 1-minute load average (os.loadavg) when the benchmark started and when it ended. */
  loadAverage1m: { start: number; end: number };
  source: { stackDir: string; database: string; rows: Record<string, number>; total: number };
  target: { stackDir: string; shards: string; hosts: number; topologyKey: string; queuePrefix: string; label: string };
  chunkRows: number | 'default';
  jobsPerWorker: number | 'default';
  runs: ImportRunReport[];
  verify: ImportVerifyReport | null;
  scenarios: { checks: ImportScenarioCheck[]; skipped: string[] } | null;
  failed: boolean;
  totalSeconds: number;
}

/** 27940.6 → "27,941". */
const int = (v: number): string => Math.round(v).toLocaleString('en-US');
/** 151623 ms → "151.6 s". */
const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
/** Markdown cell text: pipes escaped. */
const cell = (text: string): string => text.replace(/\|/g, '\\|');
const plural = (count: number, one: string): string => `${count} ${one}${count === 1 ? '' : 's'}`;

/** Every key of the lists, in order of first appearance (runs may differ in tables, phases, processes). */
function union(lists: readonly (readonly string[])[]): string[] {
  return [...new Set(lists.flat())];
}

function machineLines(r: ImportReport): string[] {
  const m = r.machine;
  const { start, end } = r.loadAverage1m;
  const busy =
    start >= BUSY_AT_START
      ? `: **other work shared the machine** (≥ ${BUSY_AT_START} at the start), so the rows/s below are lower than a quiet machine's`
      : ': the machine was quiet when the run began';
  return [
    `- **Machine**: ${m.nproc} cores (${m.cpu}), ${m.memoryGiB} GiB memory, Node ${m.node}, ${m.os}`,
    `- **Load**: 1-minute load average ${start.toFixed(2)} at the start, ${end.toFixed(2)} at the end${busy} (each run's mean is in its row of the runs table)`,
  ];
}

function aimCell(rowsPerSecond: number): string {
  return rowsPerSecond >= IMPORT_AIM_ROWS_PER_SECOND ? 'reached' : '**not reached**';
}

function runsSection(r: ImportReport): string[] {
  if (r.runs.length === 0) return ['## Runs', '', 'No import ran (`--workers 0`): only the checks below, of what the target held.'];
  const out = [
    '## Runs',
    '',
    `Rows/s are source rows (${int(r.source.total)}) over the wall time, planning included; the chunks' rows/s is rows read`,
    `(repins twice) over the first chunk's start to the last one's end, as the CLI prints it. Jobs per worker: ${r.jobsPerWorker};`,
    `rows per chunk: ${r.chunkRows}. The aim is ${int(IMPORT_AIM_ROWS_PER_SECOND)} rows/s.`,
    '',
    '| workers | wall | planning | rows/s | chunks rows/s | rows read | rows written | cores busy | load average (mean) | aim |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...r.runs.map(
      (run) =>
        `| ${run.workers} | ${secs(run.wallMs)} | ${secs(run.planMs)} | ${int(run.rowsPerSecond)} | ${int(run.rowsPerSecondOfChunks)} | ${int(run.rowsRead)} | ${int(run.rowsWritten)} | ${run.coresBusy.toFixed(2)} | ${run.loadAverage.toFixed(1)} | ${aimCell(run.rowsPerSecond)} |`,
    ),
  ];
  const best = Math.max(...r.runs.map((run) => run.rowsPerSecond));
  out.push(
    '',
    best >= IMPORT_AIM_ROWS_PER_SECOND
      ? `The aim of ${int(IMPORT_AIM_ROWS_PER_SECOND)} rows/s is reached: ${int(best)} rows/s at best.`
      : `The aim of ${int(IMPORT_AIM_ROWS_PER_SECOND)} rows/s is **not reached**: ${int(best)} rows/s at best.`,
  );
  out.push('', `Shard rows written per source row: ${r.runs.map((run) => `${(run.rowsWritten / r.source.total).toFixed(2)} (${plural(run.workers, 'worker')})`).join(', ')}.`);

  const tables = union(r.runs.map((run) => run.tables.map((t) => t.table)));
  out.push(
    '',
    '### Rows/s per table',
    '',
    "Rows read of the table over its own span (its first chunk's start to its last one's end).",
    '',
    `| workers | ${tables.map(cell).join(' | ')} |`,
    `|---|${tables.map(() => '---|').join('')}`,
    ...r.runs.map((run) => {
      const cells = tables.map((name) => {
        const t = run.tables.find((x) => x.table === name);
        return t === undefined || t.rowsPerSecond === null ? '—' : int(t.rowsPerSecond);
      });
      return `| ${run.workers} | ${cells.join(' | ')} |`;
    }),
  );

  const phases = union(r.runs.map((run) => run.phases.map((p) => p.phase)));
  out.push(
    '',
    '### Phases',
    '',
    'Each phase from its first chunk\'s start to its last one\'s end (rows/s of its rows read), then planning.',
    '',
    `| workers | ${phases.map(cell).join(' | ')} | planning |`,
    `|---|${phases.map(() => '---|').join('')}---|`,
    ...r.runs.map((run) => {
      const cells = phases.map((name) => {
        const p = run.phases.find((x) => x.phase === name);
        return p === undefined ? '—' : `${secs(p.ms)} (${int(p.rowsPerSecond)} rows/s)`;
      });
      return `| ${run.workers} | ${cells.join(' | ')} | ${secs(run.planMs)} |`;
    }),
  );
  return out;
}

function cpuSection(r: ImportReport): string[] {
  const processes = union(r.runs.map((run) => Object.keys(run.cpu)));
  const total = (run: ImportRunReport): number => Object.values(run.cpu).reduce((s, v) => s + v, 0);
  const perRow = (run: ImportRunReport): number => (total(run) * 1e6) / r.source.total;
  const cores = r.machine.nproc;
  return [
    '## CPU seconds per process',
    '',
    "Each process's user + system time over the run (`/proc/<pid>/stat`); the `source` servers are the benchmark stack's,",
    "the `target` ones the import's own stack's.",
    '',
    `| process | ${r.runs.map((run) => plural(run.workers, 'worker')).join(' | ')} |`,
    `|---|${r.runs.map(() => '---|').join('')}`,
    ...processes.map((p) => `| ${cell(p)} | ${r.runs.map((run) => (run.cpu[p] === undefined ? '—' : run.cpu[p].toFixed(1))).join(' | ')} |`),
    `| all | ${r.runs.map((run) => total(run).toFixed(1)).join(' | ')} |`,
    `| cores busy (all ÷ wall) | ${r.runs.map((run) => run.coresBusy.toFixed(2)).join(' | ')} |`,
    `| CPU µs per source row | ${r.runs.map((run) => perRow(run).toFixed(1)).join(' | ')} |`,
    `| ceiling: ${r.machine.nproc} cores ÷ CPU per row, rows/s | ${r.runs.map((run) => int((cores * 1e6) / perRow(run))).join(' | ')} |`,
    '',
    `The ceiling is what the machine's ${r.machine.nproc} cores would import with nothing else running, at the run's CPU per row;`,
    `the aim of ${int(IMPORT_AIM_ROWS_PER_SECOND)} rows/s needs at most ${((cores * 1e6) / IMPORT_AIM_ROWS_PER_SECOND).toFixed(1)} µs of CPU per source row on them.`,
  ];
}

function verifySection(r: ImportReport): string[] {
  const v = r.verify;
  if (v === null) return ['## Verify', '', 'Not run (`--no-verify`).'];
  const result = v.differences === 0 ? '0 differences' : v.differences < 0 ? '**no result**' : `**${plural(v.differences, 'difference')}**`;
  return [
    '## Verify',
    '',
    `\`shardql import --verify\` of ${int(v.checked)} users, boards and pins (the source has ${int((r.source.rows.users ?? 0) + (r.source.rows.boards ?? 0) + (r.source.rows.pins ?? 0))}): ${secs(v.ms)}, ${result}.`,
    ...(v.first.length > 0 ? ['', 'First differences:', '', ...v.first.map((d) => `- ${d}`)] : []),
  ];
}

function scenarioSection(r: ImportReport): string[] {
  const s = r.scenarios;
  if (s === null) return ['## Scenario check', '', 'Not run (`--no-scenarios`).'];
  const out = [
    '## Scenario check',
    '',
    'The same requests to a gateway on the generated shards and one on the imported shards, the generated',
    "answers' IDs mapped to the imported ones.",
    '',
    '| scenario | compared | the same | differ |',
    '|---|---|---|---|',
    ...s.checks.map((c) => `| ${cell(c.scenario)} | ${c.compared} | ${c.same} | ${c.differences.length === 0 ? '0' : `**${c.differences.length}**`} |`),
  ];
  const differences = s.checks.flatMap((c) => c.differences.slice(0, 5));
  if (differences.length > 0) out.push('', 'First differences:', '', ...differences.map((d) => `- ${d}`));
  if (s.skipped.length > 0) out.push('', 'Not compared:', '', ...s.skipped.map((k) => `- ${k}`));
  return out;
}

/** How many entries of the profile's lists the page shows. */
const PROFILE_TOP = 8;

function profileSection(r: ImportReport): string[] {
  const profiled = r.runs.filter((run) => run.profile !== undefined);
  if (profiled.length === 0) return ['## Worker profile', '', 'No run was CPU-profiled (`--no-profile`).'];
  const out = ['## Worker profile'];
  for (const run of profiled) {
    const p = run.profile!;
    const share = (list: Attribution['byPackage']): string[] => list.slice(0, PROFILE_TOP).map((x) => `| ${cell(x.name)} | ${x.pct.toFixed(1)}% |`);
    out.push(
      '',
      `The first worker of the run with ${plural(run.workers, 'worker')} (\`node --cpu-prof\`, ${int(p.samples - p.idleSamples)} busy samples of ${int(p.samples)}):`,
      `self time in percent of busy samples, the top ${PROFILE_TOP} (profile: \`${p.file}\`).`,
      '',
      '| package or category | share |',
      '|---|---|',
      ...share(p.byPackage),
      '',
      '| project file | share |',
      '|---|---|',
      ...share(p.byFile),
    );
  }
  return out;
}

/**
 * The page for one report. `source` names the report file it was made from (shown on the page).
 * For example the report of a run of 2026-11-26 01:20 UTC gives a page that starts
 * "# Latest import benchmark run" and says "Run: 2026-11-26 01:20 UTC, 540 s in all".
 */
export function importMarkdown(report: ImportReport, source: string): string {
  const when = report.date.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC');
  const rows = Object.entries(report.source.rows)
    .map(([k, v]) => `${k} ${int(v)}`)
    .join(', ');
  const t = report.target;
  const out: string[] = [
    `<!-- Generated by bench/importMarkdown.ts from ${source} by \`npm run bench:import\`: do not edit; the next full run rewrites this page. -->`,
    '# Latest import benchmark run',
    '',
    'What this page is for: the numbers of the latest full `npm run bench:import`, as its report holds them. What',
    'the import benchmark does and how to read it is in [benchmarks.md](benchmarks.md#import).',
    '',
    `- **Run**: ended ${when}, ${report.totalSeconds} s in all${report.failed ? ' — **the run failed**' : ''}; report \`${source}\``,
    `- **Command**: \`${report.command}\``,
    ...machineLines(report),
    `- **Source**: \`${report.source.database}\`, ${int(report.source.total)} rows (${rows})`,
    `- **Target**: shards ${t.shards} on ${plural(t.hosts, 'host')}, topology key \`${t.topologyKey}\`, label \`${t.label}\``,
    '',
    ...runsSection(report),
    '',
    ...verifySection(report),
    '',
    ...scenarioSection(report),
    '',
    ...cpuSection(report),
    '',
    ...profileSection(report),
  ];
  return `${out.join('\n')}\n`;
}
