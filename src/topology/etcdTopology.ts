import { Etcd3 } from 'etcd3';
import { ShardqlError } from '../core/errors.ts';
import { assertModShardCountKept } from '../core/modShardCount.ts';
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

/** The valid map at `key` with its mod revision; topology null when nothing (or nothing valid) is there. */
async function readCurrent(etcd: Etcd3, key: string): Promise<{ topology: Topology | null; modRevision: string | null }> {
  const kv = (await etcd.get(key).exec()).kvs[0];
  if (!kv) return { topology: null, modRevision: null };
  try {
    return { topology: parseTopology(JSON.parse(kv.value.toString('utf8'))), modRevision: kv.mod_revision };
  } catch {
    return { topology: null, modRevision: kv.mod_revision };
  }
}

/**
 * Publishes a topology document after validating it: an invalid map never reaches etcd from
 * here, nor one that changes the published map's mod-shard count (core/modShardCount.ts). The
 * write is guarded on the revision checked, so the count cannot change in between. Returns the new
 * revision.
 */
export async function publishTopology(etcd: Etcd3, key: string, doc: TopologyDoc | unknown): Promise<string> {
  const topology = parseTopology(doc);
  const current = await readCurrent(etcd, key);
  assertModShardCountKept(current.topology?.doc ?? null, topology.doc);
  const res = await guardedPut(etcd, key, JSON.stringify(topology.doc, null, 2), current.modRevision).commit();
  if (!res.succeeded) throw new TopologyChangedError(`The topology at ${key} changed while it was being published; nothing was published`);
  return res.header.revision;
}

/** A put that happens only if the key is still at `modRevision` (null: still absent). */
function guardedPut(etcd: Etcd3, key: string, value: string, modRevision: string | null) {
  const guard = modRevision === null ? etcd.if(key, 'Create', '==', 0) : etcd.if(key, 'Mod', '==', modRevision);
  return guard.then(etcd.put(key).value(value));
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
 * publishTopology(), and refuses a change of the mod-shard count. Returns the new revision;
 * TopologyChangedError if the key moved on.
 */
export async function publishTopologyIfUnchanged(etcd: Etcd3, key: string, next: TopologyDoc, expectedModRevision: string | null): Promise<string> {
  const topology = parseTopology(next);
  const value = JSON.stringify(topology.doc, null, 2);
  const current = await readCurrent(etcd, key);
  // The count is checked against the map at the expected revision: if the key moved on, the put below is refused anyway.
  if (current.modRevision === expectedModRevision) assertModShardCountKept(current.topology?.doc ?? null, topology.doc);
  const res = await guardedPut(etcd, key, value, expectedModRevision).commit();
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
