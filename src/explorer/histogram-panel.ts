/**
 * Histograms as inline SVG (presentation attributes only, so the strict Content-Security-Policy
 * allows them and no script is needed): one bar per bin, each a link that filters the view to
 * that bin's range, with the range and count as its tooltip. The SVG also carries the bin edges
 * and the view's URL for the brush (browser/histogram.ts), which filters by a dragged range of bins.
 */
import { html, type Html } from '../render/html-template.js';
import type { Histogram } from './histogram.js';
import { viewHref } from './view-html.js';
import { withChanges, type ExplorerView } from './view-state.js';
import { dateText, numberText } from './values.js';
import type { FilterRow } from './filters.js';

const WIDTH = 480;
const HEIGHT = 90;

function edgeText(histogram: Histogram, value: number): string {
  return histogram.kind === 'date' ? dateText(new Date(value)) : numberText(Number(value.toPrecision(6)));
}

/** A calendar bin by the name a reader gives it: `2024-06-03`, `week of 2024-06-03`, `2024-06`, `2024`. */
function calendarText(unit: NonNullable<Histogram['unit']>, from: number): string {
  const iso = new Date(from).toISOString();
  switch (unit) {
    case 'day':
      return iso.slice(0, 10);
    case 'week':
      return `week of ${iso.slice(0, 10)}`;
    case 'month':
      return iso.slice(0, 7);
    case 'year':
      return iso.slice(0, 4);
  }
}

/** A bin edge as the JSON a filter row carries. */
function edgeJson(histogram: Histogram, value: number): string {
  return histogram.kind === 'date' ? JSON.stringify({ $date: new Date(value).toISOString() }) : JSON.stringify(value);
}

function histogramSvg(base: string, view: ExplorerView, histogram: Histogram): Html {
  const { bins, field } = histogram;
  const highest = Math.max(1, ...bins.map((bin) => bin.n));
  const barWidth = WIDTH / Math.max(1, bins.length);
  const bars = bins.map((bin, i) => {
    // The last bin holds the largest value itself, unless calendar bins end on the next unit's start.
    const last = i === bins.length - 1 && histogram.unit === undefined;
    const rows: FilterRow[] = [
      ...view.rows,
      { field, op: 'gte', value: edgeJson(histogram, bin.from) },
      { field, op: last ? 'lte' : 'lt', value: edgeJson(histogram, bin.to) },
    ];
    const height = bin.n === 0 ? 0 : Math.max(1, Math.round((bin.n / highest) * HEIGHT));
    const range =
      histogram.unit === undefined
        ? `${edgeText(histogram, bin.from)} – ${edgeText(histogram, bin.to)}`
        : calendarText(histogram.unit, bin.from);
    const title = `${range}: ${numberText(bin.n)}`;
    return html`<a href="${viewHref(base, withChanges(view, { rows }))}" data-testid="histogram-bar"><title>${title}</title><rect x="${(i * barWidth).toFixed(1)}" y="0" width="${barWidth.toFixed(1)}" height="${HEIGHT}" fill="transparent"></rect><rect x="${(i * barWidth + 1).toFixed(1)}" y="${HEIGHT - height}" width="${Math.max(1, barWidth - 2).toFixed(1)}" height="${height}" fill="#2c6dac"></rect></a>`;
  });
  const edges = [bins[0]?.from ?? 0, ...bins.map((bin) => bin.to)];
  const unit = histogram.unit === undefined ? undefined : html`data-unit="${histogram.unit}" `;
  const brush = html`data-brush="true" data-kind="${histogram.kind}" data-field="${field}" data-edges="${JSON.stringify(edges)}" data-last-op="${histogram.unit === undefined ? 'lte' : 'lt'}" ${unit}data-view-href="${viewHref(base, withChanges(view, {}))}"`;
  return html`<svg width="${WIDTH}" height="${HEIGHT + 2}" viewBox="0 0 ${WIDTH} ${HEIGHT + 2}" role="img" aria-label="${`Histogram of ${field}`}" ${brush}>${bars}</svg><div class="axis"><span>${edgeText(histogram, bins[0]?.from ?? 0)}</span><span>${edgeText(histogram, bins.at(-1)?.to ?? 0)}</span></div>`;
}

export function histogramBox(base: string, view: ExplorerView, histogram: Histogram | string, field: string): Html {
  const remove = viewHref(base, withChanges(view, { histograms: view.histograms.filter((f) => f !== field), page: view.page }));
  const body =
    typeof histogram === 'string'
      ? html`<p class="nil">${histogram}</p>`
      : histogram.bins.length === 0
        ? html`<p class="nil">no values</p>`
        : html`${histogramSvg(base, view, histogram)}<small>${numberText(histogram.total)} ${histogram.kind === 'date' ? 'dates' : 'numbers'}${histogram.unit !== undefined && `, one bar a ${histogram.unit} (UTC)`}; click a bar, or drag across bars, to filter by a range</small>`;
  return html`<div class="facet histogram" data-testid="histogram" data-field="${field}"><h3><span title="${field}">${field}</span> <a href="${remove}" title="remove histogram">✕</a></h3>${body}</div>`;
}
