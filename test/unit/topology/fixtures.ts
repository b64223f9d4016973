import { evenLayout, parseTopology, type Endpoint, type TopologyDoc } from '../../../src/core/topology.ts';
import type { CopyLock, Fingerprint, ReplicaState, ReplicationIo, ShardCopyIo } from '../../../src/core/serverIo.ts';
import type { GatewayWaitResult, TopologyStore } from '../../../src/topology/operations/ports.ts';

export const ep = (port: number): Endpoint => ({ host: '10.0.0.1', port });

/** Shards 0–7 on mysql001, 8–15 on mysql002; mysql003 known, holding nothing. */
export function layout(): TopologyDoc {
  const doc = evenLayout({
    hosts: { mysql001: { primary: ep(3301), replica: ep(3311) }, mysql002: { primary: ep(3302), replica: ep(3312) } },
    shards: 16,
    modShards: 8,
  });
  return parseTopology({ ...doc, hosts: { ...doc.hosts, mysql003: { primary: ep(3303), replica: ep(3313) } } }).doc;
}

/** An in-memory published map: publishes are compare-and-swap, every step is recorded in `events`. */
export class FakeStore implements TopologyStore {
  doc: TopologyDoc;
  revision = 10;
  gatewaysBehindFor = new Set<string>();
  /** Waiting for gateways to serve one of these revisions finds etcd gone: it and every later call fail. */
  etcdDiesWaitingFor = new Set<string>();
  etcdDown = false;
  constructor(
    doc: TopologyDoc,
    readonly events: string[],
  ) {
    this.doc = doc;
  }
  async read() {
    return { topology: parseTopology(this.doc), modRevision: String(this.revision) };
  }
  async publish(next: TopologyDoc, expected: string) {
    if (this.etcdDown) throw new Error('14 UNAVAILABLE: No connection established');
    if (expected !== String(this.revision)) throw new Error(`conflict: at ${this.revision}, expected ${expected}`);
    this.doc = parseTopology(next).doc;
    this.revision++;
    this.events.push(`publish ${this.revision}${next.pausedShards ? ` paused=${JSON.stringify(next.pausedShards)}` : ''}`);
    return String(this.revision);
  }
  async waitForGateways(revision: string): Promise<GatewayWaitResult> {
    this.events.push(`wait gateways ${revision}`);
    if (this.etcdDiesWaitingFor.has(revision)) this.etcdDown = true;
    if (this.etcdDown) throw new Error('14 UNAVAILABLE: No connection established');
    const behind = this.gatewaysBehindFor.has(revision) ? [{ id: 'gw-old', revision: String(Number(revision) - 1) }] : [];
    return { gateways: 2, behind, ms: 3 };
  }
}

export class FakeCopier implements ShardCopyIo {
  existing: string[] = [];
  corrupt = false;
  constructor(readonly events: string[]) {}
  async existingDatabases(server: Endpoint, dbs: readonly string[]) {
    return server.port === 3303 ? this.existing.filter((d) => dbs.includes(d)) : [...dbs];
  }
  async dropDatabases(server: Endpoint, dbs: readonly string[]) {
    this.events.push(`drop ${server.port} ${dbs.join(',')}`);
  }
  async lockForCopy(server: Endpoint, dbs: readonly string[]): Promise<CopyLock> {
    this.events.push(`lock ${server.port} ${dbs.join(',')}`);
    return { waitedMs: 1, release: async () => (this.events.push(`unlock ${server.port}`), { cancelled: 0 }) };
  }
  async copy(from: Endpoint, to: Endpoint, dbs: readonly string[], part: 'schema' | 'data') {
    this.events.push(`copy ${part} ${from.port}->${to.port} ${dbs.join(',')}`);
    return { bytes: 100 };
  }
  async alignAutoIncrements(from: Endpoint, to: Endpoint) {
    this.events.push(`align ${from.port}->${to.port}`);
    return 0;
  }
  async fingerprint(server: Endpoint, dbs: readonly string[]): Promise<Fingerprint> {
    return new Map(dbs.map((d) => [`${d}.pins`, { rows: 3, checksum: this.corrupt && server.port === 3303 ? '1' : '2' }]));
  }
}

export class FakeReplication implements ReplicationIo {
  alive = new Set<number>();
  state: ReplicaState = {
    replicating: true,
    source: ep(3301),
    ioRunning: true,
    sqlRunning: true,
    receivedGtid: '0-11-42',
    appliedGtid: '0-11-40',
    readOnly: true,
    semiSync: true,
  };
  applies = true;
  constructor(readonly events: string[]) {}
  async reachable(s: Endpoint) {
    return this.alive.has(s.port);
  }
  async replicaState() {
    return this.state;
  }
  async binlogPosition() {
    return '0-11-50';
  }
  async stopReceiving(s: Endpoint) {
    this.events.push(`stop receiving ${s.port}`);
  }
  async waitApplied(s: Endpoint, gtid: string) {
    this.events.push(`wait applied ${s.port} ${gtid}`);
    return this.applies;
  }
  async makePrimary(s: Endpoint) {
    this.events.push(`make primary ${s.port}`);
    return '0-11-42';
  }
  async fence(s: Endpoint) {
    this.events.push(`fence ${s.port}`);
  }
  async makeWritable(s: Endpoint) {
    this.events.push(`make writable ${s.port}`);
    return { wasReadOnly: true };
  }
}
