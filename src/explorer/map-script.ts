/**
 * The map view's script (served at /api/explore/static/map.js): fetches the view's geometries
 * from the URL in `data-src` and draws them with Leaflet (loaded just before it, with
 * Leaflet.markercluster): points as circles, clustered when there are more than
 * `data-cluster-above`, lines and polygons whole, each linking to its record. Base tiles come
 * from `data-tile-url` when the service has one configured; without, the data is drawn on a
 * blank background. "Filter to the visible box" turns the map's bounds into a `$geoWithin`
 * polygon added to the view's typed query, and goes to the table of that view.
 *
 * It reads only data attributes and JSON, and writes text (never HTML) into the page.
 * Plain ES2017 in a string: it runs in the browser as is, without a build step.
 */
export const MAP_SCRIPT = String.raw`(function () {
  'use strict';
  var el = document.getElementById('explorer-map');
  var status = document.getElementById('explorer-map-status');
  var boxButton = document.getElementById('explorer-map-box');
  if (el === null || typeof L === 'undefined') return;
  var field = el.getAttribute('data-field');
  var recordBase = el.getAttribute('data-record-base');
  var clusterAbove = Number(el.getAttribute('data-cluster-above'));
  var tileUrl = el.getAttribute('data-tile-url');

  function say(text) { if (status !== null) status.textContent = text; }

  el.textContent = '';
  // A zoom range of its own: without a tile layer to give one, clustering needs it.
  var map = L.map(el, { preferCanvas: true, minZoom: 1, maxZoom: 19 });
  if (tileUrl) {
    // The attribution is text from the settings: escaped here, since Leaflet writes it as HTML.
    var attribution = document.createElement('span');
    attribution.textContent = el.getAttribute('data-tile-attribution') || '';
    L.tileLayer(tileUrl, { maxZoom: 19, attribution: attribution.innerHTML }).addTo(map);
  }
  map.setView([0, 0], 1);

  function popupFor(id) {
    var box = document.createElement('span');
    if (id === null) { box.textContent = '(record without a linkable _id)'; return box; }
    var link = document.createElement('a');
    link.href = recordBase + encodeURIComponent(id) + '/';
    link.textContent = id;
    box.appendChild(link);
    return box;
  }

  function draw(data) {
    var style = { radius: 4, color: '#2c6dac', weight: 1, fillColor: '#2c6dac', fillOpacity: 0.6 };
    var markers = data.points.map(function (p) {
      // The popup's link is made when it opens: tens of thousands of points need no element each.
      return L.circleMarker([p[1], p[0]], style).bindPopup(function () { return popupFor(p[2]); });
    });
    var clustered = markers.length > clusterAbove && typeof L.markerClusterGroup === 'function';
    var pointLayer = clustered ? L.markerClusterGroup({ chunkedLoading: true }) : L.featureGroup();
    if (clustered) pointLayer.addLayers(markers); else markers.forEach(function (m) { pointLayer.addLayer(m); });
    var shapeLayer = L.featureGroup(data.shapes.map(function (s) {
      return L.geoJSON(s.geometry, { style: { color: '#a30000', weight: 2 } }).bindPopup(function () { return popupFor(s.id); });
    }));
    pointLayer.addTo(map);
    shapeLayer.addTo(map);
    var bounds = L.latLngBounds([]);
    markers.forEach(function (m) { bounds.extend(m.getLatLng()); });
    if (data.shapes.length > 0) bounds.extend(shapeLayer.getBounds());
    if (bounds.isValid()) map.fitBounds(bounds, { padding: [20, 20], maxZoom: 14 });
    el.setAttribute('data-points', String(markers.length));
    el.setAttribute('data-shapes', String(data.shapes.length));
    el.setAttribute('data-clustered', String(clustered));
    el.setAttribute('data-drawn', 'true');
    if (boxButton !== null) boxButton.disabled = false;
  }

  function round(n) { return Math.round(n * 1e6) / 1e6; }

  function filterToBox() {
    var b = map.getBounds();
    var w = round(Math.max(-180, b.getWest())), e = round(Math.min(180, b.getEast()));
    var s = round(Math.max(-90, b.getSouth())), n = round(Math.min(90, b.getNorth()));
    // A polygon of one ring must fit in a hemisphere for $geoWithin.
    if (e - w >= 180) { say('Zoom in first: the box must span less than half the globe.'); return; }
    var within = {};
    within[field] = { $geoWithin: { $geometry: { type: 'Polygon', coordinates: [[[w, s], [e, s], [e, n], [w, n], [w, s]]] } } };
    var query = within;
    var typed = el.getAttribute('data-query') || '';
    if (typed.trim() !== '') query = { $and: [JSON.parse(typed), within] };
    var url = new URL(el.getAttribute('data-view-href'), window.location.href);
    url.searchParams.set('q', JSON.stringify(query));
    url.searchParams.delete('page');
    window.location.assign(url.pathname + url.search);
  }
  if (boxButton !== null) boxButton.addEventListener('click', filterToBox);

  say('Loading the geometries…');
  fetch(el.getAttribute('data-src'), { credentials: 'same-origin', headers: { Accept: 'application/json' } })
    .then(function (res) {
      if (!res.ok) throw new Error('the service answered ' + res.status);
      return res.json();
    })
    .then(function (data) {
      draw(data);
      say(data.points.length + data.shapes.length + ' geometries drawn' + (data.capped ? ' (the first ' + data.limit + ' matching records; more match).' : '.'));
    })
    .catch(function (err) {
      say('The map could not load its data: ' + (err instanceof Error ? err.message : String(err)));
      if (window.console) window.console.error(err);
    });
})();
`;
