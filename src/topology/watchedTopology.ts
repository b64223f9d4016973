/**
 * What a gateway and a worker both start with: an etcd client, their entry among the processes
 * serving the map (GatewayPresence: a shard move waits for every one to serve its pause), and the
 * watcher holding the map in force. The map read at start must number every type the served model
 * has (a dropped type's number stays reserved); anything that fails here closes what was opened.
 */
import type { Etcd3 } from 'etcd3';
import { checkTypesAtStart, type Topology } from '../core/topology.ts';
import { GatewayPresence, createWatchingEtcdClient, etcdTopologySource, type EtcdAccess } from './etcdTopologySource.ts';
import { TopologyWatcher, type TopologyLog, type TopologySwap } from './topologyWatcher.ts';

export interface WatchedTopologyOptions {
  readonly endpoints: readonly string[];
  readonly access?: EtcdAccess | undefined;
  readonly topologyKey: string;
  readonly refreshIntervalMs?: number | undefined;
  readonly log: TopologyLog;
  /** Besides telling the presence entry, on each new map swapped in. */
  readonly onSwap?: (swap: TopologySwap) => void;
}

export interface WatchedTopology {
  readonly etcd: Etcd3;
  readonly presence: GatewayPresence;
  readonly watcher: TopologyWatcher;
  /** The map in force. */
  current(): Topology;
  /** Stops the watcher, drops the presence entry and closes the etcd client. */
  close(): Promise<void>;
}

export async function startWatchedTopology(opts: WatchedTopologyOptions): Promise<WatchedTopology> {
  const etcd = createWatchingEtcdClient(opts.endpoints, opts.access);
  const presence = new GatewayPresence({ etcd, topologyKey: opts.topologyKey, log: opts.log });
  const watcher = new TopologyWatcher({
    source: etcdTopologySource(etcd, opts.topologyKey),
    log: opts.log,
    ...(opts.refreshIntervalMs !== undefined ? { refreshIntervalMs: opts.refreshIntervalMs } : {}),
    onSwap: (swap) => {
      opts.onSwap?.(swap);
      presence.update(swap.revision);
    },
  });
  try {
    await watcher.start();
    checkTypesAtStart(watcher.current().doc);
  } catch (err) {
    await watcher.stop();
    etcd.close();
    throw err;
  }
  presence.start(watcher.revision());
  return {
    etcd,
    presence,
    watcher,
    current: () => watcher.current(),
    async close() {
      await watcher.stop();
      await presence.stop();
      etcd.close();
    },
  };
}
