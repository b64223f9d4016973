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

export function endpointText(e: { host: string; port: number } | undefined): string {
  return e === undefined ? '-' : `${e.host}:${e.port}`;
}
