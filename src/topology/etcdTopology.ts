import { Etcd3 } from 'etcd3';
import { ShardqlError } from '../core/errors.ts';
import { parseTopology, type Topology, type TopologyDoc } from '../core/topology.ts';

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
