/** `shardql provision` and `shardql token`: creating shard databases, minting viewer tokens. */
import { mintToken } from '../auth/tokens.ts';
import { isShardqlError } from '../core/errors.ts';
import { parseId } from '../core/ids.ts';
import { servedModel } from '../core/model/served.ts';
import type { Topology } from '../core/topology.ts';
import type { GatewayConfig } from '../config.ts';
import { provision, type ProvisionReport } from '../storage/provision.ts';
import { CliError, UsageError, type CliContext, type Command } from './command.ts';
import { seconds } from './format.ts';
import { progressLine } from './progress.ts';
import { configFor, println, publishedTopology, withStorage } from './runtime.ts';

export const DEFAULT_PROVISION_CONCURRENCY = 4;

/** Provisions with a progress line on stderr and a summary on stdout. Shared with `shardql dev`. */
export async function runProvision(ctx: CliContext, config: GatewayConfig, topology: Topology, concurrency = DEFAULT_PROVISION_CONCURRENCY): Promise<ProvisionReport> {
  const count = (m: Map<string, number[]>): number => [...m.values()].reduce((n, l) => n + l.length, 0);
  const hosts = new Set([...topology.shardsByHost().keys(), ...topology.modShardsByHost().keys()]);
  println(ctx.stderr, `Provisioning ${count(topology.shardsByHost())} shard and ${count(topology.modShardsByHost())} mod-shard databases on ${hosts.size} hosts`);
  const progress = progressLine(ctx.stderr, 'databases');
  let report: ProvisionReport;
  try {
    report = await withStorage(
      config,
      topology,
      (storage) => provision({ router: storage.router, topology, concurrencyPerHost: concurrency, onProgress: (done, total) => progress.update(done, total) }),
      Math.max(10, concurrency + 1),
      { admin: true },
    );
  } finally {
    progress.finish();
  }
  println(ctx.stdout, `${report.databases} databases: ${report.created} created, ${report.alreadyComplete} already complete (${seconds(report.ms)})`);
  return report;
}

const provisionCommand: Command = {
  name: 'provision',
  summary: 'Create every shard and mod-shard database of the published topology (idempotent)',
  options: {
    concurrency: { type: 'string', value: 'N', help: `Parallel DDL sessions per host (default ${DEFAULT_PROVISION_CONCURRENCY})` },
  },
  details: 'Databases that already have every table are skipped, so running it again after a crash or after\nopening a new shard range only creates what is missing.',
  async run(args, ctx) {
    const concurrency = args.int('concurrency', DEFAULT_PROVISION_CONCURRENCY, 1, 64);
    const config = configFor(ctx);
    const { topology, revision } = await publishedTopology(config);
    println(ctx.stderr, `Topology ${config.topologyKey} revision ${revision}`);
    await runProvision(ctx, config, topology, concurrency);
  },
};

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };
const MAX_TTL_SECONDS = 366 * 86400;

/** `90s`, `30m`, `12h`, `7d`, or plain seconds. */
export function parseDuration(text: string): number {
  const m = /^([0-9]{1,9})([smhd]?)$/.exec(text);
  const secs = m ? Number(m[1]) * UNITS[m[2] || 's']! : NaN;
  if (!(secs > 0 && secs <= MAX_TTL_SECONDS)) throw new UsageError(`--ttl must be a duration like 90s, 30m, 12h or 7d, up to 366d; got ${JSON.stringify(text)}`);
  return secs;
}

async function resolveUser(config: GatewayConfig, who: string): Promise<bigint> {
  let idProblem: string | undefined;
  if (/^[0-9]+$/.test(who)) {
    try {
      return parseId(who, { expect: servedModel().viewer });
    } catch (err) {
      if (!isShardqlError(err, 'INVALID_ID')) throw err;
      idProblem = err.message; // maybe a numeric username: look it up
    }
  }
  // A viewer's unique fields (Pinterest's username, a qa site's handle) name them through the mod shard.
  const model = servedModel();
  const names = (model.objects.find((o) => o.key === model.viewer)?.stored ?? []).flatMap((f) => (f.uniqueIn !== null ? [{ field: f.field, namespace: f.uniqueIn }] : []));
  const { topology } = await publishedTopology(config);
  for (const { namespace } of names) {
    const found = await withStorage(config, topology, (s) => s.lookups.lookup(namespace, [who]), 2);
    const id = found.get(who);
    if (id !== undefined) return id;
  }
  const named = names.map((n) => n.field).join(' or ') || 'no unique field';
  throw new CliError(idProblem ? `${who} is neither a ${model.viewer} ID (${idProblem}) nor a ${named}` : `No ${model.viewer} has the ${named} ${JSON.stringify(who)}`);
}

/** The served viewer's type and its unique fields, as `token` names them: `user`, ['username']; `user`, ['handle']. */
function viewerNames(): { readonly viewer: string; readonly unique: readonly string[] } {
  const model = servedModel();
  const viewer = model.objects.find((o) => o.key === model.viewer);
  return { viewer: model.viewer, unique: (viewer?.stored ?? []).flatMap((f) => (f.uniqueIn !== null ? [f.field] : [])) };
}

const token: Command = {
  name: 'token',
  // Read when help is shown, from the served model: its viewer's type and unique fields.
  get summary() {
    const { viewer, unique } = viewerNames();
    return `Mint a viewer token (Bearer JWT) for a ${viewer}, by ID${unique.map((f) => ` or ${f}`).join('')}`;
  },
  get args() {
    const { viewer, unique } = viewerNames();
    return `<${[`${viewer}Id`, ...unique].join('|')}>`;
  },
  positionals: { min: 1, max: 1 },
  options: { ttl: { type: 'string', value: 'DURATION', help: 'Lifetime: 90s, 30m, 12h, 7d… (default 7d)' } },
  details: 'Prints only the token, so `export SHARDQL_TOKEN=$(shardql token alice)` works. Signed with\nSHARDQL_JWT_SECRET (a local stack supplies a development secret).',
  async run(args, ctx) {
    const ttl = parseDuration(args.string('ttl') ?? '7d');
    const who = args.positionals[0]!;
    const config = configFor(ctx);
    const userId = await resolveUser(config, who);
    println(ctx.stdout, await mintToken(config.jwtSecret, userId, ttl));
    if (ctx.stdout.isTTY) println(ctx.stderr, `(user ${userId}, valid ${args.string('ttl') ?? '7d'}; send it as \`Authorization: Bearer <token>\`)`);
  },
};

export const dataCommands: readonly Command[] = [provisionCommand, token];
