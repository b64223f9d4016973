import { createHash } from 'node:crypto';
import type { MappingTable } from './mappings.ts';

/**
 * Per-user event sequences (the seeds' wide-column "user sequences"): row key = the user, column =
 * the event kind, cells = events timestamped in ms, newest first. Pure: kinds, IDs, retention.
 *
 * One happening (Ann likes Bob's pin) is in two sequences: Ann's activity (`liked_pin`) and Bob's
 * notifications (`pin_liked`). Both rows carry the same event ID, derived from the happening, so
 * writing it again (a retried write, the repair pass) adds nothing:
 *
 *   eventIdOf({ kind: 'LIKE', actor: 7n, object: 42n, detail: null, ts: 1700000000000 }) // same bigint every time
 */
export const ACTIVITY_KINDS = ['LIKE', 'REPIN', 'COMMENT', 'FOLLOW_USER', 'FOLLOW_BOARD'] as const;
export type ActivityKind = (typeof ACTIVITY_KINDS)[number];

/** `notifications`: about the row user's things (someone liked your pin); `activity`: what the row user did. */
export type EventSide = 'notifications' | 'activity';

/**
 * How a read decides that an event's relation still stands: the mapping edge `table(from → to)` on
 * the row user's own shard, with `sequence` = the event's timestamp (the edge that made it, not a
 * later one). `none`: nothing on that shard says so; the objects the event shows are checked when
 * they are loaded (a deleted comment hides its event).
 */
export interface EventEdge {
  readonly table: MappingTable;
  readonly from: 'user' | 'object';
  readonly to: 'actor' | 'object' | 'detail';
}

export interface StoredKindSpec {
  readonly kind: ActivityKind;
  readonly side: EventSide;
  readonly edge: EventEdge | null;
}

/** Every column of a sequence (the stored kind), with what it means. */
export const STORED_KINDS = {
  // About the row user's things. The edge lives on the thing's shard, which is its owner's.
  pin_liked: { kind: 'LIKE', side: 'notifications', edge: { table: 'pin_liked_by_users', from: 'object', to: 'actor' } },
  pin_repinned: { kind: 'REPIN', side: 'notifications', edge: { table: 'pin_repinned_as_pins', from: 'object', to: 'detail' } },
  pin_commented: { kind: 'COMMENT', side: 'notifications', edge: { table: 'pin_has_comments', from: 'object', to: 'detail' } },
  user_followed: { kind: 'FOLLOW_USER', side: 'notifications', edge: { table: 'user_followed_by_users', from: 'user', to: 'actor' } },
  board_followed: { kind: 'FOLLOW_BOARD', side: 'notifications', edge: { table: 'board_followed_by_users', from: 'object', to: 'actor' } },
  // What the row user did. Their own edges live on their shard; a comment lives on its pin's.
  liked_pin: { kind: 'LIKE', side: 'activity', edge: { table: 'user_likes_pins', from: 'user', to: 'object' } },
  repinned_pin: { kind: 'REPIN', side: 'activity', edge: { table: 'user_has_pins', from: 'user', to: 'detail' } },
  commented_on_pin: { kind: 'COMMENT', side: 'activity', edge: null },
  followed_user: { kind: 'FOLLOW_USER', side: 'activity', edge: { table: 'user_follows_users', from: 'user', to: 'object' } },
  followed_board: { kind: 'FOLLOW_BOARD', side: 'activity', edge: { table: 'user_follows_boards', from: 'user', to: 'object' } },
} as const satisfies Record<string, StoredKindSpec>;

export type StoredKind = keyof typeof STORED_KINDS;
export const STORED_KIND_NAMES = Object.keys(STORED_KINDS) as StoredKind[];

export function isStoredKind(name: string): name is StoredKind {
  return Object.hasOwn(STORED_KINDS, name);
}

/** The stored kind of an activity kind on one side: ('LIKE', 'notifications') → 'pin_liked'. */
export function storedKind(kind: ActivityKind, side: EventSide): StoredKind {
  const found = STORED_KIND_NAMES.find((k) => STORED_KINDS[k].kind === kind && STORED_KINDS[k].side === side);
  if (!found) throw new Error(`no stored kind for ${kind} on ${side}`);
  return found;
}

