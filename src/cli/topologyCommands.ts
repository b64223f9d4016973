/** `shardql topology publish | show | diff`: the shard map in etcd. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Etcd3 } from 'etcd3';
import { groupBy } from '../core/groupBy.ts';
import { isShardqlError } from '../core/errors.ts';
import { modShardCountChange } from '../core/modShardCount.ts';
import { MAX_SHARD } from '../core/ids.ts';
import { evenLayout, keepReservedTypes, parseTopology, type HostedSpan, type HostSpec, type Topology, type TopologyDoc } from '../core/topology.ts';
import type { GatewayConfig } from '../config.ts';
import type { StackInfo } from '../stack/localStack.ts';
import { ShardAdmin } from '../storage/shardAdmin.ts';
import { publishTopologyIfUnchanged, TopologyChangedError } from '../topology/etcdTopology.ts';
import { gatewaysBehind, readGateways, type GatewaySeen } from '../topology/etcdTopologySource.ts';
import { moveCommands, SHARD_KINDS, type ShardKind } from '../topology/operations/moveShards.ts';
import { makePrimariesWritable, primariesLines } from '../topology/operations/primaries.ts';
import { subtractSpan } from '../topology/operations/spans.ts';
import { CliError, UsageError, type CliContext, type Command, type ParsedArgs } from './command.ts';
import { diffTopology } from './diff.ts';
import { ageText, endpointText, spanSize, spansText, table } from './format.ts';
import { configFor, confirm, println, stackHosts, stackInfo, withEtcd } from './runtime.ts';

/** Shards of the layout `publish` and `dev` build over the local stack unless told otherwise. */
export const DEFAULT_STACK_SHARDS = 16;

/** The document in etcd as it is, valid or not. */
export interface PublishedDoc {
  /** etcd mod revision; null when nothing is published. */
  readonly modRevision: string | null;
  readonly raw: string | null;
  readonly topology: Topology | null;
  /** Why the stored document is not a valid topology. */
  readonly problem?: string;
}

function etcdWhere(config: GatewayConfig): string {
  return `${config.topologyKey} (etcd ${config.etcdEndpoints.join(',')})`;
}

export async function readPublished(etcd: Etcd3, config: GatewayConfig): Promise<PublishedDoc> {
  let res;
  try {
    res = await etcd.get(config.topologyKey).exec();
  } catch (err) {
    throw new CliError(`Cannot read the topology from etcd at ${config.etcdEndpoints.join(',')}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const kv = res.kvs[0];
  if (!kv) return { modRevision: null, raw: null, topology: null };
  const raw = kv.value.toString('utf8');
  try {
    return { modRevision: kv.mod_revision, raw, topology: parseTopology(JSON.parse(raw)) };
  } catch (err) {
    return { modRevision: kv.mod_revision, raw, topology: null, problem: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * Writes `next` only if the key still has the revision the operator was shown (compare-and-swap),
 * so a change published meanwhile by someone else is never overwritten unseen; a change of the
 * mod-shard count is refused (publishTopologyIfUnchanged). Returns the new etcd revision.
 */
export async function publishIfUnchanged(etcd: Etcd3, key: string, next: Topology, expectedModRevision: string | null): Promise<string> {
  try {
    return await publishTopologyIfUnchanged(etcd, key, next.doc, expectedModRevision);
  } catch (err) {
    if (err instanceof TopologyChangedError) {
      throw new CliError(`The topology at ${key} was changed by someone else meanwhile; nothing was published. Run the command again to see the new differences`);
    }
    if (isShardqlError(err, 'INVALID_TOPOLOGY')) throw new CliError(err.message);
    throw err;
  }
}

/**
 * Every server starts read-only: makes the primaries of `doc` writable (with the admin account) and
 * says so, one line per host. Returns false when some primary is still read-only (unreachable, or
 * a replica), after saying why.
 */
export async function ensurePrimariesWritable(ctx: CliContext, config: GatewayConfig, doc: TopologyDoc, what: string): Promise<boolean> {
  const report = await makePrimariesWritable(new ShardAdmin({ credentials: config.mysqlAdmin ?? config.mysql }), doc);
  println(ctx.stdout, `Primaries of ${what}; every other server stays read-only:`);
  for (const line of primariesLines(report)) println(ctx.stdout, `  ${line}`);
  if (report.failed.length > 0) {
    println(ctx.stderr, `${report.failed.length} primary(ies) are still read-only: writes to ${report.failed.map((f) => f.host).join(', ')} are refused until \`shardql topology writable\` succeeds`);
  }
  return report.failed.length === 0;
}

