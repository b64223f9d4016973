import { Etcd3 } from 'etcd3';
import { ShardqlError } from '../core/errors.ts';
import { parseTopology, type Topology, type TopologyDoc } from '../core/topology.ts';
import { waitForGateways } from './etcdTopologySource.ts';
import type { TopologyStore } from './operations/ports.ts';

/** Where the topology document lives in etcd unless configured otherwise. */
export const DEFAULT_TOPOLOGY_KEY = '/shardql/topology';

export interface LoadedTopology {
  readonly topology: Topology;
  /** etcd mod revision of the document: what a watch resumes from. */
  readonly revision: string;
}

/**
 * Publishes a topology document after validating it: an invalid map never reaches etcd from
 * here. Returns the new revision.
 */
export async function publishTopology(etcd: Etcd3, key: string, doc: TopologyDoc | unknown): Promise<string> {
  const topology = parseTopology(doc);
  const res = await etcd.put(key).value(JSON.stringify(topology.doc, null, 2)).exec();
  return res.header.revision;
}

/** Reads and validates the document. Missing or unreadable → TOPOLOGY_UNAVAILABLE. */
export async function loadTopology(etcd: Etcd3, key: string): Promise<LoadedTopology> {
  let res;
  try {
    res = await etcd.get(key).exec();
  } catch (err) {
    throw new ShardqlError('TOPOLOGY_UNAVAILABLE', 'The topology store is unreachable', {}, { cause: err });
  }
  const kv = res.kvs[0];
  if (!kv) throw new ShardqlError('TOPOLOGY_UNAVAILABLE', `No topology is published at ${key}; run \`shardql topology publish\``);
  let doc: unknown;
  try {
    doc = JSON.parse(kv.value.toString('utf8'));
  } catch {
    throw new ShardqlError('INVALID_TOPOLOGY', `The topology at ${key} is not JSON`);
  }
  return { topology: parseTopology(doc), revision: kv.mod_revision };
}

/** The key changed after it was read: a change made meanwhile by someone else would be overwritten. */
export class TopologyChangedError extends Error {
  override readonly name = 'TopologyChangedError';
}

/**
 * Publishes `next` only if the key still has `expectedModRevision` (null: only if nothing is
 * published), so a change made meanwhile is never overwritten unseen. Validates first, like
 * publishTopology(). Returns the new revision; TopologyChangedError if the key moved on.
 */
export async function publishTopologyIfUnchanged(etcd: Etcd3, key: string, next: TopologyDoc, expectedModRevision: string | null): Promise<string> {
  const topology = parseTopology(next);
  const value = JSON.stringify(topology.doc, null, 2);
  const guard = expectedModRevision === null ? etcd.if(key, 'Create', '==', 0) : etcd.if(key, 'Mod', '==', expectedModRevision);
  const res = await guard.then(etcd.put(key).value(value)).commit();
  if (!res.succeeded) {
    throw new TopologyChangedError(`The topology at ${key} changed after revision ${expectedModRevision ?? '(none)'} was read; nothing was published`);
  }
  return res.header.revision;
}

/**
 * The published map as topology operations see it (src/topology/operations/ports.ts): read with
 * its revision, publish by compare-and-swap, wait for the gateways registered under the key.
 */
export function etcdTopologyStore(etcd: Etcd3, key: string): TopologyStore {
  return {
    async read() {
      const loaded = await loadTopology(etcd, key);
      return { topology: loaded.topology, modRevision: loaded.revision };
    },
    publish: (next, expectedModRevision) => publishTopologyIfUnchanged(etcd, key, next, expectedModRevision),
    waitForGateways: (revision, timeoutMs) => waitForGateways(etcd, key, revision, timeoutMs),
  };
}
