/** Public types of the local stack (re-exported by localStack.ts). */

export interface StackOptions {
  /** Root folder for all data/logs/pids, e.g. <project>/.stack */
  dir: string;
  /** Number of MariaDB primary instances ("hosts"); default: existing count, else 2. */
  hosts?: number;
  /** Start one replica per primary with real (semi-sync, GTID) replication; default false. */
  replicas?: boolean;
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
}
