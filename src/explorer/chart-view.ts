/**
 * The chart view: one field against another for a random sample of the matching records, drawn
 * by uPlot in the browser (the only view with a script; the others work without). The points
 * travel in a data attribute; a drag across the chart filters the view to that range of x.
 */
import { html, type Html } from '../render/html-template.js';
import { hiddenInputs, tabsHtml, viewHref } from './view-html.js';
import { staticPath } from './static-files.js';
import type { ExplorerView } from './view-state.js';
import type { HistogramKind } from './histogram.js';
import { numberText } from './values.js';
import { chartSeries, type ChartSeries } from './chart-series.js';
import { parseQuery } from '../documents/query-params.js';
import { histogramKind, profileSample, suggestedFacets } from './schema.js';
import { SUGGESTION_SAMPLE_SIZE, type TabView } from './tab-view.js';

/** Points drawn, a random sample of the matching records. */
const CHART_SAMPLE_SIZE = 2_000;

export interface ChartModel {
  base: string;
  view: ExplorerView;
  nonce: string | undefined;
  /** Number and date fields (x), number fields (y), fields to split by, from a sample. */
  xFields: readonly string[];
  yFields: readonly string[];
  byFields: readonly string[];
  chart?: { xKind: HistogramKind; series: ChartSeries; sampleSize: number };
}

function select(name: 'x' | 'y' | 'by', fields: readonly string[], chosen: string, none = '(choose)'): Html {
  const options = ['', ...fields].map(
    (field) => html`<option value="${field}"${field === chosen && html` selected`}>${field || none}</option>`,
  );
  const label = name === 'by' ? 'split by' : name;
  // The stylesheet keeps a select narrow whatever its fields' names; the chosen one's whole name is its tooltip.
  const title = chosen === '' ? undefined : html` title="${chosen}"`;
  return html`<label>${label} <select name="${name}" data-testid="chart-${name}"${title}>${options}</select></label>`;
}

export function chartView(model: ChartModel): Html {
  const { base, view, chart } = model;
  const nonce = model.nonce === undefined ? undefined : html` nonce="${model.nonce}"`;
  const form = html`<section class="panel"><h2>Chart</h2><form method="get" action="${base}" data-testid="chart-form">${hiddenInputs(view, ['chart'])}${select('x', model.xFields, view.x)} ${select('y', model.yFields, view.y)} ${select('by', model.byFields, view.by, '(nothing)')} <button type="submit">Draw</button></form></section>\n`;
  if (chart === undefined)
    return html`${tabsHtml(base, view)}${form}<p class="summary">Choose a number or date field for x and a number field for y.</p>\n`;
  const { xs, series } = chart.series;
  const data = [xs, ...series.map(({ ys }) => ys)];
  const split = view.by === '' ? undefined : html` split by ${view.by} (${numberText(series.length)} series)`;
  return html`${tabsHtml(base, view)}${form}<p class="summary" data-testid="chart-summary">${numberText(xs.length)} points${split}: a random sample of at most ${numberText(chart.sampleSize)} matching records with both fields. Drag across the chart to filter by a range of ${view.x}.</p>
<link rel="stylesheet" href="${staticPath('uplot.css')}">
<div id="explorer-chart" data-testid="chart" data-x-kind="${chart.xKind}" data-x-field="${view.x}" data-x-label="${view.x}" data-y-label="${view.y}" data-series="${JSON.stringify(series.map(({ label }) => label))}" data-view-href="${viewHref(base, { ...view, tab: 'table' })}" data-points="${JSON.stringify(data)}"><p class="nil">The chart needs JavaScript; the table, facets and histograms work without it.</p></div>
<script src="${staticPath('uplot.js')}"${nonce}></script><script src="${staticPath('chart.js')}"${nonce}></script>\n`;
}

export const chartTab: TabView<ChartModel> = {
  async read({ reads, reader, base, view, query: viewQuery, nonce, settings }) {
    const query = parseQuery(JSON.stringify({ filter: viewQuery.filter }), settings.maxQueryBytes);
    const profile = profileSample(await reads.sample(reader, query.filter, SUGGESTION_SAMPLE_SIZE));
    const fields = profile.fields.flatMap(({ column }) => (column.field === undefined || column.field === '_id' ? [] : [column.field]));
    const xFields = fields.filter((field) => histogramKind(profile, field) !== undefined);
    const yFields = fields.filter((field) => histogramKind(profile, field) === 'number');
    const xKind = view.x === '' ? undefined : (histogramKind(profile, view.x) ?? 'number');
    // Fields with a few repeated values split a chart best: offered first.
    const suggested = suggestedFacets(profile, []);
    const byFields = [...suggested, ...fields.filter((field) => !suggested.includes(field))];
    const model = { base, view, nonce, xFields, yFields, byFields };
    if (xKind === undefined || view.y === '') return model;
    const points = await reads.points(reader, query.filter, view.x, xKind, view.y, CHART_SAMPLE_SIZE, view.by);
    const series = chartSeries(points, view.by !== '', view.y);
    return { ...model, chart: { xKind, series, sampleSize: CHART_SAMPLE_SIZE } };
  },
  render: chartView,
};
