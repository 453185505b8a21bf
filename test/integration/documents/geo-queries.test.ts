/**
 * Geospatial filters in every kind of read, through the real server and engine: `$near` and
 * `$nearSphere` (with `$maxDistance`) in a paged read with its count, nearest first, and in the
 * NDJSON and CSV exports; `$geoWithin` and `$geoIntersects` likewise. A count cannot run `$near`
 * as it is (it runs inside an aggregation, where MongoDB refuses it): these reads were 400s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';

let app: TestApp;
let token: string;
let base: string;

const q = (value: unknown) => encodeURIComponent(JSON.stringify(value));
const CENTER = [-97.44, 35.22];
/** Stations on a line eastwards from CENTER, about 11 km apart (0.1 degree of longitude at 35°N ≈ 9.1 km). */
const STATIONS = Array.from({ length: 12 }, (_, i) => ({
  name: `s${String(i).padStart(2, '0')}`,
  loc: { type: 'Point', coordinates: [CENTER[0]! + 0.1 * i + 0.01, CENTER[1]] },
}));
const near = (maxDistance?: number, operator = '$near') => ({
  filter: {
    loc: {
      [operator]: {
        $geometry: { type: 'Point', coordinates: CENTER },
        ...(maxDistance === undefined ? {} : { $maxDistance: maxDistance }),
      },
    },
  },
});

beforeAll(async () => {
  app = await startTestApp();
  await app.users.createUser({ username: 'geo-root', password: 'pw-superuser-1', isSuperuser: true });
  token = await app.users.tokenFor('geo-root');
  const db = uniqueName('geo');
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db } })).status).toBe(201);
  expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token, body: { collection: 'stations' } })).status).toBe(201);
  base = `/api/data_store/data/${db}/stations/`;
  // Inserted farthest first, so that an answer in insertion order is not nearest first.
  const inserted = await call(app.url, 'POST', base, { token, body: [...STATIONS].reverse() });
  expect(inserted.status, inserted.text).toBe(201);
  const index = await call(app.url, 'POST', `/api/data_store/indexes/${db}/stations/`, { token, body: { keys: { loc: '2dsphere' } } });
  expect(index.status, index.text).toBe(201);
});

afterAll(async () => {
  await app?.close();
});

describe('$near and $nearSphere', () => {
  it.each(['$near', '$nearSphere'])('%s pages nearest first and counts what it finds', async (operator) => {
    // 50 km: stations 0-5 (0.01 .. 0.51 degrees east, under 47 km).
    const res = await call(app.url, 'GET', `${base}?page_size=4&query=${q(near(50_000, operator))}`, { token });
    expect(res.status, res.text).toBe(200);
    expect(res.json.count).toBe(6);
    expect(res.json.results.map((r: { name: string }) => r.name)).toEqual(['s00', 's01', 's02', 's03']);
    const second = await call(app.url, 'GET', `${base}?page_size=4&page=2&query=${q(near(50_000, operator))}`, { token });
    expect(second.json.results.map((r: { name: string }) => r.name)).toEqual(['s04', 's05']);
  });

  it('without a maximum distance, counts every record with a geometry', async () => {
    const res = await call(app.url, 'GET', `${base}?page_size=3&query=${q(near())}`, { token });
    expect(res.status, res.text).toBe(200);
    expect(res.json.count).toBe(STATIONS.length);
    expect(res.json.results.map((r: { name: string }) => r.name)).toEqual(['s00', 's01', 's02']);
  });

  it('without a 2dsphere index on the field, is a 400 that says which index to create', async () => {
    const query = q({ filter: { elsewhere: { $near: { $geometry: { type: 'Point', coordinates: CENTER }, $maxDistance: 1000 } } } });
    for (const format of ['json', 'ndjson', 'csv']) {
      const res = await call(app.url, 'GET', `${base}?format=${format}&query=${query}`, { token });
      expect(res.status, res.text).toBe(400);
      expect(JSON.parse(res.text).error.message).toMatch(/"elsewhere": "2dsphere"/);
    }
  });

  it('streams nearest first as NDJSON and CSV', async () => {
    const ndjson = await call(app.url, 'GET', `${base}?format=ndjson&query=${q(near(30_000))}`, { token });
    expect(ndjson.status, ndjson.text).toBe(200);
    const names = ndjson.text
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { name: string }).name);
    expect(names).toEqual(['s00', 's01', 's02', 's03']);
    const csv = await call(app.url, 'GET', `${base}?format=csv&fields=name&query=${q(near(30_000))}`, { token });
    expect(csv.status, csv.text).toBe(200);
    expect(csv.text).toBe('name\r\ns00\r\ns01\r\ns02\r\ns03\r\n');
  });
});

describe('$geoWithin and $geoIntersects', () => {
  const box = {
    type: 'Polygon',
    coordinates: [
      [
        [-97.3, 35.0],
        [-97.0, 35.0],
        [-97.0, 35.5],
        [-97.3, 35.5],
        [-97.3, 35.0],
      ],
    ],
  };

  it.each(['$geoWithin', '$geoIntersects'])('%s filters, counts and streams', async (operator) => {
    const query = q({ filter: { loc: { [operator]: { $geometry: box } } }, sort: { name: 1 } });
    const res = await call(app.url, 'GET', `${base}?query=${query}`, { token });
    expect(res.status, res.text).toBe(200);
    // Longitudes -97.29 .. -97.03: stations 2-4.
    expect(res.json.count).toBe(3);
    expect(res.json.results.map((r: { name: string }) => r.name)).toEqual(['s02', 's03', 's04']);
    const csv = await call(app.url, 'GET', `${base}?format=csv&fields=name&query=${query}`, { token });
    expect(csv.text).toBe('name\r\ns02\r\ns03\r\ns04\r\n');
  });
});
