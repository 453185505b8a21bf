/**
 * What the scheduler does with a schedule whose next fire has come, as a pure function of the
 * schedule's timing, that fire and the time now. One step at a time: the scheduler applies the
 * step, then asks again while fires are still due.
 *
 * The rule (the manual's "Downtime: catch-up and missed runs"):
 *   - A fire at most `graceMs` old is on time: it fires.
 *   - A fire that came due while the scheduler ran (at or after `runningSince`) fires too, however
 *     late: the scheduler was there and merely slow (a burst larger than it publishes within the
 *     grace), so it publishes each such fire, late, and never loses or merges them.
 *   - Only fires that passed while no scheduler ran (before `runningSince`) and are older than the
 *     grace are downtime: those inside the catch-up window fire once together, late: one run,
 *     marked catch-up, at the latest of them (the others are "covered" by it); older ones are
 *     recorded as missed, and never fire.
 */
import { nextFire, type Timing, type Window } from './timing.js';

/** Fires counted one by one at most, when a long downtime passed many of them (the count then says "at least"). */
export const MAX_COUNTED_FIRES = 10_000;

export interface PlanOptions {
  /** How late a fire may be and still count as on time. */
  graceMs: number;
  /** How old a missed fire may be and still be caught up (0: none are). */
  catchUpWindowMs: number;
  /**
   * Since when the scheduler making the plan has run without a break (null: not running, every
   * late fire is downtime). Fires due from then on are late because it was slow, not because
   * none ran.
   */
  runningSince: Date | null;
}

export type DueStep =
  /** Publish the fire at `fire` (its own time, on time or `catchUp`), then move on to `next`. */
  | {
      kind: 'fire';
      fire: Date;
      catchUp: boolean;
      /** How many fires this one run stands for (1 unless a catch-up). */
      covers: number;
      missed: MissedRange | null;
      next: Date | null;
    }
  /** Nothing to publish: every fire passed was too old; they are recorded as missed. */
  | { kind: 'missed'; missed: MissedRange | null; next: Date | null };

export interface MissedRange {
  first: Date;
  count: number;
  /** True when there were more than MAX_COUNTED_FIRES (count is then that many). */
  atLeast: boolean;
}

/** The step for a schedule whose next fire `due` is not after `now`. */
export function planDue(timing: Timing, window: Window, due: Date, now: Date, options: PlanOptions): DueStep {
  // Fires from the late edge on run one by one: those within the grace, and those that came due
  // while the scheduler ran.
  const graceEdge = now.getTime() - options.graceMs;
  const lateEdge = options.runningSince === null ? graceEdge : Math.min(graceEdge, options.runningSince.getTime());
  if (due.getTime() >= lateEdge) {
    return { kind: 'fire', fire: due, catchUp: false, covers: 1, missed: null, next: nextFire(timing, due, window) };
  }
  const windowEdge = Math.min(lateEdge, now.getTime() - options.catchUpWindowMs);

  // Missed: the fires from `due` up to the catch-up window's start.
  let missedCount = 0;
  let atLeast = false;
  for (let t: Date | null = due; t !== null && t.getTime() < windowEdge; t = nextFire(timing, t, window)) {
    if (missedCount === MAX_COUNTED_FIRES) {
      atLeast = true;
      break;
    }
    missedCount++;
  }
  const missed: MissedRange | null = missedCount === 0 ? null : { first: due, count: missedCount, atLeast };

  // Caught up: the late fires inside the window, one run for all of them, at the latest.
  let latest: Date | null = null;
  let covers = 0;
  const from = new Date(Math.max(due.getTime(), windowEdge) - 1);
  for (let t = nextFire(timing, from, window); t !== null && t.getTime() < lateEdge; t = nextFire(timing, t, window)) {
    latest = t;
    covers++;
    if (covers === MAX_COUNTED_FIRES) break;
  }
  if (latest !== null) {
    return { kind: 'fire', fire: latest, catchUp: true, covers, missed, next: nextFire(timing, latest, window) };
  }
  // Only missed fires: the next one is the first that is not late.
  return { kind: 'missed', missed, next: nextFire(timing, new Date(lateEdge - 1), window) };
}
