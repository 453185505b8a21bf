/** Retrying an operation against a service that may be restarting (the database, mostly). */

export interface RetryOptions {
  /** Give up after this long (ms) and rethrow the last error. */
  deadlineMs: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Stops retrying early (e.g. shutdown). */
  signal?: AbortSignal;
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
}

export async function retrying<T>(operation: () => Promise<T>, options: RetryOptions): Promise<T> {
  const deadline = Date.now() + options.deadlineMs;
  let delay = options.initialDelayMs ?? 200;
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      const remaining = deadline - Date.now();
      if (remaining <= 0 || options.signal?.aborted) throw error;
      const wait = Math.min(delay, remaining);
      options.onRetry?.(error, attempt, wait);
      await sleep(wait, options.signal);
      delay = Math.min(delay * 2, options.maxDelayMs ?? 5_000);
    }
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
