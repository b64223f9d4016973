/** `shardql repair` and `shardql reconcile`: finishing interrupted writes, checking both sides of every relation. */
import { AUTHORITATIVE_TABLES } from '../core/mappings.ts';
import { FIX_KINDS, allShards, reconcile, repairIntents } from '../services/repair.ts';
import { CliError, UsageError, type Command } from './command.ts';
import { configFor, println, publishedTopology, withJobQueue, withStorage } from './runtime.ts';

/** `0-15`, `7`, or `0-15,32-47`. */
export function parseShardList(text: string): number[] {
  const out: number[] = [];
  for (const part of text.split(',')) {
    const m = /^([0-9]{1,5})(?:-([0-9]{1,5}))?$/.exec(part.trim());
    const from = m ? Number(m[1]) : NaN;
    const to = m ? Number(m[2] ?? m[1]) : NaN;
    if (!(from <= to && to <= 65535)) throw new UsageError(`--shards must look like 0-15 or 3,7,9-12 (0..65535), got ${JSON.stringify(text)}`);
    for (let s = from; s <= to; s++) out.push(s);
  }
  return [...new Set(out)].sort((a, b) => a - b);
}

const repair: Command = {
  name: 'repair',
  summary: 'Complete multi-shard writes interrupted after their first step (the intent log)',
  options: { 'min-age': { type: 'string', value: 'MS', help: 'Only intents at least this old, in ms (default 5000: their writer may still be running)' } },
  details: 'The gateway runs this pass every few seconds by itself; the command is for when no gateway runs.',
  async run(args, ctx) {
    const minAgeMs = args.int('min-age', 5000, 0, 86_400_000);
    const config = configFor(ctx);
    const { topology } = await publishedTopology(config);
    // The queue too: an intent may record a job to enqueue (a new pin's fan-out).
    const report = await withJobQueue(config, (jobs) =>
      withStorage(config, topology, (s) => repairIntents(s, topology, { minAgeMs, jobs, log: (l) => println(ctx.stdout, l) }), 4, { caches: true }),
    );
    println(ctx.stdout, `${report.completed} intents completed, ${report.failed} failed`);
    if (report.failed > 0) throw new CliError(`${report.failed} intents could not be completed; see above`);
  },
};

const reconcileCommand: Command = {
  name: 'reconcile',
  summary: 'Check both directions of every relation and every count on a range of shards, and repair what differs',
  options: {
    shards: { type: 'string', value: 'RANGES', help: 'Shards to check, e.g. 0-15 or 3,7,9-12 (default: every shard)' },
    'intent-age': { type: 'string', value: 'MS', help: 'Complete intents at least this old, in ms (default 60000: their writer is gone)' },
  },
  details:
    'Checks every relation in both directions, every count, edges to deleted or missing objects, objects whose\n' +
    'parent is gone or that are missing from a list their @ref(listedIn:) names, unfinished cascades and old\n' +
    `intents. The side written first is the truth (${AUTHORITATIVE_TABLES.join(', ')}; the object rows for\n` +
    'the lists their references write; the rows for counts). Prints every fix and a total per kind.',
  async run(args, ctx) {
    const config = configFor(ctx);
    const { topology } = await publishedTopology(config);
    const wanted = args.string('shards');
    const shards = wanted ? parseShardList(wanted).filter((s) => topology.shardExists(s)) : allShards(topology);
    const intentAgeMs = args.int('intent-age', 60_000, 0, 86_400_000);
    const r = await withJobQueue(config, (jobs) =>
      withStorage(config, topology, (s) => reconcile(s, shards, { intentAgeMs, jobs, log: (l) => println(ctx.stdout, l) }), 4, { caches: true }),
    );
    println(ctx.stdout, `${shards.length} shards checked, ${r.fixes.length} fixes: ${FIX_KINDS.map((k) => `${r.byKind[k]} ${k}`).join(', ')}`);
  },
};

export const repairCommands: readonly Command[] = [repair, reconcileCommand];
