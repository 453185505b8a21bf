/** Filter rows into MongoDB filters: values read as JSON when they are JSON, and every row must hold. */
import { describe, expect, it } from 'vitest';
import { combinedFilter, rowValue } from '../../../src/explorer/filters.js';

describe('filter rows', () => {
  it.each([
    ['357', 357],
    ['"357"', '357'],
    ['Norman', 'Norman'],
    ['true', true],
    ['{"$date":"2024-05-01T00:00:00Z"}', { $date: '2024-05-01T00:00:00Z' }],
  ])('reads the value %s', (text, value) => {
    expect(rowValue(text)).toEqual(value);
  });

  it('makes one condition per row, all of them with the typed query', () => {
    expect(combinedFilter([], undefined)).toEqual({});
    expect(combinedFilter([{ field: 'kind', op: 'eq', value: 'rain' }], undefined)).toEqual({ kind: 'rain' });
    expect(
      combinedFilter(
        [
          { field: 'a', op: 'ne', value: '1' },
          { field: 'b', op: 'contains', value: 'x.y(' },
          { field: 'c', op: 'exists', value: 'false' },
        ],
        { d: { $lt: 3 } },
      ),
    ).toEqual({ $and: [{ a: { $ne: 1 } }, { b: { $regex: 'x\\.y\\(', $options: 'i' } }, { c: { $exists: false } }, { d: { $lt: 3 } }] });
  });
});
