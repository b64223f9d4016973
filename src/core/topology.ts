import { ShardqlError } from './errors.ts';
import { ID_LAYOUT, MAX_SHARD, MAX_TYPE } from './ids.ts';
import { servedModel } from './model/served.ts';
import { compareTypeNumbers, type DeclaredType } from './model/typeNumbers.ts';
import { OBJECT_TYPES } from './objectTypes.ts';

/** The model this process serves: its type numbers must be the topology's. */
const MODEL_TYPES: readonly DeclaredType[] = servedModel().objects;

/**
 * The topology document, as published to etcd. Example (the seeds' layout, 2 hosts):
 *
 *   { "format": 1,
 *     "idLayout": { "reservedBits": 2, "shardBits": 16, "typeBits": 10, "localBits": 36,
 *                   "types": { "pin": 1, "board": 2, "user": 3, "comment": 4 } },
 *     "hosts": { "mysql001": { "primary": { "host": "10.0.0.1", "port": 3306 },
 *                               "replica": { "host": "10.0.0.2", "port": 3306 } }, … },
 *     "shards": { "open": [{ "from": 0, "to": 4095 }],
 *                 "ranges": [{ "from": 0, "to": 2047, "host": "mysql001" },
 *                            { "from": 2048, "to": 4095, "host": "mysql002" }] },
 *     "modShard": { "count": 4096, "ranges": [{ "from": 0, "to": 4095, "host": "mysql001" }] } }
 *
 * `ranges` says where every existing shard lives; `open` says where new users may land. A shard
 * can be in a range and not open (provisioned, or closed to new users), never open without a range.
 * `types` lists every type number ever given (model/typeNumbers.ts): the model's must match, and a
 * type the model dropped stays listed, its number reserved.
 */
export interface Endpoint {
  readonly host: string;
  readonly port: number;
}
export interface HostSpec {
  readonly primary: Endpoint;
  readonly replica?: Endpoint;
}
export interface ShardSpan {
  readonly from: number;
  readonly to: number;
}
export interface HostedSpan extends ShardSpan {
  readonly host: string;
}
export interface TopologyDoc {
  readonly format: 1;
  readonly idLayout: typeof ID_LAYOUT & { readonly types: Readonly<Record<string, number>> };
  readonly hosts: Readonly<Record<string, HostSpec>>;
  readonly shards: { readonly open: readonly ShardSpan[]; readonly ranges: readonly HostedSpan[] };
  readonly modShard: { readonly count: number; readonly ranges: readonly HostedSpan[] };
  /** Shards whose writes are paused (a move in progress): writes get WRITES_PAUSED, reads go on. */
  readonly pausedShards?: readonly ShardSpan[];
  /** Mod shards whose writes are paused, likewise (a move of mod shards). */
  readonly pausedModShards?: readonly ShardSpan[];
  /**
   * The moves (`topology move`) that paused shards and have neither flipped nor been called off: kept
   * beside their pause, so a pause left behind by a move that died says since when and where to.
   */
  readonly moves?: readonly PausingMove[];
}

/**
 * One move holding a pause. Example: `{ "kind": "shard", "shards": [{ "from": 4, "to": 5 }],
 * "to": "mysql003", "since": "2026-12-03T20:31:02.120Z" }`: shards 4–5, paused since then, are on
 * their way to mysql003. Every shard it names is paused (`pausedShards`, or `pausedModShards` for
 * `"kind": "modShard"`).
 */
export interface PausingMove {
  readonly kind: 'shard' | 'modShard';
  readonly shards: readonly ShardSpan[];
  /** The target host. */
  readonly to: string;
  /** When writes to these shards were paused, ISO 8601. */
  readonly since: string;
}

