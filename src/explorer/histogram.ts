/**
 * Histograms of a number or date field: equal-width bins between the smallest and largest value
 * of the matching records, counted by the engine (one `$group` for the range, one for the bins).
 * Dates get calendar bins instead when their range allows (days, ISO weeks from Monday, months or
 * years, in UTC, counted by one `$bucket` on those edges), so that a bar is a day, a week, a month
 * or a year a reader can name and filter by. Pure parts here: the bin width, the calendar edges
 * and the bins from the engine's counts.
 */
export const HISTOGRAM_BINS = 24;

export type HistogramKind = 'number' | 'date';

export interface Bin {
  /** Inclusive lower edge, as a number (a date's milliseconds). */
  from: number;
  /** Upper edge: exclusive, except for the last bin. */
  to: number;
  n: number;
}

export type CalendarUnit = 'day' | 'week' | 'month' | 'year';

export interface Histogram {
  field: string;
  kind: HistogramKind;
  /** For calendar bins of dates: their unit. Every bin's upper edge is then exclusive, the last one's too. */
  unit?: CalendarUnit;
  bins: Bin[];
  /** Records with a value of this kind. */
  total: number;
}

/** The width of a bin for values from `min` to `max` (at least 1 for whole-number ranges, never 0). */
export function binWidth(min: number, max: number, integers: boolean): number {
  const span = max - min;
  if (span <= 0) return 1;
  const width = span / HISTOGRAM_BINS;
  return integers ? Math.max(1, Math.ceil(width)) : width;
}

/** Every bin from `min` up to `max`, with the engine's counts by bin number (missing ones are 0). */
export function binsFrom(min: number, max: number, width: number, counts: ReadonlyMap<number, number>): Bin[] {
  const count = Math.max(1, Math.min(HISTOGRAM_BINS, Math.floor((max - min) / width) + 1));
  const bins: Bin[] = [];
  for (let i = 0; i < count; i += 1) {
    // The last bin also holds the values the floor put one bin further (the maximum itself).
    const n = (counts.get(i) ?? 0) + (i === count - 1 ? [...counts].filter(([bin]) => bin >= count).reduce((sum, [, c]) => sum + c, 0) : 0);
    bins.push({ from: min + i * width, to: i === count - 1 ? max : min + (i + 1) * width, n });
  }
  return bins;
}

/**
 * Most bins of each unit: up to two months by day, half a year by week, five years by month, then
 * by year. A year of dates is twelve months, not 53 weeks: a month is what a reader looks for.
 * A range that needs more years than this gets equal-width bins.
 */
const MAX_CALENDAR_BINS: Record<CalendarUnit, number> = { day: 62, week: 26, month: 60, year: 62 };
const DAY_MS = 86_400_000;

/** The start (UTC) of the calendar unit that holds `ms`. */
function unitStart(ms: number, unit: CalendarUnit): number {
  const date = new Date(ms);
  const y = date.getUTCFullYear();
  const m = date.getUTCMonth();
  const day = Date.UTC(y, m, date.getUTCDate());
  switch (unit) {
    case 'day':
      return day;
    case 'week':
      // ISO weeks start on Monday (getUTCDay: 0 is Sunday).
      return day - ((date.getUTCDay() + 6) % 7) * DAY_MS;
    case 'month':
      return Date.UTC(y, m, 1);
    case 'year':
      return Date.UTC(y, 0, 1);
  }
}

function nextStart(ms: number, unit: CalendarUnit): number {
  const date = new Date(ms);
  switch (unit) {
    case 'day':
      return ms + DAY_MS;
    case 'week':
      return ms + 7 * DAY_MS;
    case 'month':
      return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
    case 'year':
      return Date.UTC(date.getUTCFullYear() + 1, 0, 1);
  }
}

/**
 * The calendar unit and bin edges for dates from `min` to `max` (milliseconds): the finest of
 * day, week, month and year that needs at most MAX_CALENDAR_BINS of its bins; undefined when even years
 * need more. The edges run from the start of the unit holding `min` to the start of the one after
 * `max`, so every bin is a whole unit.
 */
export function calendarBins(min: number, max: number): { unit: CalendarUnit; edges: number[] } | undefined {
  for (const unit of ['day', 'week', 'month', 'year'] as const) {
    const edges = [unitStart(min, unit)];
    const most = MAX_CALENDAR_BINS[unit];
    while ((edges.at(-1) as number) <= max && edges.length <= most + 1) edges.push(nextStart(edges.at(-1) as number, unit));
    if (edges.length <= most + 1) return { unit, edges };
  }
  return undefined;
}

/** Calendar bins from their edges and the engine's counts by lower edge (milliseconds). */
export function calendarBinsFrom(edges: readonly number[], counts: ReadonlyMap<number, number>): Bin[] {
  return edges.slice(0, -1).map((from, i) => ({ from, to: edges[i + 1] as number, n: counts.get(from) ?? 0 }));
}
