/**
 * The writes a gateway serves: the model's declared mutations (modelWrites.ts) run by one
 * WriteExecutor, with the hooks of the products attached to the served model (writeHooks.ts; none:
 * the model's behaviour alone). A product with typed writes of its own extends this class.
 */
import { servedModel } from '../core/model/served.ts';
import type { Topology } from '../core/topology.ts';
import type { Storage } from '../storage/index.ts';
import type { BackgroundJobs } from './backgroundJobs.ts';
import { ModelWrites } from './modelWrites.ts';
import { WriteExecutor, type FaultHook } from './writeExecutor.ts';
import type { WriteHooks } from './writeHooks.ts';

export type { WriteOpts } from './modelWrites.ts';

export interface WritesDeps {
  readonly storage: Storage;
  readonly topology: () => Topology;
  readonly now?: () => number;
  readonly random?: () => number;
  /** Fault injection at step boundaries (tests only). */
  readonly faults?: FaultHook;
  /**
   * The job queue, for the work a write hands to background workers (a product's fan-outs and
   * cleanings, recorded in intents or enqueued by its hooks). Absent: none is enqueued.
   */
  readonly jobs?: BackgroundJobs;
  /** Where a failed enqueue is reported (the write itself stands). */
  readonly log?: (event: string, fields?: Record<string, unknown>) => void;
  /** See `GatewayConfig.intentCompletionDelayMs` (default 100). */
  readonly intentCompletionDelayMs?: number | undefined;
}

export class DeclaredWrites {
  readonly #exec: WriteExecutor;
  /** The declared mutations, by name (the GraphQL resolvers derived from the model call these). */
  readonly model: ModelWrites;

  constructor(deps: WritesDeps, hooks: WriteHooks = {}) {
    this.#exec = new WriteExecutor(deps.storage, deps.faults, { jobs: deps.jobs }, { log: deps.log, delayMs: deps.intentCompletionDelayMs });
    this.model = new ModelWrites({
      storage: deps.storage,
      topology: deps.topology,
      model: servedModel(),
      executor: this.#exec,
      hooks,
      now: deps.now,
      random: deps.random,
    });
  }

  /**
   * Resolves once the bookkeeping these writes left to run after they answered (deleting relation
   * writes' intents) is done: before closing storage, and in tests that count intents.
   */
  settled(): Promise<void> {
    return this.#exec.settled();
  }
}
