import { hostname } from 'node:os';
import { pino, stdTimeFunctions, type DestinationStream } from 'pino';
import { prettyFactory } from 'pino-pretty';

/**
 * Structured logs (pino): one JSON object a line, with level, time and event, e.g.
 *
 *   {"level":"info","time":"2026-11-23T03:40:00.000Z","pid":7,"hostname":"gw-1","event":"request","requestId":"…",…}
 *
 * Every module logs through a `Log`: an event name and its fields, and optionally a level (by
 * default inferred from the event's name: `…_failed`/`…_error` are errors, `…_unavailable`,
 * `…_rejected`, `…_lost` and the like warnings, the rest info).
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type Log = (event: string, fields?: Record<string, unknown>, level?: LogLevel) => void;

export interface LoggerOptions {
  /** Least level written; `silent` writes nothing. Default info. */
  readonly level?: LogLevel | 'silent';
  /** Human-readable coloured lines (pino-pretty) instead of JSON: for development. Default false. */
  readonly pretty?: boolean;
  /** Where each line goes, without its newline. Default: stdout. */
  readonly write?: (line: string) => void;
  /** Fields every line carries. */
  readonly base?: Record<string, unknown>;
}

const REDACTED = '[redacted]';

/**
 * Field paths whose values never reach a log: credentials by name, wherever a caller puts them
 * (top level, or one level down, e.g. `headers.authorization`).
 */
export const REDACTED_PATHS = ['authorization', 'token', 'password', 'secret', 'cookie', 'jwt']
  .flatMap((k) => [k, `*.${k}`, `*.*.${k}`]);

/** A bearer credential or a JWT inside any string (an error message that quoted one). */
const CREDENTIAL = /\bBearer\s+[A-Za-z0-9_.~+/=-]+|\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;

/** Strings scrubbed of credentials, bigints (IDs) as decimal strings: a JSON number would lose their low bits. */
function clean(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return CREDENTIAL.test(value) ? ((CREDENTIAL.lastIndex = 0), value.replace(CREDENTIAL, REDACTED)) : value;
  if (typeof value === 'bigint') return value.toString();
  if (depth >= 4 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => clean(v, depth + 1));
  if (value instanceof Error) return { type: value.name, message: clean(value.message, depth + 1), stack: value.stack };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = clean(v, depth + 1);
  return out;
}

const LEVEL_OF_EVENT: readonly [RegExp, LogLevel][] = [
  [/(_failed|_error|^error)$/, 'error'],
  [/(unavailable|rejected|refused|lost|broken|silent|unreachable|forced|stalled)$/, 'warn'],
];

function levelOf(event: string): LogLevel {
  for (const [re, level] of LEVEL_OF_EVENT) if (re.test(event)) return level;
  return 'info';
}

/** A `Log` writing through pino. */
export function createLog(opts: LoggerOptions = {}): Log {
  const write = opts.write ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const prettify = opts.pretty
    ? prettyFactory({ colorize: opts.write === undefined && process.stdout.isTTY === true, messageKey: 'event', ignore: 'pid,hostname', translateTime: 'HH:MM:ss.l' })
    : undefined;
  const destination: DestinationStream = {
    write: (line: string) => {
      const text = prettify ? prettify(line) : line;
      write(text.endsWith('\n') ? text.slice(0, -1) : text);
    },
  };
  const logger = pino(
    {
      level: opts.level ?? 'info',
      base: opts.base ?? { pid: process.pid, hostname: hostname() },
      timestamp: stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: REDACTED },
      formatters: {
        level: (label) => ({ level: label }),
        log: (fields) => clean(fields, 0) as Record<string, unknown>,
      },
    },
    destination,
  );
  return (event, fields = {}, level) => {
    logger[level ?? levelOf(event)]({ event, ...fields });
  };
}

/** JSON lines to `write` (default stdout), level info. */
export function jsonLogger(write?: (line: string) => void, base?: Record<string, unknown>): Log {
  return createLog({ ...(write ? { write } : {}), ...(base ? { base: { pid: process.pid, hostname: hostname(), ...base } } : {}) });
}

export const silentLog: Log = () => undefined;
