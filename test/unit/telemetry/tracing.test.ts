import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { Tracing } from '../../../src/telemetry/tracing.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER = '00f067aa0ba902b7';

function traced(sampleRatio = 1): { tracing: Tracing; exporter: InMemorySpanExporter } {
  const exporter = new InMemorySpanExporter();
  return { tracing: new Tracing({ exporter, batch: false, sampleRatio }), exporter };
}

describe('Tracing: W3C trace context and the span tree', () => {
  test('a sampled traceparent is continued: same trace, the caller as the parent', () => {
    const { tracing, exporter } = traced();
    const req = tracing.startRequest({ traceparent: `00-${TRACE}-${CALLER}-01` }, 'POST /graphql');
    assert.equal(req.traceId, TRACE);
    const op = req.operation('query Profile');
    const level = req.begin('loader objects', { 'shardql.keys': 3 });
    const sql = level.children.begin('sql', { 'server.address': 'mysql001' }, 'client');
    sql.end({ 'db.response.returned_rows': 3 });
    level.end();
    op.end();
    req.end({ 'http.response.status_code': 200 });
    const spans = new Map(exporter.getFinishedSpans().map((s) => [s.name, s]));
    assert.deepEqual([...spans.keys()].sort(), ['POST /graphql', 'loader objects', 'query Profile', 'sql']);
    const parent = (name: string): string | undefined => spans.get(name)!.parentSpanContext?.spanId;
    const id = (name: string): string => spans.get(name)!.spanContext().spanId;
    assert.equal(parent('POST /graphql'), CALLER);
    assert.equal(parent('query Profile'), id('POST /graphql'));
    assert.equal(parent('loader objects'), id('query Profile'), 'spans begun during the operation are its children');
    assert.equal(parent('sql'), id('loader objects'));
    assert.equal(spans.get('POST /graphql')!.kind, SpanKind.SERVER);
    assert.equal(spans.get('sql')!.kind, SpanKind.CLIENT);
    assert.equal(spans.get('sql')!.attributes['db.response.returned_rows'], 3);
    for (const s of spans.values()) assert.equal(s.spanContext().traceId, TRACE);
  });

  test('after the operation ends, spans go under the request again; an error marks its span', () => {
    const { tracing, exporter } = traced();
    const req = tracing.startRequest({}, 'POST /graphql');
    req.operation('query A').end(undefined, { code: 'INVALID_ID' });
    req.begin('late').end();
    req.end();
    const spans = new Map(exporter.getFinishedSpans().map((s) => [s.name, s]));
    assert.equal(spans.get('late')!.parentSpanContext?.spanId, spans.get('POST /graphql')!.spanContext().spanId);
    assert.deepEqual(spans.get('query A')!.status, { code: SpanStatusCode.ERROR, message: 'INVALID_ID' });
    assert.match(req.traceId, /^[0-9a-f]{32}$/);
    assert.notEqual(req.traceId, '0'.repeat(32));
  });

  test("a caller that did not sample is followed: nothing recorded; a malformed traceparent starts a new trace", () => {
    const { tracing, exporter } = traced();
    const unsampled = tracing.startRequest({ traceparent: `00-${TRACE}-${CALLER}-00` }, 'POST /graphql');
    unsampled.begin('loader objects').end();
    unsampled.end();
    assert.equal(exporter.getFinishedSpans().length, 0);
    for (const bad of ['00-xyz-abc-01', `00-${'0'.repeat(32)}-${CALLER}-01`, `ff-${TRACE}-${CALLER}-01`]) {
      const req = tracing.startRequest({ traceparent: bad }, 'POST /graphql');
      req.end();
      assert.notEqual(req.traceId, TRACE);
      const [span] = exporter.getFinishedSpans().slice(-1);
      assert.equal(span!.parentSpanContext, undefined, bad);
    }
  });

  test('a sample ratio of 0 records no new trace', () => {
    const { tracing, exporter } = traced(0);
    const req = tracing.startRequest({}, 'POST /graphql');
    req.operation('query A').end();
    req.end();
    assert.equal(exporter.getFinishedSpans().length, 0);
  });
});