/** The stored kinds a read of one side asks for: every kind of that side, or those of `kinds`. */
export function storedKindsOf(side: EventSide, kinds: readonly ActivityKind[] | null | undefined): StoredKind[] {
  const wanted = kinds && kinds.length > 0 ? new Set(kinds) : undefined;
  return STORED_KIND_NAMES.filter((k) => STORED_KINDS[k].side === side && (!wanted || wanted.has(STORED_KINDS[k].kind)));
}

/** One cell of a sequence. `detail`: the repin (REPIN) or the comment (COMMENT), else null. */
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

/** The happening placed in `user`'s sequence on `side`. */
export function eventOf(h: Happening, user: bigint, side: EventSide): SequenceEvent {
  return { user, kind: storedKind(h.kind, side), id: eventIdOf(h), ts: h.ts, actor: h.actor, object: h.object, detail: h.detail };
}

/** Timestamps are ms since the epoch, 0 … year 9999. */
export const MAX_EVENT_TS = 253_402_300_799_999;

/** How much of one column a sequence keeps: the newest `versions` events younger than `ttlMs`. */
export interface KindRetention {
  readonly versions: number;
  readonly ttlMs: number;
}

export type EventRetention = Readonly<Record<StoredKind, KindRetention>>;

const DAY = 86_400_000;

/** Defaults: notifications 1,000 per kind for 90 days; a user's own activity 1,000 per kind for a year. */
export const DEFAULT_EVENT_RETENTION: EventRetention = Object.fromEntries(
  STORED_KIND_NAMES.map((k) => [k, STORED_KINDS[k].side === 'notifications' ? { versions: 1000, ttlMs: 90 * DAY } : { versions: 1000, ttlMs: 365 * DAY }]),
) as unknown as EventRetention;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: DAY };

/** `90d`, `12h`, `500ms` → ms. */
export function parseDuration(text: string, what: string): number {
  const m = /^([0-9]{1,12})(ms|s|m|h|d)$/.exec(text.trim());
  if (!m || Number(m[1]) <= 0) throw new Error(`${what}: expected a duration like 90d, 12h, 30m, 10s or 500ms, got ${JSON.stringify(text)}`);
  return Number(m[1]) * UNIT_MS[m[2]!]!;
}

/**
 * SHARDQL_EVENT_RETENTION: per stored kind `<versions>/<ttl>`, comma-separated, over the defaults;
 * `*` sets every kind, a side name (`notifications`, `activity`) every kind of that side. Example:
 * `notifications=200/30d,liked_pin=50/7d`.
 */
export function parseEventRetention(text: string, base: EventRetention = DEFAULT_EVENT_RETENTION): EventRetention {
  const out: Record<string, KindRetention> = { ...base };
  for (const part of text.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const m = /^([a-z_*]+)\s*=\s*([0-9]{1,9})\s*\/\s*(\S+)$/.exec(part);
    if (!m) throw new Error(`event retention: expected <kind>=<versions>/<ttl> (e.g. pin_liked=500/30d), got ${JSON.stringify(part)}`);
    const [, name, versionsText, ttlText] = m as unknown as [string, string, string, string];
    const versions = Number(versionsText);
    if (versions < 1) throw new Error(`event retention: versions must be at least 1, got ${versions} for ${name}`);
    const ttlMs = parseDuration(ttlText, `event retention of ${name}`);
    const kinds = name === '*' ? STORED_KIND_NAMES : name === 'notifications' || name === 'activity' ? STORED_KIND_NAMES.filter((k) => STORED_KINDS[k].side === name) : [name];
    for (const k of kinds) {
      if (!isStoredKind(k)) throw new Error(`event retention: unknown kind ${JSON.stringify(k)} (kinds: ${STORED_KIND_NAMES.join(', ')}, notifications, activity, *)`);
      out[k] = { versions, ttlMs };
    }
  }
  return out as unknown as EventRetention;
}

/** Notifications are grouped per target and kind within windows of this many ms (default 1 day). */
export const DEFAULT_NOTIFICATION_WINDOW_MS = DAY;
