import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import type { OpSpan, OpTrace, RequestTrace, RequestTracer, SpanAttributes } from '../core/trace.ts';

export interface TracingOptions {
  /** Where finished spans go: OTLP in production, an in-memory exporter in tests. */
  readonly exporter: SpanExporter;
  /** Batch spans before exporting (default true); false exports each span as it ends (tests). */
  readonly batch?: boolean;
  /** Share of new traces recorded, 0–1 (default 1). A caller's sampled flag is followed. */
  readonly sampleRatio?: number;
  /** `service.name` of every span. Default shardql. */
  readonly serviceName?: string;
}

/**
 * OpenTelemetry behind the tracing port. No global is registered (no context manager, no global
 * provider): parents are passed explicitly down the request (`OpContext.trace`), so nothing is
 * tracked per await. A gateway without tracing configured never builds one of these.
 */
export class Tracing implements RequestTracer {
  readonly #provider: BasicTracerProvider;
  readonly #tracer: Tracer;
  readonly #propagator = new W3CTraceContextPropagator();

  constructor(opts: TracingOptions) {
    this.#provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': opts.serviceName ?? 'shardql' }),
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(opts.sampleRatio ?? 1) }),
      spanProcessors: [opts.batch === false ? new SimpleSpanProcessor(opts.exporter) : new BatchSpanProcessor(opts.exporter)],
    });
    this.#tracer = this.#provider.getTracer('shardql');
  }

  startRequest(headers: Readonly<Record<string, string | string[] | undefined>>, name: string, attributes?: SpanAttributes): RequestTrace {
    const parent = this.#propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    const span = this.#tracer.startSpan(name, { kind: SpanKind.SERVER, ...(attributes ? { attributes } : {}) }, parent);
    return new OtelRequestTrace(this.#tracer, span);
  }

  /** Exports what is buffered. */
  flush(): Promise<void> {
    return this.#provider.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.#provider.shutdown();
  }
}

/** Traces exported over OTLP/HTTP (protobuf-free JSON) to `endpoint`, e.g. http://collector:4318/v1/traces. */
export function otlpTracing(opts: { readonly endpoint: string; readonly sampleRatio?: number; readonly serviceName?: string }): Tracing {
  return new Tracing({
    exporter: new OTLPTraceExporter({ url: opts.endpoint }),
    ...(opts.sampleRatio !== undefined ? { sampleRatio: opts.sampleRatio } : {}),
    ...(opts.serviceName !== undefined ? { serviceName: opts.serviceName } : {}),
  });
}

class OtelTrace implements OpTrace {
  constructor(
    protected readonly tracer: Tracer,
    protected parent: Context,
  ) {}

  begin(name: string, attributes?: SpanAttributes, kind?: 'internal' | 'client'): OpSpan {
    const span = this.tracer.startSpan(
      name,
      { kind: kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL, ...(attributes ? { attributes } : {}) },
      this.parent,
    );
    return new OtelSpan(this.tracer, span);
  }
}

class OtelSpan implements OpSpan {
  #children: OtelTrace | undefined;

  constructor(
    private readonly tracer: Tracer,
    readonly span: Span,
    private readonly onEnd?: () => void,
  ) {}

  get children(): OpTrace {
    return (this.#children ??= new OtelTrace(this.tracer, trace.setSpan(ROOT_CONTEXT, this.span)));
  }

  rename(name: string): void {
    this.span.updateName(name);
  }

  end(attributes?: SpanAttributes, error?: unknown): void {
    this.onEnd?.();
    finish(this.span, attributes, error);
  }
}

function finish(span: Span, attributes: SpanAttributes | undefined, error: unknown): void {
  if (attributes) span.setAttributes(attributes);
  if (error !== undefined) {
    const code = (error as { code?: unknown }).code;
    span.setStatus({ code: SpanStatusCode.ERROR, message: typeof code === 'string' ? code : error instanceof Error ? error.name : 'error' });
  }
  span.end();
}

class OtelRequestTrace extends OtelTrace implements RequestTrace {
  readonly #root: Context;
  readonly #span: Span;

  constructor(tracer: Tracer, span: Span) {
    const root = trace.setSpan(ROOT_CONTEXT, span);
    super(tracer, root);
    this.#root = root;
    this.#span = span;
  }

  get traceId(): string {
    return this.#span.spanContext().traceId;
  }

  operation(name: string): OpSpan {
    const span = this.tracer.startSpan(name, { kind: SpanKind.INTERNAL }, this.#root);
    const inside = trace.setSpan(ROOT_CONTEXT, span);
    this.parent = inside;
    // Batched operations overlap: the parent goes back to the request only if this one still holds it.
    return new OtelSpan(this.tracer, span, () => {
      if (this.parent === inside) this.parent = this.#root;
    });
  }

  end(attributes?: SpanAttributes, error?: unknown): void {
    finish(this.#span, attributes, error);
  }
}
