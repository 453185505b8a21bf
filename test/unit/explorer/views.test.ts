/**
 * Each tab's view module rendered from a model alone (its reads go through the engine, in the
 * integration tests): every value from the data or the URL (field
 * names, values, the typed query) written as text, never as markup.
 */
import { Double, Int32, Long } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { chartTab } from '../../../src/explorer/chart-view.js';
import { mapTab } from '../../../src/explorer/map-view.js';
import { pageHtml } from '../../../src/explorer/page.js';
import { recordView } from '../../../src/explorer/record-view.js';
import { profileSample } from '../../../src/explorer/schema.js';
import { schemaTab } from '../../../src/explorer/schema-view.js';
import { statText, summaryTab } from '../../../src/explorer/summary-view.js';
import { tableTab } from '../../../src/explorer/table-view.js';
import { parseView } from '../../../src/explorer/view-state.js';
import { html } from '../../../src/render/html-template.js';

const EVIL = '<img src=x onerror=alert(1)>"\'&';
const BASE = '/api/explore/data_store/db/col/';
const query = { area: 'data_store' as const, db: 'db', col: 'col', filter: {}, columns: [] };

/** No markup from the data: the hostile text never appears unescaped. */
function expectEscaped(text: string): void {
  expect(text).not.toContain('<img');
  expect(text).not.toContain('onerror=alert(1)>');
  expect(text).toContain('&lt;img src=x onerror=alert(1)&gt;');
}

