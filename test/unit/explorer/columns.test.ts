/** The table's columns: those of the page and of a sample, and the fields the view works on always shown. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_COLUMN_COUNT, flattenRecord, knownColumns, shownColumns } from '../../../src/explorer/columns.js';

describe('columns', () => {
  it("adds a sample's columns after the page's", () => {
    const rows = [flattenRecord({ _id: 1, a: 1 }), flattenRecord({ _id: 2, b: { c: 1 } })];
    expect(
      knownColumns(rows, [
        { name: 'temp', field: 'temp' },
        { name: 'a', field: 'a' },
      ]).map((c) => c.name),
    ).toEqual(['_id', 'a', 'b.c', 'temp']);
  });

  it('keeps the fields the view sorts, filters or facets by, after the chosen or default ones', () => {
    const known = Array.from({ length: 20 }, (_, i) => ({ name: `f${i}`, field: `f${i}` }));
    expect(shownColumns(known, [], ['f15', 'f1']).map((c) => c.name)).toEqual([
      ...known.slice(0, DEFAULT_COLUMN_COUNT).map((c) => c.name),
      'f15',
    ]);
    expect(shownColumns(known, ['f3'], ['temp', 'temp', 'f3']).map((c) => c.name)).toEqual(['f3', 'temp']);
    expect(shownColumns(known, ['f3'], ['temp'])[1]).toEqual({ name: 'temp', field: 'temp' });
  });
});
