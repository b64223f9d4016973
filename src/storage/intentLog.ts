import { createHash } from 'node:crypto';
import { fitToColumn, INTENT_KIND_WIDTH } from '../core/columnWidths.ts';
import { typeOf } from '../core/ids.ts';
import { listingBetween } from '../core/listings.ts';
import { shardDatabase } from '../core/topology.ts';
import { affectedRows, insertedId, type BatchPart, type ShardRouter, type SqlCondition, type SqlValue, type Statement, type Tx } from './shardRouter.ts';
import type { OpContext } from './sqlStats.ts';
import type { EncodedEvent } from './eventStore.ts';

/** Where an event is: its user's sequence, its kind, time and ID (IDs as strings). */
export interface EventKey {
  readonly user: string;
  readonly kind: EncodedEvent['kind'];
  readonly ts: number;
  readonly id: string;
}

/** One remaining step of a multi-shard write, as stored in the intent log (JSON; IDs as strings). */
export type IntentStep =
  /** Make the reverse edge of `table(from → to)` mirror the forward edge: present iff it is. */
  | { readonly kind: 'syncReverse'; readonly table: string; readonly from: string; readonly to: string }
  /**
   * Make the listing `table(from → object)` (the model's `@ref(listedIn: table)` of the object's
   * type) present iff the object is active and its reference names `from` (services/writeExecutor.ts).
   * If `from`'s list refuses the add (`from` deleted meanwhile): a containment listing
   * (`onDelete: DELETE`) deletes the object, none outlives its container; a link (`UNLINK`)
   * deletes it only if `created` (the creating write's own step: the object never took effect),
   * otherwise the object stays, its reference reading null.
   */
  | { readonly kind: 'syncListing'; readonly table: string; readonly from: string; readonly object: string; readonly created?: boolean }
  /**
   * Append `event` to its user's sequence if the event `source` (the same happening in the other
   * side's sequence, committed with the write's first step) is there: a like appends the liker's
   * `liked_pin` with the edge, and this step the owner's `pin_liked`. Appending twice adds nothing.
   */
  | { readonly kind: 'appendEvent'; readonly source: EventKey; readonly event: EncodedEvent }
  /** Empty every list of the deleted object `id`, deleting its children in turn (services/cascade.ts). */
  | { readonly kind: 'purge'; readonly id: string }
  /**
   * Hand a background job to the queue (its kind and encoded payload): recorded with the write, so a
   * writer that dies after its commit cannot lose it (a fan-out of a new pin). Enqueueing twice is
   * harmless: such jobs have IDs of their own and idempotent handlers.
   */
  | { readonly kind: 'enqueue'; readonly job: string; readonly data: Readonly<Record<string, unknown>> }
  /**
   * Invalidate cache keys (`o:<id>`, `l:<table>:<from>`) in every layer: a committed write could
   * not invalidate them nor record that in Redis (recorded after its commit, see LookAside).
   */
  | { readonly kind: 'invalidate'; readonly keys: readonly string[] };

/**
 * The two listing steps a previous version recorded, before the model named the list: each named
 * its list by its two objects (`syncAuthored`: a comment listed under its author, a containment;
 * `syncRepin`: a pin listed under its original, a link). Read back as the `syncListing` they were.
 */
type LegacyStep =
  | { readonly kind: 'syncAuthored'; readonly author: string; readonly comment: string }
  | { readonly kind: 'syncRepin'; readonly original: string; readonly pin: string; readonly created?: boolean };

function legacyListing(from: string, object: string, onDelete: 'DELETE' | 'UNLINK', created: boolean | undefined): IntentStep {
  const type = typeOf(BigInt(object));
  const to = typeOf(BigInt(from));
  const listing = type && to ? listingBetween(type, to, onDelete) : undefined;
  if (!listing) throw new Error(`no ${onDelete} listing of ${object} under ${from} in the model`);
  return { kind: 'syncListing', table: listing.table, from, object, ...(created === true ? { created } : {}) };
}

/** An intent's steps as stored (JSON), the steps of previous versions decoded into today's. */
export function decodeSteps(json: string): IntentStep[] {
  return (JSON.parse(json) as (IntentStep | LegacyStep)[]).map((step): IntentStep => {
    switch (step.kind) {
      case 'syncAuthored':
        return legacyListing(step.author, step.comment, 'DELETE', undefined);
      case 'syncRepin':
        return legacyListing(step.original, step.pin, 'UNLINK', step.created);
      default:
        return step;
    }
  });
}

