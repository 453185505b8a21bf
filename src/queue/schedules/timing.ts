/**
 * When a schedule fires, as pure functions of its timing and a moment: no clock, no database.
 * Four kinds, as django-celery-beat has them:
 *
 *   crontab   five cron fields read in a named IANA time zone (croner does the arithmetic)
 *   interval  every N seconds, anchored: fires at anchor + k·N for whole k, so a restart or a late
 *             fire never shifts the grid
 *   solar     a sun event (sunrise, sunset, dawn, dusk, solar noon) at a latitude/longitude (suncalc)
 *   clocked   once, at one instant
 *
 * Daylight-saving time (crontab only; the other kinds count real time). The rule is Vixie cron's,
 * as croner applies it with `fixedTimeRule: "no-wildcard"`:
 *   - A fixed-time job (no `*` and no step in the minute and hour fields, e.g. `30 2 * * *` or
 *     `0 2,14 * * *`) fires once per matching wall-clock time: in the repeated hour of a fall-back
 *     day at the first occurrence only, and a time that the spring-forward gap skips fires at the
 *     first instant after the gap, the same day. Nothing is lost, nothing doubled.
 *   - An interval job (a `*` or a step in the minute or hour field, e.g. `*∕15 * * * *`) follows real
 *     time: the repeated hour is lived twice and fires on each pass; the gap's wall times never
 *     happen, and no real-time slot is lost with them.
 * Fire times are strictly increasing in every case.
 */
import { Cron } from 'croner';
import SunCalc from 'suncalc';

export const SOLAR_EVENTS = ['sunrise', 'sunset', 'dawn', 'dusk', 'solar_noon'] as const;
export type SolarEvent = (typeof SOLAR_EVENTS)[number];

export type Timing =
  | { kind: 'crontab'; cron: string; tz: string }
  | { kind: 'interval'; everySeconds: number; anchor: Date }
  | { kind: 'solar'; event: SolarEvent; lat: number; lon: number }
  | { kind: 'clocked'; at: Date };

/** The limits every kind honours: no fire before `start`, none at or after `end`. */
export interface Window {
  start?: Date | null;
  end?: Date | null;
}

const DAY_MS = 86_400_000;
/** How far a solar schedule looks for its event before it counts as never happening (polar night or day). */
export const SOLAR_SEARCH_DAYS = 366;

/** A crontab's croner job, reused: building one parses the pattern, which dominates a next-fire call. */
const crons = new Map<string, Cron>();
const CRON_CACHE_MAX = 20_000;

/**
 * Each crontab's last answer: many schedules share a crontab, and a burst of their fires asks
 * for the fire after the same moment again and again (croner takes a fraction of a millisecond).
 */
const lastNext = new Map<string, { after: number; next: Date | null }>();

function cronNextRun(cron: string, tz: string, after: Date): Date | null {
  const key = `${tz} ${cron}`;
  const memo = lastNext.get(key);
  if (memo?.after !== after.getTime()) {
    const next = cronOf(cron, tz).nextRun(after);
    if (lastNext.size >= CRON_CACHE_MAX) lastNext.clear();
    lastNext.set(key, { after: after.getTime(), next });
    return next;
  }
  return memo.next === null ? null : new Date(memo.next.getTime());
}

/** Throws croner's own error for a bad pattern or zone (the caller turns it into a 400). */
export function cronOf(cron: string, tz: string): Cron {
  const key = `${tz} ${cron}`;
  let job = crons.get(key);
  if (job === undefined) {
    job = new Cron(cron, { timezone: tz, mode: '5-part', fixedTimeRule: 'no-wildcard', paused: true });
    // Croner checks the zone only when it computes a date; asking once here makes a bad one fail now.
    job.nextRun(new Date(0));
    if (crons.size >= CRON_CACHE_MAX) crons.clear();
    crons.set(key, job);
  }
  return job;
}

/** The instant suncalc gives for `event` on the UTC day of `day`, or null when it does not happen there that day. */
export function solarEventOn(day: Date, event: SolarEvent, lat: number, lon: number): Date | null {
  // Noon UTC of the day, as suncalc's own examples use: the solar day around it is the one asked for.
  const noon = new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), 12));
  const times = SunCalc.getTimes(noon, lat, lon);
  const at = event === 'solar_noon' ? times.solarNoon : times[event];
  return Number.isNaN(at.getTime()) ? null : at;
}

/** The first fire of `timing` strictly after `after`, ignoring the window; null when there is none. */
function rawNextFire(timing: Timing, after: Date): Date | null {
  switch (timing.kind) {
    case 'crontab':
      return cronNextRun(timing.cron, timing.tz, after);
    case 'interval': {
      const every = timing.everySeconds * 1000;
      const anchor = timing.anchor.getTime();
      const t = after.getTime();
      if (t < anchor) return new Date(anchor);
      return new Date(anchor + (Math.floor((t - anchor) / every) + 1) * every);
    }
    case 'solar': {
      // The event of the day before is looked at too: at longitudes far from Greenwich a day's
      // event can fall on the neighbouring UTC date.
      for (let d = -1; d <= SOLAR_SEARCH_DAYS; d++) {
        const at = solarEventOn(new Date(after.getTime() + d * DAY_MS), timing.event, timing.lat, timing.lon);
        if (at !== null && at.getTime() > after.getTime()) return at;
      }
      return null;
    }
    case 'clocked':
      return timing.at.getTime() > after.getTime() ? timing.at : null;
  }
}

/** The first fire strictly after `after` inside the window, or null when the schedule has no more. */
export function nextFire(timing: Timing, after: Date, window: Window = {}): Date | null {
  const start = window.start ?? null;
  // A fire exactly at `start` counts: ask from just before it.
  const from = start !== null && start.getTime() > after.getTime() ? new Date(start.getTime() - 1) : after;
  const next = rawNextFire(timing, from);
  if (next === null) return null;
  if (window.end !== undefined && window.end !== null && next.getTime() >= window.end.getTime()) return null;
  return next;
}

/** Up to `count` fires strictly after `after`, in order (the "next fire times" preview). */
export function nextFires(timing: Timing, after: Date, count: number, window: Window = {}): Date[] {
  const out: Date[] = [];
  let t = after;
  while (out.length < count) {
    const next = nextFire(timing, t, window);
    if (next === null) break;
    out.push(next);
    t = next;
  }
  return out;
}
