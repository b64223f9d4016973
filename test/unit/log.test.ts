import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLog } from '../../src/log.ts';

function capture(level?: 'debug' | 'info' | 'warn' | 'error' | 'silent'): { log: ReturnType<typeof createLog>; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return { log: createLog({ write: (l) => void lines.push(JSON.parse(l) as Record<string, unknown>), ...(level ? { level } : {}) }), lines };
}

const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg';

describe('Logs: pino lines with levels, redaction and IDs', () => {
  test('a line is one JSON object: level, ISO time, event, fields; bigints as decimal strings', () => {
    const { log, lines } = capture();
    log('request', { viewer: 241294492511762325n, status: 200 });
    assert.equal(lines.length, 1);
    const [line] = lines;
    assert.equal(line!.level, 'info');
    assert.equal(line!.event, 'request');
    assert.match(String(line!.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(line!.viewer, '241294492511762325', 'no precision lost');
    assert.equal(line!.status, 200);
  });

  test('levels: inferred from the event name, given explicitly, filtered by the configured level', () => {
    const { log, lines } = capture();
    log('repair_failed', {});
    log('redis_unavailable', {});
    log('topology_rejected', {});
    log('listening', {});
    log('request', {}, 'error');
    assert.deepEqual(lines.map((l) => l.level), ['error', 'warn', 'warn', 'info', 'error']);
    const quiet = capture('warn');
    quiet.log('listening', {});
    quiet.log('request', {}, 'debug');
    quiet.log('repair_failed', {});
    assert.deepEqual(quiet.lines.map((l) => l.event), ['repair_failed']);
    const silent = capture('silent');
    silent.log('repair_failed', {});
    assert.equal(silent.lines.length, 0);
  });

  test('credentials are redacted by field name, at any of the first three levels', () => {
    const { log, lines } = capture();
    log('x', { authorization: `Bearer ${JWT}`, headers: { authorization: 'Basic dXNlcjpwYXNz', cookie: 'sid=1' }, a: { b: { password: 'hunter2', token: 't' } }, keep: 'me' });
    const text = JSON.stringify(lines[0]);
    for (const secret of [JWT, 'dXNlcjpwYXNz', 'sid=1', 'hunter2', '"t"']) assert.ok(!text.includes(secret), `${secret} in ${text}`);
    assert.equal(lines[0]!.keep, 'me');
    assert.equal(lines[0]!.authorization, '[redacted]');
  });

  test('a bearer credential or a JWT inside any string is scrubbed, whatever the field is called', () => {
    const { log, lines } = capture();
    log('http_error', { error: `Error: upstream said "Bearer ${JWT}" was bad`, list: [`token=${JWT}`], nested: { why: `kid missing in ${JWT}` } });
    const text = JSON.stringify(lines[0]);
    assert.ok(!text.includes('c2lnbmF0dXJl'), text);
    assert.ok(!/Bearer\s+\S*eyJ/.test(text), text);
    assert.match(String(lines[0]!.error), /upstream said "\[redacted\]" was bad/);
  });

  test('pretty lines for development are one readable line per event (plus fields)', () => {
    const out: string[] = [];
    const log = createLog({ pretty: true, write: (l) => void out.push(l) });
    log('listening', { url: 'http://127.0.0.1:4000', authorization: 'Bearer abc' });
    assert.equal(out.length, 1);
    assert.match(out[0]!, /INFO.*listening/);
    assert.ok(!out[0]!.includes('Bearer abc'));
    assert.ok(!out[0]!.startsWith('{'));
  });
});
