import { createHash } from 'node:crypto';
import { groupBy } from '../core/groupBy.ts';
import { modShardOf, normalizeLookupKey } from '../core/modShard.ts';
import { modShardDatabase } from '../core/topology.ts';
import type { ShardRouter } from './shardRouter.ts';
import type { OpContext } from './sqlStats.ts';

/**
 * A lookup namespace: a model's `@stored(unique:)` name (`username`, `email`, `handle`), or the
 * import ledger's `import:<type>`. At most 32 characters (the lookups table's column).
 */
export type LookupNamespace = string;

/**
 * Pending claims hold a token with the reserved top bit set: no real ID has it, so a pending claim
 * can never be mistaken for an object, and each claimant's token is its own.
 */
const PENDING_BIT = 1n << 62n;

/**
 * A claimant's token: random, or derived from `seed` (a sign-up's idempotency key), so that a
 * client's retry of the same sign-up holds the same token and takes over its own pending claim.
 */
export function pendingClaimToken(seed?: string): bigint {
  if (seed === undefined) return PENDING_BIT | (BigInt(Math.floor(Math.random() * 2 ** 31)) << 31n) | BigInt(Math.floor(Math.random() * 2 ** 31));
  const digest = createHash('sha256').update(`claim:${seed}`).digest();
  return PENDING_BIT | (digest.readBigUInt64BE(0) & (PENDING_BIT - 1n));
}

function affectedRows(result: unknown): number {
  return (result as { affectedRows?: number }).affectedRows ?? 0;
}

/** A claim still pending is being created; past this age its creator is taken to have died. */
export const PENDING_CLAIM_TTL_MS = 30_000;

/**
 * The mod shard: lookups by something that is not an ID. `md5(key) mod count` picks the mod shard,
 * the topology its host. The primary key (namespace, key) makes each key unique: claiming is an
 * INSERT that only one claimant can win.
 */
export class ModShardStore {
  readonly #router: ShardRouter;
  readonly #now: () => number;

  constructor(opts: { router: ShardRouter; now?: () => number }) {
    this.#router = opts.router;
    this.#now = opts.now ?? Date.now;
  }

  #locate(key: string): { modShard: number; host: string; table: string; key: string } {
    const normalized = normalizeLookupKey(key);
    const modShard = modShardOf(normalized, this.#router.topology.doc.modShard.count);
    return { modShard, host: this.#router.hostOfModShard(modShard), table: `${modShardDatabase(modShard)}.lookups`, key: normalized };
  }

  /**
   * Claims `key` for `id`: a real ID, or a pending token from `pendingClaimToken()` while the object
   * is being created. Returns false if someone else holds it. A pending claim older than
   * PENDING_CLAIM_TTL_MS is taken over: its creator died before finishing and nothing points at it.
   */
  async claim(ns: LookupNamespace, key: string, id: bigint, ctx: OpContext = {}): Promise<boolean> {
    const loc = this.#locate(key);
    const now = this.#now();
    const inserted = await this.#router.writeModShard(
      loc.modShard,
      `INSERT IGNORE INTO ${loc.table} (namespace, lookup_key, id, created_at) VALUES (?, ?, ?, ?)`,
      [ns, loc.key, id, now],
      ctx,
    );
    if (affectedRows(inserted) === 1) return true;
    const takenOver = await this.#router.writeModShard(
      loc.modShard,
      `UPDATE ${loc.table} SET id = ?, created_at = ? WHERE namespace = ? AND lookup_key = ? AND (id = ? OR (id >= ? AND created_at < ?))`,
      [id, now, ns, loc.key, id, PENDING_BIT, now - PENDING_CLAIM_TTL_MS],
      ctx,
    );
    return affectedRows(takenOver) === 1;
  }

  /** Turns a pending claim into a final one; false if the token no longer holds it. */
  async confirm(ns: LookupNamespace, key: string, token: bigint, id: bigint, ctx: OpContext = {}): Promise<boolean> {
    const loc = this.#locate(key);
    const res = await this.#router.writeModShard(
      loc.modShard,
      `UPDATE ${loc.table} SET id = ? WHERE namespace = ? AND lookup_key = ? AND id = ?`,
      [id, ns, loc.key, token],
      ctx,
    );
    return affectedRows(res) === 1;
  }

  /**
   * Releases a claim, only if it is still held for `id` (or a pending token). Refused while the mod
   * shard is paused, like every write: a release on the source after the move's copy would be lost
   * with the source, leaving the claim on the new host (the caller waits the pause out).
   */
  async release(ns: LookupNamespace, key: string, id: bigint, ctx: OpContext = {}): Promise<void> {
    const loc = this.#locate(key);
    await this.#router.writeModShard(loc.modShard, `DELETE FROM ${loc.table} WHERE namespace = ? AND lookup_key = ? AND id = ?`, [ns, loc.key, id], ctx);
  }

  /** Looks up many keys, one round trip per host. Pending and missing keys are absent. */
  async lookup(ns: LookupNamespace, keys: readonly string[], ctx: OpContext = {}): Promise<Map<string, bigint>> {
    const out = new Map<string, bigint>();
    const located = keys.map((k) => ({ original: k, ...this.#locate(k) }));
    const byHost = groupBy(located, (l) => l.host);
    await Promise.all(
      [...byHost.entries()].map(async ([host, list]) => {
        const parts = list.map((l) => `SELECT ? AS k, id FROM ${l.table} WHERE namespace = ? AND lookup_key = ?`);
        const values = list.flatMap((l) => [l.original, ns, l.key]);
        const rows = await this.#router.query(host, [], parts.join('\nUNION ALL\n'), values, ctx);
        for (const r of rows) {
          const id = BigInt(r.id as string);
          if (id < PENDING_BIT) out.set(String(r.k), id);
        }
      }),
    );
    return out;
  }
}