/** A validated topology with fast lookups. Immutable: a new version is a new object, swapped whole. */
export interface Topology {
  readonly doc: TopologyDoc;
  readonly openShardCount: number;
  /** Host name holding a shard, or undefined if no range covers it. */
  hostOfShard(shard: number): string | undefined;
  hostOfModShard(modShard: number): string | undefined;
  isOpen(shard: number): boolean;
  shardExists(shard: number): boolean;
  isPaused(shard: number): boolean;
  isModShardPaused(modShard: number): boolean;
  /** The i-th open shard, 0 <= i < openShardCount: lets placement pick uniformly over gaps. */
  nthOpenShard(i: number): number;
  hostSpec(host: string): HostSpec;
  /** Every shard in a range, grouped by host: what provisioning creates. */
  shardsByHost(): Map<string, number[]>;
  modShardsByHost(): Map<string, number[]>;
}

function bad(problem: string): never {
  throw new ShardqlError('INVALID_TOPOLOGY', `Invalid topology: ${problem}`, { problem });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkInt(v: unknown, what: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    bad(`${what} must be an integer in ${min}..${max}, got ${JSON.stringify(v)}`);
  }
  return v;
}

function checkEndpoint(v: unknown, what: string): Endpoint {
  if (!isObject(v)) bad(`${what} must be an object { host, port }`);
  if (typeof v.host !== 'string' || v.host.length === 0) bad(`${what}.host must be a non-empty string`);
  return { host: v.host, port: checkInt(v.port, `${what}.port`, 1, 65535) };
}

function checkSpans<T extends ShardSpan>(v: unknown, what: string, max: number, withHost: boolean): T[] {
  if (!Array.isArray(v)) bad(`${what} must be an array`);
  return v.map((s: unknown, i) => {
    if (!isObject(s)) bad(`${what}[${i}] must be an object`);
    const from = checkInt(s.from, `${what}[${i}].from`, 0, max);
    const to = checkInt(s.to, `${what}[${i}].to`, 0, max);
    if (from > to) bad(`${what}[${i}] runs backwards: ${from}–${to}`);
    if (!withHost) return { from, to } as T;
    if (typeof s.host !== 'string') bad(`${what}[${i}].host must be a host name`);
    return { from, to, host: s.host } as unknown as T;
  });
}

function span(s: ShardSpan): string {
  return s.from === s.to ? `${s.from}` : `${s.from}–${s.to}`;
}

/** Sorted, non-overlapping, known hosts. */
function checkHostedRanges(ranges: HostedSpan[], hosts: Record<string, HostSpec>, what: string): HostedSpan[] {
  const sorted = [...ranges].sort((a, b) => a.from - b.from);
  for (const r of sorted) {
    if (!(r.host in hosts)) bad(`${what} range ${span(r)} names unknown host '${r.host}'`);
  }
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const cur = sorted[i]!;
    if (cur.from <= prev.to) {
      bad(`${what} ranges overlap: ${span(prev)} (${prev.host}) and ${span(cur)} (${cur.host})`);
    }
  }
  return sorted;
}

function findRange(sorted: readonly HostedSpan[], shard: number): HostedSpan | undefined {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const r = sorted[mid]!;
    if (shard < r.from) hi = mid - 1;
    else if (shard > r.to) lo = mid + 1;
    else return r;
  }
  return undefined;
}

function inSpans(spans: readonly ShardSpan[], shard: number): boolean {
  return spans.some((s) => shard >= s.from && shard <= s.to);
}

