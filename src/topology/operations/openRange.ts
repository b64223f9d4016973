/**
 * Opening a new shard range: its databases are created on a host, then one publish adds the range
 * and opens it, so new users start landing there. Order matters: a shard is provisioned before any
 * gateway can place a user on it.
 */
import { parseTopology, type ShardSpan, type TopologyDoc } from '../../core/topology.ts';
import { TopologyOperationError } from './errors.ts';
import type { OperationLog, ProvisionIo, TopologyStore } from './ports.ts';
import { assignSpan, mergeSpans, placementOf, shardsOf, spanLabel, subtractSpan } from './spans.ts';

export interface OpenRangeRequest {
  readonly shards: ShardSpan;
  readonly host: string;
}

export interface OpenRangePlan {
  readonly request: OpenRangeRequest;
  /** The map to publish. */
  readonly next: TopologyDoc;
  /** Shards that get a range (the rest were already on the host). */
  readonly added: readonly ShardSpan[];
  /** Shards opened to new users by this change. */
  readonly opened: readonly ShardSpan[];
}

/**
 * Plans opening `shards` on `host`. Example: shards 0–15 on mysql001/mysql002, open 16–23 on mysql003
 * → ranges gain 16–23 mysql003, open becomes 0–23. Shards already on `host` are only opened; shards on
 * another host are refused (that would be a move). Pure.
 */
export function planOpenRange(doc: TopologyDoc, request: OpenRangeRequest): OpenRangePlan {
  const { shards, host } = request;
  if (!(host in doc.hosts)) {
    throw new TopologyOperationError(`Unknown host '${host}'; the topology has: ${Object.keys(doc.hosts).join(', ')}`);
  }
  const elsewhere = placementOf(doc.shards.ranges, shards).filter((p) => p.host !== undefined && p.host !== host);
  if (elsewhere.length > 0) {
    const where = elsewhere.map((p) => `${spanLabel(p)} on ${p.host}`).join(', ');
    throw new TopologyOperationError(`Shards ${where} already exist on another host; use \`topology move\` to move them`);
  }
  const added = placementOf(doc.shards.ranges, shards)
    .filter((p) => p.host === undefined)
    .map(({ from, to }) => ({ from, to }));
  let opened: ShardSpan[] = [shards];
  for (const o of doc.shards.open) opened = subtractSpan(opened, o);
  if (added.length === 0 && opened.length === 0) {
    throw new TopologyOperationError(`Shards ${spanLabel(shards)} are already on ${host} and open: nothing to do`);
  }
  const next: TopologyDoc = {
    ...doc,
    shards: { open: mergeSpans([...doc.shards.open, shards]), ranges: assignSpan(doc.shards.ranges, shards, host) },
  };
  parseTopology(next); // a plan that would not validate is a bug here, not a publish-time surprise
  return { request, next, added, opened };
}

export interface OpenRangeIo {
  readonly store: TopologyStore;
  readonly provision: ProvisionIo;
  readonly log?: OperationLog;
}

export interface OpenRangeReport {
  readonly created: number;
  readonly revision: string;
  readonly ms: number;
}

/** Provisions the plan's shards on their host, then publishes the plan (if the map is still `expectedRevision`). */
export async function openRange(io: OpenRangeIo, plan: OpenRangePlan, expectedRevision: string): Promise<OpenRangeReport> {
  const started = Date.now();
  const shards = shardsOf([plan.request.shards]);
  io.log?.(`Creating ${shards.length} shard database(s) on ${plan.request.host}…`);
  const { created } = await io.provision(parseTopology(plan.next), shards);
  io.log?.(`  ${created} created, ${shards.length - created} already complete`);
  const revision = await io.store.publish(plan.next, expectedRevision);
  io.log?.(`Published revision ${revision}: shards ${spanLabel(plan.request.shards)} are open on ${plan.request.host}`);
  return { created, revision, ms: Date.now() - started };
}
