/** Public types of the local stack (re-exported by localStack.ts). */

export interface StackOptions {
  /** Root folder for all data/logs/pids, e.g. <project>/.stack */
  dir: string;
  /** Number of MariaDB primary instances ("hosts"); default: existing count, else 2. */
  hosts?: number;
  /** Start one replica per primary with real (semi-sync, GTID) replication; default false. */
  replicas?: boolean;
  /**
   * Also start a Redis Cluster of 3 primaries (besides the single Redis), for running the gateway
   * and workers against a cluster; default false. Once a stack has one it keeps it.
   */
  redisCluster?: boolean;
  /**
   * MiB of InnoDB buffer pool per MariaDB instance; default: what the stack was made with, else 64
   * (the test stack runs up to six instances on a small machine). Kept in the plan; a running
   * instance is resized live (MariaDB resizes its buffer pool online). A stack whose data outgrows
   * its pool pays for it on every write: inserting into a 4M-row mapping table cost MariaDB 71 µs
   * of CPU per row with 64 MiB and 8 µs with 2 GiB.
   */
  innodbBufferPoolMb?: number;
  /** Progress lines; default no-op. */
  log?: (line: string) => void;
}

export interface MysqlEndpoint {
  host: string;
  port: number;
}

export interface StackHost {
  name: string;
  primary: MysqlEndpoint;
  replica?: MysqlEndpoint;
}

export interface StackInfo {
  dir: string;
  /**
   * `user` is the application's (the gateway's) account: rows of the shard databases only, never
   * through read_only, so a server that is not the map's primary refuses it. `admin` is the
   * operator's account (provisioning, shard copies, promotion, fencing, making primaries writable,
   * bulk loads); `stack up` adds it to stacks made before it existed.
   */
  mysql: { user: string; password: string; admin?: { user: string; password: string }; hosts: StackHost[] };
  /** Account replicas use to connect to their primary (exists on every instance, so promotion works). */
  replication?: { user: string; password: string };
  redis: { host: string; port: number };
  /** The Redis Cluster's nodes (3 primaries owning 5461, 5461 and 5462 slots), when the stack has one. */
  redisCluster?: { nodes: { host: string; port: number }[] };
  memcached: { host: string; port: number };
  etcd: { endpoints: string[] };
}

export interface ServiceStatus {
  name: string;
  pid: number | null;
  running: boolean;
  address: string;
}

export interface StackStatus {
  info: StackInfo | null;
  services: ServiceStatus[];
  /** The Redis Cluster as its first answering node sees it (CLUSTER INFO); null when none answers; absent without one. */
  redisCluster?: RedisClusterState | null;
}

export interface RedisClusterState {
  /** `ok` when every slot is served. */
  state: string;
  slotsAssigned: number;
  knownNodes: number;
  /** Nodes that serve slots. */
  primaries: number;
}
