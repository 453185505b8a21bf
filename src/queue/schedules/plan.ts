/**
 * What the scheduler does with a schedule whose next fire has come, as a pure function of the
 * schedule's timing, that fire and the time now. One step at a time: the scheduler applies the
 * step, then asks again while fires are still due.
 *
 * The rule (the manual's "Catch-up after downtime"):
 *   - A fire at most `graceMs` old is on time: it fires, however busy the scheduler was, so a
 *     burst of work never loses or merges runs.
 *   - Fires older than that but inside the catch-up window fire once together, late: one run,
 *     marked catch-up, at the latest of them (the others are "covered" by it).
 *   - Fires older than the catch-up window are recorded as missed, and never fire.
 */
import { nextFire, type Timing, type Window } from './timing.js';

/** Fires counted one by one at most, when a long downtime passed many of them (the count then says "at least"). */
export const MAX_COUNTED_FIRES = 10_000;

export interface PlanOptions {
  /** How late a fire may be and still count as on time. */
  graceMs: number;
  /** How old a missed fire may be and still be caught up (0: none are). */
  catchUpWindowMs: number;
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
  const lateEdge = now.getTime() - options.graceMs;
  if (due.getTime() >= lateEdge) {
    return { kind: 'fire', fire: due, catchUp: false, covers: 1, missed: null, next: nextFire(timing, due, window) };
  }
  const windowEdge = now.getTime() - Math.max(options.catchUpWindowMs, options.graceMs);

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
