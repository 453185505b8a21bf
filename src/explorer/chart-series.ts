/**
 * A chart's points, optionally split by a field into one series per value: the values most
 * frequent in the sample get a series each (at most MAX_SERIES), the rest one "other" series.
 * uPlot draws series that share one x array, so each point keeps its place in x and every series
 * has a value at each place: its y where the point belongs to it, null elsewhere.
 */
import { kindOf, previewJson } from './values.js';

export const MAX_SERIES = 8;
export const OTHER_SERIES = '(other values)';
export const MISSING_SERIES = '(no value)';

export interface ChartPoint {
  x: number;
  y: number;
  /** The split field's value (absent without a split, or when the record has none). */
  group?: unknown;
}

export interface ChartSeries {
  /** Ascending x, one place per point. */
  xs: number[];
  /** One series per group (a single unnamed one without a split), null where a point is another group's. */
  series: { label: string; ys: (number | null)[] }[];
}

/** How a group's value is named in the legend: text as it is, other values as compact JSON. */
export function groupLabel(value: unknown): string {
  if (value === undefined) return MISSING_SERIES;
  if (typeof value === 'string') return value === '' ? '""' : value;
  if (kindOf(value) === 'date') return (value as Date).toISOString();
  return previewJson(value, 80);
}

export function chartSeries(points: readonly ChartPoint[], split: boolean, yLabel: string): ChartSeries {
  const sorted = [...points].sort((p, q) => p.x - q.x);
  const xs = sorted.map((p) => p.x);
  if (!split) return { xs, series: [{ label: yLabel, ys: sorted.map((p) => p.y) }] };
  const labels = sorted.map((p) => groupLabel(p.group));
  const counts = new Map<string, number>();
  for (const label of labels) counts.set(label, (counts.get(label) ?? 0) + 1);
  const ranked = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([label]) => label);
  const kept = ranked.length <= MAX_SERIES ? ranked : ranked.slice(0, MAX_SERIES - 1);
  const named = new Set(kept);
  const groups = ranked.length <= MAX_SERIES ? kept : [...kept, OTHER_SERIES];
  const series = groups.map((label) => ({
    label,
    ys: sorted.map((p, i) => {
      const own = named.has(labels[i] as string) ? labels[i] : OTHER_SERIES;
      return own === label ? p.y : null;
    }),
  }));
  return { xs, series };
}
