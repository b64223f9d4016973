/**
 * The tracing port: what the request path needs from a tracer, with no tracing library behind it
 * (src/telemetry/ is the OpenTelemetry one). Every call site holds an `OpTrace | undefined` and
 * writes `ctx.trace?.begin(…)`: with tracing off that is one property read and nothing else — no
 * span, no attribute object (optional calls do not evaluate their arguments).
 */
export type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

/** Where a span begun now is placed: under the span this trace stands for. */
export interface OpTrace {
  /** `client`: a call out of the process (SQL, cache); `internal` (default): work inside it. */
  begin(name: string, attributes?: SpanAttributes, kind?: 'internal' | 'client'): OpSpan;
}

export interface OpSpan {
  /** Spans begun under this one. */
  readonly children: OpTrace;
  rename(name: string): void;
  /** Ends the span, with more attributes; an `error` marks it failed. */
  end(attributes?: SpanAttributes, error?: unknown): void;
}

/** The root span of one HTTP request, continued from the caller's `traceparent` when it sent one. */
export interface RequestTrace extends OpTrace {
  /** 32 hex digits: the log line of the request carries it, so a log line leads to its trace. */
  readonly traceId: string;
  /**
   * Opens the span of one GraphQL operation: until it ends, spans begun through this trace (loader
   * levels, and the SQL and cache calls under them) are its children.
   */
  operation(name: string): OpSpan;
  end(attributes?: SpanAttributes, error?: unknown): void;
}

export interface RequestTracer {
  /** `headers`: the request's, lower-case names (node:http's IncomingHttpHeaders). */
  startRequest(headers: Readonly<Record<string, string | string[] | undefined>>, name: string, attributes?: SpanAttributes): RequestTrace;
}
