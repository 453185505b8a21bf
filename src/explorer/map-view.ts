/**
 * The map view: the GeoJSON geometries of the view's matching records drawn by Leaflet in the
 * browser (browser/map.ts), which fetches them from the view's geometries URL. The page says how
 * many records match and, past the map's limit, that only the first ones are drawn. Leaflet's
 * files are loaded by this view only.
 */
import escapeHtml from 'escape-html';
import { hiddenInputs, tabsHtml, viewHref } from './view-html.js';
import { staticPath } from './static-files.js';
import { viewSearch, withChanges, type ExplorerView } from './view-state.js';
import type { Total } from './explorer-reads.js';
import { numberText } from './values.js';

/** Past this many points the map clusters them (drawing each one stays quick up to about here). */
export const CLUSTER_ABOVE = 5_000;

export interface MapModel {
  base: string;
  /** Where the map's script reads the geometries (the view's query string is added). */
  dataPath: string;
  view: ExplorerView;
  nonce: string | undefined;
  /** Fields holding GeoJSON geometries in a sample of the matching records. */
  geoFields: readonly string[];
  /** The field drawn ('' when the sample has none). */
  field: string;
  /** How many records match the view with a geometry in the field, and how many the map draws at most. */
  total?: Total;
  limit: number;
  tiles: { url: string | undefined; attribution: string };
}

function fieldSelect(fields: readonly string[], chosen: string): string {
  const options = fields.map(
    (field) => `<option value="${escapeHtml(field)}"${field === chosen ? ' selected' : ''}>${escapeHtml(field)}</option>`,
  );
  return `<label>Geometry field <select name="geo" data-testid="map-field">${options.join('')}</select></label>`;
}

function summary(total: Total | undefined, limit: number): string {
  if (total === undefined) return '';
  if (!total.exact && total.why !== 'cap')
    return `<p class="summary" data-testid="map-summary">The matching records were not counted in time.</p>\n`;
  const counted = total.exact ? numberText(total.n) : `more than ${numberText(total.n)}`;
  const capped = !total.exact || total.n > limit;
  return (
    `<p class="summary" data-testid="map-summary">${counted} matching records have a geometry in this field.</p>\n` +
    (capped
      ? `<p class="hint" data-testid="map-capped">The map draws the first ${numberText(limit)} of them: filter the view (or to the visible box) to see the others.</p>\n`
      : '')
  );
}

export function mapView(model: MapModel): string {
  const { base, view, field } = model;
  if (field === '')
    return (
      tabsHtml(base, view) + '<p class="summary" data-testid="map-summary">No GeoJSON geometry in a sample of the matching records.</p>\n'
    );
  const nonce = model.nonce === undefined ? '' : ` nonce="${escapeHtml(model.nonce)}"`;
  const form =
    `<section class="panel"><h2>Map</h2><form method="get" action="${escapeHtml(base)}" data-testid="map-form">${hiddenInputs(view, ['geo'])}` +
    `${fieldSelect(model.geoFields, field)} <button type="submit">Draw</button> ` +
    `<button type="button" id="explorer-map-box" data-testid="map-filter-box" disabled>Filter to the visible box</button></form></section>\n`;
  const drawn = withChanges(view, { geo: field });
  const tiles =
    model.tiles.url === undefined
      ? ''
      : ` data-tile-url="${escapeHtml(model.tiles.url)}" data-tile-attribution="${escapeHtml(model.tiles.attribution)}"`;
  return (
    tabsHtml(base, view) +
    form +
    summary(model.total, model.limit) +
    `<p class="summary" id="explorer-map-status" data-testid="map-status" aria-live="polite"></p>\n` +
    `<link rel="stylesheet" href="${staticPath('leaflet.css')}"><link rel="stylesheet" href="${staticPath('markercluster.css')}">\n` +
    `<div id="explorer-map" data-testid="map" data-field="${escapeHtml(field)}" data-cluster-above="${CLUSTER_ABOVE}"${tiles} ` +
    `data-src="${escapeHtml(`${model.dataPath}${viewSearch(drawn)}`)}" data-record-base="${escapeHtml(base)}" ` +
    `data-query="${escapeHtml(view.query)}" data-view-href="${escapeHtml(viewHref(base, withChanges(drawn, { tab: 'table' })))}">` +
    `<p class="nil">The map needs JavaScript; the table, facets and histograms work without it.</p></div>\n` +
    `<script src="${staticPath('leaflet.js')}"${nonce}></script><script src="${staticPath('markercluster.js')}"${nonce}></script>` +
    `<script src="${staticPath('map.js')}"${nonce}></script>\n`
  );
}
