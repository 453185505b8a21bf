/**
 * Exponential backoff: the wait before the next attempt at something that keeps failing (a
 * process that keeps dying, a broker that keeps refusing, a write the database keeps turning
 * down). The first wait is `initialMs`; each failure in a row doubles it, up to `maxMs`, so a
 * loop costs little CPU and its log stays readable. Every retry loop in the project takes its
 * delays from here.
 */
export interface BackoffOptions {
  /** The first wait, and the wait again after a reset. */
  initialMs: number;
  /** The cap on the doubled wait. */
  maxMs: number;
  /**
   * A process that ran at least this long ended by accident, not in a loop: `afterRun` starts the
   * waits over. Without it `afterRun` behaves like `next`.
   */
  stableMs?: number;
  /**
   * Spread each wait by up to this fraction either way (0.2: 80 % to 120 %), so that many clients
   * cut off by the same outage do not all come back at the same instant. Default 0.
   */
  jitter?: number;
}

export class Backoff {
  /** Failures in a row since the last reset. */
  private failures = 0;

  constructor(
    private readonly options: BackoffOptions,
    private readonly random: () => number = Math.random,
  ) {}

  /** The wait before the next attempt; each call counts one more failure. */
  next(): number {
    const { initialMs, maxMs, jitter = 0 } = this.options;
    const base = Math.min(maxMs, initialMs * 2 ** this.failures);
    this.failures += 1;
    return jitter === 0 ? base : Math.round(base * (1 - jitter + this.random() * 2 * jitter));
  }

  /** The wait before restarting something that ran `livedMs` and then ended. */
  afterRun(livedMs: number): number {
    if (this.options.stableMs !== undefined && livedMs >= this.options.stableMs) this.reset();
    return this.next();
  }

  /** After a success: the next failure waits `initialMs` again. */
  reset(): void {
    this.failures = 0;
  }
}
