/**
 * Error raised by the local stack manager. `service` and `logFile` are set when
 * the failure belongs to one service, so callers (CLI) can point at the log.
 */
export class StackError extends Error {
  override readonly name = 'StackError';
  readonly service: string | undefined;
  readonly logFile: string | undefined;

  constructor(message: string, details: { service?: string; logFile?: string; cause?: unknown } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.service = details.service;
    this.logFile = details.logFile;
  }
}

/** Message of an unknown thrown value, for wrapping into StackError messages. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
