/** Structured logs: one JSON object a line on stdout, with time, level and event. */
export type Log = (event: string, fields?: Record<string, unknown>) => void;

export function jsonLogger(write: (line: string) => void = (l) => process.stdout.write(`${l}\n`), base: Record<string, unknown> = {}): Log {
  return (event, fields = {}) => {
    write(JSON.stringify({ time: new Date().toISOString(), event, ...base, ...fields }, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
  };
}

export const silentLog: Log = () => undefined;