export interface PendingIntent {
  readonly shard: number;
  readonly id: bigint;
  /** The write's name as recorded: fitted to the column (`cascade:<a long table>` ends `~<hash>`). */
  readonly kind: string;
  readonly steps: IntentStep[];
  readonly createdAt: number;
  readonly attempts: number;
}

export interface IdempotencyRecord {
  readonly fingerprint: string;
  readonly result: Record<string, unknown>;
  readonly intentId: bigint | null;
}

export function fingerprintOf(operation: string, args: unknown): string {
  return createHash('sha256')
    .update(`${operation}\n${JSON.stringify(args, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`)
    .digest('hex');
}

/**
 * The intent log and idempotency keys: SQL over the `intents` and `idempotency` tables of each
 * shard. Recording happens inside the caller's first local transaction, so a write's first step and
 * the record of what remains commit together or not at all.
 */
export class IntentLog {
  readonly #router: ShardRouter;
  readonly #now: () => number;

  constructor(opts: { router: ShardRouter; now?: () => number }) {
    this.#router = opts.router;
    this.#now = opts.now ?? Date.now;
  }

  /** Records an intent in the caller's transaction; `before`: statements sent in the same round trip, ahead of it. */
  async recordInTx(tx: Tx, shard: number, kind: string, steps: readonly IntentStep[], before: readonly Statement[] = []): Promise<bigint> {
    const insert = { sql: `INSERT INTO ${shardDatabase(shard)}.intents (kind, steps, created_at) VALUES (?, ?, ?)`, values: [fitToColumn(kind, INTENT_KIND_WIDTH), JSON.stringify(steps), this.#now()] };
    if (before.length === 0) {
      const res = await tx.execute(insert.sql, insert.values);
      return BigInt(res.insertId);
    }
    const results = await tx.batch([...before, insert]);
    const id = insertedId(results.at(-1)!);
    if (id === null) throw new Error('the intent was not recorded');
    return id;
  }

  /**
   * Records cache keys whose invalidation failed after a commit on `shard` (an `invalidate` intent,
   * which the repair pass replays): one round trip. Not part of the write's transaction.
   */
  async recordInvalidation(shard: number, keys: readonly string[], ctx: OpContext = {}): Promise<void> {
    const steps: IntentStep[] = [{ kind: 'invalidate', keys }];
    await this.#router.query(
      this.#router.writableHostOfShard(shard),
      [shard],
      `INSERT INTO ${shardDatabase(shard)}.intents (kind, steps, created_at) VALUES (?, ?, ?)`,
      ['invalidate', JSON.stringify(steps), this.#now()],
      ctx,
    );
  }

  /**
   * Records an intent as statements for a batch inside the write's first transaction, with the
   * idempotency key and result if there is one (pointing at the intent). Reads: the intent's ID.
   */
  recordPart(
    shard: number,
    kind: string,
    steps: readonly IntentStep[],
    idempotency?: { readonly scope: string; readonly key: string; readonly fingerprint: string; readonly result: Record<string, unknown> },
  ): BatchPart<bigint> {
    const now = this.#now();
    const db = shardDatabase(shard);
    return {
      statements: [
        { sql: `INSERT INTO ${db}.intents (kind, steps, created_at) VALUES (?, ?, ?)`, values: [fitToColumn(kind, INTENT_KIND_WIDTH), JSON.stringify(steps), now] },
        // LAST_INSERT_ID(): the intent just inserted, by the statement before this one on this connection.
        ...(idempotency
          ? [
              {
                sql: `INSERT INTO ${db}.idempotency (scope, idem_key, fingerprint, result, intent_id, created_at) VALUES (?, ?, ?, ?, LAST_INSERT_ID(), ?)`,
                values: [idempotency.scope, idempotency.key, idempotency.fingerprint, JSON.stringify(idempotency.result), now],
              },
            ]
          : []),
      ],
      read: (results) => {
        const id = insertedId(results[0]!);
        if (id === null) throw new Error('the intent was not recorded');
        return id;
      },
    };
  }

  /**
   * Deletes an intent only if `onlyIf` (a condition on the same shard) holds as it runs, as a
   * statement for a batch (`DeferredCompletions`): it deleted the intent iff it changed 1 row.
   */
  completePart(shard: number, id: bigint, onlyIf: SqlCondition): Statement {
    return { sql: `DELETE FROM ${shardDatabase(shard)}.intents WHERE id = ? AND ${onlyIf.sql}`, values: [id, ...onlyIf.values] };
  }

  /** The statement deleting an intent, for a batch. */
  deletePart(shard: number, id: bigint): BatchPart<undefined> {
    return { statements: [{ sql: `DELETE FROM ${shardDatabase(shard)}.intents WHERE id = ?`, values: [id] }], read: () => undefined };
  }

  /** Deletes a finished intent. Idempotent. */
  async complete(shard: number, id: bigint, ctx: OpContext = {}): Promise<void> {
    await this.#router.query(this.#router.writableHostOfShard(shard), [shard], `DELETE FROM ${shardDatabase(shard)}.intents WHERE id = ?`, [id], ctx);
  }

  async noteAttempt(shard: number, id: bigint, ctx: OpContext = {}): Promise<void> {
    await this.#router.query(
      this.#router.hostOfShard(shard),
      [shard],
      `UPDATE ${shardDatabase(shard)}.intents SET attempts = attempts + 1 WHERE id = ?`,
      [id],
      ctx,
    );
  }

  /** Intents older than `minAgeMs` on the given shards, one round trip per host, oldest first. */
  async pending(shards: readonly number[], minAgeMs: number, limit: number, ctx: OpContext = {}): Promise<PendingIntent[]> {
    const before = this.#now() - minAgeMs;
    const out: PendingIntent[] = [];
    const byHost = this.#router.groupByHost(shards, (s) => s);
    await Promise.all(
      [...byHost.entries()].map(async ([host, list]) => {
        const parts: string[] = [];
        const values: SqlValue[] = [];
        for (const s of list) {
          parts.push(
            `(SELECT ${s} AS shard, id, kind, steps, attempts, created_at FROM ${shardDatabase(s)}.intents WHERE created_at <= ? ORDER BY created_at LIMIT ?)`,
          );
          values.push(before, limit);
        }
        const rows = await this.#router.query(host, list, parts.join('\nUNION ALL\n'), values, ctx);
        for (const r of rows) {
          out.push({
            shard: Number(r.shard),
            id: BigInt(r.id as string),
            kind: String(r.kind),
            steps: decodeSteps(String(r.steps)),
            attempts: Number(r.attempts),
            createdAt: Number(r.created_at),
          });
        }
      }),
    );
    return out.sort((a, b) => a.createdAt - b.createdAt).slice(0, limit);
  }

  async intent(shard: number, id: bigint, ctx: OpContext = {}): Promise<PendingIntent | undefined> {
    const rows = await this.#router.query(
      this.#router.hostOfShard(shard),
      [shard],
      `SELECT id, kind, steps, attempts, created_at FROM ${shardDatabase(shard)}.intents WHERE id = ?`,
      [id],
      ctx,
    );
    const r = rows[0];
    return r
      ? { shard, id, kind: String(r.kind), steps: decodeSteps(String(r.steps)), attempts: Number(r.attempts), createdAt: Number(r.created_at) }
      : undefined;
  }

