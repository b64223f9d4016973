/**
 * Moving whole shards — ID shards (`db…`) or mod shards (`msdb…`: usernames, emails, the import's
 * ledger) — to another host, losing no acknowledged write. Both kinds move the same way; only where
 * the map keeps their ranges and their pause differs (SHARD_KINDS):
 *
 *   1. leftover copies on the target (an interrupted earlier move; not routed there) are dropped, and
 *      the shards' tables are created there empty (DDL is the slow part of a restore: kept out of
 *      the pause);
 *   2. the shards' writes are paused (publish `pausedShards`, `pausedModShards`): gateways refuse them with the
 *      retryable WRITES_PAUSED; reads go on, to the source;
 *   3. wait until every live gateway serves that revision (each gateway registers the revision it
 *      serves in etcd), so no gateway starts a write on those shards any more;
 *   4. lock the shards' tables on the source (FLUSH TABLES … WITH READ LOCK): this waits for write
 *      transactions already open on them, then blocks any straggler; reads still go on;
 *   5. dump the rows and restore them into the target (mariadb-dump | mariadb), raise the target's
 *      auto-increment counters to the source's, then compare row counts, CHECKSUM TABLE and
 *      auto-increment of every table on both sides;
 *   6. publish the flip (ranges changed, pause lifted) — the write pause ends here;
 *   7. wait for the gateways to serve the flip, cancel any straggler still waiting on the source
 *      lock (it fails, unacknowledged), unlock; drop the source copy only if asked to.
 *
 * The pause is published with a record of the move (`moves`: its shards, target and start), which
 * the flip and the calling off remove with it. Any failure before the flip lifts the pause again,
 * leaves the map as it was and drops the partial copy on the target. When the pause cannot be lifted
 * (etcd itself failed), and after a crash, the pause stays published (writes refused, nothing lost)
 * with its record: the error, and `topology show`, name the paused shards and the command that
 * finishes the move — the same move, run again, resumes it.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  modShardDatabase,
  shardDatabase,
  parseTopology,
  type Endpoint,
  type HostedSpan,
  type PausingMove,
  type ShardSpan,
  type TopologyDoc,
} from '../../core/topology.ts';
import { TopologyOperationError } from './errors.ts';
import type { CopyLock, Fingerprint, ShardCopyIo } from '../../core/serverIo.ts';
import type { GatewayWaitResult, OperationLog, TopologyStore } from './ports.ts';
import { assignSpan, intersect, mergeSpans, placementOf, shardsOf, spanLabel, spansOf, subtractSpan } from './spans.ts';

/** ID shards (`shards` in the map, databases `db…`) or mod shards (`modShard`, `msdb…`). */
export type ShardKind = PausingMove['kind'];

/** Where the map keeps one kind of shard: its ranges, its paused spans, its databases. Pure. */
interface ShardKindSpec {
  /** `shards`, `mod shards`: how messages name them. */
  readonly noun: string;
  /** The option of `topology move` that names them. */
  readonly option: '--shards' | '--mod-shards';
  ranges(doc: TopologyDoc): readonly HostedSpan[];
  withRanges(doc: TopologyDoc, ranges: readonly HostedSpan[]): TopologyDoc;
  paused(doc: TopologyDoc): readonly ShardSpan[];
  withPaused(doc: TopologyDoc, paused: readonly ShardSpan[]): TopologyDoc;
  database(n: number): string;
  /** Why shards in no range cannot move. */
  notInRange(doc: TopologyDoc): string;
}

