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

export interface ChartModel {
  base: string;
  view: ExplorerView;
  nonce: string | undefined;
  /** Number and date fields (x), number fields (y), from a sample. */
  xFields: readonly string[];
  yFields: readonly string[];
  chart?: { xKind: HistogramKind; points: [number[], number[]]; sampleSize: number };
}

function select(name: 'x' | 'y', fields: readonly string[], chosen: string): string {
  const options = ['', ...fields].map(
    (field) => `<option value="${escapeHtml(field)}"${field === chosen ? ' selected' : ''}>${escapeHtml(field || '(choose)')}</option>`,
  );
  return `<label>${name} <select name="${name}" data-testid="chart-${name}">${options.join('')}</select></label>`;
}

export function chartView(model: ChartModel): string {
  const { base, view, chart } = model;
  const nonce = model.nonce === undefined ? '' : ` nonce="${escapeHtml(model.nonce)}"`;
  const form =
    `<section class="panel"><h2>Chart</h2><form method="get" action="${escapeHtml(base)}" data-testid="chart-form">${hiddenInputs(view, ['chart'])}` +
    `${select('x', model.xFields, view.x)} ${select('y', model.yFields, view.y)} <button type="submit">Draw</button></form></section>\n`;
  if (chart === undefined)
    return tabsHtml(base, view) + form + '<p class="summary">Choose a number or date field for x and a number field for y.</p>\n';
  const [xs] = chart.points;
  return (
    tabsHtml(base, view) +
    form +
    `<p class="summary" data-testid="chart-summary">${numberText(xs.length)} points: a random sample of at most ${numberText(chart.sampleSize)} matching records with both fields. Drag across the chart to filter by a range of ${escapeHtml(view.x)}.</p>\n` +
    `<link rel="stylesheet" href="${staticPath('uplot.css')}">\n` +
    `<div id="explorer-chart" data-testid="chart" data-x-kind="${chart.xKind}" data-x-field="${escapeHtml(view.x)}" data-x-label="${escapeHtml(view.x)}" data-y-label="${escapeHtml(view.y)}" ` +
    `data-view-href="${escapeHtml(viewHref(base, { ...view, tab: 'table' }))}" data-points="${escapeHtml(JSON.stringify(chart.points))}">` +
    `<p class="nil">The chart needs JavaScript; the table, facets and histograms work without it.</p></div>\n` +
    `<script src="${staticPath('uplot.js')}"${nonce}></script><script src="${staticPath('chart.js')}"${nonce}></script>\n`
  );
}