  async findIdempotency(shard: number, scope: string, key: string, ctx: OpContext = {}): Promise<IdempotencyRecord | undefined> {
    const rows = await this.#router.query(
      this.#router.hostOfShard(shard),
      [shard],
      `SELECT fingerprint, result, intent_id FROM ${shardDatabase(shard)}.idempotency WHERE scope = ? AND idem_key = ?`,
      [scope, key],
      ctx,
    );
    const r = rows[0];
    if (!r) return undefined;
    return {
      fingerprint: String(r.fingerprint),
      result: JSON.parse(String(r.result)) as Record<string, unknown>,
      intentId: r.intent_id == null ? null : BigInt(r.intent_id as string),
    };
  }

  /** Saves a key with its result in the write's first transaction; a concurrent twin fails on the primary key. */
  async saveIdempotencyInTx(
    tx: Tx,
    shard: number,
    scope: string,
    key: string,
    fingerprint: string,
    result: Record<string, unknown>,
    intentId: bigint | null,
  ): Promise<void> {
    await tx.execute(
      `INSERT INTO ${shardDatabase(shard)}.idempotency (scope, idem_key, fingerprint, result, intent_id, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
      [scope, key, fingerprint, JSON.stringify(result), intentId, this.#now()],
    );
  }

  /** Forgets idempotency keys older than `maxAgeMs`. */
  async expireIdempotency(shards: readonly number[], maxAgeMs: number, ctx: OpContext = {}): Promise<void> {
    const before = this.#now() - maxAgeMs;
    const byHost = this.#router.groupByHost(shards, (s) => s);
    await Promise.all(
      [...byHost.entries()].flatMap(([host, list]) =>
        list.map((s) => this.#router.query(host, [s], `DELETE FROM ${shardDatabase(s)}.idempotency WHERE created_at < ? LIMIT 10000`, [before], ctx)),
      ),
    );
  }
}
