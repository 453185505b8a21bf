/**
 * How long the API's primary process waits before restarting a worker process that ended. A
 * worker that dies once after running a while comes back almost at once; one that keeps dying
 * soon after starting (a crash loop: the database refusing it, a bad deployment) waits twice as
 * long each time, up to a cap, so the loop costs little CPU and its log stays readable.
 */
export interface BackoffOptions {
  /** The first delay, and the delay after a worker that ran at least `stableMs`. */
  initialMs: number;
  maxMs: number;
  /** A worker that lived this long ended by accident, not in a loop: the delay starts over. */
  stableMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 500, maxMs: 30_000, stableMs: 30_000 };

export class RestartBackoff {
  /** Exits in a row of workers that lived less than `stableMs`. */
  private quickExits = 0;

  constructor(private readonly options: BackoffOptions = DEFAULT_BACKOFF) {}

  /** The delay before the next start, given how long the worker that just ended had lived. */
  next(livedMs: number): number {
    if (livedMs >= this.options.stableMs) this.quickExits = 0;
    const delay = Math.min(this.options.maxMs, this.options.initialMs * 2 ** this.quickExits);
    this.quickExits += 1;
    return delay;
  }
}