export const SHARD_KINDS: Readonly<Record<ShardKind, ShardKindSpec>> = {
  shard: {
    noun: 'shards',
    option: '--shards',
    ranges: (doc) => doc.shards.ranges,
    withRanges: (doc, ranges) => ({ ...doc, shards: { open: doc.shards.open, ranges } }),
    paused: (doc) => doc.pausedShards ?? [],
    withPaused(doc, paused) {
      const { pausedShards: _dropped, ...rest } = doc;
      return paused.length > 0 ? { ...rest, pausedShards: mergeSpans(paused) } : rest;
    },
    database: shardDatabase,
    notInRange: () => 'there is nothing to move (open them with `topology open-range`)',
  },
  modShard: {
    noun: 'mod shards',
    option: '--mod-shards',
    ranges: (doc) => doc.modShard.ranges,
    withRanges: (doc, ranges) => ({ ...doc, modShard: { count: doc.modShard.count, ranges } }),
    paused: (doc) => doc.pausedModShards ?? [],
    withPaused(doc, paused) {
      const { pausedModShards: _dropped, ...rest } = doc;
      return paused.length > 0 ? { ...rest, pausedModShards: mergeSpans(paused) } : rest;
    },
    database: modShardDatabase,
    notInRange: (doc) => `the map has mod shards 0–${doc.modShard.count - 1}`,
  },
};

export interface MoveRequest {
  /** Which kind `shards` counts. Default 'shard'. */
  readonly kind?: ShardKind;
  readonly shards: ShardSpan;
  /** Host name of the target, already in the topology. */
  readonly to: string;
  /** When the move starts, ms since the epoch: recorded with the pause (`moves[].since`). Default: now. */
  readonly at?: number;
}

/**
 * The command that finishes a move of `shards` to `to` (one per span; a resumed move picks up the
 * pause): `shardql topology move --shards 4-5 --to mysql003`.
 */
export function moveCommands(kind: ShardKind, shards: readonly ShardSpan[], to: string): string[] {
  return shards.map((s) => `shardql topology move ${SHARD_KINDS[kind].option} ${s.from === s.to ? s.from : `${s.from}-${s.to}`} --to ${to}`);
}

export interface MoveSource {
  readonly host: string;
  readonly endpoint: Endpoint;
  readonly shards: readonly number[];
  readonly databases: readonly string[];
}

export interface MovePlan {
  readonly request: MoveRequest;
  readonly kind: ShardKind;
  readonly target: { readonly host: string; readonly endpoint: Endpoint };
  readonly sources: readonly MoveSource[];
  /** The shards that actually move (those already on the target are left out). */
  readonly moving: readonly ShardSpan[];
  /** Published first: the moving shards paused. */
  readonly pauseDoc: TopologyDoc;
  /** Published after the copy is verified: ranges on the target, pause lifted. */
  readonly flipDoc: TopologyDoc;
  /** Published if the move is called off: the pause lifted, ranges unchanged. */
  readonly resumeDoc: TopologyDoc;
  /** The published map already pauses every moving shard (an interrupted move being resumed). */
  readonly alreadyPaused: boolean;
  /** The published map is `pauseDoc` already (the pause and its record): nothing to publish before the copy. */
  readonly pauseInForce: boolean;
}

/** `moves` without the shards of `moving` of one kind; records left with no shard are dropped. */
function movesWithout(moves: readonly PausingMove[], kind: ShardKind, moving: readonly ShardSpan[]): PausingMove[] {
  const out: PausingMove[] = [];
  for (const m of moves) {
    let shards = [...m.shards];
    if (m.kind === kind) for (const cut of moving) shards = subtractSpan(shards, cut);
    if (shards.length > 0) out.push({ ...m, shards });
  }
  return out;
}

function withMoves(doc: TopologyDoc, moves: readonly PausingMove[]): TopologyDoc {
  const { moves: _dropped, ...rest } = doc;
  return moves.length > 0 ? { ...rest, moves } : rest;
}