/** `moves`: known kinds and target hosts, a time, and only shards their kind's pause holds. */
function checkMoves(v: unknown, hosts: Record<string, HostSpec>, paused: Record<PausingMove['kind'], ShardSpan[]>, modCount: number): PausingMove[] {
  if (!Array.isArray(v)) bad('moves must be an array');
  return v.map((m: unknown, i): PausingMove => {
    const what = `moves[${i}]`;
    if (!isObject(m)) bad(`${what} must be an object { kind, shards, to, since }`);
    if (m.kind !== 'shard' && m.kind !== 'modShard') bad(`${what}.kind must be "shard" or "modShard", got ${JSON.stringify(m.kind)}`);
    const shards = checkSpans<ShardSpan>(m.shards, `${what}.shards`, m.kind === 'shard' ? MAX_SHARD : modCount - 1, false);
    if (typeof m.to !== 'string' || !(m.to in hosts)) bad(`${what}.to must name a host of the map, got ${JSON.stringify(m.to)}`);
    if (typeof m.since !== 'string' || Number.isNaN(Date.parse(m.since))) bad(`${what}.since must be an ISO 8601 time, got ${JSON.stringify(m.since)}`);
    const field = m.kind === 'shard' ? 'pausedShards' : 'pausedModShards';
    for (const s of shards) {
      for (let n = s.from; n <= s.to; n++) {
        if (!inSpans(paused[m.kind], n)) bad(`${what} names ${m.kind === 'shard' ? 'shard' : 'mod shard'} ${n}, which ${field} does not pause: a move's record goes with its pause`);
      }
    }
    return { kind: m.kind, shards, to: m.to, since: m.since };
  });
}

/**
 * `idLayout.types`: names to numbers in 1..1023, each number given once; in number order, so two
 * documents listing the same types compare equal as JSON (cli/diff.ts) whatever order they came in.
 */
function checkTypes(v: unknown): Record<string, number> {
  if (!isObject(v)) bad('idLayout.types is missing');
  const holder = new Map<number, string>();
  for (const [name, n] of Object.entries(v)) {
    if (!/^[a-z][A-Za-z0-9]{0,63}$/.test(name)) bad(`idLayout.types has the name ${JSON.stringify(name)}, expected a type's key (pin, boardSection)`);
    const number = checkInt(n, `idLayout.types.${name}`, 1, MAX_TYPE);
    const first = holder.get(number);
    if (first !== undefined) bad(`idLayout.types gives ${number} to both ${first} and ${name}, expected each number once`);
    holder.set(number, name);
  }
  return inNumberOrder(Object.fromEntries([...holder].map(([n, name]) => [name, n])));
}

function inNumberOrder(types: Readonly<Record<string, number>>): Record<string, number> {
  return Object.fromEntries(Object.entries(types).sort(([, a], [, b]) => a - b));
}

/**
 * What a gateway or worker checks once, when it starts on `doc`: every type the topology lists is
 * one its model declares. A type dropped from the model keeps its number (IDs carrying it may
 * remain); a process that would not know it is refused rather than serving beside ones that do.
 * Versions swapped in later are only parsed: a type added to the topology by a newer model is fine.
 */
export function checkTypesAtStart(doc: TopologyDoc, model: readonly DeclaredType[] = MODEL_TYPES): void {
  const { disagree, undeclared } = compareTypeNumbers(model, doc.idLayout.types);
  const problems = [...disagree, ...undeclared];
  if (problems.length > 0) bad(problems.join('; '));
}

/**
 * `next` with the types `published` lists and `next` does not: publishing a new map never drops a
 * reserved number (a layout built from this model names only its types).
 */
export function keepReservedTypes(next: Topology, published: TopologyDoc | null): Topology {
  const reserved = Object.entries(published?.idLayout.types ?? {}).filter(([name]) => !(name in next.doc.idLayout.types));
  if (reserved.length === 0) return next;
  return parseTopology({ ...next.doc, idLayout: { ...next.doc.idLayout, types: { ...next.doc.idLayout.types, ...Object.fromEntries(reserved) } } });
}

