/** Text helpers for CLI output. Pure. */
import type { ShardSpan } from '../core/topology.ts';

/** `0–2047`, or `5` for a one-shard span. */
export function spanText(s: ShardSpan): string {
  return s.from === s.to ? `${s.from}` : `${s.from}–${s.to}`;
}

export function spanSize(s: ShardSpan): number {
  return s.to - s.from + 1;
}

/** `0–7, 16–23 (16)`: spans with their total shard count; `none` when empty. */
export function spansText(spans: readonly ShardSpan[], withCount = true): string {
  if (spans.length === 0) return 'none';
  const total = spans.reduce((n, s) => n + spanSize(s), 0);
  const list = spans.map(spanText).join(', ');
  return withCount ? `${list} (${total})` : list;
}

/** Left-aligned columns separated by two spaces; the first row is the header. */
export function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** A time gone by, to the second under an hour: `42 s`, `12 min 5 s`, `3 h 2 min`, `2 d 3 h`. */
export function ageText(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}

export function endpointText(e: { host: string; port: number } | undefined): string {
  return e === undefined ? '-' : `${e.host}:${e.port}`;
}
