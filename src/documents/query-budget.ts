/**
 * The query time limit of one request, shared by all of its database operations: the count, the
 * first batch and every later batch of a cursor draw on one budget. Only time spent waiting for
 * the database counts (overlapping operations once), not time spent waiting for a slow client to
 * read what was already fetched, so a large download is not cut off by a slow network.
 *
 * Each operation is sent with the remaining budget as its server-side limit (maxTimeMS), and is
 * also abandoned on this side shortly after the budget ran out: an engine that does not stop in
 * time (or a later batch the engine does not limit) still ends the request near the limit.
 */
import { queryTimeout } from '../db/errors.js';
import { withDeadline } from '../lib/deadline.js';

/** How long to wait past the budget for the engine's own time-limit error before giving up on it. */
export function graceMs(limitMs: number): number {
  return Math.min(2_000, Math.max(200, Math.round(limitMs * 0.1)));
}

export class QueryBudget {
  private spentMs = 0;
  private active = 0;
  private activeSince = 0;

  constructor(
    readonly limitMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  remainingMs(): number {
    const running = this.active > 0 ? this.now() - this.activeSince : 0;
    return this.limitMs - this.spentMs - running;
  }

  /**
   * Runs one database operation under the remaining budget. `work` gets the server-side limit to
   * send and a signal that aborts when this side stops waiting; pass `controller` to have an
   * existing one aborted instead (a cursor's, whose signal outlives one operation). Throws 503
   * `query_timeout` when the budget is already used up or runs out while waiting.
   */
  async run<T>(work: (maxTimeMS: number, signal: AbortSignal) => Promise<T>, controller = new AbortController()): Promise<T> {
    const left = this.remainingMs();
    if (left <= 0) throw queryTimeout();
    return this.counted(left, controller, () => work(Math.max(1, Math.ceil(left)), controller.signal));
  }

  /**
   * Waits for an operation already under way, counting only the time from now on: an operation
   * started ahead of need (a cursor's next batch, asked for while the current one is rendered)
   * costs the budget only for as long as a reader then waits for it. Counting it from its start
   * would count the API's own rendering too: on a busy API a long download would run out of
   * budget while the engine had long answered. Throws 503 `query_timeout` (and aborts
   * `controller`) when the budget is used up or runs out while waiting.
   */
  async wait<T>(pending: Promise<T>, controller: AbortController): Promise<T> {
    // Once given up on, the operation's own late failure (e.g. the abort) is of no interest.
    pending.catch(() => undefined);
    const left = this.remainingMs();
    if (left <= 0) {
      const err = queryTimeout();
      controller.abort(err);
      throw err;
    }
    return this.counted(left, controller, () => pending);
  }

  /** Waits for `operation()` with the clock running, giving up `left` ms (plus the grace) from now. */
  private async counted<T>(left: number, controller: AbortController, operation: () => Promise<T>): Promise<T> {
    this.enter();
    try {
      return await withDeadline(left + graceMs(this.limitMs), queryTimeout, operation, controller);
    } finally {
      this.leave();
    }
  }

  private enter(): void {
    if (this.active === 0) this.activeSince = this.now();
    this.active += 1;
  }

  private leave(): void {
    this.active -= 1;
    if (this.active === 0) this.spentMs += this.now() - this.activeSince;
  }
}
