/** Facets: the top values of chosen fields with their counts, each a link that filters by it; suggested fields to add. */
import escapeHtml from 'escape-html';
import type { FacetValue } from './explorer-reads.js';
import type { Histogram } from './histogram.js';
import { histogramBox } from './histogram-panel.js';
import { hiddenInputs, viewHref } from './view-html.js';
import { FACET_SIZES, withChanges, type ExplorerView } from './view-state.js';
import { numberText, showValue } from './values.js';

export interface FacetPanelModel {
  facets: Map<string, FacetValue[]>;
  /** By field: the histogram, or why there is none. */
  histograms: Map<string, Histogram | string>;
  suggested: readonly string[];
  /** Number and date fields not shown as histograms yet. */
  suggestedHistograms: readonly string[];
}

export function facetPanel(base: string, view: ExplorerView, model: FacetPanelModel): string {
  const { facets, suggested } = model;
  const boxes = [...facets].map(([field, found]) => {
    // One value more than shown is read: then there are more, and a "more" link shows the next size up.
    const values = found.slice(0, view.facetSize);
    const larger = FACET_SIZES.find((size) => size > view.facetSize);
    const more =
      found.length > view.facetSize && larger !== undefined
        ? `<li><a href="${escapeHtml(viewHref(base, withChanges(view, { facetSize: larger, page: view.page })))}" data-testid="facet-more" rel="nofollow">more…</a></li>`
        : '';
    const items = values.map(({ value, n }) => {
      const shown = showValue(value === null ? null : value);
      const label = shown.html === '' ? '<span class="nil">(missing)</span>' : shown.html;
      const text =
        shown.matchJson === undefined
          ? label
          : `<a href="${escapeHtml(viewHref(base, withChanges(view, { rows: [...view.rows, { field, op: 'eq', value: shown.matchJson }] })))}" data-testid="facet-value">${label}</a>`;
      return `<li><span>${text}</span><span class="n">${escapeHtml(numberText(n))}</span></li>`;
    });
    const remove = viewHref(base, withChanges(view, { facets: view.facets.filter((f) => f !== field), page: view.page }));
    return (
      `<div class="facet" data-testid="facet" data-field="${escapeHtml(field)}"><h3><span title="${escapeHtml(field)}">${escapeHtml(field)}</span> <a href="${escapeHtml(remove)}" title="remove facet">✕</a></h3>` +
      `<ol>${items.join('') || '<li><span class="nil">no values</span></li>'}${more}</ol></div>`
    );
  });
  const suggestions = suggested.map(
    (field) =>
      `<a href="${escapeHtml(viewHref(base, withChanges(view, { facets: [...view.facets, field], page: view.page })))}" data-testid="suggested-facet">${escapeHtml(field)}</a>`,
  );
  const histograms = [...model.histograms].map(([field, histogram]) => histogramBox(base, view, histogram, field));
  const histogramSuggestions = model.suggestedHistograms.map(
    (field) =>
      `<a href="${escapeHtml(viewHref(base, withChanges(view, { histograms: [...view.histograms, field], page: view.page })))}" data-testid="suggested-histogram">${escapeHtml(field)}</a>`,
  );
  const add =
    `<form method="get" action="${escapeHtml(base)}">${hiddenInputs(view, [])}` +
    `<input type="text" name="facet" list="explorer-fields" placeholder="field" aria-label="facet field"> <button type="submit">Add facet</button></form>`;
  return (
    `<section class="panel"><h2>Facets</h2>` +
    (boxes.length + histograms.length > 0 ? `<div class="facets">${boxes.join('')}${histograms.join('')}</div>` : '') +
    (suggestions.length > 0 ? `<p>Suggested: ${suggestions.join(' · ')}</p>` : '') +
    (histogramSuggestions.length > 0 ? `<p>Histograms: ${histogramSuggestions.join(' · ')}</p>` : '') +
    `${add}</section>\n`
  );
}
