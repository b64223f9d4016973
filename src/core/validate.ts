import { ShardqlError, UnreachableCaseError, describeValue } from './errors.ts';
import type { StoredFieldDef } from './model/model.ts';

/**
 * Input rules, one place. Each failure is INVALID_ARGUMENT naming the argument, the rule and the
 * value. The limits of a declared object's fields are the model's (`@stored(maxLength:)`, checked
 * by `checkStored`); these are the rules of formats.
 */
export const LIMITS = {
  usernameMin: 3,
  usernameMax: 30,
  emailMax: 254,
  /** A URL's length when its field declares none. */
  urlMax: 2048,
  /** Largest page a client may ask for. */
  pageMax: 100,
} as const;

function invalid(argument: string, expected: string, value: unknown): ShardqlError {
  return new ShardqlError('INVALID_ARGUMENT', `Expected ${argument} to be ${expected}, got ${describeValue(value)}`, { argument });
}

export function checkUsername(value: string, argument = 'username'): string {
  if (!new RegExp(`^[A-Za-z0-9_]{${LIMITS.usernameMin},${LIMITS.usernameMax}}$`).test(value)) {
    throw invalid(argument, `${LIMITS.usernameMin}–${LIMITS.usernameMax} letters, digits or underscores`, value);
  }
  return value;
}

export function checkEmail(value: string, argument = 'email'): string {
  if (value.length > LIMITS.emailMax || !/^[^\s@<>()[\]\\,;:"]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/.test(value)) {
    throw invalid(argument, 'an email address', value);
  }
  return value;
}

/** Free text: trimmed, bounded, no control characters other than newline and tab. */
export function checkText(value: string, argument: string, max: number, opts: { required?: boolean } = {}): string {
  const text = value.trim();
  if (opts.required && text.length === 0) throw invalid(argument, 'non-empty text', value);
  if ([...text].length > max) throw invalid(argument, `at most ${max} characters`, value);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(text)) throw invalid(argument, 'text without control characters', value);
  // A lone surrogate is no character at all: MySQL's utf8mb4 cannot store it.
  if (/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)) throw invalid(argument, 'well-formed Unicode text', value);
  return text;
}

/** An absolute http(s) URL with a host; nothing else (no javascript:, data:, file:). */
export function checkUrl(value: string, argument: string, max: number = LIMITS.urlMax): string {
  if (value.length > max) throw invalid(argument, `a URL of at most ${max} characters`, value);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(argument, 'an absolute http or https URL', value);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '' || url.username !== '' || url.password !== '') {
    throw invalid(argument, 'an absolute http or https URL without credentials', value);
  }
  return url.toString();
}

/**
 * A value of a declared stored field (`@stored` in schema/), checked by its format and limits:
 *
 *   checkStored({ field: 'link', format: 'URL', maxLength: 2048, required: false }, 'https://x.test/a')  // 'https://x.test/a'
 *   checkStored({ field: 'name', format: 'TEXT', maxLength: 100, required: true }, '  ')  // INVALID_ARGUMENT: non-empty text
 */
export function checkStored(f: Pick<StoredFieldDef, 'field' | 'format' | 'maxLength' | 'required'>, value: string): string {
  switch (f.format) {
    case 'TEXT':
      return checkText(value, f.field, f.maxLength ?? Number.MAX_SAFE_INTEGER, { required: f.required });
    case 'URL':
      return checkUrl(value, f.field, f.maxLength ?? LIMITS.urlMax);
    case 'HANDLE':
      return checkUsername(value, f.field);
    case 'EMAIL':
      return checkEmail(value, f.field);
    default:
      throw new UnreachableCaseError(f.format);
  }
}

/** INVALID_ARGUMENT naming the argument, what was expected and the value received. */
export function invalidArgument(argument: string, expected: string, value: unknown): ShardqlError {
  return invalid(argument, expected, value);
}

/** A page size (`first` unless named otherwise): 1..pageMax. */
export function checkPageSize(first: number | null | undefined, fallback = 20, argument = 'first'): number {
  const n = first ?? fallback;
  if (!Number.isInteger(n) || n < 1 || n > LIMITS.pageMax) throw invalid(argument, `an integer from 1 to ${LIMITS.pageMax}`, first);
  return n;
}

/** A connection's size arguments (the Relay cursor connections specification). */
export interface PageSizeArgs {
  readonly first?: number | null | undefined;
  readonly last?: number | null | undefined;
}

/**
 * The page a connection's arguments ask for: `first` N (from the start, after `after`) or `last` N
 * (from the end, before `before`), each 1..pageMax; neither: the first 20. Both is refused: the
 * specification strongly discourages it, and no page answers it without surprising someone.
 */
export function checkPageArgs(args: PageSizeArgs): { readonly size: number; readonly backward: boolean } {
  if (args.first != null && args.last != null) {
    throw new ShardqlError('INVALID_ARGUMENT', `Expected first or last, not both, got first ${describeValue(args.first)} and last ${describeValue(args.last)}`, {
      argument: 'last',
    });
  }
  if (args.last != null) return { size: checkPageSize(args.last, 20, 'last'), backward: true };
  return { size: checkPageSize(args.first), backward: false };
}

/** ISO 8601 date-time → epoch ms. */
export function checkTime(value: string | null | undefined, argument: string): number | null {
  if (value === null || value === undefined) return null;
  if (value.length > 40 || !/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/.test(value)) {
    throw invalid(argument, 'an ISO 8601 date-time such as 2026-01-31T12:00:00Z', value);
  }
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw invalid(argument, 'a real date-time', value);
  return ms;
}

/**
 * `since`/`until` (ISO 8601; since inclusive, until exclusive) → epoch ms. A `since` later than
 * `until` bounds nothing that could exist: INVALID_ARGUMENT naming both, not an empty list.
 */
export function checkTimeRange(since: string | null | undefined, until: string | null | undefined): { since: number | null; until: number | null } {
  const range = { since: checkTime(since, 'since'), until: checkTime(until, 'until') };
  if (range.since !== null && range.until !== null && range.since > range.until) {
    throw new ShardqlError('INVALID_ARGUMENT', `Expected since to be no later than until, got since ${describeValue(since)} and until ${describeValue(until)}`, { argument: 'since' });
  }
  return range;
}

/** An `Idempotency-Key` header: 1–100 letters, digits, '-', '_', '.', ':'. Absent is fine. */
export function checkIdempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[A-Za-z0-9._:-]{1,100}$/.test(value)) {
    throw invalid('the Idempotency-Key header', "1–100 letters, digits, '.', '_', ':' or '-'", value);
  }
  return value;
}
