/**
 * The explorer's map tab through the real HTTP server and database: the page (its geometry
 * field found in a sample, Leaflet's files loaded from the service, the note when more records
 * match than the map draws) and its geometries endpoint, both honouring the view's filters and
 * the caller's rights; and the tile server's host in the Content-Security-Policy exactly when
 * one is configured.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { fixtureRecord, insertFixture } from '../../support/explorer-fixture.js';
import { staticPath } from '../../../src/explorer/static-files.js';

const RECORDS = 3_000;
const MAP_LIMIT = 2_000;
const TILE_URL = 'https://tiles.example.org/osm/{z}/{x}/{y}.png';
let app: TestApp;
/** The same service without a tile server. */
let plainApp: TestApp;
let rootToken: string;
let readerToken: string;
let nobodyToken: string;
let db: string;
const col = 'readings';
const base = () => `/api/explore/data_store/${db}/${col}/`;

const page = (path: string, token: string = readerToken, on: TestApp = app) => call(on.url, 'GET', path, { token, accept: 'text/html' });
const geometries = (search: string, token: string = readerToken) =>
  call(app.url, 'GET', `/api/explore/geometries/data_store/${db}/${col}/?${search}`, { token });

interface MapData {
  field: string;
  points: [number, number, string | null][];
  shapes: unknown[];
  capped: boolean;
  limit: number;
}

/** An attribute of the map element, entities decoded. */
function mapAttribute(html: string, name: string): string | undefined {
  const value = new RegExp(`<div id="explorer-map"[^>]* ${name}="([^"]*)"`).exec(html)?.[1];
  return value
    ?.replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The positions of fixture records 0..RECORDS-1 that `keep` selects, as sorted "lon,lat" texts. */
function fixturePositions(keep: (i: number) => boolean): string[] {
  const out: string[] = [];
  for (let i = 0; i < RECORDS; i++) {
    if (!keep(i)) continue;
    const [lon, lat] = (fixtureRecord(i).loc as { coordinates: [number, number] }).coordinates;
    out.push(`${lon},${lat}`);
  }
  return out.sort();
}

const positionsOf = (data: MapData): string[] => data.points.map(([lon, lat]) => `${lon},${lat}`).sort();

beforeAll(async () => {
  app = await startTestApp({
    EXPLORER_TILE_URL: TILE_URL,
    EXPLORER_TILE_ATTRIBUTION: '© <Example> tiles',
    EXPLORER_MAP_LIMIT: String(MAP_LIMIT),
  });
  plainApp = await startTestApp();
  db = `${app.prefix}explore_map`;
  await app.users.createUser({ username: 'root', password: 'pw-root-12345', isSuperuser: true });
  rootToken = await app.users.tokenFor('root');
  await insertFixture(app.url, rootToken, db, col, RECORDS);
  expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token: rootToken, body: { collection: 'secret' } })).status).toBe(
    201,
  );
  await app.users.createUser({ username: 'reader', password: 'pw-reader-12345', permissions: [`data_store.${db}.${col}.safe`] });
  readerToken = await app.users.tokenFor('reader');
  await app.users.createUser({ username: 'nobody', password: 'pw-nobody-12345', permissions: [] });
  nobodyToken = await app.users.tokenFor('nobody');
}, 120_000);

afterAll(async () => {
  if (app !== undefined) {
    await call(app.url, 'POST', '/api/data_store/data/', { token: rootToken, body: { database: db, action: 'delete' } }).catch(
      () => undefined,
    );
    await app.close();
  }
  await plainApp?.close();
});