/**
 * Plans moving `shards` to host `to`. Example: shards 0–7 on mysql001, 8–15 on mysql002, move 6–9 to
 * mysql003 → sources mysql001 (6, 7) and mysql002 (8, 9); the pause records { shard 6–9 to mysql003
 * since `at` }; the flip gives [0–5 mysql001, 6–9 mysql003, 10–15 mysql002]. Mod shards alike, in the
 * map's `modShard.ranges`. A move resumed keeps the `since` of the record it takes over. Refuses
 * shards in no range, an unknown target, and a target on the same server. Pure but for the clock
 * when `at` is not given.
 */
export function planMove(doc: TopologyDoc, request: MoveRequest): MovePlan {
  const { shards, to } = request;
  const kind = request.kind ?? 'shard';
  const spec = SHARD_KINDS[kind];
  const Noun = spec.noun[0]!.toUpperCase() + spec.noun.slice(1);
  const targetSpec = doc.hosts[to];
  if (targetSpec === undefined) {
    throw new TopologyOperationError(`Unknown target host '${to}'; the topology has: ${Object.keys(doc.hosts).join(', ')}. Publish the host first`);
  }
  const placement = placementOf(spec.ranges(doc), shards);
  const missing = placement.filter((p) => p.host === undefined);
  if (missing.length > 0) {
    throw new TopologyOperationError(`${Noun} ${missing.map(spanLabel).join(', ')} are in no range: ${spec.notInRange(doc)}`);
  }
  const bySource = new Map<string, number[]>();
  for (const p of placement) {
    if (p.host === to) continue;
    const list = bySource.get(p.host!) ?? [];
    for (let s = p.from; s <= p.to; s++) list.push(s);
    bySource.set(p.host!, list);
  }
  if (bySource.size === 0) throw new TopologyOperationError(`${Noun} ${spanLabel(shards)} are already on ${to}: nothing to move`);
  const sources: MoveSource[] = [...bySource].map(([host, list]) => {
    const endpoint = doc.hosts[host]!.primary;
    if (endpoint.host === targetSpec.primary.host && endpoint.port === targetSpec.primary.port) {
      throw new TopologyOperationError(`${host} and ${to} are the same server (${endpoint.host}:${endpoint.port}): nothing would be copied`);
    }
    return { host, endpoint, shards: list, databases: list.map(spec.database) };
  });
  const moving = spansOf(sources.flatMap((s) => s.shards));
  const paused = spec.paused(doc);
  const alreadyPaused = moving.every((m) => intersect(paused, m).reduce((n, s) => n + s.to - s.from + 1, 0) === m.to - m.from + 1);
  let unpaused: ShardSpan[] = [...paused];
  for (const m of moving) unpaused = subtractSpan(unpaused, m);
  let ranges = spec.ranges(doc);
  for (const m of moving) ranges = assignSpan(ranges, m, to);
  const moves = doc.moves ?? [];
  const others = movesWithout(moves, kind, moving);
  const takenOver = moves.filter((m) => m.kind === kind && moving.some((span) => intersect(m.shards, span).length > 0)).map((m) => m.since);
  const earliest = (a: string, b: string): string => (Date.parse(b) < Date.parse(a) ? b : a);
  const since = alreadyPaused && takenOver.length > 0 ? takenOver.reduce(earliest) : new Date(request.at ?? Date.now()).toISOString();
  const pauseDoc = withMoves(spec.withPaused(doc, [...paused, ...moving]), [...others, { kind, shards: moving, to, since }]);
  const flipDoc = withMoves(spec.withPaused(spec.withRanges(doc, ranges), unpaused), others);
  const resumeDoc = withMoves(spec.withPaused(doc, unpaused), others);
  const [pauseParsed] = [pauseDoc, flipDoc, resumeDoc].map((d) => parseTopology(d).doc);
  const pauseInForce = isDeepStrictEqual(pauseParsed, parseTopology(doc).doc);
  return { request, kind, target: { host: to, endpoint: targetSpec.primary }, sources, moving, pauseDoc, flipDoc, resumeDoc, alreadyPaused, pauseInForce };
}

