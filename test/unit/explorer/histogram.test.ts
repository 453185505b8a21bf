/** Histogram bins: widths that never collapse, and every counted value in a bin (the maximum in the last). */
import { describe, expect, it } from 'vitest';
import { binWidth, binsFrom, HISTOGRAM_BINS } from '../../../src/explorer/histogram.js';

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
