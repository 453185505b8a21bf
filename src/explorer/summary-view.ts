/**
 * The Summarize tab: the matching records grouped by one or two fields, each group's count and,
 * for a chosen number field, its mean, smallest, largest and sum, as a table and a bar chart
 * (inline SVG, no script), with the `$group` pipeline that computes it and the same as Python.
 */
import { doubleText } from '../render/double-text.js';
import { html, joinHtml, raw, type Html } from '../render/html-template.js';
import type { Document } from 'mongodb';
import { parseQuery } from '../documents/query-params.js';
import { histogramKind, profileSample, suggestedFacets } from './schema.js';
import { pythonLiteral, type ViewQuery } from './snippets.js';
import { SUGGESTION_SAMPLE_SIZE, type TabView } from './tab-view.js';
import { hiddenInputs, tabsHtml, viewHref } from './view-html.js';
import { withChanges, type ExplorerView } from './view-state.js';
import { bsonTag, numberText, showValue } from './values.js';

/** Groups shown, the largest first. */
export const SUMMARY_GROUPS = 200;
/** Bars drawn, the first groups of the table. */
const CHART_BARS = 40;

/** The pipeline: one `$group` by the fields (keys g0, g1), counted and, with a measure, its statistics; the largest groups first. */
export function summaryPipeline(groupBy: readonly string[], measure: string): Document[] {
  const id = Object.fromEntries(groupBy.map((field, i) => [`g${i}`, `$${field}`]));
  if (measure === '') return [{ $group: { _id: id, count: { $sum: 1 } } }, { $sort: { count: -1, _id: 1 } }, { $limit: SUMMARY_GROUPS }];
  // The smallest value as minus the largest of the negated values: an engine whose $min takes a
  // record without the field for null (below every number) still gives the smallest number.
  const negated = { $multiply: [-1, `$${measure}`] };
  return [
    {
      $group: {
        _id: id,
        count: { $sum: 1 },
        mean: { $avg: `$${measure}` },
        min: { $max: negated },
        max: { $max: `$${measure}` },
        sum: { $sum: `$${measure}` },
      },
    },
    { $set: { min: { $multiply: [-1, '$min'] } } },
    { $sort: { count: -1, _id: 1 } },
    { $limit: SUMMARY_GROUPS },
  ];
}

export interface SummaryModel {
  base: string;
  view: ExplorerView;
  /** Fields to group by (a few repeated values first) and number fields to summarize, from a sample. */
  groupFields: readonly string[];
  numberFields: readonly string[];
  query: ViewQuery;
  /** The engine's rows, when fields to group by are chosen. */
  rows?: Document[];
}

function select(name: string, fields: readonly string[], chosen: string, none: string): Html {
  const options = ['', ...fields].map(
    (field) => html`<option value="${field}"${field === chosen && html` selected`}>${field || none}</option>`,
  );
  const title = chosen === '' ? undefined : html` title="${chosen}"`;
  return html`<select name="${name}" data-testid="summary-${name}"${title}>${options}</select>`;
}

/**
 * A statistic written as the table writes a value of its stored type (the engine's rows keep
 * their numbers' BSON classes): a double with its `.0` when whole, so a mean or sum of doubles
 * is not taken for an integer; an int or a long as an integer. Whole values are written exactly
 * (-0 with its sign), fractions to 6 significant digits.
 */
export function statText(value: unknown): string {
  if (value === null || value === undefined) return '';
  const tag = typeof value === 'object' ? bsonTag(value) : undefined;
  if (tag === 'Long' || tag === 'Decimal128') return String(value);
  const n = Number(value);
  if (!Number.isFinite(n)) return '';
  const rounded = Number.isInteger(n) ? n : Number(n.toPrecision(6));
  return tag === 'Double' ? doubleText(rounded) : numberText(rounded);
}

function barChart(rows: readonly Document[], measure: string): Html {
  const key = measure === '' ? 'count' : 'mean';
  const stats = rows.slice(0, CHART_BARS).map((row) => row[key] as unknown);
  const values = stats.map(Number);
  const highest = Math.max(1e-12, ...values.filter(Number.isFinite).map(Math.abs));
  const bars = values.map((value, i) => {
    const width = Number.isFinite(value) ? Math.max(1, Math.round((Math.abs(value) / highest) * 300)) : 0;
    return html`<rect x="0" y="${i * 14}" width="${width}" height="12" fill="#2c6dac"><title>${statText(stats[i])}</title></rect>`;
  });
  return html`<svg width="320" height="${values.length * 14}" role="img" aria-label="${`${key} per group`}" data-testid="summary-chart">${bars}</svg><small>${key === 'count' ? 'records' : `mean of ${measure}`} per group, in the order of the table</small>`;
}

