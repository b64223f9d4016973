import { ShardqlError } from '../core/errors.ts';
import { whileRetryable } from '../core/retry.ts';
import { isActive, type ObjectStore, type ObjectData, type StoredObject } from '../storage/objectStore.ts';
import { pendingClaimToken, type LookupNamespace, type ModShardStore } from '../storage/modShardStore.ts';
import type { OpContext } from '../storage/sqlStats.ts';
import { randomOpenShard } from './placement.ts';
import type { Topology } from '../core/topology.ts';

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

const TAKEN: Record<LookupNamespace, 'USERNAME_TAKEN' | 'EMAIL_TAKEN'> = { username: 'USERNAME_TAKEN', email: 'EMAIL_TAKEN' };

/** How long a rollback's release waits out a retryable refusal (a mod-shard move's pause is under a second). */
const RELEASE_RETRIES = 20;
const RELEASE_BACKOFF_MS = 25;

/**
 * Releases a claim of a sign-up that is rolling back, waiting out a retryable refusal (a mod-shard
 * move's pause, a host failing over) so that the release lands where the claim is kept after it: a
 * pending claim left behind would refuse this very sign-up's retry until it goes stale.
 */
function releaseClaim(lookups: ModShardStore, ns: LookupNamespace, key: string, token: bigint, ctx: OpContext): Promise<void> {
  return whileRetryable(() => lookups.release(ns, key, token, ctx), { attempts: RELEASE_RETRIES, pauseMs: (n) => RELEASE_BACKOFF_MS * n });
}

/**
 * The blob field naming the sign-up that made a user (its claim token, in hex), when the client sent
 * an Idempotency-Key: a retry of that sign-up that finds the names already confirmed answers with
 * that user instead of USERNAME_TAKEN. No GraphQL field shows it.
 */
export const SIGN_UP_FIELD = '_signUp';

/**
 * The user an earlier attempt of this same sign-up made (same idempotency key, so same token), with
 * every key pointed at it: the earlier attempt may have stopped between two confirms. Undefined when
 * the key is held by anyone else.
 */
async function earlierSignUp(
  deps: UserDeps,
  keys: readonly [LookupNamespace, string][],
  held: [LookupNamespace, string],
  token: bigint,
  ctx: OpContext,
): Promise<StoredObject | undefined> {
  const id = (await deps.lookups.lookup(held[0], [held[1]], ctx)).get(held[1]);
  const user = id === undefined ? undefined : await deps.objects.get(id, ctx);
  if (!user || !isActive(user) || user.data[SIGN_UP_FIELD] !== token.toString(16)) return undefined;
  for (const [ns, key] of keys) {
    if (!(await deps.lookups.confirm(ns, key, token, user.id, ctx)) && !(await deps.lookups.claim(ns, key, user.id, ctx))) return undefined;
  }
  return user;
}

/**
 * Creates a user whose username (and email) are unique, through the mod shard:
 *   1. claim each key with a pending token (only one claimant can win a key);
 *   2. create the user row on a random open shard;
 *   3. confirm each claim with the new ID.
 * A failure at any step soft-deletes the row (if made) and releases what was claimed, so nothing half-created remains; a crash leaves
 * only pending claims, which lookups ignore and a later claimant takes over once stale.
 *
 * With an idempotency key, the token derives from it: a client's retry of the sign-up (after a
 * retryable error, or an answer lost with its connection) takes over its own pending claims, and one
 * that finds them confirmed answers with the user its earlier attempt made. Without one, a retry that
 * finds a claim its earlier attempt left pending is refused until the claim goes stale.
 */
export async function createUser(deps: UserDeps, input: NewUser, ctx: OpContext = {}): Promise<StoredObject> {
  const seeded = input.idempotencyKey !== undefined;
  const token = pendingClaimToken(input.idempotencyKey);
  const keys: [LookupNamespace, string][] = [['username', input.username]];
  if (input.email !== undefined) keys.push(['email', input.email]);
  const claimed: [LookupNamespace, string][] = [];
  const confirmed: [LookupNamespace, string][] = [];
  const taken = (ns: LookupNamespace, key: string): ShardqlError =>
    new ShardqlError(TAKEN[ns], `The ${ns} ${JSON.stringify(key)} is taken; choose another`, { field: ns });
  let user: StoredObject | undefined;
  try {
    for (const [ns, key] of keys) {
      // Released on failure even when the claim itself failed: its statement may have committed
      // with the answer lost (a connection cut by a mod-shard move), and a pending claim left
      // behind would refuse this very sign-up's retry. A release only removes this token's claim.
      claimed.push([ns, key]);
      if (!(await deps.lookups.claim(ns, key, token, ctx))) {
        claimed.pop();
        const earlier = seeded ? await earlierSignUp(deps, keys, [ns, key], token, ctx) : undefined;
        if (earlier) return earlier;
        throw taken(ns, key);
      }
    }
    const shard = randomOpenShard(deps.topology(), deps.random);
    const data: ObjectData = { ...input.data, username: input.username, ...(input.email !== undefined ? { email: input.email } : {}) };
    if (seeded) data[SIGN_UP_FIELD] = token.toString(16);
    user = await deps.objects.create('user', shard, data, ctx);
    for (const [ns, key] of keys) {
      if (await deps.lookups.confirm(ns, key, token, user.id, ctx)) {
        confirmed.push([ns, key]);
        continue;
      }
      // Another attempt of this sign-up confirmed first (a retry that overtook this one), or the
      // claim went stale and was taken: the first answers with that attempt's user.
      const earlier = seeded ? await earlierSignUp(deps, keys, [ns, key], token, ctx) : undefined;
      if (!earlier) throw taken(ns, key);
      const mine = user;
      user = undefined;
      await deps.objects.softDelete(mine.id, ctx).catch(() => undefined);
      return earlier;
    }
    return user;
  } catch (err) {
    if (user) {
      const made = user.id;
      await deps.objects.softDelete(made, ctx).catch(() => undefined);
      await Promise.allSettled(confirmed.map(([ns, key]) => releaseClaim(deps.lookups, ns, key, made, ctx)));
    }
    await Promise.allSettled(claimed.map(([ns, key]) => releaseClaim(deps.lookups, ns, key, token, ctx)));
    throw err;
  }
}
