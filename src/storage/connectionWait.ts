import type { Pool, PoolConnection } from 'mysql2/promise';

/** The code of the error `connectionWithin` rejects with. */
export const POOL_WAIT_TIMEOUT = 'POOL_WAIT_TIMEOUT';

/**
 * A connection of `pool` within `ms`, else a rejection with code `POOL_WAIT_TIMEOUT`. mysql2 queues
 * a caller while every connection of the pool is busy, with no bound of its own: a host that stops
 * answering (frozen, partitioned, stalled on its disk) holds each connection in a statement until
 * that statement's timeout, and callers queued behind them would wait for the host to come back.
 * A connection that arrives after the wait is handed back to the pool at once.
 *
 * Example: a pool of 10 on a frozen host, 10 statements in flight; `connectionWithin(pool, 800)`
 * rejects after 800 ms instead of waiting for the host.
 */
export function connectionWithin(pool: Pool, ms: number): Promise<PoolConnection> {
  return new Promise((resolve, reject) => {
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      reject(Object.assign(new Error(`no connection within ${ms} ms (pool wait timeout)`), { code: POOL_WAIT_TIMEOUT }));
    }, ms);
    pool.getConnection().then(
      (conn) => {
        if (late) conn.release();
        else (clearTimeout(timer), resolve(conn));
      },
      (err: unknown) => {
        if (!late) (clearTimeout(timer), reject(err));
      },
    );
  });
}

/**
 * Whether a connection whose statement failed this way may still be waiting for its server: mysql2's
 * own statement timeout answers the caller but leaves the statement on the wire, and every later
 * command on that connection is queued behind it, with no timer running, until the server replies.
 * Such a connection must be destroyed: neither handed back to the pool nor sent a ROLLBACK (closing
 * it makes the server roll its transaction back).
 */
export function leftWaiting(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'PROTOCOL_SEQUENCE_TIMEOUT';
}
