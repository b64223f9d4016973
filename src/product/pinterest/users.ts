import type { Topology } from '../../core/topology.ts';
import type { ModShardStore } from '../../storage/modShardStore.ts';
import type { ObjectData, ObjectStore, StoredObject } from '../../storage/objectStore.ts';
import type { OpContext } from '../../storage/sqlStats.ts';
import { randomOpenShard } from '../../services/placement.ts';
import { createClaimed, type Claim } from '../../services/uniqueClaims.ts';

export interface NewUser {
  readonly username: string;
  readonly email?: string | undefined;
  readonly data?: ObjectData;
  /** The request's idempotency key: a retry with the same key is the same sign-up. */
  readonly idempotencyKey?: string | undefined;
}

export interface UserDeps {
  readonly objects: ObjectStore;
  readonly lookups: ModShardStore;
  readonly topology: () => Topology;
  readonly random?: () => number;
}

/**
 * Creates a user whose username (and email) are unique, through the mod shard (uniqueClaims.ts:
 * claim pending → create the row on a random open shard → confirm; undone and released on failure).
 */
export function createUser(deps: UserDeps, input: NewUser, ctx: OpContext = {}): Promise<StoredObject> {
  const claims: Claim[] = [['username', input.username]];
  if (input.email !== undefined) claims.push(['email', input.email]);
  return createClaimed(
    deps,
    {
      claims,
      idempotencyKey: input.idempotencyKey,
      make: (marker) => {
        const data: ObjectData = { ...input.data, username: input.username, ...(input.email !== undefined ? { email: input.email } : {}), ...marker };
        return deps.objects.create('user', randomOpenShard(deps.topology(), deps.random), data, ctx);
      },
      unmake: (user) => deps.objects.softDelete(user.id, ctx),
    },
    ctx,
  );
}
