import { createHash } from 'node:crypto';

/**
 * Per-user event sequences (the seeds' wide-column "user sequences"): row key = the user, column =
 * the stored kind, cells = events timestamped in ms, newest first. Pure: the spec a product
 * declares, kinds, IDs, retention.
 *
 * One happening (Ann likes Bob's pin) is in two sequences: Ann's activity (`liked_pin`) and Bob's
 * notifications (`pin_liked`). Both rows carry the same event ID, derived from the happening, so
 * writing it again (a retried write, the repair pass) adds nothing:
 *
 *   eventIdOf({ kind: 'LIKE', actor: 7n, object: 42n, detail: null, ts: 1700000000000 }) // same bigint every time
 */

/** A kind of happening as the API shows it (`LIKE`); a product declares its own (EventSpec). */
export type ActivityKind = string;

/** A column of a sequence (`pin_liked`): one activity kind on one side. */
export type StoredKind = string;

/** `notifications`: about the row user's things (someone liked your pin); `activity`: what the row user did. */
export type EventSide = 'notifications' | 'activity';

/**
 * How a read decides that an event's relation still stands: the mapping edge `table(from → to)` on
 * the row user's own shard, with `sequence` = the event's timestamp (the edge that made it, not a
 * later one). `null` instead of an edge: nothing on that shard says so; the objects the event shows
 * are checked when they are loaded (a deleted comment hides its event).
 */
export interface EventEdge {
  /** A relation of the served model (its mapping table); checked when the product attaches. */
  readonly table: string;
  readonly from: 'user' | 'object';
  readonly to: 'actor' | 'object' | 'detail';
}

export interface StoredKindSpec {
  readonly kind: ActivityKind;
  readonly side: EventSide;
  readonly edge: EventEdge | null;
}

/**
 * What a product declares of its activity and notifications, as plain data: the kinds of happening
 * its API shows, and every column of a sequence by name, with its kind, side and proving edge.
 * Checked against the served model when the product attaches (`eventSpecProblems`, product.ts).
 *
 *   { activityKinds: ['LIKE'], storedKinds: {
 *       pin_liked: { kind: 'LIKE', side: 'notifications', edge: { table: 'pin_liked_by_users', from: 'object', to: 'actor' } },
 *       liked_pin: { kind: 'LIKE', side: 'activity', edge: { table: 'user_likes_pins', from: 'user', to: 'object' } } } }
 */
export interface EventSpec {
  readonly activityKinds: readonly ActivityKind[];
  readonly storedKinds: Readonly<Record<StoredKind, StoredKindSpec>>;
  /**
   * The GraphQL fields (`Type.field`) the product serves them by, as graphql/activity.ts reads them:
   * what the cost model charges as events (graphql/cost.ts). Each must be in the served SDL.
   */
  readonly fields?: EventFields;
}

export interface EventFields {
  /** The newest `perKind` events of each kind asked (`activityColumns`). */
  readonly latest?: readonly string[];
  /** Grouped notifications (`notificationConnection`): grouping reads every kept event of the kinds asked. */
  readonly grouped?: readonly string[];
  /** A group's actors (up to GROUP_ACTORS). */
  readonly groupActors?: readonly string[];
}

/** A spec with no kinds: what the stores serve when no attached product declares events (nothing is read or swept). */
export const NO_EVENTS: EventSpec = { activityKinds: [], storedKinds: {} };

/** Stored kind names: what the events table's `kind` column and a group cursor hold. */
const STORED_KIND_NAME = /^[a-z_]{1,32}$/;

/** What is wrong with a spec on its own (empty: nothing); its edges' tables are checked against the model by product.ts. */
export function eventSpecProblems(spec: EventSpec): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [name, s] of Object.entries(spec.storedKinds)) {
    if (!STORED_KIND_NAME.test(name)) problems.push(`event kind ${JSON.stringify(name)}: expected 1-32 lowercase letters or underscores`);
    if (!spec.activityKinds.includes(s.kind)) problems.push(`event kind ${name}: its kind ${s.kind} is not among the activity kinds (${spec.activityKinds.join(', ')})`);
    const key = `${s.kind}/${s.side}`;
    if (seen.has(key)) problems.push(`event kind ${name}: a second stored kind for ${s.kind} on ${s.side}`);
    seen.add(key);
  }
  return problems;
}

/** The relations a spec's edges name (each must be in the served model). */
export function eventSpecRelations(spec: EventSpec): string[] {
  return [...new Set(Object.values(spec.storedKinds).flatMap((k) => (k.edge ? [k.edge.table] : [])))];
}

