/**
 * The `skip` parameter of a collection read, through the real HTTP server and engine: the
 * leading records left out before paging, in listings, exports, aggregations and distinct values.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';

let app: TestApp;
let token: string;
let path: string;
const q = (v: unknown) => encodeURIComponent(JSON.stringify(v));
const get = (query: string, accept?: string) => call(app.url, 'GET', `${path}?${query}`, { token, accept });
const ns = (res: { json: { results: { n: number }[] } }) => res.json.results.map((r) => r.n);

beforeAll(async () => {
  app = await startTestApp();
  await app.users.createUser({ username: 'owner', password: 'correct horse battery', isSuperuser: true });
  token = await app.users.tokenFor('owner');
  const db = `${app.prefix}skip`;
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db } })).status).toBe(201);
  expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token, body: { collection: 'rows' } })).status).toBe(201);
  path = `/api/data_store/data/${db}/rows/`;
  const records = Array.from({ length: 12 }, (_, n) => ({ n, even: n % 2 === 0 }));
  expect((await call(app.url, 'POST', path, { token, body: records })).status).toBe(201);
});

afterAll(async () => {
  await app?.close();
});

describe('skip', () => {
  const sorted = `query=${q({ sort: { n: 1 }, projection: { _id: 0 } })}`;

  it('leaves out the first records of the result; count and pages are of what is left', async () => {
    const res = await get(`${sorted}&skip=5&page_size=3`);
    expect(res.status, res.text).toBe(200);
    expect(ns(res)).toEqual([5, 6, 7]);
    expect(res.json.count).toBe(7);
    expect(res.json.meta).toEqual({ page: 1, page_size: 3, pages: 3 });
    // The next link keeps the skip: its page 3 is the last record.
    const last = await get(`${sorted}&skip=5&page_size=3&page=3`);
    expect(ns(last)).toEqual([11]);
    expect(res.json.next).toContain('skip=5');
  });

  it('applies after the filter and sort, and to every page of an unpaged read', async () => {
    const filtered = await get(`query=${q({ filter: { even: true }, sort: { n: -1 } })}&skip=2&page_size=0`);
    expect(ns(filtered)).toEqual([6, 4, 2, 0]);
    expect(filtered.json.count).toBe(4);
  });

  it('skips in CSV and NDJSON exports', async () => {
    const csv = await get(`${sorted}&skip=10&format=csv&fields=n`, 'text/csv');
    expect(csv.text).toBe('n\r\n10\r\n11\r\n');
    const ndjson = await get(`${sorted}&skip=9&format=ndjson`, 'application/x-ndjson');
    expect(
      ndjson.text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).n),
    ).toEqual([9, 10, 11]);
  });

  it('skips aggregation results and distinct values', async () => {
    const pipeline = q([{ $sort: { n: 1 } }, { $project: { _id: 0, n: 1 } }]);
    const aggregated = await get(`aggregate=${pipeline}&skip=8&page_size=0`);
    expect(ns(aggregated)).toEqual([8, 9, 10, 11]);
    expect(aggregated.json.count).toBe(4);
    const distinct = await get('distinct=even&skip=1');
    expect(distinct.json.count).toBe(1);
    const several = await get('distinct=even,n&skip=11&page_size=0');
    expect(several.json.count).toBe(1);
  });

  it('answers an empty page past the end, and refuses a skip that is not a whole number', async () => {
    for (const skip of ['12', '99999999999999999999']) {
      const res = await get(`${sorted}&skip=${skip}`);
      expect(res.status, res.text).toBe(200);
      expect(res.json.count).toBe(0);
      expect(res.json.results).toEqual([]);
    }
    for (const skip of ['-1', '1.5', 'x', '1e3']) {
      const res = await get(`skip=${skip}`);
      expect(res.status, skip).toBe(400);
      expect(res.json.error.code).toBe('invalid_skip');
    }
    expect((await get('skip=1&skip=2')).json.error.code).toBe('repeated_parameter');
  });
});