/** Validates an untrusted document (from etcd or a file) and compiles its lookups. */
export function parseTopology(input: unknown): Topology {
  if (!isObject(input)) bad('the document must be a JSON object');
  if (input.format !== 1) bad(`format must be 1, got ${JSON.stringify(input.format)}`);

  const layout = input.idLayout;
  if (!isObject(layout)) bad('idLayout is missing');
  for (const key of Object.keys(ID_LAYOUT) as (keyof typeof ID_LAYOUT)[]) {
    if (layout[key] !== ID_LAYOUT[key]) {
      bad(`idLayout.${key} is ${JSON.stringify(layout[key])}, this gateway decodes ${ID_LAYOUT[key]}`);
    }
  }
  const types = checkTypes(layout.types);
  const { disagree } = compareTypeNumbers(MODEL_TYPES, types);
  if (disagree.length > 0) bad(disagree.join('; '));

  if (!isObject(input.hosts) || Object.keys(input.hosts).length === 0) bad('hosts must name at least one host');
  const hosts: Record<string, HostSpec> = {};
  for (const [name, spec] of Object.entries(input.hosts)) {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) bad(`host name ${JSON.stringify(name)} must be 1–64 letters, digits, '.', '_' or '-'`);
    if (!isObject(spec)) bad(`hosts.${name} must be an object`);
    const primary = checkEndpoint(spec.primary, `hosts.${name}.primary`);
    hosts[name] = spec.replica === undefined ? { primary } : { primary, replica: checkEndpoint(spec.replica, `hosts.${name}.replica`) };
  }

  const shardsIn = input.shards;
  if (!isObject(shardsIn)) bad('shards is missing');
  const open = checkSpans<ShardSpan>(shardsIn.open, 'shards.open', MAX_SHARD, false).sort((a, b) => a.from - b.from);
  if (open.length === 0) bad('shards.open must open at least one shard');
  for (let i = 1; i < open.length; i++) {
    if (open[i]!.from <= open[i - 1]!.to) bad(`open shard spans overlap: ${span(open[i - 1]!)} and ${span(open[i]!)}`);
  }
  const ranges = checkHostedRanges(checkSpans<HostedSpan>(shardsIn.ranges, 'shards.ranges', MAX_SHARD, true), hosts, 'shard');
  for (const o of open) {
    for (let s = o.from; s <= o.to; s++) {
      const r = findRange(ranges, s);
      if (r === undefined) {
        let end = s;
        while (end < o.to && findRange(ranges, end + 1) === undefined) end++;
        bad(`open shards ${span({ from: s, to: end })} have no host: no range covers them`);
      }
      s = Math.min(o.to, r.to);
    }
  }

  const mod = input.modShard;
  if (!isObject(mod)) bad('modShard is missing');
  const modCount = checkInt(mod.count, 'modShard.count', 1, MAX_SHARD + 1);
  const modRanges = checkHostedRanges(checkSpans<HostedSpan>(mod.ranges, 'modShard.ranges', MAX_SHARD, true), hosts, 'mod shard');
  for (let s = 0; s < modCount; s++) {
    const r = findRange(modRanges, s);
    if (r === undefined) bad(`mod shard ${s} has no host: modShard.ranges must cover 0–${modCount - 1}`);
    s = r.to;
  }

  const paused = input.pausedShards === undefined ? [] : checkSpans<ShardSpan>(input.pausedShards, 'pausedShards', MAX_SHARD, false);
  const pausedMod = input.pausedModShards === undefined ? [] : checkSpans<ShardSpan>(input.pausedModShards, 'pausedModShards', modCount - 1, false);
  const moves = input.moves === undefined ? [] : checkMoves(input.moves, hosts, { shard: paused, modShard: pausedMod }, modCount);

  const doc: TopologyDoc = {
    format: 1,
    idLayout: { ...ID_LAYOUT, types },
    hosts,
    shards: { open, ranges },
    modShard: { count: modCount, ranges: modRanges },
    ...(paused.length > 0 ? { pausedShards: paused } : {}),
    ...(pausedMod.length > 0 ? { pausedModShards: pausedMod } : {}),
    ...(moves.length > 0 ? { moves } : {}),
  };
  return compile(doc);
}

