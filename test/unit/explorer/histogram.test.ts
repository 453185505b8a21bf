/** Histogram bins: widths that never collapse, and every counted value in a bin (the maximum in the last). */
import { describe, expect, it } from 'vitest';
import { binWidth, binsFrom, calendarBins, calendarBinsFrom, HISTOGRAM_BINS } from '../../../src/explorer/histogram.js';

describe('histogram bins', () => {
  it.each([
    [0, 24, true, 1],
    [0, 1000, true, 42],
    [0, 1, false, 1 / HISTOGRAM_BINS],
    [5, 5, true, 1],
  ])('from %d to %d (integers: %s) are %d wide', (min, max, integers, width) => {
    expect(binWidth(min, max, integers)).toBeCloseTo(width);
  });

  it('puts the maximum, which the floor puts one bin beyond, into the last bin', () => {
    const width = binWidth(0, 24, true);
    const bins = binsFrom(
      0,
      24,
      width,
      new Map([
        [0, 2],
        [23, 1],
        [24, 1],
      ]),
    );
    expect(bins).toHaveLength(HISTOGRAM_BINS);
    expect(bins[0]).toEqual({ from: 0, to: 1, n: 2 });
    expect(bins.at(-1)).toEqual({ from: 23, to: 24, n: 2 });
    expect(bins.reduce((sum, bin) => sum + bin.n, 0)).toBe(4);
  });

  it('makes one bin of a single value', () => {
    expect(binsFrom(5, 5, 1, new Map([[0, 3]]))).toEqual([{ from: 5, to: 5, n: 3 }]);
  });
});

describe('calendar bins of dates', () => {
  const at = (iso: string) => Date.parse(iso);
  const isos = (edges: number[]) => edges.map((edge) => new Date(edge).toISOString().slice(0, 10));

  it('are days (up to 62), ISO weeks (26), months (60) or years (62): the finest that fits, each bin a whole unit', () => {
    const days = calendarBins(at('2024-06-03T10:00:00Z'), at('2024-06-05T23:00:00Z'));
    expect(days?.unit).toBe('day');
    expect(isos(days?.edges ?? [])).toEqual(['2024-06-03', '2024-06-04', '2024-06-05', '2024-06-06']);
    const weeks = calendarBins(at('2024-06-05T00:00:00Z'), at('2024-09-10T00:00:00Z'));
    expect(weeks?.unit).toBe('week');
    // 2024-06-05 is a Wednesday: its week starts on Monday the 3rd.
    expect(isos(weeks?.edges ?? []).slice(0, 2)).toEqual(['2024-06-03', '2024-06-10']);
    const months = calendarBins(at('2024-01-15T00:00:00Z'), at('2024-12-31T23:59:59Z'));
    expect(months?.unit).toBe('month');
    expect(isos(months?.edges ?? [])).toHaveLength(13);
    expect(isos(months?.edges ?? [])[5]).toBe('2024-06-01');
    const years = calendarBins(at('2000-03-01T00:00:00Z'), at('2024-02-01T00:00:00Z'));
    expect(years?.unit).toBe('year');
    expect(isos(years?.edges ?? []).at(-1)).toBe('2025-01-01');
    expect(calendarBins(at('1000-01-01T00:00:00Z'), at('2024-01-01T00:00:00Z'))).toBeUndefined();
  });

  it('count by lower edge, zero where the engine found none', () => {
    const edges = [at('2024-01-01T00:00:00Z'), at('2024-02-01T00:00:00Z'), at('2024-03-01T00:00:00Z')];
    expect(calendarBinsFrom(edges, new Map([[edges[1] as number, 4]]))).toEqual([
      { from: edges[0], to: edges[1], n: 0 },
      { from: edges[1], to: edges[2], n: 4 },
    ]);
  });
});
