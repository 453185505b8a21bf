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
import type { ChartSeries } from './chart-series.js';

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
