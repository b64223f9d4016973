/**
 * Span arithmetic for topology changes: shard spans as the operator types them, merged, subtracted,
 * and ranges re-assigned to another host. Pure.
 */
import { MAX_SHARD } from '../../core/ids.ts';
import type { HostedSpan, ShardSpan } from '../../core/topology.ts';
import { TopologyOperationError } from './errors.ts';

/** `"4-5"`, `"4..5"`, `"4–5"` or `"7"` → { from, to }. */
export function parseShardSpan(text: string, what = 'shards'): ShardSpan {
  const m = /^\s*(\d+)\s*(?:(?:-|–|\.\.)\s*(\d+))?\s*$/.exec(text);
  if (!m) throw new TopologyOperationError(`${what} must be a shard number or a span like 4-7, got ${JSON.stringify(text)}`);
  const from = Number(m[1]);
  const to = m[2] === undefined ? from : Number(m[2]);
  if (from > to) throw new TopologyOperationError(`${what} ${from}-${to} runs backwards`);
  if (to > MAX_SHARD) throw new TopologyOperationError(`${what} must be at most ${MAX_SHARD}, got ${to}`);
  return { from, to };
}

export function spanLabel(s: ShardSpan): string {
  return s.from === s.to ? `${s.from}` : `${s.from}–${s.to}`;
}

/** Sorted, with overlapping and adjacent spans joined: [5–6, 0–2, 3–3] → [0–3, 5–6]. */
export function mergeSpans(spans: readonly ShardSpan[]): ShardSpan[] {
  const sorted = [...spans].sort((a, b) => a.from - b.from);
  const out: { from: number; to: number }[] = [];
  for (const s of sorted) {
    const last = out.at(-1);
    if (last && s.from <= last.to + 1) last.to = Math.max(last.to, s.to);
    else out.push({ from: s.from, to: s.to });
  }
  return out;
}

/** `spans` without the shards of `cut`: [0–9] minus 3–4 → [0–2, 5–9]. */
export function subtractSpan(spans: readonly ShardSpan[], cut: ShardSpan): ShardSpan[] {
  const out: ShardSpan[] = [];
  for (const s of spans) {
    if (s.to < cut.from || s.from > cut.to) out.push({ from: s.from, to: s.to });
    else {
      if (s.from < cut.from) out.push({ from: s.from, to: cut.from - 1 });
      if (s.to > cut.to) out.push({ from: cut.to + 1, to: s.to });
    }
  }
  return out;
}

/** The parts of `span` that `spans` cover, in order: 0–9 within [2–3, 8–20] → [2–3, 8–9]. */
export function intersect(spans: readonly ShardSpan[], span: ShardSpan): ShardSpan[] {
  const out: ShardSpan[] = [];
  for (const s of [...spans].sort((a, b) => a.from - b.from)) {
    const from = Math.max(s.from, span.from);
    const to = Math.min(s.to, span.to);
    if (from <= to) out.push({ from, to });
  }
  return out;
}

/** Every shard of the spans, ascending. */
export function shardsOf(spans: readonly ShardSpan[]): number[] {
  const out: number[] = [];
  for (const s of mergeSpans(spans)) for (let i = s.from; i <= s.to; i++) out.push(i);
  return out;
}

/** Shard numbers → the fewest spans: [1, 2, 3, 7] → [1–3, 7–7]. */
export function spansOf(shards: readonly number[]): ShardSpan[] {
  return mergeSpans(shards.map((s) => ({ from: s, to: s })));
}

/**
 * Ranges with the shards of `span` given to `host`; the rest keep their host, and neighbours on
 * one host are joined. Example: [0–7 a, 8–15 b] with 4–5 → c gives [0–3 a, 4–5 c, 6–7 a, 8–15 b].
 * Shards of `span` in no range are added.
 */
export function assignSpan(ranges: readonly HostedSpan[], span: ShardSpan, host: string): HostedSpan[] {
  const pieces: HostedSpan[] = [];
  for (const r of ranges) {
    for (const rest of subtractSpan([r], span)) pieces.push({ ...rest, host: r.host });
  }
  pieces.push({ from: span.from, to: span.to, host });
  pieces.sort((a, b) => a.from - b.from);
  const out: { from: number; to: number; host: string }[] = [];
  for (const p of pieces) {
    const last = out.at(-1);
    if (last && last.host === p.host && p.from === last.to + 1) last.to = p.to;
    else out.push({ from: p.from, to: p.to, host: p.host });
  }
  return out;
}

/** Which host holds each part of `span` (undefined: no range): 6–9 over [0–7 a, 8–15 b] → [6–7 a, 8–9 b]. */
export function placementOf(ranges: readonly HostedSpan[], span: ShardSpan): { from: number; to: number; host: string | undefined }[] {
  const covered = intersect(ranges, span);
  const out: { from: number; to: number; host: string | undefined }[] = [];
  let next = span.from;
  for (const c of covered) {
    if (c.from > next) out.push({ from: next, to: c.from - 1, host: undefined });
    const host = ranges.find((r) => c.from >= r.from && c.from <= r.to)!.host;
    out.push({ from: c.from, to: c.to, host });
    next = c.to + 1;
  }
  if (next <= span.to) out.push({ from: next, to: span.to, host: undefined });
  return out;
}