export function storedKindNames(spec: EventSpec): StoredKind[] {
  return Object.keys(spec.storedKinds);
}

export function isStoredKind(spec: EventSpec, name: string): boolean {
  return Object.hasOwn(spec.storedKinds, name);
}

/** A stored kind's declaration; throws for a name the spec lacks. */
export function storedKindSpec(spec: EventSpec, name: StoredKind): StoredKindSpec {
  if (!Object.hasOwn(spec.storedKinds, name)) throw unknownEventKind(spec, name);
  return spec.storedKinds[name]!;
}

/**
 * The error for a kind `spec` lacks. A spec with no kinds at all is most often a storage made
 * with `events: null` (a tool's, a test's) where the served product's were needed: said so, since
 * the product's writes and repairs append its kinds.
 */
export function unknownEventKind(spec: EventSpec, name: string): Error {
  const kinds = storedKindNames(spec);
  return new Error(
    kinds.length > 0
      ? `unknown event kind ${JSON.stringify(name)} (kinds: ${kinds.join(', ')})`
      : `unknown event kind ${JSON.stringify(name)}: this store has no event kinds (its storage was made with events: null, not the served product's: createStorage({ events: eventSettings(servedEvents(), …) }))`,
  );
}

/** The stored kind of an activity kind on one side: (Pinterest's spec, 'LIKE', 'notifications') → 'pin_liked'. */
export function storedKind(spec: EventSpec, kind: ActivityKind, side: EventSide): StoredKind {
  const found = storedKindNames(spec).find((k) => spec.storedKinds[k]!.kind === kind && spec.storedKinds[k]!.side === side);
  if (!found) throw new Error(`no stored kind for ${kind} on ${side}`);
  return found;
}

/** The stored kinds a read of one side asks for: every kind of that side, or those of `kinds`. */
export function storedKindsOf(spec: EventSpec, side: EventSide, kinds: readonly ActivityKind[] | null | undefined): StoredKind[] {
  const wanted = kinds && kinds.length > 0 ? new Set(kinds) : undefined;
  return storedKindNames(spec).filter((k) => spec.storedKinds[k]!.side === side && (!wanted || wanted.has(spec.storedKinds[k]!.kind)));
}

/** The relations whose edges decide whether a notification shows (a pin's likers do; a user's pins do not). */
export function notifyingRelations(spec: EventSpec): ReadonlySet<string> {
  return new Set(Object.values(spec.storedKinds).flatMap((k) => (k.side === 'notifications' && k.edge ? [k.edge.table] : [])));
}

/** One cell of a sequence. `detail`: a second object the happening names (Pinterest: the repin, the comment), else null. */
export interface SequenceEvent {
  readonly user: bigint;
  readonly kind: StoredKind;
  readonly id: bigint;
  /** When it happened, ms (caller-supplied for a backfill, else the write's own time). */
  readonly ts: number;
  readonly actor: bigint;
  readonly object: bigint;
  readonly detail: bigint | null;
}

/** What happened, before it is placed in a sequence. */
export interface Happening {
  readonly kind: ActivityKind;
  readonly actor: bigint;
  readonly object: bigint;
  readonly detail: bigint | null;
  readonly ts: number;
}

/** The event ID of a happening: the first 63 bits of a SHA-256 of what it is. Deterministic. */
export function eventIdOf(h: Happening): bigint {
  const digest = createHash('sha256').update(`${h.kind}|${h.actor}|${h.object}|${h.detail ?? ''}|${h.ts}`).digest();
  return digest.readBigUInt64BE(0) & 0x7fff_ffff_ffff_ffffn;
}

/** The happening placed in `user`'s sequence on `side`, in the stored kind `spec` gives it. */
export function eventOf(spec: EventSpec, h: Happening, user: bigint, side: EventSide): SequenceEvent {
  return { user, kind: storedKind(spec, h.kind, side), id: eventIdOf(h), ts: h.ts, actor: h.actor, object: h.object, detail: h.detail };
}

/** Timestamps are ms since the epoch, 0 … year 9999. */
export const MAX_EVENT_TS = 253_402_300_799_999;

/** How much of one column a sequence keeps: the newest `versions` events younger than `ttlMs`. */
export interface KindRetention {
  readonly versions: number;
  readonly ttlMs: number;
}

/** Per stored kind of a spec. */
export type EventRetention = Readonly<Record<StoredKind, KindRetention>>;

