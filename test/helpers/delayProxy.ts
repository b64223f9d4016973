import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP proxy that adds latency to what a server sends back: put it in front of a real MariaDB
 * and publish it in a topology as one host's address, and that host becomes slow (`delayMs`) or
 * back to normal (0) at will — the real server, the real driver, only slower. `cut()` partitions
 * the client from the server (every connection dropped, new ones refused) until `restore()`: put it
 * in front of etcd and a gateway loses etcd while everything else keeps it.
 */
export interface DelayProxy {
  readonly port: number;
  /** Added to every chunk the server sends, ms. Order is kept. */
  delayMs: number;
  /** Resolves when the next chunk from a client (a query) reaches the proxy. */
  nextClientChunk(): Promise<void>;
  /** Drops every connection and refuses new ones: nothing more passes, either way. */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startDelayProxy(target: { host: string; port: number }, delayMs = 0): Promise<DelayProxy> {
  const sockets = new Set<Socket>();
  const state = { delayMs, cut: false };
  let waiters: (() => void)[] = [];
  const server: Server = createServer((client) => {
    if (state.cut) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    sockets.add(client).add(upstream);
    let lastDue = 0;
    upstream.on('data', (chunk: Buffer) => {
      // Each chunk leaves `delayMs` after it came, and never before the one ahead of it.
      const due = Math.max(lastDue, Date.now() + state.delayMs);
      lastDue = due;
      setTimeout(() => {
        if (!client.destroyed) client.write(chunk);
      }, due - Date.now());
    });
    client.on('data', () => {
      const ready = waiters;
      waiters = [];
      for (const w of ready) w();
    });
    client.pipe(upstream);
    const close = (): void => {
      setTimeout(() => {
        client.destroy();
        upstream.destroy();
      }, state.delayMs);
    };
    client.on('close', close).on('error', close);
    upstream.on('close', close).on('error', close);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(ms: number) {
      state.delayMs = ms;
    },
    nextClientChunk: () => new Promise<void>((resolve) => waiters.push(resolve)),
    cut() {
      state.cut = true;
      for (const s of sockets) s.destroy();
    },
    restore() {
      state.cut = false;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
