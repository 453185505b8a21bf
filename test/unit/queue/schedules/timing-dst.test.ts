/**
 * Crontab fire times across daylight-saving changes, against an oracle built minute by minute
 * from the zone's own clock (Intl), in the three zones that make it interesting: America/Chicago
 * and Europe/Berlin (an hour, on different dates) and Australia/Lord_Howe (half an hour).
 *
 * The rule under test (timing.ts):
 *   - fixed-time jobs (no `*` or step in minute and hour): each matching wall time of a day fires
 *     exactly once, at its first occurrence in a repeated hour; a wall time the gap skips fires at
 *     the first minute after the gap, that day;
 *   - interval jobs (a `*` or a step): every real minute whose wall time matches fires, both passes
 *     of a repeated hour, none inside a gap (those wall times never happen).
 * In both cases the fires are strictly increasing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nextFire, type Timing } from '../../../../src/queue/schedules/timing.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** 2026's changes in each zone, as UTC instants. */
const TRANSITIONS: Record<string, Date[]> = {
  'America/Chicago': [new Date('2026-03-08T08:00:00Z'), new Date('2026-11-01T07:00:00Z')],
  'Europe/Berlin': [new Date('2026-03-29T01:00:00Z'), new Date('2026-10-25T01:00:00Z')],
  'Australia/Lord_Howe': [new Date('2026-04-04T15:00:00Z'), new Date('2026-10-03T15:30:00Z')],
};

const formats = new Map<string, Intl.DateTimeFormat>();
/** "YYYY-MM-DD HH:mm" of `t` on the zone's clock. */
function wall(t: number, tz: string): string {
  let f = formats.get(tz);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('sv-SE', {
      timeZone: tz,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    });
    formats.set(tz, f);
  }
  return f.format(t);
}

/** Every real minute whose wall date is `day`, in order, with its wall time "HH:mm". */
const dayMinutes = new Map<string, { at: number; hm: string }[]>();
function minutesOf(day: string, tz: string): { at: number; hm: string }[] {
  const key = `${tz} ${day}`;
  let out = dayMinutes.get(key);
  if (out === undefined) {
    out = [];
    const utcMidnight = Date.parse(`${day}T00:00:00Z`);
    for (let t = utcMidnight - 15 * HOUR; t < utcMidnight + DAY + 15 * HOUR; t += MINUTE) {
      const w = wall(t, tz);
      if (w.startsWith(day)) out.push({ at: t, hm: w.slice(11) });
    }
    dayMinutes.set(key, out);
  }
  return out;
}

const pad = (n: number) => String(n).padStart(2, '0');
const sortedUnique = (xs: number[]) => [...new Set(xs)].sort((a, b) => a - b);

function firesBetween(timing: Timing, from: number, to: number): number[] {
  const out: number[] = [];
  for (let t = nextFire(timing, new Date(from)); t !== null && t.getTime() < to; t = nextFire(timing, t)) out.push(t.getTime());
  return out;
}

const zone = fc.constantFrom(...Object.keys(TRANSITIONS));
const start = (tz: string) =>
  fc
    .tuple(fc.constantFrom(...TRANSITIONS[tz]!), fc.integer({ min: 0, max: 6 * 60 }))
    .map(([change, m]) => ({ change: change.getTime(), from: change.getTime() - 1.5 * DAY - m * MINUTE }));
const values = (max: number) =>
  fc.uniqueArray(fc.integer({ min: 0, max }), { minLength: 1, maxLength: 3 }).map((xs) => xs.sort((a, b) => a - b));

/** The local dates checked: the change's day and the next, both inside the enumerated span. */
function checkedDays(change: number, tz: string): string[] {
  return [0, 1].map((d) => wall(change + d * DAY, tz).slice(0, 10));
}

describe('crontab fire times across daylight-saving changes', () => {
  it('fixed-time jobs: strictly increasing, once per wall time, a skipped time fires right after the gap', () => {
    fc.assert(
      fc.property(
        zone.chain((tz) => fc.tuple(fc.constant(tz), start(tz), values(59), values(23))),
        ([tz, { change, from }, minutes, hours]) => {
          const timing: Timing = { kind: 'crontab', cron: `${minutes.join(',')} ${hours.join(',')} * * *`, tz };
          const fires = firesBetween(timing, from, change + 2.2 * DAY);
          for (let i = 1; i < fires.length; i++) expect(fires[i]).toBeGreaterThan(fires[i - 1]!);
          for (const day of checkedDays(change, tz)) {
            const clock = minutesOf(day, tz);
            const expected = sortedUnique(
              hours.flatMap((h) =>
                minutes.map((m) => {
                  const hm = `${pad(h)}:${pad(m)}`;
                  // The first occurrence of the wall time, or, in a gap, the first minute after it.
                  return (clock.find((c) => c.hm === hm) ?? clock.find((c) => c.hm > hm))!.at;
                }),
              ),
            );
            const actual = fires.filter((t) => t >= change - DAY && t < change + 2.2 * DAY && wall(t, tz).startsWith(day));
            expect(actual, `${timing.cron} in ${tz} on ${day}`).toEqual(expected);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('interval jobs: strictly increasing, every real minute whose wall time matches, both passes of a repeated hour', () => {
    const pattern = fc.oneof(
      fc.constantFrom(5, 10, 15, 20, 30).map((step) => ({ cron: `*/${step} * * * *`, matches: (h: number, m: number) => m % step === 0 })),
      fc.tuple(fc.integer({ min: 0, max: 59 }), fc.constantFrom(1, 2, 3)).map(([minute, step]) => ({
        cron: `${minute} */${step} * * *`,
        matches: (h: number, m: number) => m === minute && h % step === 0,
      })),
    );
    fc.assert(
      fc.property(
        zone.chain((tz) => fc.tuple(fc.constant(tz), start(tz), pattern)),
        ([tz, { change, from }, { cron, matches }]) => {
          const timing: Timing = { kind: 'crontab', cron, tz };
          const fires = firesBetween(timing, from, change + 2.2 * DAY);
          for (let i = 1; i < fires.length; i++) expect(fires[i]).toBeGreaterThan(fires[i - 1]!);
          for (const day of checkedDays(change, tz)) {
            const expected = minutesOf(day, tz)
              .filter((c) => matches(Number(c.hm.slice(0, 2)), Number(c.hm.slice(3))))
              .map((c) => c.at);
            const actual = fires.filter((t) => t >= change - DAY && t < change + 2.2 * DAY && wall(t, tz).startsWith(day));
            expect(actual, `${cron} in ${tz} on ${day}`).toEqual(expected);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('examples: 02:30 in Chicago on the spring-forward day fires at 03:00; 01:30 on the fall-back day fires once', () => {
    const spring = firesBetween(
      { kind: 'crontab', cron: '30 2 * * *', tz: 'America/Chicago' },
      Date.parse('2026-03-07T12:00:00Z'),
      Date.parse('2026-03-10T00:00:00Z'),
    );
    expect(spring.map((t) => new Date(t).toISOString())).toEqual(['2026-03-08T08:00:00.000Z', '2026-03-09T07:30:00.000Z']);
    const fall = firesBetween(
      { kind: 'crontab', cron: '30 1 * * *', tz: 'America/Chicago' },
      Date.parse('2026-10-31T12:00:00Z'),
      Date.parse('2026-11-02T12:00:00Z'),
    );
    expect(fall.map((t) => new Date(t).toISOString())).toEqual(['2026-11-01T06:30:00.000Z', '2026-11-02T07:30:00.000Z']);
  });
});
