/**
 * The systems under test, all in this process (the load generator is a child process):
 *
 *   ours   the gateway (startGateway, production mode), batching loaders over the shards
 *   n+1    the same gateway with `batching: false`: every load its own round trip
 *   floor  plain graphql-js on node:http over the scenario data in Maps (no I/O at all)
 *   floor-jit  the same schema, resolvers and Maps on graphql-jit (the gateway's executor)
 *   flat   plain graphql-js on node:http over ONE unsharded database, answering with JOINs
 *
 * `restart()` is what "cold" means today: a fresh server (new pools, empty document cache, new
 * loaders); when the gateway gets its memcached/Redis caches, the runner also flushes those.
 */
import { execute, parse, type GraphQLSchema } from 'graphql';
import { benchAdmin } from '../src/bulk/dataset.ts';
import { mintToken } from '../src/auth/tokens.ts';
import type { GatewayConfig } from '../src/config.ts';
import type { Topology } from '../src/core/topology.ts';
import { startGateway, type GatewayOptions, type RunningGateway } from '../src/server.ts';
import type { StackInfo } from '../src/stack/localStack.ts';
import { createStorage } from '../src/storage/index.ts';
import { defaultEventRetention } from '../src/core/events.ts';
import { PINTEREST_EVENTS } from '../src/product/pinterest/events.ts';
import { FlatDb, FlatSource } from './baselines/flat.ts';
import { serveGraphql, type BaselineServer } from './baselines/http.ts';
import { MemoryData, MemorySource, RecordingSource, type EventSettings } from './baselines/memory.ts';
import type { Source, SourceContext } from './baselines/source.ts';
import type { ScenarioRequest } from './scenarios.ts';

export type SystemKey = 'ours' | 'n+1' | 'floor' | 'floor-jit' | 'flat';

export interface System {
  readonly key: SystemKey;
  readonly title: string;
  readonly url: string;
  /** Whether the system talks to the stack's caches (then "cold" flushes them). */
  readonly usesStackCaches: boolean;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export const SYSTEM_TITLES: Record<SystemKey, string> = {
  ours: 'shardql gateway (DataLoader batching, one round trip per host per level)',
  'n+1': 'same gateway, batching off (naive resolvers, N+1 round trips)',
  floor: 'plain graphql-js on node:http, in-memory Maps (no I/O)',
  'floor-jit': 'the same floor on graphql-jit, the executor the gateway runs (no I/O, no Apollo)',
  flat: 'plain graphql-js on node:http, ONE unsharded MariaDB database, SQL JOINs',
};

/** Gateway events worth showing in the benchmark's log (the rest is noise at this rate). */
const SHOWN_EVENTS = /internal_error|_failed|unavailable/;

export async function gatewaySystem(key: 'ours' | 'n+1', config: GatewayConfig, log: (line: string) => void = () => undefined, opts: Pick<GatewayOptions, 'cacheTimeoutMs'> = {}): Promise<System> {
  const events = (event: string, fields?: Record<string, unknown>): void => {
    if (SHOWN_EVENTS.test(event)) log(`  [${key} gateway] ${event} ${JSON.stringify(fields ?? {}).slice(0, 400)}`);
  };
  const start = (): Promise<RunningGateway> => startGateway(config, { ...opts, log: events, batching: key === 'ours' });
  let gw = await start();
  return {
    key,
    title: SYSTEM_TITLES[key],
    usesStackCaches: true,
    get url() {
      return gw.url;
    },
    async restart() {
      await gw.stop(2000);
      gw = await start();
    },
    stop: () => gw.stop(2000),
  };
}

async function baselineSystem(key: 'floor' | 'floor-jit' | 'flat', open: () => Promise<{ server: BaselineServer; close?: () => Promise<void> }>): Promise<System> {
  let cur = await open();
  return {
    key,
    title: SYSTEM_TITLES[key],
    usesStackCaches: false,
    get url() {
      return cur.server.url;
    },
    async restart() {
      await cur.server.stop();
      await cur.close?.();
      cur = await open();
    },
    async stop() {
      await cur.server.stop();
      await cur.close?.();
    },
  };
}

/** Each baseline gets the gateway's event settings (`config.events`): it groups notifications alike. */
export function flatSystem(schema: GraphQLSchema, stack: StackInfo, database: string, jwtSecret: string, events: EventSettings = {}): Promise<System> {
  return baselineSystem('flat', async () => {
    // Its own database, outside the shard databases the application's account may touch: read as the loader wrote it.
    const db = new FlatDb(stack.mysql.hosts[0]!.primary, benchAdmin(stack), database, events);
    const server = await serveGraphql({ schema, jwtSecret, source: (ctx) => new FlatSource(db, ctx) });
    return { server, close: () => db.close() };
  });
}

/** A floor over the recorded Maps: graphql-js's execute() (`floor`) or graphql-jit (`floor-jit`). */
export function floorSystem(schema: GraphQLSchema, data: MemoryData, jwtSecret: string, events: EventSettings = {}, executor: 'js' | 'jit' = 'js'): Promise<System> {
  const source = new MemorySource(data, events);
  return baselineSystem(executor === 'jit' ? 'floor-jit' : 'floor', async () => ({ server: await serveGraphql({ schema, jwtSecret, source: () => source, executor }) }));
}

/** Requests recorded at once: each waits on MariaDB round trips, one after another (8 s for 220 alone). */
const RECORDING_CONCURRENCY = 8;

/**
 * Fills the floor's memory: every request once through the baselines' resolvers, reading the real
 * shards through the gateway's loaders and keeping what they return. Requests are recorded side by
 * side: they only read, and what they keep is a union (sets, maps of equal values, lists merged in
 * their order), the same whatever order they finish in.
 */
export async function recordFloor(schema: GraphQLSchema, stack: StackInfo, topology: Topology, requests: readonly ScenarioRequest[], events: EventSettings = {}): Promise<MemoryData> {
  const data = new MemoryData();
  const storage = createStorage({
    topology: () => topology,
    credentials: stack.mysql,
    events: { spec: PINTEREST_EVENTS, retention: events.retention ?? defaultEventRetention(PINTEREST_EVENTS), ...(events.windowMs !== undefined ? { windowMs: events.windowMs } : {}) },
  });
  const documents = new Map<string, ReturnType<typeof parse>>();
  let next = 0;
  const recorder = async (): Promise<void> => {
    while (next < requests.length) {
      const r = requests[next++]!;
      let doc = documents.get(r.query);
      if (!doc) documents.set(r.query, (doc = parse(r.query)));
      const ctx: SourceContext = { viewerId: r.viewer === undefined ? undefined : BigInt(r.viewer), sqlRoundTrips: 0, src: undefined as unknown as Source };
      (ctx as { src: Source }).src = new RecordingSource(data, storage);
      const result = await execute({ schema, document: doc, variableValues: r.variables, contextValue: ctx });
      if (result.errors?.length) throw new Error(`recording the floor: ${result.errors[0]!.message} (${JSON.stringify(r.variables)})`);
    }
  };
  try {
    await Promise.all(Array.from({ length: RECORDING_CONCURRENCY }, recorder));
  } finally {
    await storage.close();
  }
  return data;
}

/** Bearer tokens per viewer, minted once with the gateway's secret (the baselines verify them too). */
export function tokenCache(secret: string): (userId: string) => Promise<string> {
  const tokens = new Map<string, Promise<string>>();
  return (userId) => {
    let t = tokens.get(userId);
    if (!t) tokens.set(userId, (t = mintToken(secret, BigInt(userId), 24 * 3600)));
    return t;
  };
}
