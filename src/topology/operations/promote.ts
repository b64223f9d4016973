/**
 * Promoting a host's replica when its primary is gone:
 *
 *   1. the old primary must be unreachable (or, with `force`, it is fenced first: read_only = 1,
 *      then the replica catches up with everything it had binlogged — a planned switch-over);
 *   2. the replica stops receiving and applies everything it received: with semi-sync AFTER_SYNC every
 *      acknowledged commit reached its relay log, so nothing acknowledged is lost;
 *   3. STOP SLAVE, RESET SLAVE ALL, then read_only = 0 (makePrimariesWritable: the one place a
 *      server is made writable);
 *   4. one publish: the host's primary is the old replica's endpoint, and it has no replica.
 *
 * The old primary is out of the map, so no gateway writes to it again. Every server starts
 * read-only, so if it is restarted it stays read-only (nothing makes a server writable that the map
 * does not name a primary); if it comes back without a restart (a hung host), `topology fence` it.
 */
import { parseTopology, type Endpoint, type TopologyDoc } from '../../core/topology.ts';
import { TopologyOperationError } from './errors.ts';
import type { ReplicaState, ReplicationIo } from '../../core/serverIo.ts';
import type { GatewayWaitResult, OperationLog, TopologyStore } from './ports.ts';
import { makePrimariesWritable } from './primaries.ts';

export interface PromotePlan {
  readonly host: string;
  readonly oldPrimary: Endpoint;
  readonly replica: Endpoint;
  readonly next: TopologyDoc;
}

const text = (e: Endpoint): string => `${e.host}:${e.port}`;
const same = (a: Endpoint | undefined, b: Endpoint): boolean => a !== undefined && a.host === b.host && a.port === b.port;

/** Plans promoting `host`'s replica: its endpoint becomes the primary, with no replica. Pure. */
export function planPromotion(doc: TopologyDoc, host: string): PromotePlan {
  const spec = doc.hosts[host];
  if (spec === undefined) throw new TopologyOperationError(`Unknown host '${host}'; the topology has: ${Object.keys(doc.hosts).join(', ')}`);
  if (spec.replica === undefined) {
    throw new TopologyOperationError(`Host ${host} has no replica to promote (primary ${text(spec.primary)}); it may have been promoted already`);
  }
  const next: TopologyDoc = { ...doc, hosts: { ...doc.hosts, [host]: { primary: spec.replica } } };
  parseTopology(next);
  return { host, oldPrimary: spec.primary, replica: spec.replica, next };
}

/**
 * What must hold before a replica is promoted; the reasons it must not be, in words. Pure.
 * Example: SQL thread stopped with an error → it has not applied what it received.
 */
export function promotionBlockers(plan: PromotePlan, state: ReplicaState): string[] {
  const out: string[] = [];
  if (!state.replicating) out.push(`${text(plan.replica)} is not a replica (no replication source): it may already be a primary`);
  else if (state.source && !same(state.source, plan.oldPrimary)) {
    out.push(`${text(plan.replica)} replicates from ${text(state.source)}, not from ${plan.host}'s primary ${text(plan.oldPrimary)}`);
  }
  if (state.sqlError) out.push(`its SQL thread stopped with an error (${state.sqlError}): it has not applied everything it received`);
  else if (state.replicating && !state.sqlRunning) out.push('its SQL thread is stopped: it would not apply what it received');
  return out;
}

export interface PromoteOptions {
  /** Promote even though the old primary answers: it is fenced (read_only) first. Default false. */
  readonly force?: boolean;
  /** How long the replica may take to apply what it received, ms. Default 30000. */
  readonly applyTimeoutMs?: number;
  /** How long to wait for gateways to serve the new map (informational), ms. Default 5000. */
  readonly gatewayTimeoutMs?: number;
}

export interface PromoteIo {
  readonly store: TopologyStore;
  readonly mysql: ReplicationIo;
  readonly log?: OperationLog;
}

export interface PromoteReport {
  readonly oldPrimaryReachable: boolean;
  readonly oldPrimaryFenced: boolean;
  readonly receivedGtid: string;
  readonly appliedGtid: string;
  /** Replica settings seen before promoting. */
  readonly replicaWasReadOnly: boolean;
  readonly semiSync: boolean;
  readonly revision: string;
  /** From the start of the command to the new map published, ms. */
  readonly ms: number;
  readonly gateways: GatewayWaitResult;
}