const DAY = 86_400_000;

/** Events kept per kind by default, on either side. */
export const DEFAULT_EVENT_VERSIONS = 1000;

/** Defaults: notifications 1,000 per kind for 90 days; a user's own activity 1,000 per kind for a year. */
export function defaultEventRetention(spec: EventSpec): EventRetention {
  return Object.fromEntries(
    storedKindNames(spec).map((k) => [k, spec.storedKinds[k]!.side === 'notifications' ? { versions: DEFAULT_EVENT_VERSIONS, ttlMs: 90 * DAY } : { versions: DEFAULT_EVENT_VERSIONS, ttlMs: 365 * DAY }]),
  );
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: DAY };

/** `90d`, `12h`, `500ms` → ms. */
export function parseDuration(text: string, what: string): number {
  const m = /^([0-9]{1,12})(ms|s|m|h|d)$/.exec(text.trim());
  if (!m || Number(m[1]) <= 0) throw new Error(`${what}: expected a duration like 90d, 12h, 30m, 10s or 500ms, got ${JSON.stringify(text)}`);
  return Number(m[1]) * UNIT_MS[m[2]!]!;
}

/** One item of SHARDQL_EVENT_RETENTION: a stored kind, a side (`notifications`, `activity`) or `*`, and what it keeps. */
export interface RetentionSetting extends KindRetention {
  readonly name: string;
}

/**
 * SHARDQL_EVENT_RETENTION's syntax: per stored kind `<versions>/<ttl>`, comma-separated; `*` sets
 * every kind, a side name (`notifications`, `activity`) every kind of that side. Example:
 * `notifications=200/30d,liked_pin=50/7d`. Which kinds exist is the served spec's (`eventRetention`).
 */
export function parseRetentionSettings(text: string): RetentionSetting[] {
  const out: RetentionSetting[] = [];
  for (const part of text.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const m = /^([a-z_*]+)\s*=\s*([0-9]{1,9})\s*\/\s*(\S+)$/.exec(part);
    if (!m) throw new Error(`event retention: expected <kind>=<versions>/<ttl> (e.g. notifications=500/30d), got ${JSON.stringify(part)}`);
    const [, name, versionsText, ttlText] = m as unknown as [string, string, string, string];
    const versions = Number(versionsText);
    if (versions < 1) throw new Error(`event retention: versions must be at least 1, got ${versions} for ${name}`);
    out.push({ name, versions, ttlMs: parseDuration(ttlText, `event retention of ${name}`) });
  }
  return out;
}

/** Settings over `base` (default: the spec's defaults), in order; throws for a name that is no kind, side or `*` of the spec. */
export function eventRetention(spec: EventSpec, settings: readonly RetentionSetting[], base: EventRetention = defaultEventRetention(spec)): EventRetention {
  const names = storedKindNames(spec);
  const out: Record<string, KindRetention> = { ...base };
  for (const { name, versions, ttlMs } of settings) {
    const kinds = name === '*' ? names : name === 'notifications' || name === 'activity' ? names.filter((k) => spec.storedKinds[k]!.side === name) : [name];
    for (const k of kinds) {
      if (!isStoredKind(spec, k)) throw new Error(`event retention: unknown kind ${JSON.stringify(k)} (kinds: ${names.join(', ')}, notifications, activity, *)`);
      out[k] = { versions, ttlMs };
    }
  }
  return out;
}

/** SHARDQL_EVENT_RETENTION read against `spec`: `parseRetentionSettings` then `eventRetention`. */
export function parseEventRetention(spec: EventSpec, text: string, base?: EventRetention): EventRetention {
  return eventRetention(spec, parseRetentionSettings(text), base);
}

/** Notifications are grouped per target and kind within windows of this many ms (default 1 day). */
export const DEFAULT_NOTIFICATION_WINDOW_MS = DAY;

/** What the event store of a served spec keeps and how it groups (StorageOptions.events). */
export interface EventSettings {
  readonly spec: EventSpec;
  readonly retention: EventRetention;
  readonly windowMs?: number;
}

/** The store's settings for `spec` from the configuration's (SHARDQL_EVENT_RETENTION, SHARDQL_NOTIFICATION_WINDOW). */
export function eventSettings(spec: EventSpec, config: { readonly retention?: readonly RetentionSetting[]; readonly windowMs?: number } = {}): EventSettings {
  return { spec, retention: eventRetention(spec, config.retention ?? []), ...(config.windowMs !== undefined ? { windowMs: config.windowMs } : {}) };
}