/** What differs between the source's and the target's copy, one line per table. Empty: identical. Pure. */
export function compareFingerprints(source: Fingerprint, target: Fingerprint): string[] {
  const out: string[] = [];
  for (const [table, s] of source) {
    const t = target.get(table);
    if (!t) out.push(`${table}: missing on the target`);
    else if (s.rows !== t.rows) out.push(`${table}: ${s.rows} rows on the source, ${t.rows} on the target`);
    else if (s.checksum !== t.checksum) out.push(`${table}: checksum ${s.checksum} on the source, ${t.checksum} on the target`);
    else if (s.autoIncrement != null && (t.autoIncrement == null || t.autoIncrement < s.autoIncrement)) {
      out.push(`${table}: next auto-increment ${s.autoIncrement} on the source, ${t.autoIncrement ?? 'none'} on the target (IDs would be handed out twice)`);
    }
  }
  for (const table of target.keys()) if (!source.has(table)) out.push(`${table}: only on the target`);
  return out;
}

export interface MoveOptions {
  /** How long to wait for every gateway to serve the pause (and later the flip), ms. Default 15000 (≥ a dead gateway's 10 s lease). */
  readonly gatewayTimeoutMs?: number;
  /** How long to wait for write transactions open on the source tables, ms. Default 10000. */
  readonly lockTimeoutMs?: number;
  /** Drop the source databases once every gateway serves the flip. Default false (kept). */
  readonly dropSource?: boolean;
}

export interface MoveIo {
  readonly store: TopologyStore;
  readonly copier: ShardCopyIo;
  readonly log?: OperationLog;
  readonly now?: () => number;
}

export interface MoveReport {
  readonly shards: number;
  readonly tables: number;
  readonly rows: number;
  readonly bytes: number;
  /** Creating the tables on the target, before the pause, ms. */
  readonly schemaMs: number;
  /** From the pause being published to the flip being published: how long writes were refused. */
  readonly writePauseMs: number;
  /** Parts of the pause: gateways seeing it, open write transactions finishing, copy, verification. */
  readonly gatewayWaitMs: number;
  readonly lockWaitMs: number;
  readonly copyMs: number;
  readonly verifyMs: number;
  readonly gateways: number;
  readonly pauseRevision: string;
  readonly flipRevision: string;
  /**
   * Gateways not yet serving the flip when the wait gave up (they still refuse the writes: safe); null
   * when the wait itself failed (etcd did not answer), so which map they serve is not known.
   */
  readonly lagging: number | null;
  readonly stragglersCancelled: number;
  readonly sourceDropped: boolean;
}

const DEFAULTS = { gatewayTimeoutMs: 15_000, lockTimeoutMs: 10_000 } as const;

