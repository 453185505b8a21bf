/**
 * Caps concurrent heavy reads (see heavy-reads.ts for what counts as heavy): at most `perCaller`
 * at a time for one caller (a user, or a client address for anonymous callers), so one caller's
 * burst cannot take the engine from everyone else, and at most `total` for all callers together,
 * so a handful of callers cannot either. Beyond the caller's share: 429 `too_many_heavy_queries`;
 * beyond the total: 503 `heavy_queries_busy`; both with Retry-After and without touching the
 * engine. Light reads are never limited here. The counts are this API process's own (see
 * caller-slots.ts).
 */
import { ApiError } from '../errors.js';
import { CallerSlots, type ReleaseSlot } from './caller-slots.js';

export interface HeavyQueryLimits {
  perCaller: number;
  total: number;
  /** The query time limit: a running heavy read ends (and frees its slot) within about this long. */
  timeLimitMs: number;
}

export class HeavyQueryLimiter {
  private readonly slots: CallerSlots;

  constructor(
    private readonly limits: HeavyQueryLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.slots = new CallerSlots(now);
  }

  /** Takes a slot for `caller`, or throws 429/503 (with Retry-After) when none is free. */
  acquire(caller: string): ReleaseSlot {
    const mine = this.slots.inUse(caller);
    if (mine >= this.limits.perCaller) {
      throw new ApiError(
        429,
        'too_many_heavy_queries',
        `You already have ${mine} aggregations, distinct queries or scanning queries running; at most ${this.limits.perCaller} may run at a time. Retry when one has finished.`,
        { limit: this.limits.perCaller },
        { 'Retry-After': this.retryAfter(this.slots.starts(caller)) },
      );
    }
    if (this.slots.inUse() >= this.limits.total) {
      throw new ApiError(
        503,
        'heavy_queries_busy',
        'The server is running as many aggregations, distinct queries and scanning queries as it allows. Retry shortly.',
        { limit: this.limits.total },
        { 'Retry-After': this.retryAfter(this.slots.starts()) },
      );
    }
    return this.slots.take(caller);
  }

  /** Running heavy reads of one caller, or of everyone. */
  inUse(caller?: string): number {
    return this.slots.inUse(caller);
  }

  /**
   * Seconds until the oldest of `starts` reaches the time limit: by then its database work has
   * ended, so a slot is free unless the response is still being streamed. At least 1.
   */
  private retryAfter(starts: number[]): string {
    const oldest = Math.min(...starts);
    const seconds = Math.ceil((oldest + this.limits.timeLimitMs - this.now()) / 1000);
    return String(Math.max(1, Number.isFinite(seconds) ? seconds : 1));
  }
}
