/** Filter rows into MongoDB filters: values read as JSON when they are JSON, and every row must hold. */
import { describe, expect, it } from 'vitest';
import { combinedFilter, monthRows, rowValue } from '../../../src/explorer/filters.js';

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

  it.each([
    ['mid-month', '2024-06-19T20:00:00.000Z', '2024-06-01T00:00:00.000Z', '2024-07-01T00:00:00.000Z'],
    ["a month's first instant", '2024-06-01T00:00:00.000Z', '2024-06-01T00:00:00.000Z', '2024-07-01T00:00:00.000Z'],
    ["a month's last millisecond", '2024-02-29T23:59:59.999Z', '2024-02-01T00:00:00.000Z', '2024-03-01T00:00:00.000Z'],
    ['December, into the next year', '2024-12-31T12:00:00.000Z', '2024-12-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z'],
    [
      'a year below 100 (which Date.UTC would put in the 1900s)',
      '0050-03-10T00:00:00.000Z',
      '0050-03-01T00:00:00.000Z',
      '0050-04-01T00:00:00.000Z',
    ],
  ])('gives the calendar month (UTC) of a date, %s', (_, date, from, to) => {
    expect(monthRows('when', new Date(date))).toEqual([
      { field: 'when', op: 'gte', value: JSON.stringify({ $date: from }) },
      { field: 'when', op: 'lt', value: JSON.stringify({ $date: to }) },
    ]);
  });

  it('gives no month whose end JavaScript cannot write', () => {
    expect(monthRows('when', new Date(8.64e15))).toBeUndefined();
  });
});
