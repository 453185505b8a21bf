/** The explorer's view URL: parsed into a view and written back the same, and refused when the explorer cannot show it. */
import { describe, expect, it } from 'vitest';
import { parseView, viewSearch, withChanges } from '../../../src/explorer/view-state.js';

const query = (search: string): Record<string, string | string[]> => {
  const out: Record<string, string | string[]> = {};
  for (const [key, value] of new URLSearchParams(search)) {
    const prior = out[key];
    out[key] = prior === undefined ? value : [...(Array.isArray(prior) ? prior : [prior]), value];
  }
  return out;
};

describe('parseView and viewSearch', () => {
  it('read and write a whole view the same way', () => {
    const search =
      '?tab=schema&f=kind&op=eq&v=%22rain%22&f=reading.temp&op=gt&v=3&q=%7B%22a%22%3A1%7D&sort=-when&col=_id&col=when&facet=kind&hist=reading.temp&x=when&y=reading.temp&by=kind&geo=place.loc&page=3&size=50&fsize=30';
    const view = parseView(query(search));
    expect(view).toEqual({
      tab: 'schema',
      rows: [
        { field: 'kind', op: 'eq', value: '"rain"' },
        { field: 'reading.temp', op: 'gt', value: '3' },
      ],
      query: '{"a":1}',
      sort: { field: 'when', direction: -1 },
      columns: ['_id', 'when'],
      facets: ['kind'],
      histograms: ['reading.temp'],
      x: 'when',
      y: 'reading.temp',
      by: 'kind',
      geo: 'place.loc',
      groupBy: [],
      measure: '',
      page: 3,
      pageSize: 50,
      facetSize: 30,
    });
    expect(viewSearch(view)).toBe(search);
    // A facet size between the steps is the next step up, at most 300.
    expect(parseView(query('?fsize=11')).facetSize).toBe(30);
    expect(parseView(query('?fsize=999')).facetSize).toBe(300);
  });

  it('writes the default view as no query at all, and leaves out blank filter rows', () => {
    expect(viewSearch(parseView({}))).toBe('');
    expect(parseView(query('f=&op=eq&v=')).rows).toEqual([]);
  });

  it('goes back to the first page on any change', () => {
    const view = parseView(query('page=4'));
    expect(withChanges(view, { facets: ['kind'] }).page).toBe(1);
  });

  it.each([
    ['tab=globe', '"tab"'],
    ['geo=%24loc', 'not a field path'],
    ['f=a&op=eq', 'Each filter row'],
    ['f=a&op=like&v=1', 'not a filter operator'],
    ['f=%24where&op=eq&v=1', 'not a field path'],
    ['sort=a..b', 'not a field path'],
    ['facet=%24x', 'not a field path'],
    ['page=0', '"page"'],
    ['page=x', '"page"'],
    ['sort=a&sort=b', 'more than once'],
  ])('refuses %s', (search, message) => {
    expect(() => parseView(query(search))).toThrow(expect.objectContaining({ status: 400, message: expect.stringContaining(message) }));
  });
});
