/**
 * The I/O a topology operation needs, as interfaces: the operations plan and sequence, the entry
 * point (CLI, tests) passes in etcd and MySQL implementations (etcdTopologyStore, storage/shardAdmin).
 * What they do to MySQL servers is in core/serverIo.ts, which storage implements.
 */
import type { Topology, TopologyDoc } from '../../core/topology.ts';

export interface GatewayWaitResult {
  /** Live gateways when the wait ended. */
  readonly gateways: number;
  /** Gateways still serving an older revision (empty: all caught up). */
  readonly behind: readonly { readonly id: string; readonly revision: string }[];
  readonly ms: number;
}

/** The published map: read it, publish a successor (compare-and-swap), wait for gateways to serve it. */
export interface TopologyStore {
  read(): Promise<{ readonly topology: Topology; readonly modRevision: string }>;
  /** Publishes `next` if the key is still at `expectedModRevision`; returns the new revision. */
  publish(next: TopologyDoc, expectedModRevision: string): Promise<string>;
  /** Waits (at most timeoutMs) until every live gateway serves `revision` or newer. */
  waitForGateways(revision: string, timeoutMs: number): Promise<GatewayWaitResult>;
}

/** Creates the shard databases of `shards` on the host the topology gives them. */
export type ProvisionIo = (topology: Topology, shards: readonly number[]) => Promise<{ readonly created: number }>;

/** Progress lines for the operator. */
export type OperationLog = (line: string) => void;