describe('explorer views', () => {
  it('table: hostile field names and values as text, in headers, cells, facets and filter rows', () => {
    const view = parseView({ f: EVIL, op: 'eq', v: EVIL, facet: EVIL, sort: EVIL });
    const records = [{ _id: 'a', [EVIL]: EVIL, n: 1 }];
    const out = tableTab.render({
      base: BASE,
      view,
      records,
      sampleColumns: [],
      total: { exact: true, n: 1 },
      elapsedMs: 3,
      filterJson: JSON.stringify({ [EVIL]: EVIL }),
      sortIndexed: false,
      facets: { facets: new Map([[EVIL, [{ value: EVIL, n: 1 }]]]), histograms: new Map(), suggested: [EVIL], suggestedHistograms: [] },
      nonce: undefined,
      fieldNames: [EVIL],
      query,
      baseUrl: 'http://localhost',
    }).text;
    expectEscaped(out);
    expect(out).toContain('data-testid="record-row"');
    expect(out).toContain('data-testid="sort-hint"');
    expect(out).toContain('data-testid="facet-value"');
    expect(out).not.toContain('<script');
  });

  it('table: the brush script only with a drawn histogram, with the nonce', () => {
    const view = parseView({ hist: 'n' });
    const model = {
      base: BASE,
      view,
      records: [],
      sampleColumns: [],
      total: { exact: true as const, n: 0 },
      elapsedMs: 1,
      filterJson: '{}',
      sortIndexed: undefined,
      facets: { facets: new Map(), histograms: new Map(), suggested: [], suggestedHistograms: [] },
      nonce: 'n0nce',
      fieldNames: [],
      query,
      baseUrl: 'http://localhost',
    };
    expect(tableTab.render(model).text).not.toContain('<script');
    const histograms = new Map([['n', { field: 'n', kind: 'number' as const, bins: [{ from: 0, to: 1, n: 2 }], total: 2 }]]);
    const out = tableTab.render({ ...model, facets: { ...model.facets, histograms } }).text;
    expect(out).toMatch(/<script src="[^"]+\/histogram\.[A-Za-z0-9]{12}\.js" nonce="n0nce"><\/script>/);
  });

  it('schema: hostile field names as text, with types and coverage', () => {
    const out = schemaTab.render({
      base: BASE,
      view: parseView({ tab: 'schema' }),
      profile: profileSample([{ [EVIL]: 1.5 }, { [EVIL]: 2 }]),
      elapsedMs: 5,
    }).text;
    expectEscaped(out);
    expect(out).toContain('data-testid="schema-field"');
  });

  it('chart: field names and series labels as text in the form and the data attributes', () => {
    const view = parseView({ tab: 'chart', x: EVIL, y: EVIL, by: EVIL });
    const out = chartTab.render({
      base: BASE,
      view,
      nonce: 'n0nce',
      xFields: [EVIL],
      yFields: [EVIL],
      byFields: [EVIL],
      chart: { xKind: 'number', series: { xs: [1], series: [{ label: EVIL, ys: [2] }] }, sampleSize: 2000 },
    }).text;
    expectEscaped(out);
    expect(out).toMatch(/<script src="[^"]+\/chart\.[A-Za-z0-9]{12}\.js" nonce="n0nce"><\/script>/);
  });

  it('map: the field, the typed query and the tile attribution as text', () => {
    const view = parseView({ tab: 'map', geo: EVIL, q: JSON.stringify({ [EVIL]: 1 }) });
    const out = mapTab.render({
      base: BASE,
      dataPath: '/api/explore/geometries/data_store/db/col/',
      view,
      nonce: undefined,
      geoFields: [EVIL],
      field: EVIL,
      total: { exact: true, n: 3 },
      limit: 2,
      tiles: { url: 'https://tiles.example/{z}/{x}/{y}.png', attribution: EVIL },
    }).text;
    expectEscaped(out);
    expect(out).toContain('data-testid="map-capped"');
  });

  it('summary: group values, field names and the pipeline as text', () => {
    const view = parseView({ tab: 'summary', group: EVIL, measure: EVIL });
    const out = summaryTab.render({
      base: BASE,
      view,
      groupFields: [EVIL],
      numberFields: [EVIL],
      query,
      rows: [{ _id: { g0: EVIL }, count: 2, mean: 1.5, min: 1, max: 2, sum: 3 }],
    }).text;
    expectEscaped(out);
    expect(out).toContain('data-testid="summary-row"');
    expect(out).toContain('data-testid="summary-chart"');
  });

  it('summary: statistics written as the table writes their stored type, a whole double with its .0', () => {
    const view = parseView({ tab: 'summary', group: 'site', measure: 'temp' });
    const out = summaryTab.render({
      base: BASE,
      view,
      groupFields: ['site'],
      numberFields: ['temp'],
      query,
      rows: [
        { _id: { g0: 'a' }, count: new Int32(3), mean: new Double(19), min: new Double(-0), max: new Double(21.25), sum: new Long(57) },
      ],
    }).text;
    const cells = [...(out.split('data-testid="summary-row">')[1]?.split('</tr>')[0] ?? '').matchAll(/<td[^>]*>([^<]*)<\/td>/g)].map(
      (m) => m[1],
    );
    expect(cells).toEqual(['3', '19.0', '-0.0', '21.25', '57']);
    expect(out).toContain('<title>19.0</title>');
    expect(statText(new Double(2 / 3))).toBe('0.666667');
    expect(statText(new Double(12345))).toBe('12345.0');
    expect(statText(new Int32(12345))).toBe('12\u202f345');
    expect(statText(null)).toBe('');
  });

  it('record and page shell: the record, the heading and the user name as text', () => {
    const body = recordView(BASE, '/api/data_store/data/db/col/a/', { _id: 'a', [EVIL]: EVIL });
    expectEscaped(body.text);
    const page = pageHtml(
      { appTitle: EVIL, heading: EVIL, username: EVIL, nonce: 'n0nce', crumbs: [[EVIL, null]], here: '/x' },
      html`<p>${EVIL}</p>`,
    ).text;
    expectEscaped(page);
    expect(page).toContain('<style nonce="n0nce">');
    expect(page.startsWith('<!DOCTYPE html>\n<html lang="en">')).toBe(true);
  });
});