function behindText(w: GatewayWaitResult): string {
  return w.behind.map((g) => `${g.id} (revision ${g.revision})`).join(', ');
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** `` `shardql topology move --shards 4-5 --to mysql003` ``: what finishes the plan's move. */
function finishText(plan: MovePlan): string {
  return moveCommands(plan.kind, plan.moving, plan.target.host)
    .map((c) => `\`${c}\``)
    .join(' and ');
}

/** What an operator reads when a move stops with its pause published: which shards, and how to finish. */
function stillPausedText(plan: MovePlan, revision: string): string {
  const noun = SHARD_KINDS[plan.kind].noun;
  return (
    `writes to ${noun} ${plan.moving.map(spanLabel).join(', ')} stay paused (revision ${revision}; nothing is lost). ` +
    `Run ${finishText(plan)} again to finish the move: it resumes from the pause (\`shardql topology show\` lists it); ` +
    'or publish the map without the pause to call the move off'
  );
}

/** Runs a plan made from the map at `expectedRevision`. */
export async function moveShards(io: MoveIo, plan: MovePlan, expectedRevision: string, opts: MoveOptions = {}): Promise<MoveReport> {
  const now = io.now ?? Date.now;
  const log = io.log ?? (() => undefined);
  const gatewayTimeoutMs = opts.gatewayTimeoutMs ?? DEFAULTS.gatewayTimeoutMs;
  const allDatabases = plan.sources.flatMap((s) => s.databases);
  const target = plan.target.endpoint;
  const noun = SHARD_KINDS[plan.kind].noun;

  // 1. Leftovers on the target are not routed there (planMove checked): replace them, and create the
  //    tables, outside the pause.
  const leftovers = await io.copier.existingDatabases(target, allDatabases);
  if (leftovers.length > 0) {
    log(`Dropping ${leftovers.length} leftover copies on ${plan.target.host} (not routed there): ${leftovers.join(', ')}`);
    await io.copier.dropDatabases(target, leftovers);
  }
  const schemaStarted = now();
  for (const source of plan.sources) await io.copier.copy(source.endpoint, target, source.databases, 'schema');
  const schemaMs = now() - schemaStarted;
  log(`Created the tables of ${allDatabases.length} database(s) on ${plan.target.host} in ${schemaMs} ms`);

  // 2. Pause, with the record of the move.
  const pausedAt = now();
  let pauseRevision = expectedRevision;
  if (!plan.pauseInForce) {
    try {
      pauseRevision = await io.store.publish(plan.pauseDoc, expectedRevision);
    } catch (err) {
      // The request may have reached etcd although its answer did not: the pause may be in force.
      throw new TopologyOperationError(
        `Publishing the pause failed (${messageOf(err)}); nothing was copied. If the pause was published nonetheless, ` +
          `\`shardql topology show\` lists ${noun} ${plan.moving.map(spanLabel).join(', ')} as paused: run ${finishText(plan)} again to finish the move`,
      );
    }
  }
  log(`${plan.alreadyPaused ? 'Writes were already paused' : 'Paused writes'} to ${noun} ${plan.moving.map(spanLabel).join(', ')} (revision ${pauseRevision})`);

  const locks: CopyLock[] = [];
  const callOff = async (failure: string): Promise<never> => {
    const why = failure.replace(/\.$/, ''); // one full stop before what follows
    await Promise.allSettled(locks.map((l) => l.release()));
    let resumed: string;
    try {
      resumed = await io.store.publish(plan.resumeDoc, pauseRevision);
    } catch (err) {
      throw new TopologyOperationError(`${why}. The move was called off, but lifting the pause failed (${messageOf(err)}): ${stillPausedText(plan, pauseRevision)}`);
    }
    // The partial copy is routed nowhere: dropping it leaves the target as it was before the move.
    const dropped = await io.copier.dropDatabases(target, allDatabases).then(
      () => `the partial copy on ${plan.target.host} was dropped`,
      (err: unknown) => `the partial copy on ${plan.target.host} could not be dropped (${messageOf(err)}); it is not routed, and the next move replaces it`,
    );
    throw new TopologyOperationError(`${why}. The move was called off: writes resumed (revision ${resumed}), the map is unchanged, ${dropped}`);
  };
  /** Each step while the pause is published: a failure (etcd, MySQL) calls the move off, saying what failed. */
  const step = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (err) {
      return callOff(`${what}: ${messageOf(err)}`);
    }
  };

  // 3. Every gateway serves the pause.
  const seen = await step('Waiting for the gateways to serve the pause failed', () => io.store.waitForGateways(pauseRevision, gatewayTimeoutMs));
  if (seen.behind.length > 0) await callOff(`After ${seen.ms} ms, gateways still serve an older map: ${behindText(seen)}`);
  log(`${seen.gateways} gateway(s) serve the pause after ${seen.ms} ms`);
  if (seen.gateways === 0) log('Note: no gateway is registered; a gateway that does not register would only be stopped by the table lock');

  // 4. Lock the source tables: open write transactions finish first.
  const lockStarted = now();
  for (const source of plan.sources) {
    locks.push(
      await step(`Could not lock ${noun} ${spansOf(source.shards).map(spanLabel).join(', ')} on ${source.host}`, () =>
        io.copier.lockForCopy(source.endpoint, source.databases, opts.lockTimeoutMs ?? DEFAULTS.lockTimeoutMs),
      ),
    );
  }
  const lockWaitMs = now() - lockStarted;

  // 5. Copy and verify.
  const copyStarted = now();
  let bytes = 0;
  let tables = 0;
  let rows = 0;
  let verifyMs = 0;
  for (const source of plan.sources) {
    await step(`Copying from ${source.host} to ${plan.target.host} failed`, async () => {
      bytes += (await io.copier.copy(source.endpoint, target, source.databases, 'data')).bytes;
      await io.copier.alignAutoIncrements(source.endpoint, target, source.databases);
    });
    const verifyStarted = now();
    const [a, b] = await step(`Comparing the copies on ${source.host} and ${plan.target.host} failed`, () =>
      Promise.all([io.copier.fingerprint(source.endpoint, source.databases), io.copier.fingerprint(target, source.databases)]),
    );
    const problems = compareFingerprints(a, b);
    verifyMs += now() - verifyStarted;
    if (problems.length > 0) await callOff(`The copy on ${plan.target.host} differs from ${source.host}: ${problems.slice(0, 5).join('; ')}`);
    tables += a.size;
    for (const t of a.values()) rows += t.rows;
  }
  const copyMs = now() - copyStarted - verifyMs;
  log(
    `Copied ${plan.sources.reduce((n, s) => n + s.databases.length, 0)} database(s), ${tables} tables, ${rows} rows (${bytes} bytes); counts and checksums match`,
  );

  // 6. Flip.
  const flipRevision = await step('Publishing the new map failed', () => io.store.publish(plan.flipDoc, pauseRevision));
  const writePauseMs = now() - pausedAt;
  log(
    `Published revision ${flipRevision}: ${noun} ${plan.moving.map(spanLabel).join(', ')} live on ${plan.target.host}; writes resumed after ${writePauseMs} ms`,
  );

  // 7. Gateways serve the flip; stragglers on the source are cancelled; the source copy is kept unless asked.
  //    The move is done here: a failure of the wait only leaves unknown which gateways still refuse.
  let flipped: GatewayWaitResult | null = null;
  try {
    flipped = await io.store.waitForGateways(flipRevision, gatewayTimeoutMs);
    if (flipped.behind.length > 0)
      log(`Warning: after ${flipped.ms} ms, gateways still serve an older map (they refuse these writes meanwhile): ${behindText(flipped)}`);
  } catch (err) {
    log(
      `Warning: the move is done, but which map the gateways serve could not be read (${messageOf(err)}); any still serving the pause refuse ` +
        'these writes until they see the new map (`shardql topology show` lists the gateways)',
    );
  }
  let stragglersCancelled = 0;
  for (const lock of locks) stragglersCancelled += (await lock.release()).cancelled;
  let sourceDropped = false;
  if (opts.dropSource) {
    if (flipped === null || flipped.behind.length > 0) log('The source copies are kept: not every gateway is known to serve the new map yet; drop them later');
    else {
      for (const source of plan.sources) await io.copier.dropDatabases(source.endpoint, source.databases);
      sourceDropped = true;
      log(`Dropped the source copies on ${plan.sources.map((s) => s.host).join(', ')}`);
    }
  }
  return {
    shards: shardsOf(plan.moving).length,
    tables,
    rows,
    bytes,
    schemaMs,
    writePauseMs,
    gatewayWaitMs: seen.ms,
    lockWaitMs,
    copyMs,
    verifyMs,
    gateways: seen.gateways,
    pauseRevision,
    flipRevision,
    lagging: flipped === null ? null : flipped.behind.length,
    stragglersCancelled,
    sourceDropped,
  };
}
