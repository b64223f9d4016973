import type { BinaryName, BinaryPaths } from './binaries.ts';
import type { StackPlan } from './plan.ts';

export interface ServiceContext {
  plan: StackPlan;
  bins: BinaryPaths;
  log: (line: string) => void;
}

/** Everything the generic lifecycle code (start/stop/inspect) needs to know about one service. */
export interface ServiceSpec {
  /** e.g. "redis", "mysql001-primary" */
  name: string;
  binary: BinaryName;
  /** <stackDir>/<name>: config, data, log and pid file of this service. */
  dir: string;
  pidFile: string;
  logFile: string;
  host: string;
  /** Every port the service listens on (checked for conflicts before start). */
  ports: number[];
  /** Human-readable address for status output. */
  address: string;
  /** Name of a service that must be up before this one starts (a replica's primary). */
  dependsOn?: string;
  /** Services with a lower stop phase are stopped first (replicas before primaries). */
  stopPhase: number;
  args(ctx: ServiceContext): string[];
  /** Liveness/readiness: the service answers a real protocol request. */
  isReady(): Promise<boolean>;
  /** Before spawning (create dirs, initialize data, write config). */
  prepare?(ctx: ServiceContext): Promise<void>;
  /**
   * Whenever the service is up (freshly started or found running): one-time
   * provisioning. Must be idempotent and cheap once done, so an interrupted
   * provisioning is simply retried by the next `up`.
   */
  provision?(ctx: ServiceContext): Promise<void>;
  /** When the service was found already running (apply config changes that can be applied live). */
  reconcile?(ctx: ServiceContext): Promise<void>;
}
