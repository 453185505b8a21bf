/**
 * What research data needs from the database engine, through the real HTTP server: nested arrays
 * and GeoJSON round-trip through every write and read path and every renderer; aggregations
 * compute every accumulator of a `$group`; joins (`$lookup`, `$facet`, `$unionWith`) return the
 * joined data to a caller allowed to read both collections and are refused otherwise. Expected
 * values are computed here from the inserted data, not copied from a response.
 */
import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';

let app: TestApp;
let token: string;
let reader: string;
let db: string;
const BASE = '/api/data_store/data';
const q = (v: unknown) => encodeURIComponent(JSON.stringify(v));
const get = (path: string, opts: Parameters<typeof call>[3] = {}) => call(app.url, 'GET', path, { token, ...opts });
const send = (method: string, path: string, body: unknown, as = token) => call(app.url, method, path, { token: as, body });

const polygon = {
  type: 'Polygon',
  coordinates: [
    [
      [-97.5, 35.2],
      [-97.4, 35.2],
      [-97.4, 35.3],
      [-97.5, 35.2],
    ],
  ],
};
const matrix = [
  [1, 2, 3],
  [4, 5, 6],
  [[7], [8, [9]]],
];

beforeAll(async () => {
  app = await startTestApp();
  await app.users.createUser({ username: 'owner', password: 'correct horse battery', isSuperuser: true });
  token = await app.users.tokenFor('owner');
  db = `${app.prefix}engine`;
  expect((await send('POST', `${BASE}/`, { database: db })).status).toBe(201);
  for (const collection of ['shapes', 'readings', 'stations', 'private']) {
    expect((await send('POST', `${BASE}/${db}/`, { collection })).status).toBe(201);
  }
  // A researcher who may read readings and stations, not private.
  await app.users.createUser({
    username: 'reader',
    password: 'pw-reader-123',
    permissions: [`data_store.${db}.readings.safe`, `data_store.${db}.stations.safe`],
  });
  reader = await app.users.tokenFor('reader');
});

afterAll(async () => {
  await app?.close();
});

describe('nested arrays and GeoJSON', () => {
  it('round-trip through insert, GET, PUT, PATCH and a query on nested values', async () => {
    const created = await send('POST', `${BASE}/${db}/shapes/`, { name: 'field-1', geometry: polygon, matrix });
    expect(created.status).toBe(201);
    const id = created.json._id as string;
    const path = `${BASE}/${db}/shapes/${id}/`;

    const read = await get(path);
    expect(read.status).toBe(200);
    expect(read.json).toEqual({ _id: id, name: 'field-1', geometry: polygon, matrix });

    const replacedMatrix = [
      [0, 0],
      [0, [1, [2, [3]]]],
    ];
    const replaced = await send('PUT', path, { name: 'field-1', geometry: polygon, matrix: replacedMatrix });
    expect(replaced.status).toBe(200);
    expect((await get(path)).json.matrix).toEqual(replacedMatrix);

    const patched = await send('PATCH', path, {
      $push: { matrix: [9, 9] },
      $set: {
        'geometry.coordinates': [
          [
            [0, 0],
            [1, 0],
            [1, 1],
            [0, 0],
          ],
        ],
      },
    });
    expect(patched.status).toBe(200);
    expect(patched.json.matrix).toEqual([...replacedMatrix, [9, 9]]);
    expect(patched.json.geometry.coordinates).toEqual([
      [
        [0, 0],
        [1, 0],
        [1, 1],
        [0, 0],
      ],
    ]);
    const merged = await send('PATCH', path, { extra: [[['deep']]] });
    expect(merged.status).toBe(200);
    expect(merged.json.extra).toEqual([[['deep']]]);

    // Equality on a whole nested array, and on an element of it.
    const byWhole = await get(`${BASE}/${db}/shapes/?query=${q({ filter: { matrix: [...replacedMatrix, [9, 9]] } })}`);
    expect(byWhole.status).toBe(200);
    expect(byWhole.json.results.map((r: { _id: string }) => r._id)).toEqual([id]);
    const byElement = await get(`${BASE}/${db}/shapes/?query=${q({ filter: { matrix: [9, 9] } })}`);
    expect(byElement.json.count).toBe(1);
    expect(byElement.json.results[0].extra).toEqual([[['deep']]]);
  });

  it('inserts a batch of GeoJSON features and renders them in XML, JSONP and HTML', async () => {
    const features = Array.from({ length: 3 }, (_, i) => ({
      name: `poly-${i}`,
      geometry: {
        type: 'MultiPolygon',
        coordinates: [
          [
            [
              [i, 0],
              [i + 1, 0],
              [i + 1, 1],
              [i, 0],
            ],
          ],
        ],
      },
    }));
    const inserted = await send('POST', `${BASE}/${db}/shapes/`, features);
    expect(inserted.status).toBe(201);
    expect(inserted.json.inserted_ids).toHaveLength(3);
    const filter = q({ filter: { name: { $in: features.map((f) => f.name) } }, sort: { name: 1 }, projection: { _id: 0 } });

    const json = await get(`${BASE}/${db}/shapes/?query=${filter}`);
    expect(json.json.results).toEqual(features);

    const jsonp = await get(`${BASE}/${db}/shapes/?format=jsonp&callback=show&query=${filter}`, { accept: '*/*' });
    expect(jsonp.status).toBe(200);
    const body = /^(?:\/\*\*\/)?show\(([\s\S]*)\);?\s*$/.exec(jsonp.text)?.[1];
    expect(JSON.parse(body as string).results).toEqual(features);

    const xml = await get(`${BASE}/${db}/shapes/?format=xml&query=${filter}`, { accept: '*/*' });
    expect(xml.status).toBe(200);
    const parsed = new XMLParser().parse(xml.text);
    const items = parsed.root.results['list-item'] as Array<{ name: string; geometry: { type: string; coordinates: unknown } }>;
    expect(items.map((i) => i.name)).toEqual(features.map((f) => f.name));
    // Four levels of <list-item> down to a coordinate pair: [[[[x, y], ...]]].
    const ring = (items[2]?.geometry.coordinates as any)['list-item']['list-item']['list-item'];
    expect(ring.map((point: { 'list-item': number[] }) => point['list-item'])).toEqual(features[2]?.geometry.coordinates[0]?.[0]);

    const html = await get(`${BASE}/${db}/shapes/?query=${filter}`, { accept: 'text/html' });
    expect(html.status).toBe(200);
    expect(html.text).toContain('MultiPolygon');
    expect(html.text).toContain('poly-2');
  });
});

