import { ShardqlError, describeValue } from './errors.ts';

/**
 * Keyset cursors: the `(sequence, to_id)` (or `(position, to_id)`) of one row of a page, bound to
 * the list it came from so a cursor of one list is refused by another. A position, not a direction:
 * the same cursor is an `after` (rows past it) or a `before` (rows ahead of it). Opaque to clients
 * (base64url), strict to decode. Example: { list: "board_has_pins:s", key: 1700000000000, id: 42n } ↔ "djF8Ym9hcm…".
 */
export interface CursorKey {
  /** The list and order the cursor belongs to, e.g. `board_has_pins:s` (by sequence). */
  readonly list: string;
  readonly key: bigint;
  readonly id: bigint;
}

const VERSION = 'v1';
const MAX_CURSOR_LENGTH = 200;
const INT = /^-?(0|[1-9][0-9]{0,18})$/;
const UINT = /^(0|[1-9][0-9]{0,19})$/;

export function encodeCursor(c: CursorKey): string {
  return Buffer.from(`${VERSION}|${c.list}|${c.key}|${c.id}`, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: unknown, list: string): CursorKey {
  const fail = (why: string): never => {
    throw new ShardqlError('INVALID_CURSOR', `Expected a cursor returned by this list (${why}), got ${describeValue(cursor)}`, { reason: why });
  };
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) {
    return fail('malformed');
  }
  const parts = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (parts.length !== 4 || parts[0] !== VERSION) return fail('malformed');
  const [, cursorList, key, id] = parts as [string, string, string, string];
  if (cursorList !== list) return fail('from another list');
  if (!INT.test(key) || !UINT.test(id)) return fail('malformed');
  const keyN = BigInt(key);
  const idN = BigInt(id);
  if (keyN > 2n ** 63n - 1n || keyN < -(2n ** 63n) || idN > 2n ** 64n - 1n) return fail('malformed');
  return { list, key: keyN, id: idN };
}
