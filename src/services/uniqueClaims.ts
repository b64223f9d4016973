/**
 * Creating an object whose values are unique across the deployment (`@stored(unique: "handle")`),
 * through the mod shard:
 *   1. claim each value in its namespace with a pending token (only one claimant can win a value);
 *   2. make the object (its blob carries the claim's token when the client sent an Idempotency-Key);
 *   3. confirm each claim with the new ID.
 * A failure at any step undoes the object (if made) and releases what was claimed, so nothing
 * half-created remains; a crash leaves only pending claims, which lookups ignore and a later
 * claimant takes over once stale. A value held by anyone else is `<NAMESPACE>_TAKEN`
 * (core/errors.ts `takenCode`): USERNAME_TAKEN, EMAIL_TAKEN, HANDLE_TAKEN, TAG_TAKEN.
 *
 * With an idempotency key, the token derives from it: a client's retry (after a retryable error, or
 * an answer lost with its connection) takes over its own pending claims, and one that finds them
 * confirmed answers with the object its earlier attempt made. Without one, a retry that finds a
 * claim its earlier attempt left pending is refused until the claim goes stale.
 */
import { ShardqlError, takenCode } from '../core/errors.ts';
import { whileRetryable } from '../core/retry.ts';
import { isActive, type ObjectData, type ObjectStore, type StoredObject } from '../storage/objectStore.ts';
import { pendingClaimToken, type LookupNamespace, type ModShardStore } from '../storage/modShardStore.ts';
import type { OpContext } from '../storage/sqlStats.ts';

export interface ClaimDeps {
  readonly objects: ObjectStore;
  readonly lookups: ModShardStore;
}

/** One unique value: its namespace and the value as given. */
export type Claim = readonly [LookupNamespace, string];

export interface ClaimedCreate {
  readonly claims: readonly Claim[];
  /** The request's idempotency key: a retry with the same key is the same create. */
  readonly idempotencyKey?: string | undefined;
  /** Makes the object with `marker` added to its blob (empty without an idempotency key). */
  make(marker: ObjectData): Promise<StoredObject>;
  /** Undoes an object `make` made, when the create rolls back (best effort: failures are ignored). */
  unmake(o: StoredObject): Promise<unknown>;
}

/**
 * The blob field naming the create that made an object (its claim token, in hex), when the client
 * sent an Idempotency-Key: a retry that finds the values already confirmed answers with that object
 * instead of `<NAMESPACE>_TAKEN`. No GraphQL field shows it.
 */
export const SIGN_UP_FIELD = '_signUp';

/** How long a rollback's release waits out a retryable refusal (a mod-shard move's pause is under a second). */
const RELEASE_RETRIES = 20;
const RELEASE_BACKOFF_MS = 25;

/**
 * Releases a claim of a create that is rolling back, waiting out a retryable refusal (a mod-shard
 * move's pause, a host failing over) so that the release lands where the claim is kept after it: a
 * pending claim left behind would refuse this very create's retry until it goes stale.
 */
function releaseClaim(lookups: ModShardStore, [ns, key]: Claim, holder: bigint, ctx: OpContext): Promise<void> {
  return whileRetryable(() => lookups.release(ns, key, holder, ctx), { attempts: RELEASE_RETRIES, pauseMs: (n) => RELEASE_BACKOFF_MS * n });
}

/**
 * The object an earlier attempt of this same create made (same idempotency key, so same token),
 * with every value pointed at it: the earlier attempt may have stopped between two confirms.
 * Undefined when the value is held by anyone else.
 */
async function earlierAttempt(deps: ClaimDeps, claims: readonly Claim[], [heldNs, heldKey]: Claim, token: bigint, ctx: OpContext): Promise<StoredObject | undefined> {
  const id = (await deps.lookups.lookup(heldNs, [heldKey], ctx)).get(heldKey);
  const made = id === undefined ? undefined : await deps.objects.get(id, ctx);
  if (!made || !isActive(made) || made.data[SIGN_UP_FIELD] !== token.toString(16)) return undefined;
  for (const [ns, key] of claims) {
    if (!(await deps.lookups.confirm(ns, key, token, made.id, ctx)) && !(await deps.lookups.claim(ns, key, made.id, ctx))) return undefined;
  }
  return made;
}

/** Claims `c.claims`, makes the object, confirms the claims (see the file's comment). */
export async function createClaimed(deps: ClaimDeps, c: ClaimedCreate, ctx: OpContext): Promise<StoredObject> {
  const seeded = c.idempotencyKey !== undefined;
  const token = pendingClaimToken(c.idempotencyKey);
  const claimed: Claim[] = [];
  const confirmed: Claim[] = [];
  const taken = ([ns, key]: Claim): ShardqlError => new ShardqlError(takenCode(ns), `The ${ns} ${JSON.stringify(key)} is taken; choose another`, { field: ns });
  let made: StoredObject | undefined;
  try {
    for (const claim of c.claims) {
      // Released on failure even when the claim itself failed: its statement may have committed
      // with the answer lost (a connection cut by a mod-shard move), and a pending claim left
      // behind would refuse this very create's retry. A release only removes this token's claim.
      claimed.push(claim);
      if (!(await deps.lookups.claim(claim[0], claim[1], token, ctx))) {
        claimed.pop();
        const earlier = seeded ? await earlierAttempt(deps, c.claims, claim, token, ctx) : undefined;
        if (earlier) return earlier;
        throw taken(claim);
      }
    }
    made = await c.make(seeded ? { [SIGN_UP_FIELD]: token.toString(16) } : {});
    for (const claim of c.claims) {
      if (await deps.lookups.confirm(claim[0], claim[1], token, made.id, ctx)) {
        confirmed.push(claim);
        continue;
      }
      // Another attempt of this create confirmed first (a retry that overtook this one), or the
      // claim went stale and was taken: the first answers with that attempt's object.
      const earlier = seeded ? await earlierAttempt(deps, c.claims, claim, token, ctx) : undefined;
      if (!earlier) throw taken(claim);
      const mine = made;
      made = undefined;
      await Promise.resolve(c.unmake(mine)).catch(() => undefined);
      return earlier;
    }
    return made;
  } catch (err) {
    if (made) {
      const id = made.id;
      await Promise.resolve(c.unmake(made)).catch(() => undefined);
      await Promise.allSettled(confirmed.map((claim) => releaseClaim(deps.lookups, claim, id, ctx)));
    }
    await Promise.allSettled(claimed.map((claim) => releaseClaim(deps.lookups, claim, token, ctx)));
    throw err;
  }
}
