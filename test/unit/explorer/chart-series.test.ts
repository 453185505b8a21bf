/** A chart's points split by a field: one series per frequent value, the rest as one, aligned on one x array. */
import { describe, expect, it } from 'vitest';
import { chartSeries, groupLabel, MAX_SERIES, MISSING_SERIES, OTHER_SERIES, type ChartPoint } from '../../../src/explorer/chart-series.js';

describe('chartSeries', () => {
  it('without a split, is one series named after y, its points in the order of x', () => {
    const { xs, series } = chartSeries(
      [
        { x: 3, y: 30 },
        { x: 1, y: 10 },
        { x: 2, y: 20 },
      ],
      false,
      'temp',
    );
    expect(xs).toEqual([1, 2, 3]);
    expect(series).toEqual([{ label: 'temp', ys: [10, 20, 30] }]);
  });

  it('with a split, gives each value its series, most frequent first, null where a point is another value', () => {
    const points: ChartPoint[] = [
      { x: 1, y: 10, group: 'rain' },
      { x: 2, y: 20, group: 'snow' },
      { x: 3, y: 30, group: 'rain' },
      { x: 4, y: 40 },
      { x: 5, y: 50, group: 7 },
    ];
    const { xs, series } = chartSeries(points, true, 'temp');
    expect(xs).toEqual([1, 2, 3, 4, 5]);
    expect(series.map((s) => s.label)).toEqual(['rain', '(no value)', '7', 'snow']);
    expect(series[0]!.ys).toEqual([10, null, 30, null, null]);
    expect(series[1]!.ys).toEqual([null, null, null, 40, null]);
    // Every point is in exactly one series.
    for (let i = 0; i < xs.length; i++) expect(series.filter((s) => s.ys[i] !== null)).toHaveLength(1);
  });

  it(`keeps ${MAX_SERIES - 1} values apart and gathers the rest as "${OTHER_SERIES}" when there are more than ${MAX_SERIES}`, () => {
    // Value v appears v + 1 times: the least frequent are gathered.
    const points: ChartPoint[] = [];
    for (let v = 0; v < 12; v++) for (let k = 0; k <= v; k++) points.push({ x: points.length, y: v, group: `v${v}` });
    const { series } = chartSeries(points, true, 'y');
    expect(series).toHaveLength(MAX_SERIES);
    expect(series.map((s) => s.label)).toEqual(['v11', 'v10', 'v9', 'v8', 'v7', 'v6', 'v5', OTHER_SERIES]);
    const other = series.at(-1)!.ys.filter((y) => y !== null);
    expect(other).toHaveLength(1 + 2 + 3 + 4 + 5);
    expect(new Set(other)).toEqual(new Set([0, 1, 2, 3, 4]));
  });

  it('names values for the legend as text, dates as ISO, others as compact JSON', () => {
    expect(groupLabel(undefined)).toBe(MISSING_SERIES);
    expect(groupLabel('<b>')).toBe('<b>');
    expect(groupLabel(null)).toBe('null');
    expect(groupLabel(new Date('2024-06-01T00:00:00Z'))).toBe('2024-06-01T00:00:00.000Z');
    expect(groupLabel({ a: [1, 2] })).toBe('{"a":[1,2]}');
  });
});
