import type { Topology } from '../core/topology.ts';
import type { Loaders } from '../loaders/loaders.ts';
import type { HomeFeeds } from '../loaders/feed.ts';
import type { DeclaredWrites } from '../services/writes.ts';
import type { OpContext } from '../storage/sqlStats.ts';
import type { SqlStats } from '../storage/sqlStats.ts';
import type { CacheStats } from '../core/cacheStats.ts';
import type { RequestScope } from '../core/requestScope.ts';

/** What every resolver gets: the viewer, this request's loaders, the writes, and the cost so far. */
export interface GatewayContext {
  readonly viewerId: bigint | undefined;
  readonly loaders: Loaders;
  /** The served writes: the declared mutations, and a product's own when one is attached (its resolvers know which). */
  readonly writes: DeclaredWrites;
  /** The home feed an attached product declares (stored feeds, builds, read-time merges); undefined: none does. */
  readonly feed?: HomeFeeds | undefined;
  readonly op: OpContext & { readonly stats: SqlStats; readonly cache: CacheStats };
  readonly topology: Topology;
  /** The request's Idempotency-Key header, if any (already checked). */
  readonly idempotencyKey?: string | undefined;
  /** The HTTP request this operation came in: its ID, client, trace, and what its log line will say. */
  readonly request: RequestScope;
  /** Mints a viewer token for a new user (createUser). */
  readonly mintToken: (userId: bigint) => Promise<string>;
}