export function summaryView(model: SummaryModel): Html {
  const { base, view } = model;
  const form = html`<section class="panel"><h2>Summarize</h2><form method="get" action="${base}" data-testid="summary-form">${hiddenInputs(view, ['summary'])}group by ${select('group', model.groupFields, view.groupBy[0] ?? '', '(choose)')} and ${select('group', model.groupFields, view.groupBy[1] ?? '', '(nothing)')} · summarize ${select('measure', model.numberFields, view.measure, '(count only)')} <button type="submit">Summarize</button></form></section>\n`;
  if (model.rows === undefined) return html`${tabsHtml(base, view)}${form}<p class="summary">Choose a field to group the records by.</p>\n`;
  const stats = view.measure === '' ? [] : ['mean', 'min', 'max', 'sum'];
  const head = [...view.groupBy, 'count', ...stats.map((stat) => `${stat} of ${view.measure}`)];
  const body = model.rows.map((row) => {
    const id = (row._id ?? {}) as Record<string, unknown>;
    const groups = view.groupBy.map((field, i) => {
      const shown = showValue(id[`g${i}`]);
      // The value's HTML is written by showValue, which escapes what it shows.
      const label = shown.html === '' ? html`<span class="nil">(missing)</span>` : raw(shown.html);
      const href =
        shown.matchJson === undefined
          ? undefined
          : viewHref(base, withChanges(view, { tab: 'table', rows: [...view.rows, { field, op: 'eq', value: shown.matchJson }] }));
      return html`<td>${href === undefined ? label : html`<a href="${href}">${label}</a>`}</td>`;
    });
    const numbers = ['count', ...stats].map((stat) => html`<td class="number">${statText(row[stat])}</td>`);
    return html`<tr data-testid="summary-row">${groups}${numbers}</tr>`;
  });
  const pipeline = summaryPipeline(view.groupBy, view.measure);
  const filter = Object.keys(model.query.filter).length === 0 ? '' : `, filter=${pythonLiteral(model.query.filter)}`;
  const python = [
    'from cybercom import Client',
    '',
    'client = Client()  # CYBERCOM_URL, CYBERCOM_TOKEN',
    `col = client.${model.query.area}[${JSON.stringify(model.query.db)}][${JSON.stringify(model.query.col)}]`,
    `df = col.aggregate(${pythonLiteral(pipeline)}${filter}).to_dataframe(flatten=True)`,
  ].join('\n');
  return html`${tabsHtml(base, view)}${form}<p class="summary" data-testid="summary-count">${numberText(model.rows.length)} group${model.rows.length === 1 ? '' : 's'}${model.rows.length >= SUMMARY_GROUPS && ` (the ${SUMMARY_GROUPS} largest)`}, the largest first.</p>
<div class="facets"><div class="scroll"><table class="records" data-testid="summary-table"><thead><tr>${head.map((h) => html`<th title="${h}">${h}</th>`)}</tr></thead><tbody>${joinHtml(body, '\n')}</tbody></table></div><div class="facet">${barChart(model.rows, view.measure)}</div></div>
<details><summary>The pipeline (<code>$group</code>), after the view's filter</summary><pre data-testid="summary-pipeline">${JSON.stringify(pipeline, null, 2)}</pre></details><details><summary>Python (cybercom client)</summary><pre data-testid="summary-python">${python}</pre></details>\n`;
}

export const summaryTab: TabView<SummaryModel> = {
  async read({ reads, reader, base, view, query: viewQuery, settings }) {
    const query = parseQuery(JSON.stringify({ filter: viewQuery.filter }), settings.maxQueryBytes);
    const profile = profileSample(await reads.sample(reader, query.filter, SUGGESTION_SAMPLE_SIZE));
    const fields = profile.fields.flatMap(({ column }) => (column.field === undefined || column.field === '_id' ? [] : [column.field]));
    const suggested = suggestedFacets(profile, []);
    const model = {
      base,
      view,
      query: viewQuery,
      groupFields: [...suggested, ...fields.filter((field) => !suggested.includes(field))],
      numberFields: fields.filter((field) => histogramKind(profile, field) === 'number'),
    };
    if (view.groupBy.length === 0) return model;
    return { ...model, rows: await reads.summarize(reader, query.filter, summaryPipeline(view.groupBy, view.measure)) };
  },
  render: summaryView,
};