describe('aggregations', () => {
  const readings = Array.from({ length: 40 }, (_, i) => ({
    station: ['nrmn', 'tuls', 'boise'][i % 3] as string,
    temp: ((i * 37) % 50) - 10,
    day: i,
  }));

  beforeAll(async () => {
    expect((await send('POST', `${BASE}/${db}/readings/`, readings)).status).toBe(201);
    const stations = [
      { code: 'nrmn', name: 'Norman', elev: 357 },
      { code: 'tuls', name: 'Tulsa', elev: 194 },
      { code: 'boise', name: 'Boise City', elev: 1265 },
    ];
    expect((await send('POST', `${BASE}/${db}/stations/`, stations)).status).toBe(201);
    expect((await send('POST', `${BASE}/${db}/private/`, [{ code: 'nrmn', secret: 'x' }])).status).toBe(201);
  });

  it('computes every accumulator of a $group: $sum (count and field), $avg, $min, $max, $push', async () => {
    const pipeline = [
      {
        $group: {
          _id: '$station',
          n: { $sum: 1 },
          total: { $sum: '$temp' },
          mean: { $avg: '$temp' },
          low: { $min: '$temp' },
          high: { $max: '$temp' },
          days: { $push: '$day' },
        },
      },
      { $sort: { _id: 1 } },
    ];
    const res = await get(`${BASE}/${db}/readings/?aggregate=${q(pipeline)}&page_size=0`, { token: reader });
    expect(res.status).toBe(200);
    const expected = [...new Set(readings.map((r) => r.station))].sort().map((station) => {
      const rows = readings.filter((r) => r.station === station);
      const temps = rows.map((r) => r.temp);
      const total = temps.reduce((a, b) => a + b, 0);
      return {
        _id: station,
        n: rows.length,
        total,
        mean: total / rows.length,
        low: Math.min(...temps),
        high: Math.max(...temps),
        days: rows.map((r) => r.day),
      };
    });
    const results = res.json.results as Array<(typeof expected)[number]>;
    expect(
      results.map(({ days, mean, ...rest }) => ({ ...rest, days: [...days].sort((a, b) => a - b), mean: Number(mean.toFixed(9)) })),
    ).toEqual(expected.map(({ mean, ...rest }) => ({ ...rest, mean: Number(mean.toFixed(9)) })));
  });

  it('joins with $lookup, splits with $facet and appends with $unionWith for a caller who may read both', async () => {
    const lookup = [
      { $match: { day: { $lt: 3 } } },
      { $lookup: { from: 'stations', localField: 'station', foreignField: 'code', as: 'site' } },
      { $project: { _id: 0, day: 1, name: { $first: '$site.name' } } },
      { $sort: { day: 1 } },
    ];
    const joined = await get(`${BASE}/${db}/readings/?aggregate=${q(lookup)}`, { token: reader });
    expect(joined.status).toBe(200);
    expect(joined.json.results).toEqual([
      { day: 0, name: 'Norman' },
      { day: 1, name: 'Tulsa' },
      { day: 2, name: 'Boise City' },
    ]);

    const facet = [
      { $facet: { cold: [{ $match: { temp: { $lt: 0 } } }, { $count: 'n' }], warm: [{ $match: { temp: { $gte: 0 } } }, { $count: 'n' }] } },
    ];
    const split = await get(`${BASE}/${db}/readings/?aggregate=${q(facet)}`, { token: reader });
    expect(split.status).toBe(200);
    expect(split.json.results).toEqual([
      { cold: [{ n: readings.filter((r) => r.temp < 0).length }], warm: [{ n: readings.filter((r) => r.temp >= 0).length }] },
    ]);

    const union = [
      { $match: { day: 0 } },
      { $project: { _id: 0, station: 1 } },
      { $unionWith: { coll: 'stations', pipeline: [{ $project: { _id: 0, code: 1 } }] } },
    ];
    const appended = await get(`${BASE}/${db}/readings/?aggregate=${q(union)}&page_size=0`, { token: reader });
    expect(appended.status).toBe(200);
    expect(appended.json.results).toEqual(
      expect.arrayContaining([{ station: 'nrmn' }, { code: 'nrmn' }, { code: 'tuls' }, { code: 'boise' }]),
    );
    expect(appended.json.count).toBe(4);

    const refused = await get(
      `${BASE}/${db}/readings/?aggregate=${q([{ $lookup: { from: 'private', localField: 'station', foreignField: 'code', as: 'x' } }])}`,
      { token: reader },
    );
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe('forbidden_lookup');
  });
});