function compile(doc: TopologyDoc): Topology {
  const { open, ranges } = doc.shards;
  const openStarts: number[] = [];
  let openShardCount = 0;
  for (const o of open) {
    openStarts.push(openShardCount);
    openShardCount += o.to - o.from + 1;
  }
  const groupByHost = (rs: readonly HostedSpan[], limit: number): Map<string, number[]> => {
    const out = new Map<string, number[]>();
    for (const r of rs) {
      const list = out.get(r.host) ?? [];
      for (let s = r.from; s <= Math.min(r.to, limit); s++) list.push(s);
      out.set(r.host, list);
    }
    return out;
  };
  return {
    doc,
    openShardCount,
    hostOfShard: (shard) => findRange(ranges, shard)?.host,
    hostOfModShard: (m) => (m < doc.modShard.count ? findRange(doc.modShard.ranges, m)?.host : undefined),
    isOpen: (shard) => inSpans(open, shard),
    shardExists: (shard) => findRange(ranges, shard) !== undefined,
    isPaused: (shard) => inSpans(doc.pausedShards ?? [], shard),
    isModShardPaused: (m) => inSpans(doc.pausedModShards ?? [], m),
    nthOpenShard(i) {
      if (!Number.isInteger(i) || i < 0 || i >= openShardCount) throw new RangeError(`open shard index ${i} out of 0..${openShardCount - 1}`);
      let k = open.length - 1;
      while (openStarts[k]! > i) k--;
      return open[k]!.from + (i - openStarts[k]!);
    },
    hostSpec(host) {
      const spec = doc.hosts[host];
      if (spec === undefined) throw new ShardqlError('INVALID_TOPOLOGY', `Unknown host '${host}'`);
      return spec;
    },
    shardsByHost: () => groupByHost(ranges, MAX_SHARD),
    modShardsByHost: () => groupByHost(doc.modShard.ranges, doc.modShard.count - 1),
  };
}

export interface EvenLayoutOptions {
  /** Host names with their endpoints, in order: shard ranges are dealt out to them evenly. */
  readonly hosts: Readonly<Record<string, HostSpec>>;
  /** Shards 0..shards-1 are created and opened. Seeds: 4096. */
  readonly shards: number;
  /** Mod shards 0..modShards-1. Default: min(shards, 4096). */
  readonly modShards?: number;
}

/**
 * The seeds' layout: N hosts, each holding one contiguous block. Example: 2 hosts × 4096 shards →
 * mysql001 holds 0–2047, mysql002 holds 2048–4095.
 */
export function evenLayout(opts: EvenLayoutOptions): TopologyDoc {
  const names = Object.keys(opts.hosts);
  if (names.length === 0) bad('at least one host is needed');
  const split = (count: number): HostedSpan[] => {
    const per = Math.ceil(count / names.length);
    const out: HostedSpan[] = [];
    names.forEach((host, i) => {
      const from = i * per;
      const to = Math.min(count, (i + 1) * per) - 1;
      if (from <= to) out.push({ from, to, host });
    });
    return out;
  };
  const modCount = opts.modShards ?? Math.min(opts.shards, 4096);
  return {
    format: 1,
    idLayout: { ...ID_LAYOUT, types: inNumberOrder(OBJECT_TYPES) },
    hosts: opts.hosts,
    shards: { open: [{ from: 0, to: opts.shards - 1 }], ranges: split(opts.shards) },
    modShard: { count: modCount, ranges: split(modCount) },
  };
}

/** `db03429`: the database of one shard. The only way shard database names are made. */
export function shardDatabase(shard: number): string {
  if (!Number.isInteger(shard) || shard < 0 || shard > MAX_SHARD) throw new RangeError(`no shard ${shard}`);
  return `db${String(shard).padStart(5, '0')}`;
}

/** `msdb01524`: the database of one mod shard. */
export function modShardDatabase(modShard: number): string {
  if (!Number.isInteger(modShard) || modShard < 0 || modShard > MAX_SHARD) throw new RangeError(`no mod shard ${modShard}`);
  return `msdb${String(modShard).padStart(5, '0')}`;
}
