/**
 * The map view's script: fetches the view's geometries from the URL in `data-src` and draws them
 * with Leaflet (loaded just before it, with Leaflet.markercluster): points as circles, clustered
 * when there are more than `data-cluster-above`, lines and polygons whole, each linking to its
 * record. Base tiles come from `data-tile-url` when the service has one configured; without, the
 * data is drawn on a blank background. "Filter to the visible box" turns the map's bounds into a
 * `$geoWithin` polygon added to the view's typed query, and goes to the table of that view.
 *
 * It reads only data attributes and JSON, and writes text (never HTML) into the page.
 */
export {};

/** What the geometries endpoint answers: points as [lng, lat, id], other shapes whole. */
interface Geometries {
  points: [number, number, string | null][];
  shapes: { geometry: unknown; id: string | null }[];
  capped: boolean;
  limit: number;
}

function drawMap(el: HTMLElement): void {
  const status = document.getElementById('explorer-map-status');
  const boxButton = document.getElementById('explorer-map-box') as HTMLButtonElement | null;
  const field = el.getAttribute('data-field') ?? '';
  const recordBase = el.getAttribute('data-record-base') ?? '';
  const clusterAbove = Number(el.getAttribute('data-cluster-above'));
  const tileUrl = el.getAttribute('data-tile-url');

  function say(text: string): void {
    if (status !== null) status.textContent = text;
  }

  el.textContent = '';
  // A zoom range of its own: without a tile layer to give one, clustering needs it.
  const map = L.map(el, { preferCanvas: true, minZoom: 1, maxZoom: 19 });
  if (tileUrl) {
    // The attribution is text from the settings: escaped here, since Leaflet writes it as HTML.
    const attribution = document.createElement('span');
    attribution.textContent = el.getAttribute('data-tile-attribution') || '';
    L.tileLayer(tileUrl, { maxZoom: 19, attribution: attribution.innerHTML }).addTo(map);
  }
  map.setView([0, 0], 1);

  function popupFor(id: string | null): HTMLElement {
    const box = document.createElement('span');
    if (id === null) {
      box.textContent = '(record without a linkable _id)';
      return box;
    }
    const link = document.createElement('a');
    link.href = recordBase + encodeURIComponent(id) + '/';
    link.textContent = id;
    box.appendChild(link);
    return box;
  }

  function draw(data: Geometries): void {
    const style = { radius: 4, color: '#2c6dac', weight: 1, fillColor: '#2c6dac', fillOpacity: 0.6 };
    const markers = data.points.map((p) =>
      // The popup's link is made when it opens: tens of thousands of points need no element each.
      L.circleMarker([p[1], p[0]], style).bindPopup(() => popupFor(p[2])),
    );
    const clustered = markers.length > clusterAbove && typeof L.markerClusterGroup === 'function';
    const pointLayer =
      clustered && L.markerClusterGroup ? L.markerClusterGroup({ chunkedLoading: true }).addLayers(markers) : L.featureGroup(markers);
    const shapeLayer = L.featureGroup(
      data.shapes.map((s) => L.geoJSON(s.geometry, { style: { color: '#a30000', weight: 2 } }).bindPopup(() => popupFor(s.id))),
    );
    pointLayer.addTo(map);
    shapeLayer.addTo(map);
    const bounds = L.latLngBounds([]);
    markers.forEach((m) => bounds.extend(m.getLatLng()));
    if (data.shapes.length > 0) bounds.extend(shapeLayer.getBounds());
    if (bounds.isValid()) map.fitBounds(bounds, { padding: [20, 20], maxZoom: 14 });
    el.setAttribute('data-points', String(markers.length));
    el.setAttribute('data-shapes', String(data.shapes.length));
    el.setAttribute('data-clustered', String(clustered));
    el.setAttribute('data-drawn', 'true');
    if (boxButton !== null) boxButton.disabled = false;
  }

  const round = (n: number): number => Math.round(n * 1e6) / 1e6;

  function filterToBox(): void {
    const b = map.getBounds();
    const w = round(Math.max(-180, b.getWest()));
    const e = round(Math.min(180, b.getEast()));
    const s = round(Math.max(-90, b.getSouth()));
    const n = round(Math.min(90, b.getNorth()));
    // A polygon of one ring must fit in a hemisphere for $geoWithin.
    if (e - w >= 180) {
      say('Zoom in first: the box must span less than half the globe.');
      return;
    }
    const within: Record<string, unknown> = {};
    within[field] = {
      $geoWithin: {
        $geometry: {
          type: 'Polygon',
          coordinates: [
            [
              [w, s],
              [e, s],
              [e, n],
              [w, n],
              [w, s],
            ],
          ],
        },
      },
    };
    let query: unknown = within;
    const typed = el.getAttribute('data-query') || '';
    if (typed.trim() !== '') query = { $and: [JSON.parse(typed), within] };
    const url = new URL(el.getAttribute('data-view-href') ?? '', window.location.href);
    url.searchParams.set('q', JSON.stringify(query));
    url.searchParams.delete('page');
    window.location.assign(url.pathname + url.search);
  }
  if (boxButton !== null) boxButton.addEventListener('click', filterToBox);

  say('Loading the geometries…');
  fetch(el.getAttribute('data-src') ?? '', { credentials: 'same-origin', headers: { Accept: 'application/json' } })
    .then((res) => {
      if (!res.ok) throw new Error('the service answered ' + res.status);
      return res.json() as Promise<Geometries>;
    })
    .then((data) => {
      draw(data);
      say(
        data.points.length +
          data.shapes.length +
          ' geometries drawn' +
          (data.capped ? ' (the first ' + data.limit + ' matching records; more match).' : '.'),
      );
    })
    .catch((err: unknown) => {
      say('The map could not load its data: ' + (err instanceof Error ? err.message : String(err)));
      if (window.console) window.console.error(err);
    });
}

const mapElement = document.getElementById('explorer-map');
if (mapElement !== null && typeof L !== 'undefined') drawMap(mapElement);