describe('the map tab', () => {
  it('finds the GeoJSON field, loads Leaflet from the service, and notes that the map draws only the first records', async () => {
    const res = await page(`${base()}?tab=map`);
    expect(res.status, res.text).toBe(200);
    expect(res.text).toContain('<option value="loc" selected>loc</option>');
    expect(mapAttribute(res.text, 'data-field')).toBe('loc');
    expect(mapAttribute(res.text, 'data-src')).toBe(`/api/explore/geometries/data_store/${db}/${col}/?tab=map&geo=loc`);
    expect(mapAttribute(res.text, 'data-tile-url')).toBe(TILE_URL);
    expect(mapAttribute(res.text, 'data-tile-attribution')).toBe('© <Example> tiles');
    expect(res.text).not.toContain('<Example>');
    const nonce = /'nonce-([^']+)'/.exec(res.headers.get('content-security-policy') ?? '')?.[1];
    for (const file of ['leaflet.js', 'markercluster.js', 'map.js'] as const) {
      expect(res.text).toContain(`<script src="${staticPath(file)}" nonce="${nonce}"></script>`);
    }
    expect(res.text).toMatch(/data-testid="map-summary">3000 matching records have a geometry/);
    expect(res.text).toContain(`data-testid="map-capped">The map draws the first ${MAP_LIMIT} of them`);
    // The other tabs load none of the map's code.
    for (const tab of ['', '?tab=schema', '?tab=chart&x=when&y=reading.temp']) {
      const other = await page(`${base()}${tab}`);
      expect(other.status).toBe(200);
      expect(other.text).not.toMatch(/leaflet|markercluster|map\.js/);
    }
  });

  it('narrows to the view filter: its count, no note under the limit, and the filter carried to the geometries', async () => {
    const res = await page(`${base()}?tab=map&f=kind&op=eq&v=%22rain%22`);
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/data-testid="map-summary">600 matching records/);
    expect(res.text).not.toContain('data-testid="map-capped"');
    expect(mapAttribute(res.text, 'data-src')).toBe(
      `/api/explore/geometries/data_store/${db}/${col}/?tab=map&f=kind&op=eq&v=%22rain%22&geo=loc`,
    );
    expect(mapAttribute(res.text, 'data-view-href')).toBe(`${base()}?f=kind&op=eq&v=%22rain%22&geo=loc`);
  });

  it('says when the sample has no geometry, and shows a refused filter beside the filter', async () => {
    const none = await page(`${base()}?tab=map&f=kind&op=eq&v=%22none%22`);
    expect(none.status).toBe(200);
    expect(none.text).toContain('No GeoJSON geometry in a sample of the matching records.');
    expect(none.text).not.toContain('<script');
    const refused = await page(`${base()}?tab=map&q=${encodeURIComponent('{"kind": {"$where": "1"}}')}`);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('data-testid="view-error"');
  });

  it('answers a caller without read rights with the error page, and anonymous callers as the API does', async () => {
    const denied = await page(`${base()}?tab=map`, nobodyToken);
    expect(denied.status).toBe(403);
    expect(denied.text).not.toContain('explorer-map');
    // Anonymous callers get what the API gives them for the same collection (the area's anonymous-read setting).
    const anonymous = await call(app.url, 'GET', `${base()}?tab=map`, { accept: 'text/html' });
    const apiAnonymous = await call(app.url, 'GET', `/api/data_store/data/${db}/${col}/`, { accept: 'text/html' });
    expect(anonymous.status).toBe(apiAnonymous.status);
    expect([401, 403]).toContain(anonymous.status);
    expect((await page(`/api/explore/data_store/${db}/secret/?tab=map`)).status).toBe(403);
  });
});

