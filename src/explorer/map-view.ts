/**
 * The map view: the GeoJSON geometries of the view's matching records drawn by Leaflet in the
 * browser (browser/map.ts), which fetches them from the view's geometries URL. The page says how
 * many records match and, past the map's limit, that only the first ones are drawn. Leaflet's
 * files are loaded by this view only.
 */
import { html, type Html } from '../render/html-template.js';
import { hiddenInputs, tabsHtml, viewHref } from './view-html.js';
import { staticPath } from './static-files.js';
import { viewSearch, withChanges, type ExplorerView } from './view-state.js';
import { withGeometry, type Total } from './explorer-reads.js';
import { parseQuery } from '../documents/query-params.js';
import { geometryFields, profileSample } from './schema.js';
import { SUGGESTION_SAMPLE_SIZE, type TabView } from './tab-view.js';
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

function fieldSelect(fields: readonly string[], chosen: string): Html {
  const options = fields.map((field) => html`<option value="${field}"${field === chosen && html` selected`}>${field}</option>`);
  return html`<label>Geometry field <select name="geo" data-testid="map-field">${options}</select></label>`;
}

function summary(total: Total | undefined, limit: number): Html | undefined {
  if (total === undefined) return undefined;
  if (!total.exact && total.why !== 'cap')
    return html`<p class="summary" data-testid="map-summary">The matching records were not counted in time.</p>\n`;
  const counted = total.exact ? numberText(total.n) : `more than ${numberText(total.n)}`;
  const capped = !total.exact || total.n > limit;
  const note = html`<p class="hint" data-testid="map-capped">The map draws the first ${numberText(limit)} of them: filter the view (or to the visible box) to see the others.</p>\n`;
  return html`<p class="summary" data-testid="map-summary">${counted} matching records have a geometry in this field.</p>\n${capped && note}`;
}

export function mapView(model: MapModel): Html {
  const { base, view, field } = model;
  if (field === '')
    return html`${tabsHtml(base, view)}<p class="summary" data-testid="map-summary">No GeoJSON geometry in a sample of the matching records.</p>\n`;
  const nonce = model.nonce === undefined ? undefined : html` nonce="${model.nonce}"`;
  const form = html`<section class="panel"><h2>Map</h2><form method="get" action="${base}" data-testid="map-form">${hiddenInputs(view, ['geo'])}${fieldSelect(model.geoFields, field)} <button type="submit">Draw</button> <button type="button" id="explorer-map-box" data-testid="map-filter-box" disabled>Filter to the visible box</button></form></section>\n`;
  const drawn = withChanges(view, { geo: field });
  const tiles =
    model.tiles.url === undefined
      ? undefined
      : html` data-tile-url="${model.tiles.url}" data-tile-attribution="${model.tiles.attribution}"`;
  return html`${tabsHtml(base, view)}${form}${summary(model.total, model.limit)}<p class="summary" id="explorer-map-status" data-testid="map-status" aria-live="polite"></p>
<link rel="stylesheet" href="${staticPath('leaflet.css')}"><link rel="stylesheet" href="${staticPath('markercluster.css')}">
<div id="explorer-map" data-testid="map" data-field="${field}" data-cluster-above="${CLUSTER_ABOVE}"${tiles} data-src="${`${model.dataPath}${viewSearch(drawn)}`}" data-record-base="${base}" data-query="${view.query}" data-view-href="${viewHref(base, withChanges(drawn, { tab: 'table' }))}"><p class="nil">The map needs JavaScript; the table, facets and histograms work without it.</p></div>
<script src="${staticPath('leaflet.js')}"${nonce}></script><script src="${staticPath('markercluster.js')}"${nonce}></script><script src="${staticPath('map.js')}"${nonce}></script>\n`;
}

export const mapTab: TabView<MapModel> = {
  async read({ reads, reader, base, view, query: viewQuery, geometriesPath, nonce, settings }) {
    const query = parseQuery(JSON.stringify({ filter: viewQuery.filter }), settings.maxQueryBytes);
    const profile = profileSample(await reads.sample(reader, query.filter, SUGGESTION_SAMPLE_SIZE));
    const found = geometryFields(profile);
    // A chosen field the sample happened to miss is still offered (and drawn).
    const geoFields = view.geo === '' || found.includes(view.geo) ? found : [view.geo, ...found];
    const field = view.geo === '' ? (geoFields[0] ?? '') : view.geo;
    const { tileUrl, tileAttribution, limit } = settings.explorerMap;
    const model = {
      base,
      dataPath: geometriesPath,
      view,
      nonce,
      geoFields,
      field,
      limit,
      tiles: { url: tileUrl, attribution: tileAttribution },
    };
    if (field === '') return model;
    return { ...model, total: await reads.total(reader, withGeometry(query.filter, field), 0) };
  },
  render: mapView,
};
