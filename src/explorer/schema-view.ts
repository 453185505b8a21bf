/** The schema view: the fields of a sample of the view's records, with kinds, coverage, ranges and distinct counts. */
import { html, joinHtml, type Html } from '../render/html-template.js';
import { parseQuery } from '../documents/query-params.js';
import { SCHEMA_SAMPLE_SIZE } from './explorer-reads.js';
import { histogramKind, profileSample, type SchemaProfile } from './schema.js';
import type { TabView } from './tab-view.js';
import { a, tabsHtml, viewHref } from './view-html.js';
import { withChanges, type ExplorerView } from './view-state.js';
import { dateText, numberText } from './values.js';

const rangeText = (value: number | Date | undefined): string =>
  value === undefined ? '' : value instanceof Date ? dateText(value) : numberText(value);

export function schemaView(base: string, view: ExplorerView, profile: SchemaProfile, elapsedMs: number): Html {
  const rows = profile.fields.map(({ column, present, types, min, max, distinct }) => {
    const coverage = profile.sampleSize === 0 ? 0 : (100 * present) / profile.sampleSize;
    // Stored types with the records of each: an int and a double are told apart, as a date and a string are.
    const typeText = [...types]
      .sort((x, y) => y[1] - x[1])
      .map(([type, n]) => `${type} ${numberText(n)}`)
      .join(' · ');
    const distinctText = distinct >= present && present > 1 ? `${numberText(distinct)} (all different)` : numberText(distinct);
    const facet =
      column.field !== undefined && !view.facets.includes(column.field)
        ? a(viewHref(base, withChanges(view, { tab: 'table', facets: [...view.facets, column.field] })), 'facet')
        : undefined;
    const histogram =
      column.field !== undefined && !view.histograms.includes(column.field) && histogramKind(profile, column.field) !== undefined
        ? a(viewHref(base, withChanges(view, { tab: 'table', histograms: [...view.histograms, column.field] })), 'histogram')
        : undefined;
    return html`<tr data-testid="schema-field" data-column="${column.name}"><td class="name" title="${column.name}">${column.name}</td><td data-testid="schema-types">${typeText}</td><td><meter min="0" max="100" value="${coverage.toFixed(1)}"></meter> ${coverage.toFixed(coverage < 10 ? 1 : 0)}%</td><td>${rangeText(min)}</td><td>${rangeText(max)}</td><td>${distinctText}</td><td>${facet} ${histogram}</td></tr>`;
  });
  return html`${tabsHtml(base, view)}<p class="summary" data-testid="schema-summary">Fields of a random sample of ${numberText(profile.sampleSize)} records (<code>$sample</code>, at most 1,000) matching the view's filter · ${numberText(Math.round(elapsedMs))} ms. Distinct values are counted within the sample.</p>\n<table class="schema" data-testid="schema"><thead><tr><th>Field</th><th title="Records of the sample per stored BSON type">Types</th><th>Coverage</th><th>Min</th><th>Max</th><th>Distinct in sample</th><th></th></tr></thead><tbody>${joinHtml(rows, '\n')}</tbody></table>\n`;
}

export interface SchemaModel {
  base: string;
  view: ExplorerView;
  profile: SchemaProfile;
  elapsedMs: number;
}

export const schemaTab: TabView<SchemaModel> = {
  async read({ reads, reader, base, view, query, settings }) {
    const started = performance.now();
    const { filter } = parseQuery(JSON.stringify({ filter: query.filter }), settings.maxQueryBytes);
    const sample = await reads.sample(reader, filter, SCHEMA_SAMPLE_SIZE);
    return { base, view, profile: profileSample(sample), elapsedMs: performance.now() - started };
  },
  render: ({ base, view, profile, elapsedMs }) => schemaView(base, view, profile, elapsedMs),
};
