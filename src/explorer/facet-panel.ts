/** Facets: the top values of chosen fields with their counts, each a link that filters by it; suggested fields to add. */
import { html, joinHtml, raw, type Html } from '../render/html-template.js';
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

export function facetPanel(base: string, view: ExplorerView, model: FacetPanelModel): Html {
  const { facets, suggested } = model;
  const boxes = [...facets].map(([field, found]) => {
    // One value more than shown is read: then there are more, and a "more" link shows the next size up.
    const values = found.slice(0, view.facetSize);
    const larger = FACET_SIZES.find((size) => size > view.facetSize);
    const more =
      found.length > view.facetSize && larger !== undefined
        ? html`<li><a href="${viewHref(base, withChanges(view, { facetSize: larger, page: view.page }))}" data-testid="facet-more" rel="nofollow">more…</a></li>`
        : undefined;
    const items = values.map(({ value, n }) => {
      const shown = showValue(value === null ? null : value);
      // The value's HTML is written by showValue, which escapes what it shows.
      const label = shown.html === '' ? html`<span class="nil">(missing)</span>` : raw(shown.html);
      const text =
        shown.matchJson === undefined
          ? label
          : html`<a href="${viewHref(base, withChanges(view, { rows: [...view.rows, { field, op: 'eq', value: shown.matchJson }] }))}" data-testid="facet-value">${label}</a>`;
      return html`<li><span>${text}</span><span class="n">${numberText(n)}</span></li>`;
    });
    const remove = viewHref(base, withChanges(view, { facets: view.facets.filter((f) => f !== field), page: view.page }));
    return html`<div class="facet" data-testid="facet" data-field="${field}"><h3><span title="${field}">${field}</span> <a href="${remove}" title="remove facet">✕</a></h3><ol>${items.length > 0 ? items : html`<li><span class="nil">no values</span></li>`}${more}</ol></div>`;
  });
  const suggestions = suggested.map(
    (field) =>
      html`<a href="${viewHref(base, withChanges(view, { facets: [...view.facets, field], page: view.page }))}" data-testid="suggested-facet">${field}</a>`,
  );
  const histograms = [...model.histograms].map(([field, histogram]) => histogramBox(base, view, histogram, field));
  const histogramSuggestions = model.suggestedHistograms.map(
    (field) =>
      html`<a href="${viewHref(base, withChanges(view, { histograms: [...view.histograms, field], page: view.page }))}" data-testid="suggested-histogram">${field}</a>`,
  );
  const add = html`<form method="get" action="${base}">${hiddenInputs(view, [])}<input type="text" name="facet" list="explorer-fields" placeholder="field" aria-label="facet field"> <button type="submit">Add facet</button></form>`;
  return html`<section class="panel"><h2>Facets</h2>${boxes.length + histograms.length > 0 && html`<div class="facets">${boxes}${histograms}</div>`}${suggestions.length > 0 && html`<p>Suggested: ${joinHtml(suggestions, ' · ')}</p>`}${histogramSuggestions.length > 0 && html`<p>Histograms: ${joinHtml(histogramSuggestions, ' · ')}</p>`}${add}</section>\n`;
}