/**
 * The servers a map names that are none of `hosts`' servers, as `mysql001 primary 10.0.0.5:3306`.
 * Host names do not count, endpoints do: after a promotion the map names a stack's replica as its
 * host's primary, and that map is still the stack's.
 */
export function serversOutside(doc: TopologyDoc, hosts: Readonly<Record<string, HostSpec>>): string[] {
  const known = new Set(Object.values(hosts).flatMap((h) => [h.primary, ...(h.replica ? [h.replica] : [])]).map(endpointText));
  const outside: string[] = [];
  for (const [name, spec] of Object.entries(doc.hosts)) {
    for (const [role, server] of [['primary', spec.primary], ['replica', spec.replica]] as const) {
      if (server !== undefined && !known.has(endpointText(server))) outside.push(`${name} ${role} ${endpointText(server)}`);
    }
  }
  return outside;
}

/** The layout `publish` builds without --file: shards dealt evenly over the local stack's hosts. */
export function stackLayout(info: StackInfo, shards: number, modShards?: number): TopologyDoc {
  return evenLayout({ hosts: stackHosts(info), shards, ...(modShards !== undefined ? { modShards } : {}) });
}

function validate(doc: unknown, source: string): Topology {
  try {
    return parseTopology(doc);
  } catch (err) {
    if (isShardqlError(err, 'INVALID_TOPOLOGY')) throw new CliError(`${source}: ${err.message}`);
    throw err;
  }
}

function readDocFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(resolve(file), 'utf8');
  } catch (err) {
    throw new CliError(`Cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliError(`${file} is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Prints what would change; returns false when nothing would. */
export function printChanges(ctx: CliContext, config: GatewayConfig, current: PublishedDoc, next: Topology): boolean {
  println(ctx.stdout, `Topology at ${etcdWhere(config)}: ${current.modRevision === null ? 'nothing published yet' : `revision ${current.modRevision}`}`);
  if (current.problem !== undefined) println(ctx.stdout, `  the published document is not valid (${current.problem}); publishing replaces it`);
  if (current.topology !== null && isDeepStrictEqual(current.topology.doc, next.doc)) {
    println(ctx.stdout, 'The published topology is already this one: nothing to publish.');
    return false;
  }
  const lines = diffTopology(current.topology?.doc ?? null, next.doc);
  println(ctx.stdout, 'Changes:');
  for (const line of lines.length > 0 ? lines : ['  (no routing change; the document differs only in form)']) println(ctx.stdout, `  ${line}`);
  // The numbers every ID of the model carries: what a gateway of the model is checked against.
  println(ctx.stdout, `Type numbers (idLayout.types): ${Object.entries(next.doc.idLayout.types).map(([type, n]) => `${type} ${n}`).join(', ')}`);
  if (lines.some((l) => /^~ (mod )?shards .* move /.test(l))) {
    println(ctx.stdout, 'Warning: this re-maps existing shards to other hosts; it does not copy their data. Rows on a moved shard');
    println(ctx.stdout, 'are unreachable until the data is there (a shard move copies it first, then publishes).');
  }
  return true;
}

const publish: Command = {
  name: 'topology publish',
  summary: 'Publish a topology (a file, or N shards over the local stack) to etcd, after showing the changes',
  options: {
    shards: { type: 'string', value: 'N', help: `Shards 0..N-1 dealt evenly over the local stack's hosts (default ${DEFAULT_STACK_SHARDS})` },
    'mod-shards': { type: 'string', value: 'M', help: 'Mod shards 0..M-1 (default min(N, 4096))' },
    file: { type: 'string', value: 'F', help: 'Publish this JSON topology document instead' },
    yes: { type: 'boolean', short: 'y', help: 'Do not ask for confirmation (needed when stdin is not a terminal)' },
    'if-missing': { type: 'boolean', help: 'Publish only if no topology is published yet (for init jobs: never reverts a live map)' },
  },
  details:
    'The document is validated first (ranges cover every open shard, no overlap, known hosts); an invalid one\n' +
    'is never published. The write is a compare-and-swap on the revision shown, so a change made meanwhile by\n' +
    'someone else is not overwritten. Gateways watching etcd pick the new map up at once. Then the primaries\n' +
    'of the published map are made writable (servers start read-only), also when nothing was published.',
  async run(args, ctx) {
    const file = args.string('file');
    if (file !== undefined && (args.has('shards') || args.has('mod-shards'))) {
      throw new UsageError('--file publishes the document as it is; --shards and --mod-shards apply only without it');
    }
    const config = configFor(ctx);
    const built = candidate(args, ctx);
    return withEtcd(config, async (etcd) => {
      const current = await readPublished(etcd, config);
      const next = keepReservedTypes(built, current.topology?.doc ?? null);
      if (args.flag('if-missing') && current.modRevision !== null) {
        println(ctx.stdout, `A topology is already published at ${etcdWhere(config)} (revision ${current.modRevision}); --if-missing leaves it as it is.`);
        if (current.topology === null) return 0;
        return (await ensurePrimariesWritable(ctx, config, current.topology.doc, `revision ${current.modRevision}`)) ? 0 : 1;
      }
      // Refused before the changes are shown and confirmed: the count never changes once published.
      const countChange = current.topology === null ? undefined : modShardCountChange(current.topology.doc.modShard.count, next.doc.modShard.count);
      if (countChange !== undefined) throw new CliError(`${countChange}. Nothing was published`);
      if (!printChanges(ctx, config, current, next)) {
        return (await ensurePrimariesWritable(ctx, config, next.doc, `revision ${current.modRevision}`)) ? 0 : 1;
      }
      if (!args.flag('yes')) {
        if (!ctx.stdin.isTTY) throw new CliError('Refusing to publish without confirmation: stdin is not a terminal; pass --yes');
        if (!(await confirm(ctx, `Publish to ${config.topologyKey}?`))) {
          println(ctx.stdout, 'Not published.');
          return 1;
        }
      }
      const revision = await publishIfUnchanged(etcd, config.topologyKey, next, current.modRevision);
      println(ctx.stdout, `Published revision ${revision} at ${config.topologyKey}. Run \`shardql provision\` to create any new shard databases.`);
      return (await ensurePrimariesWritable(ctx, config, next.doc, `revision ${revision}`)) ? 0 : 1;
    });
  },
};

/** The document `publish` and `diff` compare with the published one: --file, else the stack layout. */
function candidate(args: ParsedArgs, ctx: CliContext): Topology {
  const file = args.string('file');
  if (file !== undefined && (args.has('shards') || args.has('mod-shards'))) {
    throw new UsageError('--file takes the document as it is; --shards and --mod-shards apply only without it');
  }
  if (file !== undefined) return validate(readDocFile(file), file);
  const info = stackInfo(ctx);
  if (info === null) throw new CliError(`No local stack in ${ctx.stackDir}: run \`shardql stack up\` first, or pass --file`);
  const shards = args.int('shards', DEFAULT_STACK_SHARDS, 1, MAX_SHARD + 1);
  const modShards = args.int('mod-shards', undefined, 1, MAX_SHARD + 1);
  return validate(stackLayout(info, shards, modShards), 'the stack layout');
}

const diff: Command = {
  name: 'topology diff',
  summary: 'Show what publishing a topology (a file, or N shards over the local stack) would change; changes nothing',
  options: {
    file: { type: 'string', value: 'F', help: 'Compare this JSON topology document with the published one' },
    shards: { type: 'string', value: 'N', help: `Without --file: shards 0..N-1 dealt evenly over the local stack's hosts (default ${DEFAULT_STACK_SHARDS})` },
    'mod-shards': { type: 'string', value: 'M', help: 'Without --file: mod shards 0..M-1 (default min(N, 4096))' },
  },
  async run(args, ctx) {
    const config = configFor(ctx);
    const built = candidate(args, ctx);
    const current = await withEtcd(config, (etcd) => readPublished(etcd, config));
    printChanges(ctx, config, current, keepReservedTypes(built, current.topology?.doc ?? null));
    return 0;
  },
};

function byHost(ranges: readonly HostedSpan[]): Map<string, HostedSpan[]> {
  return groupBy(ranges, (r) => r.host);
}

/**
 * Under each paused line: which move holds the pause, since when, and the command that finishes it.
 * Example: `  4–5: paused 2 min 3 s ago (since 2026-12-03T20:31:02.120Z) by a move to mysql003 that has
 * not finished; unless it is still running, finish it: shardql topology move --shards 4-5 --to mysql003`.
 */
function pauseLines(doc: TopologyDoc, kind: ShardKind, now: number): string[] {
  const spec = SHARD_KINDS[kind];
  const moves = (doc.moves ?? []).filter((m) => m.kind === kind);
  const lines = moves.map((m) => {
    const command = moveCommands(kind, m.shards, m.to).join(' and ');
    return (
      `  ${spansText(m.shards, false)}: paused ${ageText(now - Date.parse(m.since))} ago (since ${m.since}) by a move to ${m.to} that has not finished; ` +
      `unless it is still running, finish it: ${command}`
    );
  });
  let unrecorded = [...spec.paused(doc)];
  for (const m of moves) for (const s of m.shards) unrecorded = subtractSpan(unrecorded, s);
  if (unrecorded.length > 0) {
    lines.push(
      `  ${spansText(unrecorded, false)}: no move recorded (paused by hand, or by an older shardql): ${moveCommands(kind, unrecorded, 'HOST').join(' and ')} ` +
        'finishes a move; publishing the map without the pause resumes writes',
    );
  }
  return lines;
}

/** The readable form of `topology show`, at time `now` (ms since the epoch: the age of a pause). */
export function describeTopology(doc: TopologyDoc, now: number): string[] {
  const shardRanges = byHost(doc.shards.ranges);
  const modRanges = byHost(doc.modShard.ranges);
  const rows = [['HOST', 'PRIMARY', 'REPLICA', 'SHARDS', 'SHARD RANGES', 'MOD SHARDS']];
  for (const [name, spec] of Object.entries(doc.hosts).sort(([a], [b]) => a.localeCompare(b))) {
    const ranges = shardRanges.get(name) ?? [];
    rows.push([
      name,
      endpointText(spec.primary),
      endpointText(spec.replica),
      String(ranges.reduce((n, r) => n + spanSize(r), 0)),
      spansText(ranges, false),
      spansText(modRanges.get(name) ?? []),
    ]);
  }
  const inRanges = doc.shards.ranges.reduce((n, r) => n + spanSize(r), 0);
  const open = doc.shards.open.reduce((n, r) => n + spanSize(r), 0);
  return [
    'Hosts:',
    ...table(rows).map((l) => `  ${l}`),
    `Shards: ${inRanges} in ranges, ${open} open to new users: ${spansText(doc.shards.open, false)}`,
    `Mod shards: ${doc.modShard.count} (md5(key) mod ${doc.modShard.count})`,
    `Paused shards (writes refused): ${spansText(doc.pausedShards ?? [])}`,
    ...pauseLines(doc, 'shard', now),
    `Paused mod shards (writes refused): ${spansText(doc.pausedModShards ?? [])}`,
    ...pauseLines(doc, 'modShard', now),
  ];
}

const show: Command = {
  name: 'topology show',
  summary: 'Print the published topology: hosts, shard ranges, open shards, mod shards, paused shards, gateways',
  options: { json: { type: 'boolean', help: 'Print the document exactly as stored in etcd' } },
  async run(args, ctx) {
    const config = configFor(ctx);
    const current = await withEtcd(config, (etcd) => readPublished(etcd, config));
    if (current.raw === null) throw new CliError(`No topology is published at ${etcdWhere(config)}; run \`shardql topology publish\``);
    if (args.flag('json')) {
      let text = current.raw;
      try {
        text = JSON.stringify(JSON.parse(current.raw), null, 2);
      } catch {
        // not JSON: print it as stored
      }
      println(ctx.stdout, text);
      return 0;
    }
    if (current.topology === null) throw new CliError(`The topology at ${config.topologyKey} is not valid: ${current.problem}; \`shardql topology show --json\` prints it`);
    println(ctx.stdout, `Topology at ${etcdWhere(config)}, revision ${current.modRevision}`);
    for (const line of describeTopology(current.topology.doc, Date.now())) println(ctx.stdout, line);
    const gateways = await withEtcd(config, (etcd) => readGateways(etcd, config.topologyKey)).catch(() => null);
    if (gateways !== null) println(ctx.stdout, `Gateways: ${gatewaysText(gateways, current.modRevision ?? '0')}`);
    return 0;
  },
};

/** `2 serving revision 15, 1 behind (gw-a at 14)`. */
export function gatewaysText(gateways: readonly GatewaySeen[], revision: string): string {
  if (gateways.length === 0) return 'none registered';
  const behind = gatewaysBehind(gateways, revision);
  const serving = `${gateways.length - behind.length} serving revision ${revision}`;
  return behind.length === 0 ? serving : `${serving}, ${behind.length} behind (${behind.map((g) => `${g.id} at ${g.revision}`).join(', ')})`;
}

const writable: Command = {
  name: 'topology writable',
  summary: "Make the published map's primaries writable (read_only = 0), e.g. after a primary restarted",
  details:
    'Every MariaDB server starts read-only, so a demoted primary that restarts can never take a write. A\n' +
    "primary of the map that restarted stays read-only until this (or `topology publish`) runs. Servers the\n" +
    'map does not name a primary are left as they are; one that replicates from another is refused.',
  async run(_args, ctx) {
    const config = configFor(ctx);
    const current = await withEtcd(config, (etcd) => readPublished(etcd, config));
    if (current.topology === null) {
      throw new CliError(current.raw === null ? `No topology is published at ${etcdWhere(config)}` : `The topology at ${config.topologyKey} is not valid: ${current.problem}`);
    }
    return (await ensurePrimariesWritable(ctx, config, current.topology.doc, `revision ${current.modRevision}`)) ? 0 : 1;
  },
};

export const topologyCommands: readonly Command[] = [publish, show, diff, writable];