describe('the geometries endpoint', () => {
  it('reads the first records up to the limit, the geometry and the id only, and says it is capped', async () => {
    const res = await geometries('geo=loc');
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const data = res.json as MapData;
    expect(data).toMatchObject({ field: 'loc', capped: true, limit: MAP_LIMIT, shapes: [] });
    expect(data.points).toHaveLength(MAP_LIMIT);
    expect(data.points.every(([, , id]) => typeof id === 'string' && /^[0-9a-f]{24}$/.test(id))).toBe(true);
  });

  it('honours the filter rows and the typed query, $geoWithin included', async () => {
    const rain = (await geometries('geo=loc&f=kind&op=eq&v=%22rain%22')).json as MapData;
    expect(rain.capped).toBe(false);
    expect(positionsOf(rain)).toEqual(fixturePositions((i) => i % 5 === 0));
    const box = {
      type: 'Polygon',
      coordinates: [
        [
          [-100.05, 29.95],
          [-99.45, 29.95],
          [-99.45, 31.05],
          [-100.05, 31.05],
          [-100.05, 29.95],
        ],
      ],
    };
    const q = encodeURIComponent(JSON.stringify({ loc: { $geoWithin: { $geometry: box } } }));
    const within = (await geometries(`geo=loc&q=${q}`)).json as MapData;
    const api = await call(
      app.url,
      'GET',
      `/api/data_store/data/${db}/${col}/?query=${encodeURIComponent(JSON.stringify({ filter: { loc: { $geoWithin: { $geometry: box } } } }))}`,
      {
        token: readerToken,
      },
    );
    expect(api.status, api.text).toBe(200);
    expect(within.points.length).toBe(api.json.count);
    expect(within.points.length).toBeGreaterThan(0);
    expect(within.points.every(([lon, lat]) => lon >= -100 && lon <= -99.5 && lat >= 30 && lat <= 31)).toBe(true);
    const tableView = await page(`${base()}?q=${q}`);
    expect(tableView.text).toContain(`of ${within.points.length} record`);
  });

  it('refuses callers without read rights, a missing field and a refused filter, in JSON', async () => {
    const denied = await geometries('geo=loc', nobodyToken);
    expect(denied.status).toBe(403);
    expect(denied.headers.get('content-type')).toContain('application/json');
    expect(denied.text).not.toContain('coordinates');
    const apiAnonymous = await call(app.url, 'GET', `/api/data_store/data/${db}/${col}/`);
    const anonymous = await call(app.url, 'GET', `/api/explore/geometries/data_store/${db}/${col}/?geo=loc`);
    expect(anonymous.status).toBe(apiAnonymous.status);
    expect([401, 403]).toContain(anonymous.status);
    expect((await call(app.url, 'GET', `/api/explore/geometries/data_store/${db}/secret/?geo=loc`, { token: readerToken })).status).toBe(
      403,
    );
    const noField = await geometries('');
    expect(noField.status).toBe(400);
    expect(noField.headers.get('content-type')).toContain('application/json');
    expect((await geometries(`geo=loc&q=${encodeURIComponent('{"kind": {"$where": "1"}}')}`)).status).toBe(400);
  });
});

describe("the map's files and the tile server in the Content-Security-Policy", () => {
  it("serves Leaflet, Leaflet.markercluster and the map's script, within their own size budget", async () => {
    let gzipped = 0;
    for (const [file, type] of [
      ['leaflet.js', 'application/javascript'],
      ['markercluster.js', 'application/javascript'],
      ['map.js', 'application/javascript'],
      ['leaflet.css', 'text/css'],
      ['markercluster.css', 'text/css'],
    ] as const) {
      const served = await call(app.url, 'GET', `/api/explore/static/${file}`, { accept: '*/*' });
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toContain(type);
      if (type === 'application/javascript') gzipped += gzipSync(served.text).length;
    }
    // The map's scripts on top of the explorer's 150 KB budget: 80 KB gzipped.
    expect(gzipped).toBeLessThan(80 * 1024);
  });

  it('allows images from exactly the tile host when one is configured, and from nowhere else when not', async () => {
    const res = await page(`${base()}?tab=map`);
    const policy = res.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("img-src 'self' data: https://tiles.example.org; ");
    expect(policy).not.toMatch(/(script|connect|style|default)-src[^;]*example/);
    const plain = await call(plainApp.url, 'GET', '/api/', { accept: 'text/html' });
    expect(plain.headers.get('content-security-policy')).toContain("img-src 'self' data:; ");
  });
});

describe('the map tab without a tile server', () => {
  it('draws on a blank background: no tile URL on the page', async () => {
    await plainApp.users.createUser({ username: 'root', password: 'pw-root-12345', isSuperuser: true });
    const token = await plainApp.users.tokenFor('root');
    const plainDb = `${plainApp.prefix}explore_plain`;
    await insertFixture(plainApp.url, token, plainDb, col, 10);
    const res = await page(`/api/explore/data_store/${plainDb}/${col}/?tab=map`, token, plainApp);
    expect(res.status).toBe(200);
    expect(mapAttribute(res.text, 'data-field')).toBe('loc');
    expect(mapAttribute(res.text, 'data-tile-url')).toBeUndefined();
    expect(res.headers.get('content-security-policy')).toContain("img-src 'self' data:; ");
    await call(plainApp.url, 'POST', '/api/data_store/data/', { token, body: { database: plainDb, action: 'delete' } });
  });
});
