/**
 * What publishing a topology would change, as short lines for an operator to confirm:
 *
 *   + host mysql003: primary 10.0.0.5:3306, replica 10.0.0.6:3306
 *   ~ shards 2048–4095 (2048) move mysql002 → mysql003
 *   + open shards 4096–8191 (4096)
 *
 * `+` adds, `-` removes, `~` changes. Ranges are compared shard by shard (split at every boundary of
 * either document), so re-cutting a range without moving a shard is no change. Pure.
 */
import type { Endpoint, HostSpec, ShardSpan, TopologyDoc } from '../core/topology.ts';
import { endpointText, spanText, spanSize } from './format.ts';

interface Labelled extends ShardSpan {
  readonly label: string;
}

interface Change extends ShardSpan {
  readonly before: string | undefined;
  readonly after: string | undefined;
}

function labelAt(spans: readonly Labelled[], shard: number): string | undefined {
  return spans.find((s) => shard >= s.from && shard <= s.to)?.label;
}

/** Maximal runs of shards whose label differs between `a` and `b`, in shard order. */
function changedRuns(a: readonly Labelled[], b: readonly Labelled[]): Change[] {
  const points = new Set<number>();
  for (const s of [...a, ...b]) {
    points.add(s.from);
    points.add(s.to + 1);
  }
  const sorted = [...points].sort((x, y) => x - y);
  const out: { from: number; to: number; before: string | undefined; after: string | undefined }[] = [];
  for (let i = 0; i + 1 < sorted.length; i++) {
    const from = sorted[i]!;
    const to = sorted[i + 1]! - 1;
    const before = labelAt(a, from);
    const after = labelAt(b, from);
    if (before === after) continue;
    const last = out.at(-1);
    if (last && last.to + 1 === from && last.before === before && last.after === after) last.to = to;
    else out.push({ from, to, before, after });
  }
  return out;
}

const flagged = (spans: readonly ShardSpan[] | undefined): Labelled[] => (spans ?? []).map((s) => ({ from: s.from, to: s.to, label: 'yes' }));
const hosted = (spans: readonly (ShardSpan & { host: string })[]): Labelled[] => spans.map((s) => ({ from: s.from, to: s.to, label: s.host }));
const shards = (s: ShardSpan): string => `${spanText(s)} (${spanSize(s)})`;

function sameEndpoint(a: Endpoint | undefined, b: Endpoint | undefined): boolean {
  return a?.host === b?.host && a?.port === b?.port;
}

function hostText(spec: HostSpec): string {
  return spec.replica ? `primary ${endpointText(spec.primary)}, replica ${endpointText(spec.replica)}` : `primary ${endpointText(spec.primary)}, no replica`;
}

function hostLines(a: Readonly<Record<string, HostSpec>>, b: Readonly<Record<string, HostSpec>>): string[] {
  const out: string[] = [];
  for (const name of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    const before = a[name];
    const after = b[name];
    if (before === undefined && after !== undefined) out.push(`+ host ${name}: ${hostText(after)}`);
    else if (before !== undefined && after === undefined) out.push(`- host ${name} (${hostText(before)})`);
    else if (before !== undefined && after !== undefined) {
      const changes: string[] = [];
      if (!sameEndpoint(before.primary, after.primary)) changes.push(`primary ${endpointText(before.primary)} → ${endpointText(after.primary)}`);
      if (!sameEndpoint(before.replica, after.replica)) {
        changes.push(`replica ${before.replica ? endpointText(before.replica) : 'none'} → ${after.replica ? endpointText(after.replica) : 'none'}`);
      }
      if (changes.length > 0) out.push(`~ host ${name}: ${changes.join(', ')}`);
    }
  }
  return out;
}

function placementLines(what: string, a: Labelled[], b: Labelled[]): string[] {
  return changedRuns(a, b).map((c) => {
    if (c.before === undefined) return `+ ${what} ${shards(c)} on ${c.after}`;
    if (c.after === undefined) return `- ${what} ${shards(c)} dropped from the map (were on ${c.before})`;
    return `~ ${what} ${shards(c)} move ${c.before} → ${c.after}`;
  });
}

function flagLines(a: readonly ShardSpan[] | undefined, b: readonly ShardSpan[] | undefined, on: string, off: string): string[] {
  return changedRuns(flagged(a), flagged(b)).map((c) => (c.after !== undefined ? `+ ${on} ${shards(c)}` : `- ${off} ${shards(c)}`));
}

/**
 * The changes from the published document `a` (null: nothing published) to `b`. Empty when
 * publishing `b` would change nothing that routes a request.
 */
export function diffTopology(a: TopologyDoc | null, b: TopologyDoc): string[] {
  const before = a ?? {
    format: 1 as const,
    idLayout: b.idLayout,
    hosts: {},
    shards: { open: [], ranges: [] },
    modShard: { count: 0, ranges: [] },
  };
  const lines = [
    ...hostLines(before.hosts, b.hosts),
    ...placementLines('shards', hosted(before.shards.ranges), hosted(b.shards.ranges)),
    ...flagLines(before.shards.open, b.shards.open, 'open shards', 'close shards'),
  ];
  if (before.modShard.count !== b.modShard.count) {
    lines.push(
      a === null
        ? `+ mod shard count ${b.modShard.count}`
        : `~ mod shard count ${before.modShard.count} → ${b.modShard.count} (md5(key) mod count changes: existing usernames and emails map to other mod shards)`,
    );
  }
  lines.push(
    ...placementLines('mod shards', hosted(before.modShard.ranges), hosted(b.modShard.ranges)),
    ...flagLines(before.pausedShards, b.pausedShards, 'pause writes on shards', 'resume writes on shards'),
    ...flagLines(before.pausedModShards, b.pausedModShards, 'pause writes on mod shards', 'resume writes on mod shards'),
  );
  if (JSON.stringify(before.idLayout) !== JSON.stringify(b.idLayout)) {
    lines.push(`~ idLayout ${JSON.stringify(before.idLayout)} → ${JSON.stringify(b.idLayout)}`);
  }
  return lines;
}
