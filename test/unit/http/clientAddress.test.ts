import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { clientAddress, compileTrustedProxies } from '../../../src/http/clientAddress.ts';

/** The two things clientAddress reads of a request: the peer's address and the headers. */
function request(peer: string, xff?: string): IncomingMessage {
  return { socket: { remoteAddress: peer }, connection: { remoteAddress: peer }, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } } as unknown as IncomingMessage;
}

describe('Client address behind proxies', () => {
  const trusted = compileTrustedProxies(['10.0.0.0/8', '192.168.1.7']);
  const cases: [string, string, string | undefined, ReturnType<typeof compileTrustedProxies> | undefined, string][] = [
    ['no proxies trusted: the peer, whatever the header says', '203.0.113.5', '1.2.3.4', undefined, '203.0.113.5'],
    ['a trusted peer: the header is read', '10.0.0.5', '198.51.100.7', trusted, '198.51.100.7'],
    ['the right-most untrusted hop, not the left-most (which the client wrote)', '10.0.0.5', '6.6.6.6, 198.51.100.7, 10.2.3.4', trusted, '198.51.100.7'],
    ['an untrusted peer: its header is not believed', '203.0.113.5', '198.51.100.7', trusted, '203.0.113.5'],
    ['every hop trusted: the left-most', '10.0.0.5', '192.168.1.7, 10.9.9.9', trusted, '192.168.1.7'],
    ['a trusted peer without the header: the peer', '10.0.0.5', undefined, trusted, '10.0.0.5'],
    ['IPv4 mapped into IPv6 reads as IPv4', '::ffff:203.0.113.5', undefined, undefined, '203.0.113.5'],
    ['IPv6 clients', '10.0.0.5', '2001:db8::1', trusted, '2001:db8::1'],
  ];
  for (const [name, peer, xff, trust, expected] of cases) {
    test(name, () => assert.equal(clientAddress(request(peer, xff), trust), expected));
  }

  test('a request whose socket is gone has an unknown address, not a crash', () => {
    assert.equal(clientAddress({ socket: {}, connection: {}, headers: {} } as unknown as IncomingMessage, trusted), 'unknown');
  });

  test('entries that are not addresses, CIDRs or known names are refused', () => {
    for (const bad of ['10.0.0.0/40', 'proxy.internal', '']) assert.throws(() => compileTrustedProxies([bad]), TypeError, bad);
  });
});
