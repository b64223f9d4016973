/**
 * What the topology operations (src/topology/operations/) do to MySQL servers and whole shard
 * databases, as interfaces: storage/shardCopy.ts and storage/shardAdmin.ts implement them, the
 * entry point (CLI, tests) passes those in. Here, at the bottom, so that neither side imports the other.
 */
import type { Endpoint } from './topology.ts';

/** Row count, CHECKSUM TABLE and next auto-increment value of every table of some databases, keyed `db.table`. */
export type Fingerprint = ReadonlyMap<string, { readonly rows: number; readonly checksum: string | null; readonly autoIncrement?: number | null }>;

/** Writes to some databases blocked on one server while their copy is made. */
export interface CopyLock {
  /** How long taking the lock waited for write transactions already open on those tables, ms. */
  readonly waitedMs: number;
  /** Cancels writes still waiting for the lock (they fail, unacknowledged), then unlocks. */
  release(): Promise<{ readonly cancelled: number }>;
}

/** Whole shard databases between servers. */
export interface ShardCopyIo {
  existingDatabases(server: Endpoint, databases: readonly string[]): Promise<string[]>;
  dropDatabases(server: Endpoint, databases: readonly string[]): Promise<void>;
  /** Waits (at most timeoutMs) for open write transactions on the databases' tables, then blocks new writes; reads go on. */
  lockForCopy(server: Endpoint, databases: readonly string[], timeoutMs: number): Promise<CopyLock>;
  /**
   * Dumps the databases from `from` and restores them into `to`: `schema` (re)creates their tables
   * empty (replacing what is there), `data` inserts their rows into those empty tables.
   */
  copy(from: Endpoint, to: Endpoint, databases: readonly string[], part: 'schema' | 'data'): Promise<{ readonly bytes: number }>;
  /** Raises each table's next auto-increment value on `to` to at least the one on `from`; returns how many changed. */
  alignAutoIncrements(from: Endpoint, to: Endpoint, databases: readonly string[]): Promise<number>;
  fingerprint(server: Endpoint, databases: readonly string[]): Promise<Fingerprint>;
}

/** What a replica says about its replication. */
export interface ReplicaState {
  /** It has a replication source configured. */
  readonly replicating: boolean;
  readonly source?: Endpoint;
  readonly ioRunning: boolean;
  readonly sqlRunning: boolean;
  /** Why the SQL thread stopped, if it did. */
  readonly sqlError?: string;
  /** GTID position received (relay log) and applied. */
  readonly receivedGtid: string;
  readonly appliedGtid: string;
  readonly readOnly: boolean;
  /** Semi-sync replica on, and acknowledging. */
  readonly semiSync: boolean;
}

/** Making one server accept writes: what only a map's primary may do. */
export interface PrimaryIo {
  /**
   * read_only = 0, unless the server replicates from another one (then it throws: a replica is never
   * made writable). Returns whether it was read-only.
   */
  makeWritable(server: Endpoint): Promise<{ readonly wasReadOnly: boolean }>;
}

/** Replication control on one server. */
export interface ReplicationIo extends PrimaryIo {
  reachable(server: Endpoint): Promise<boolean>;
  replicaState(server: Endpoint): Promise<ReplicaState>;
  /** GTID position of everything the server has binlogged (a primary's). */
  binlogPosition(server: Endpoint): Promise<string>;
  /** Stops receiving from the source; what was received is still applied. */
  stopReceiving(server: Endpoint): Promise<void>;
  /** Waits until the server has applied `gtid` (at most timeoutMs); false on timeout. */
  waitApplied(server: Endpoint, gtid: string, timeoutMs: number): Promise<boolean>;
  /** Forgets its source (it is read-only still: makeWritable is a separate step). Returns its GTID position. */
  makePrimary(server: Endpoint): Promise<string>;
  /** read_only = 1: refuses every write of the gateway's account. */
  fence(server: Endpoint): Promise<void>;
}
