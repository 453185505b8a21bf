/**
 * The chart view: one field against another for a random sample of the matching records, drawn
 * by uPlot in the browser (the only view with a script; the others work without). The points
 * travel in a data attribute; a drag across the chart filters the view to that range of x.
 */
import escapeHtml from 'escape-html';
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

function select(name: 'x' | 'y' | 'by', fields: readonly string[], chosen: string, none = '(choose)'): string {
  const options = ['', ...fields].map(
    (field) => `<option value="${escapeHtml(field)}"${field === chosen ? ' selected' : ''}>${escapeHtml(field || none)}</option>`,
  );
  const label = name === 'by' ? 'split by' : name;
  // The stylesheet keeps a select narrow whatever its fields' names; the chosen one's whole name is its tooltip.
  const title = chosen === '' ? '' : ` title="${escapeHtml(chosen)}"`;
  return `<label>${label} <select name="${name}" data-testid="chart-${name}"${title}>${options.join('')}</select></label>`;
}

export function chartView(model: ChartModel): string {
  const { base, view, chart } = model;
  const nonce = model.nonce === undefined ? '' : ` nonce="${escapeHtml(model.nonce)}"`;
  const form =
    `<section class="panel"><h2>Chart</h2><form method="get" action="${escapeHtml(base)}" data-testid="chart-form">${hiddenInputs(view, ['chart'])}` +
    `${select('x', model.xFields, view.x)} ${select('y', model.yFields, view.y)} ${select('by', model.byFields, view.by, '(nothing)')} ` +
    `<button type="submit">Draw</button></form></section>\n`;
  if (chart === undefined)
    return tabsHtml(base, view) + form + '<p class="summary">Choose a number or date field for x and a number field for y.</p>\n';
  const { xs, series } = chart.series;
  const data = [xs, ...series.map(({ ys }) => ys)];
  const split = view.by === '' ? '' : ` split by ${escapeHtml(view.by)} (${numberText(series.length)} series)`;
  return (
    tabsHtml(base, view) +
    form +
    `<p class="summary" data-testid="chart-summary">${numberText(xs.length)} points${split}: a random sample of at most ${numberText(chart.sampleSize)} matching records with both fields. Drag across the chart to filter by a range of ${escapeHtml(view.x)}.</p>\n` +
    `<link rel="stylesheet" href="${staticPath('uplot.css')}">\n` +
    `<div id="explorer-chart" data-testid="chart" data-x-kind="${chart.xKind}" data-x-field="${escapeHtml(view.x)}" data-x-label="${escapeHtml(view.x)}" data-y-label="${escapeHtml(view.y)}" ` +
    `data-series="${escapeHtml(JSON.stringify(series.map(({ label }) => label)))}" ` +
    `data-view-href="${escapeHtml(viewHref(base, { ...view, tab: 'table' }))}" data-points="${escapeHtml(JSON.stringify(data))}">` +
    `<p class="nil">The chart needs JavaScript; the table, facets and histograms work without it.</p></div>\n` +
    `<script src="${staticPath('uplot.js')}"${nonce}></script><script src="${staticPath('chart.js')}"${nonce}></script>\n`
  );
}
