/**
 * Histograms of a number or date field: equal-width bins between the smallest and largest value
 * of the matching records, counted by the engine (one `$group` for the range, one for the bins).
 * Pure parts here: the bin width and the bins from the engine's counts.
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

export interface Histogram {
  field: string;
  kind: HistogramKind;
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
