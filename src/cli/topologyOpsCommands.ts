/**
 * `shardql topology open-range | move | promote | fence`: the changes of the shard map that also
 * move data or servers. Each prints what it will change, asks (unless --yes; without a terminal it
 * refuses), then runs the operation from src/topology/operations/ with etcd and MySQL wired in.
 * MySQL credentials: SHARDQL_MYSQL_ADMIN_USER/PASSWORD if set, else SHARDQL_MYSQL_USER/PASSWORD.
 */
import type { Etcd3 } from 'etcd3';
import { MAX_SHARD } from '../core/ids.ts';
import { parseTopology, type Endpoint, type TopologyDoc } from '../core/topology.ts';
import type { GatewayConfig } from '../config.ts';
import { ShardAdmin } from '../storage/shardAdmin.ts';
import { shardCopyIo } from '../storage/shardCopy.ts';
import { createStorage } from '../storage/index.ts';
import { provision } from '../storage/provision.ts';
import { etcdTopologyStore, TopologyChangedError } from '../topology/etcdTopology.ts';
import { TopologyOperationError } from '../topology/operations/errors.ts';
import { moveShards, planMove, SHARD_KINDS, type ShardKind } from '../topology/operations/moveShards.ts';
import { openRange, planOpenRange } from '../topology/operations/openRange.ts';
import type { TopologyStore } from '../topology/operations/ports.ts';
import { checkFenceTarget, planPromotion, promote } from '../topology/operations/promote.ts';
import { parseShardSpan, spanLabel } from '../topology/operations/spans.ts';
import { CliError, UsageError, type CliContext, type Command, type ParsedArgs } from './command.ts';
import { diffTopology } from './diff.ts';
import { endpointText } from './format.ts';
import { configFor, confirm, println, withEtcd } from './runtime.ts';

interface OpsContext {
  readonly config: GatewayConfig;
  readonly etcd: Etcd3;
  readonly store: TopologyStore;
  readonly credentials: { readonly user: string; readonly password: string };
  readonly out: (line?: string) => void;
}

/** Operation errors are the operator's to read: one line, no stack. */
async function withOps(ctx: CliContext, fn: (ops: OpsContext) => Promise<number>): Promise<number> {
  const config = configFor(ctx);
  try {
    return await withEtcd(config, (etcd) =>
      fn({
        config,
        etcd,
        store: etcdTopologyStore(etcd, config.topologyKey),
        credentials: config.mysqlAdmin ?? config.mysql,
        out: (line) => println(ctx.stdout, line),
      }),
    );
  } catch (err) {
    if (err instanceof TopologyOperationError || err instanceof TopologyChangedError) throw new CliError(err.message);
    throw err;
  }
}

/** --yes, or a y on the terminal; without a terminal and without --yes: refuse. */
async function confirmed(args: ParsedArgs, ctx: CliContext, question: string): Promise<boolean> {
  if (args.flag('yes')) return true;
  if (!ctx.stdin.isTTY) throw new CliError('Refusing to change the topology without confirmation: stdin is not a terminal; pass --yes');
  if (await confirm(ctx, question)) return true;
  println(ctx.stdout, 'Nothing was changed.');
  return false;
}