export async function promote(io: PromoteIo, plan: PromotePlan, expectedRevision: string, opts: PromoteOptions = {}): Promise<PromoteReport> {
  const started = Date.now();
  const log = io.log ?? (() => undefined);
  const { mysql } = io;
  const applyTimeoutMs = opts.applyTimeoutMs ?? 30_000;

  const alive = await mysql.reachable(plan.oldPrimary);
  let fenced = false;
  if (alive) {
    if (!opts.force) {
      throw new TopologyOperationError(
        `${plan.host}'s primary ${text(plan.oldPrimary)} answers: promoting its replica now would leave two writable primaries. ` +
          'Pass --force to fence it (read_only) and switch over',
      );
    }
    await mysql.fence(plan.oldPrimary);
    fenced = true;
    const position = await mysql.binlogPosition(plan.oldPrimary);
    log(`Fenced the old primary ${text(plan.oldPrimary)} (read_only); waiting for the replica to reach ${position || '(empty)'}`);
    if (position !== '' && !(await mysql.waitApplied(plan.replica, position, applyTimeoutMs))) {
      throw new TopologyOperationError(
        `The replica did not reach the fenced primary's position ${position} within ${applyTimeoutMs} ms; nothing was published (the old primary stays fenced)`,
      );
    }
  } else {
    log(`${plan.host}'s primary ${text(plan.oldPrimary)} does not answer`);
  }

  const before = await mysql.replicaState(plan.replica);
  const blockers = promotionBlockers(plan, before);
  if (blockers.length > 0) throw new TopologyOperationError(`Not promoting ${text(plan.replica)}: ${blockers.join('; ')}. Nothing was changed`);

  await mysql.stopReceiving(plan.replica);
  const received = (await mysql.replicaState(plan.replica)).receivedGtid;
  if (received !== '' && !(await mysql.waitApplied(plan.replica, received, applyTimeoutMs))) {
    throw new TopologyOperationError(
      `The replica has not applied everything it received (${received}) within ${applyTimeoutMs} ms; nothing was published. Check its SQL thread, then run promote again`,
    );
  }
  const applied = await mysql.makePrimary(plan.replica);
  const writable = await makePrimariesWritable(mysql, plan.next, [plan.host]);
  if (writable.failed.length > 0) {
    throw new TopologyOperationError(
      `${text(plan.replica)} no longer replicates but could not be made writable (${writable.failed[0]!.error}); nothing was published. ` +
        `Once it answers, set read_only = 0 on it and publish the promoted map by hand`,
    );
  }
  log(`Promoted ${text(plan.replica)}: received ${received || '(nothing)'}, applied ${applied || '(nothing)'}; it accepts writes`);

  const revision = await io.store.publish(plan.next, expectedRevision);
  const ms = Date.now() - started;
  log(`Published revision ${revision}: ${plan.host}'s primary is ${text(plan.replica)} (no replica)`);
  const gateways = await io.store.waitForGateways(revision, opts.gatewayTimeoutMs ?? 5000);
  if (!alive) {
    log(
      `The old primary ${text(plan.oldPrimary)} is out of the map. If it comes back, fence it (\`shardql topology fence --server ${text(plan.oldPrimary)}\`) or rebuild it as a replica of ${text(plan.replica)}`,
    );
  }
  return {
    oldPrimaryReachable: alive,
    oldPrimaryFenced: fenced,
    receivedGtid: received,
    appliedGtid: applied,
    replicaWasReadOnly: before.readOnly,
    semiSync: before.semiSync,
    revision,
    ms,
    gateways,
  };
}

/**
 * Plans fencing `server`: refused when the published map routes writes to it (a primary). Pure.
 * Example: the old primary of mysql001 came back after a promotion → fence it.
 */
export function checkFenceTarget(doc: TopologyDoc, server: Endpoint): void {
  for (const [name, spec] of Object.entries(doc.hosts)) {
    if (same(spec.primary, server)) {
      throw new TopologyOperationError(`${text(server)} is ${name}'s primary in the published map: fencing it would refuse every write to ${name}`);
    }
  }
}
