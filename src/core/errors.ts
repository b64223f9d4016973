/**
 * The one catalogue of errors a client can see. Every code is stable: clients and tests match on
 * `code`, never on the message. Messages say what was expected and what was received, and never
 * carry SQL text, host names, ports or library messages.
 */
export const ErrorCode = {
  INVALID_ID: 'INVALID_ID',
  INVALID_CURSOR: 'INVALID_CURSOR',
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  NOT_FOUND: 'NOT_FOUND',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  FORBIDDEN: 'FORBIDDEN',
  USERNAME_TAKEN: 'USERNAME_TAKEN',
  EMAIL_TAKEN: 'EMAIL_TAKEN',
  LOCAL_ID_OVERFLOW: 'LOCAL_ID_OVERFLOW',
  NO_OPEN_SHARD: 'NO_OPEN_SHARD',
  SHARD_UNAVAILABLE: 'SHARD_UNAVAILABLE',
  WRITES_PAUSED: 'WRITES_PAUSED',
  INVALID_TOPOLOGY: 'INVALID_TOPOLOGY',
  TOPOLOGY_UNAVAILABLE: 'TOPOLOGY_UNAVAILABLE',
  PERSISTED_QUERY_NOT_FOUND: 'PERSISTED_QUERY_NOT_FOUND',
  PERSISTED_QUERY_NOT_ALLOWED: 'PERSISTED_QUERY_NOT_ALLOWED',
  QUERY_TOO_COMPLEX: 'QUERY_TOO_COMPLEX',
  RATE_LIMITED: 'RATE_LIMITED',
  IDENTITY_PROVIDER_UNAVAILABLE: 'IDENTITY_PROVIDER_UNAVAILABLE',
  REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  INTERNAL_SERVER_ERROR: 'INTERNAL_SERVER_ERROR',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

interface CatalogueEntry {
  /** HTTP status when the error ends a whole request (field errors stay 200, as GraphQL asks). */
  readonly status: number;
  /** Whether the same request may succeed if sent again later. */
  readonly retryable: boolean;
}

export const ERROR_CATALOGUE: { readonly [C in ErrorCode]: CatalogueEntry } = {
  INVALID_ID: { status: 400, retryable: false },
  INVALID_CURSOR: { status: 400, retryable: false },
  INVALID_ARGUMENT: { status: 400, retryable: false },
  NOT_FOUND: { status: 404, retryable: false },
  UNAUTHENTICATED: { status: 401, retryable: false },
  FORBIDDEN: { status: 403, retryable: false },
  USERNAME_TAKEN: { status: 409, retryable: false },
  EMAIL_TAKEN: { status: 409, retryable: false },
  LOCAL_ID_OVERFLOW: { status: 507, retryable: false },
  NO_OPEN_SHARD: { status: 503, retryable: true },
  SHARD_UNAVAILABLE: { status: 503, retryable: true },
  WRITES_PAUSED: { status: 503, retryable: true },
  INVALID_TOPOLOGY: { status: 500, retryable: false },
  TOPOLOGY_UNAVAILABLE: { status: 503, retryable: true },
  PERSISTED_QUERY_NOT_FOUND: { status: 200, retryable: true },
  PERSISTED_QUERY_NOT_ALLOWED: { status: 400, retryable: false },
  QUERY_TOO_COMPLEX: { status: 400, retryable: false },
  RATE_LIMITED: { status: 429, retryable: true },
  /** The identity provider's keys (JWKS) could not be fetched to verify a token: not the client's fault. */
  IDENTITY_PROVIDER_UNAVAILABLE: { status: 503, retryable: true },
  REQUEST_TIMEOUT: { status: 504, retryable: true },
  INTERNAL_SERVER_ERROR: { status: 500, retryable: false },
};

/**
 * A unique value already held, one code per lookup namespace of the model (`@stored(unique:)`):
 * `<NAMESPACE>_TAKEN` upper-cased — USERNAME_TAKEN and EMAIL_TAKEN for schema/, HANDLE_TAKEN and
 * TAG_TAKEN for examples/qa. Each is catalogued as USERNAME_TAKEN is (409, not retryable).
 */
export type TakenCode = `${Uppercase<string>}_TAKEN`;

/** A client-visible code: one of the catalogue's, or a namespace's TakenCode. */
export type ClientCode = ErrorCode | TakenCode;

/** The TakenCode of a lookup namespace: `takenCode('handle')` → 'HANDLE_TAKEN'. */
export function takenCode(namespace: string): TakenCode {
  return `${namespace.replace(/[^A-Za-z0-9]+/g, '_').toUpperCase()}_TAKEN` as TakenCode;
}

/** The catalogue entry of any client-visible code (a namespace's TakenCode reads USERNAME_TAKEN's). */
export function catalogueEntry(code: ClientCode): CatalogueEntry {
  return (ERROR_CATALOGUE as Readonly<Record<string, CatalogueEntry>>)[code] ?? ERROR_CATALOGUE.USERNAME_TAKEN;
}

/** An error whose message is safe to show a client. `details` are structured, client-safe facts. */
export class ShardqlError extends Error {
  override readonly name = 'ShardqlError';
  readonly code: ClientCode;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ClientCode, message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.details = details;
  }

  get retryable(): boolean {
    return catalogueEntry(this.code).retryable;
  }
}

export function isShardqlError(e: unknown, code?: ClientCode): e is ShardqlError {
  return e instanceof ShardqlError && (code === undefined || e.code === code);
}

/** Quotes a client-supplied value for an error message, cut short so a huge input cannot echo back whole. */
export function describeValue(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? JSON.stringify(value) : typeof value === 'bigint' ? `${value}` : JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 64 ? `${text.slice(0, 61)}...` : text;
}

/** Makes every switch over a union exhaustive: adding a case without handling it fails type-checking. */
export class UnreachableCaseError extends Error {
  constructor(value: never) {
    super(`unreachable case: ${describeValue(value)}`);
  }
}