function requiredString(args: ParsedArgs, name: string): string {
  const v = args.string(name);
  if (v === undefined || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

function changeLines(before: TopologyDoc, after: TopologyDoc): string[] {
  return diffTopology(before, after).map((l) => `    ${l}`);
}

function parseServer(text: string): Endpoint {
  const m = /^([^:\s]+):(\d{1,5})$/.exec(text);
  if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) throw new UsageError(`--server must be host:port, got ${JSON.stringify(text)}`);
  return { host: m[1]!, port: Number(m[2]) };
}

const YES = { type: 'boolean', short: 'y', help: 'Do not ask for confirmation (needed when stdin is not a terminal)' } as const;

const openRangeCommand: Command = {
  name: 'topology open-range',
  summary: 'Create the next shard range on a host and open it to new users',
  options: {
    from: { type: 'string', value: 'A', help: 'First shard of the range' },
    to: { type: 'string', value: 'B', help: 'Last shard of the range' },
    host: { type: 'string', value: 'H', help: 'Host (a name in the topology) that will hold the range' },
    yes: YES,
  },
  details:
    'Creates the shard databases on the host first (idempotent), then publishes the range and opens it in\n' +
    'one compare-and-swap: gateways watching etcd place new users there at once.',
  async run(args, ctx) {
    const from = args.int('from', undefined, 0, MAX_SHARD);
    const to = args.int('to', undefined, 0, MAX_SHARD);
    if (from === undefined || to === undefined) throw new UsageError('--from and --to are required');
    if (from > to) throw new UsageError(`--from ${from} is after --to ${to}`);
    const host = requiredString(args, 'host');
    return withOps(ctx, async ({ config, store, credentials, out }) => {
      const current = await store.read();
      const plan = planOpenRange(current.topology.doc, { shards: { from, to }, host });
      const endpoint = current.topology.doc.hosts[host]!.primary;
      out(`Topology at ${config.topologyKey}: revision ${current.modRevision}`);
      out(`Open shards ${spanLabel(plan.request.shards)} on ${host} (${endpointText(endpoint)}):`);
      out(`  1. create the shard databases ${spanLabel(plan.request.shards)} on ${host} (existing complete ones are kept)`);
      out('  2. publish:');
      for (const l of changeLines(current.topology.doc, plan.next)) out(l);
      if (!(await confirmed(args, ctx, `Open shards ${spanLabel(plan.request.shards)} on ${host}?`))) return 1;
      const report = await openRange(
        {
          store,
          log: out,
          provision: async (topology, shards) => {
            const storage = createStorage({ topology: () => topology, credentials, events: null }); // DDL only
            try {
              return await provision({ router: storage.router, topology, shards });
            } finally {
              await storage.close();
            }
          },
        },
        plan,
        current.modRevision,
      );
      out(`Done in ${report.ms} ms: ${parseTopology(plan.next).openShardCount} shards are open to new users.`);
      return 0;
    });
  },
};

const moveCommand: Command = {
  name: 'topology move',
  summary: 'Move shards or mod shards to another host: pause their writes, copy, verify, flip the map, resume',
  options: {
    shards: { type: 'string', value: 'A-B', help: 'The shards to move, e.g. 4-7 or 12' },
    'mod-shards': { type: 'string', value: 'A-B', help: 'Instead of --shards: the mod shards to move (usernames, emails, the import ledger)' },
    to: { type: 'string', value: 'HOST', help: 'Target host (a name in the topology)' },
    'drop-source': { type: 'boolean', help: 'Drop the source databases once every gateway serves the new map (default: kept)' },
    'gateway-timeout': { type: 'string', value: 'MS', help: 'How long to wait for every gateway to serve the pause (default 15000)' },
    yes: YES,
  },
  details:
    'Writes to just those shards are refused with the retryable WRITES_PAUSED while they are copied; reads go\n' +
    'on (to the source until the flip). The copy is mariadb-dump | mariadb, whole databases, verified by row\n' +
    'counts and CHECKSUM TABLE on both sides before the map changes. Any failure before the flip lifts the\n' +
    'pause and leaves the map as it was. When the pause cannot be lifted (etcd failed) or the command died,\n' +
    'the pause stays, recorded in the map (`topology show` gives its age and this command): running the same\n' +
    'command again resumes the move.\n' +
    'Mod shards (--mod-shards: the msdb databases of usernames, emails and the import ledger) move the same\n' +
    'way: creating users, renames and imports touching them get WRITES_PAUSED meanwhile; a host is drained\n' +
    'by moving both its shards and its mod shards.',
  async run(args, ctx) {
    if (args.has('shards') === args.has('mod-shards')) throw new UsageError('Give either --shards or --mod-shards');
    const kind: ShardKind = args.has('mod-shards') ? 'modShard' : 'shard';
    const option = kind === 'modShard' ? 'mod-shards' : 'shards';
    const span = parseShardSpan(requiredString(args, option), `--${option}`);
    const noun = SHARD_KINDS[kind].noun;
    const to = requiredString(args, 'to');
    const gatewayTimeoutMs = args.int('gateway-timeout', 15_000, 0, 600_000);
    return withOps(ctx, async ({ config, store, credentials, out }) => {
      const current = await store.read();
      const plan = planMove(current.topology.doc, { kind, shards: span, to });
      out(`Topology at ${config.topologyKey}: revision ${current.modRevision}`);
      out(`Move ${noun} ${plan.moving.map(spanLabel).join(', ')} to ${to} (${endpointText(plan.target.endpoint)}):`);
      for (const s of plan.sources)
        out(
          `  from ${s.host} (${endpointText(s.endpoint)}): ${s.databases.length} database(s) ${s.databases[0]}${s.databases.length > 1 ? `…${s.databases.at(-1)}` : ''}`,
        );
      out(`  1. create the shards' tables on ${to}, empty (before the pause: DDL is the slow part of a restore)`);
      out(`  2. ${plan.alreadyPaused ? 'writes are already paused (an interrupted move): resume it' : 'publish:'}`);
      if (!plan.pauseInForce) for (const l of changeLines(current.topology.doc, plan.pauseDoc)) out(l);
      out(`  3. wait until every gateway serves the pause and open writes on those ${noun} have finished`);
      out('  4. copy the rows (mariadb-dump | mariadb), compare row counts, CHECKSUM TABLE and auto-increments');
      out('  5. publish:');
      for (const l of changeLines(plan.pauseDoc, plan.flipDoc)) out(l);
      out(`  6. ${args.flag('drop-source') ? 'drop the source databases' : 'keep the source databases (drop them later, or pass --drop-source)'}`);
      if (!(await confirmed(args, ctx, `Move ${noun} ${plan.moving.map(spanLabel).join(', ')} to ${to}?`))) return 1;
      const report = await moveShards(
        { store, log: out, copier: shardCopyIo(credentials) },
        plan,
        current.modRevision,
        { gatewayTimeoutMs, dropSource: args.flag('drop-source') },
      );
      out(
        `Moved ${report.shards} ${noun} to ${to}: ${report.tables} tables, ${report.rows} rows, ${report.bytes} bytes. ` +
          `Write pause: ${report.writePauseMs} ms (gateways ${report.gatewayWaitMs} ms, open writes ${report.lockWaitMs} ms, ` +
          `copy ${report.copyMs} ms, verify ${report.verifyMs} ms; ${report.gateways} gateway(s)); tables created beforehand in ${report.schemaMs} ms.`,
      );
      return 0;
    });
  },
};

const promoteCommand: Command = {
  name: 'topology promote',
  summary: "Promote a host's replica when its primary is gone, and publish it as the primary",
  options: {
    host: { type: 'string', value: 'H', help: 'Host (a name in the topology) whose replica becomes its primary' },
    force: { type: 'boolean', help: 'Promote although the primary answers: fence it (read_only) first, then switch over' },
    yes: YES,
  },
  details:
    'The replica stops receiving, applies everything it received (semi-sync AFTER_SYNC: every acknowledged\n' +
    "commit is in its relay log), forgets its source and accepts writes; then the map names it the host's\n" +
    'primary, with no replica. The old primary is out of the map; if it comes back, `topology fence` it.',
  async run(args, ctx) {
    const host = requiredString(args, 'host');
    return withOps(ctx, async ({ config, store, credentials, out }) => {
      const current = await store.read();
      const plan = planPromotion(current.topology.doc, host);
      out(`Topology at ${config.topologyKey}: revision ${current.modRevision}`);
      out(`Promote ${host}'s replica ${endpointText(plan.replica)} (primary ${endpointText(plan.oldPrimary)}):`);
      out(`  1. ${args.flag('force') ? 'fence the primary (read_only) if it answers, let the replica catch up' : 'check that the primary does not answer'}`);
      out('  2. stop replication once everything received is applied; read_only = 0');
      out('  3. publish:');
      for (const l of changeLines(current.topology.doc, plan.next)) out(l);
      if (!(await confirmed(args, ctx, `Promote ${endpointText(plan.replica)} to ${host}'s primary?`))) return 1;
      const admin = new ShardAdmin({ credentials });
      const report = await promote({ store, mysql: admin, log: out }, plan, current.modRevision, { force: args.flag('force') });
      out(
        `Promoted in ${report.ms} ms: ${host}'s primary is ${endpointText(plan.replica)} (revision ${report.revision}; ` +
          `${report.gateways.gateways - report.gateways.behind.length}/${report.gateways.gateways} gateway(s) serve it).`,
      );
      return 0;
    });
  },
};

const fenceCommand: Command = {
  name: 'topology fence',
  summary: 'Make a server that is no longer a primary in the map read-only (a demoted primary that came back)',
  options: {
    server: { type: 'string', value: 'HOST:PORT', help: 'The MySQL server to fence' },
    yes: YES,
  },
  details: "Refused for a server the published map names as a primary. The gateway's account cannot write through read_only.",
  async run(args, ctx) {
    const server = parseServer(requiredString(args, 'server'));
    return withOps(ctx, async ({ store, credentials, out }) => {
      const current = await store.read();
      checkFenceTarget(current.topology.doc, server);
      out(`Fence ${endpointText(server)}: SET GLOBAL read_only = 1 (it is no primary in revision ${current.modRevision})`);
      if (!(await confirmed(args, ctx, `Fence ${endpointText(server)}?`))) return 1;
      await new ShardAdmin({ credentials }).fence(server);
      out(`Fenced ${endpointText(server)}.`);
      return 0;
    });
  },
};

export const topologyOpsCommands: readonly Command[] = [openRangeCommand, moveCommand, promoteCommand, fenceCommand];
