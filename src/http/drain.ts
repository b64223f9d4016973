import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * Counts the requests in flight on a server, so that stopping can wait for them: `track` wraps the
 * request listener; `drained(graceMs)` resolves when none is left, or after `graceMs`.
 */
export class InFlight {
  #count = 0;
  #drained: (() => void) | undefined;

  get count(): number {
    return this.#count;
  }

  track(handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>): (req: IncomingMessage, res: ServerResponse) => void {
    return (req, res) => {
      this.#count++;
      res.on('close', () => {
        this.#count--;
        if (this.#count === 0) this.#drained?.();
      });
      void handler(req, res);
    };
  }

  /** Stops `server` accepting, waits for the requests in flight (up to `graceMs`), then closes every connection. */
  async close(server: Server, graceMs: number): Promise<void> {
    server.close();
    server.closeIdleConnections();
    if (this.#count > 0) {
      await new Promise<void>((resolve) => {
        this.#drained = resolve;
        setTimeout(resolve, graceMs).unref();
      });
    }
    server.closeAllConnections();
  }
}
