import { isShardqlError } from './errors.ts';

/**
 * Runs `run` again after a retryable refusal (a ShardqlError with `retryable`: a host timing out,
 * a move's write pause), up to `attempts` tries in all, pausing `pauseMs(attempt)` before the next;
 * any other error, or the last one, is thrown. For operations safe to repeat (a read, a release).
 *
 *   await whileRetryable(() => lookups.release(ns, key, token), { attempts: 20, pauseMs: (n) => 25 * n });
 */
export async function whileRetryable<T>(
  run: () => Promise<T>,
  opts: { readonly attempts: number; readonly pauseMs: (attempt: number) => number; readonly onRetry?: (err: Error, attempt: number) => void },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (!(isShardqlError(err) && err.retryable) || attempt >= opts.attempts) throw err;
      opts.onRetry?.(err, attempt);
      await new Promise((resolve) => setTimeout(resolve, opts.pauseMs(attempt)));
    }
  }
}
