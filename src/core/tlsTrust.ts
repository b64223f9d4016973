/**
 * How a client checks a server's TLS certificate: against the CAs of a PEM text (`ca`, read once
 * from the configured file), or, without it, against Node's CA bundle. Never unchecked: there is
 * no "TLS without verification" setting. One type for MySQL, Redis and import sources alike.
 */
export interface TlsTrust {
  readonly ca?: string;
}
