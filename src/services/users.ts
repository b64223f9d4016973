import { isShardqlError, ShardqlError } from '../core/errors.ts';
import type { ObjectStore, ObjectData, StoredObject } from '../storage/objectStore.ts';
import { pendingClaimToken, type LookupNamespace, type ModShardStore } from '../storage/modShardStore.ts';
import type { OpContext } from '../storage/sqlStats.ts';
import { randomOpenShard } from './placement.ts';
import type { Topology } from '../core/topology.ts';

export interface NewUser {
  readonly username: string;
  readonly email?: string | undefined;
  readonly data?: ObjectData;
}

export interface UserDeps {
  readonly objects: ObjectStore;
  readonly lookups: ModShardStore;
  readonly topology: () => Topology;
  readonly random?: () => number;
}

const TAKEN: Record<LookupNamespace, 'USERNAME_TAKEN' | 'EMAIL_TAKEN'> = { username: 'USERNAME_TAKEN', email: 'EMAIL_TAKEN' };

/**
 * Releases a claim; sent once more after a retryable failure. A mod-shard move cancels a release
 * that waited on the source's lock only once every gateway serves the flip, so the second one reaches
 * the shard's new host. Left pending, the claim would hold the name for PENDING_CLAIM_TTL_MS and the
 * client's retry of the sign-up would find it taken.
 */
/** How long a rollback's release waits out a retryable refusal (a mod-shard move's pause is under a second). */
const RELEASE_RETRIES = 20;
const RELEASE_BACKOFF_MS = 25;

/**
 * Releases a claim of a sign-up that is rolling back, waiting out a retryable refusal (a mod-shard
 * move's pause, a host failing over) so that the release lands where the claim is kept after it: a
 * pending claim left behind would refuse this very sign-up's retry until it goes stale.
 */
async function releaseClaim(lookups: ModShardStore, ns: LookupNamespace, key: string, token: bigint, ctx: OpContext): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await lookups.release(ns, key, token, ctx);
      return;
    } catch (err) {
      if (!(isShardqlError(err) && err.retryable) || attempt >= RELEASE_RETRIES) throw err;
      await new Promise((resolve) => setTimeout(resolve, RELEASE_BACKOFF_MS * attempt));
    }
  }
}

/**
 * Creates a user whose username (and email) are unique, through the mod shard:
 *   1. claim each key with a pending token (only one claimant can win a key);
 *   2. create the user row on a random open shard;
 *   3. confirm each claim with the new ID.
 * A failure at any step soft-deletes the row (if made) and releases what was claimed, so nothing half-created remains; a crash leaves
 * only pending claims, which lookups ignore and a later claimant takes over once stale.
 */
export async function createUser(deps: UserDeps, input: NewUser, ctx: OpContext = {}): Promise<StoredObject> {
  const token = pendingClaimToken();
  const keys: [LookupNamespace, string][] = [['username', input.username]];
  if (input.email !== undefined) keys.push(['email', input.email]);
  const claimed: [LookupNamespace, string][] = [];
  const releaseAll = async (): Promise<void> => {
    await Promise.allSettled(claimed.map(([ns, key]) => releaseClaim(deps.lookups, ns, key, token, ctx)));
  };
  let user: StoredObject | undefined;
  try {
    for (const [ns, key] of keys) {
      // Released on failure even when the claim itself failed: its statement may have committed
      // with the answer lost (a connection cut by a mod-shard move), and a pending claim left
      // behind would refuse this very sign-up's retry. A release only removes this token's claim.
      claimed.push([ns, key]);
      if (!(await deps.lookups.claim(ns, key, token, ctx))) {
        claimed.pop();
        throw new ShardqlError(TAKEN[ns], `The ${ns} ${JSON.stringify(key)} is taken; choose another`, { field: ns });
      }
    }
    const shard = randomOpenShard(deps.topology(), deps.random);
    user = await deps.objects.create('user', shard, { ...input.data, username: input.username, ...(input.email !== undefined ? { email: input.email } : {}) }, ctx);
    for (const [ns, key] of keys) await deps.lookups.confirm(ns, key, token, user.id, ctx);
    return user;
  } catch (err) {
    if (user) await deps.objects.softDelete(user.id, ctx).catch(() => undefined);
    await releaseAll();
    throw err;
  }
}
