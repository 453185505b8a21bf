/**
 * The login throttle's decisions over one counter's recent failures (login-throttle.ts keeps the
 * counters): how long an unknown device must wait before its next attempt, and whether a device
 * cookie still earns its trust.
 *
 * A counter allows `maxFailures` failures within the window freely; each failure past them makes
 * the next attempt wait, measured from that failure: FIRST_DELAY_MS, then twice as long after each
 * further one, up to the window itself. So a guesser is slowed more the longer it goes on, while a
 * person who mistypes a few times waits seconds, not the whole window.
 */

/** One counter's limit: `maxFailures` free failures within `windowSeconds`. */
export interface FailureLimit {
  maxFailures: number;
  windowSeconds: number;
}

export interface FailureCounts {
  /** The newest failures, oldest first. */
  failures?: Date[];
}

/** The wait after the first failure past a counter's free ones. */
export const FIRST_DELAY_MS = 2_000;
/** While earlier attempts past the free failures are in flight: their outcomes come within seconds. */
export const IN_FLIGHT_DELAY_MS = 1_000;
/**
 * Failures a counter keeps beyond its free ones. By then the wait has reached the window (2 s ·
 * 2^16 is 36 hours), so older ones could not change anything.
 */
export const KEPT_BEYOND_FREE = 16;

function recentFailures(counts: FailureCounts | null, limit: FailureLimit, now: number): number[] {
  const since = now - limit.windowSeconds * 1000;
  return (counts?.failures ?? []).map((d) => d.getTime()).filter((t) => t > since);
}

/** The wait after `failures` recent failures: none while they are free, then 2 s, 4 s, 8 s ... up to the window. */
export function delayAfterMs(failures: number, limit: FailureLimit): number {
  if (failures < limit.maxFailures) return 0;
  const doublings = Math.min(KEPT_BEYOND_FREE, failures - limit.maxFailures);
  return Math.min(limit.windowSeconds * 1000, FIRST_DELAY_MS * 2 ** doublings);
}

/**
 * Milliseconds an attempt judged by this counter must wait (0: none). `pendingBefore` is the
 * number of live attempts that took their place before the caller's (all of them, for a plain
 * check): each may still add a failure, so once they could use up the free failures, attempts
 * are let through one at a time.
 */
export function lockedForMs(counts: FailureCounts | null, pendingBefore: number, limit: FailureLimit, now: number): number {
  const recent = recentFailures(counts, limit, now);
  const newest = recent.at(-1);
  if (newest !== undefined) {
    const wait = newest + delayAfterMs(recent.length, limit) - now;
    if (wait > 0) return wait;
  }
  if (pendingBefore > 0 && recent.length + pendingBefore >= limit.maxFailures) return IN_FLIGHT_DELAY_MS;
  return 0;
}

/**
 * Whether a device cookie is still trusted: fewer than `maxFailures` failures with it within the
 * window, counting the attempts with it in flight before the caller's. Past that it is treated as
 * unknown (a stolen cookie buys a guesser no more than `maxFailures` extra guesses).
 */
export function deviceTrusted(counts: FailureCounts | null, pendingBefore: number, limit: FailureLimit, now: number): boolean {
  return recentFailures(counts, limit, now).length + pendingBefore < limit.maxFailures;
}
