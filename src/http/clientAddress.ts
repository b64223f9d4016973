import type { IncomingMessage } from 'node:http';
import proxyAddr from 'proxy-addr';

/** Whether an address is a trusted proxy (`i`: its distance from the gateway, 0 = the socket's peer). */
export type TrustedProxies = (address: string, i: number) => boolean;

/**
 * Compiles SHARDQL_TRUSTED_PROXIES: addresses, CIDRs (`10.0.0.0/8`, `fd00::/8`) and proxy-addr's
 * names `loopback`, `uniquelocal`, `linklocal`. Throws TypeError naming the entry it cannot read.
 */
export function compileTrustedProxies(list: readonly string[]): TrustedProxies {
  return proxyAddr.compile([...list]);
}

/**
 * The client's address. With no trusted proxies, the socket's peer: X-Forwarded-For is anyone's
 * to write and is never read. With trusted proxies, and only when the peer is one of them, the
 * X-Forwarded-For hops are read from the right (the nearest first) and the first that is not a
 * trusted proxy is the client — so a client cannot choose its address by writing the left of the
 * header, which every proxy appends to, not rewrites. Example, trusting 10.0.0.0/8:
 *
 *   peer 10.0.0.5, X-Forwarded-For "1.1.1.1, 203.0.113.9, 10.0.0.7"  →  203.0.113.9
 *   peer 198.51.100.4 (not a proxy), same header                      →  198.51.100.4
 *
 * An IPv4 address that arrived as IPv6-mapped (`::ffff:127.0.0.1`) is given in its IPv4 form.
 */
export function clientAddress(req: IncomingMessage, trusted: TrustedProxies | undefined): string {
  const peer = req.socket.remoteAddress;
  if (peer === undefined) return 'unknown'; // the socket is gone already
  const address = trusted ? proxyAddr(req, trusted) : peer;
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice('::ffff:'.length) : address;
}
