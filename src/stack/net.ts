import { request } from 'node:http';
import { connect, createServer, type Server } from 'node:net';

export const LOOPBACK = '127.0.0.1';

/**
 * Reserve `count` distinct free loopback ports by binding port 0. All listeners
 * stay open until every port is known so the kernel cannot hand out one twice.
 */
export async function allocatePorts(count: number, avoid: ReadonlySet<number> = new Set()): Promise<number[]> {
  const servers: Server[] = [];
  const ports: number[] = [];
  try {
    while (ports.length < count) {
      const server = createServer();
      servers.push(server);
      const port = await new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host: LOOPBACK, port: 0, exclusive: true }, () => {
          const addr = server.address();
          if (addr === null || typeof addr === 'string') reject(new Error('unexpected listen address'));
          else resolve(addr.port);
        });
      });
      if (!avoid.has(port)) ports.push(port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

/** True if nothing listens on host:port (we can bind it ourselves). */
export function isPortFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * Open a TCP connection, optionally send `request`, and feed received bytes to
 * `judge` until it returns a verdict (true/false). Any error or timeout => false.
 */
export function probeTcp(
  host: string,
  port: number,
  judge: (received: Buffer) => boolean | undefined,
  options: { send?: string; timeoutMs?: number } = {},
): Promise<boolean> {
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    const socket = connect({ host, port });
    const finish = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(options.timeoutMs ?? 1000, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('close', () => finish(false));
    socket.once('connect', () => {
      if (options.send !== undefined) socket.write(options.send);
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const verdict = judge(received);
      if (verdict !== undefined) finish(verdict);
    });
  });
}

/** GET http://host:port/path (no keep-alive) and return the body, or null on any failure. */
export function httpGetText(host: string, port: number, path: string, timeoutMs = 1000): Promise<string | null> {
  return new Promise((resolve) => {
    const req = request({ host, port, path, method: 'GET', agent: false, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(res.statusCode === 200 ? Buffer.concat(chunks).toString('utf8') : null));
      res.on('error', () => resolve(null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
    req.end();
  });
}
