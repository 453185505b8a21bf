/**
 * Extended JSON types that MongoDB knows but this service's engines may not store or compare
 * ($code, $symbol, $minKey, $maxKey, $numberDecimal), in filters and in bodies: each is answered
 * with a 2xx or a 4xx JSON error, never a 5xx, and the database connection stays usable for the
 * next request (an earlier engine closed it on such values).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';

let app: TestApp;
let token: string;
let base: string;

const ODD_VALUES: Record<string, unknown> = {
  code: { $code: 'function () { return 1; }' },
  codeWithScope: { $code: 'x', $scope: { x: 1 } },
  symbol: { $symbol: 'sym' },
  minKey: { $minKey: 1 },
  maxKey: { $maxKey: 1 },
  decimal: { $numberDecimal: '12.50' },
  hugeDecimal: { $numberDecimal: '1e6000' },
};

beforeAll(async () => {
  app = await startTestApp();
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  token = await app.users.tokenFor('root');
  const db = `${app.prefix}ejson`;
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db } })).status).toBe(201);
  expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token, body: { collection: 'odd' } })).status).toBe(201);
  base = `/api/data_store/data/${db}/odd/`;
  expect((await call(app.url, 'POST', base, { token, body: { _id: 'plain', n: 1 } })).status).toBe(201);
});

afterAll(async () => {
  await app?.close();
});

async function stillServes(): Promise<void> {
  const res = await call(app.url, 'GET', `${base}plain/`, { token });
  expect(res.status).toBe(200);
  expect(res.json.n).toBe(1);
}

describe('Extended JSON types the engine may not support', () => {
  for (const [name, value] of Object.entries(ODD_VALUES)) {
    it(`${name}: in a record body and in a filter, answered without a 5xx`, async () => {
      const inserted = await call(app.url, 'POST', base, { token, body: { _id: `rec-${name}`, v: value } });
      expect(inserted.status, JSON.stringify(inserted.json)).toBeLessThan(500);
      if (inserted.status >= 400) expect(inserted.json.error.code).toEqual(expect.any(String));
      await stillServes();

      const query = encodeURIComponent(JSON.stringify({ filter: { v: value } }));
      const filtered = await call(app.url, 'GET', `${base}?query=${query}`, { token });
      expect(filtered.status, JSON.stringify(filtered.json)).toBeLessThan(500);
      if (filtered.status >= 400) expect(filtered.json.error.code).toEqual(expect.any(String));
      // A value the engine stored is found again by the same value.
      else if (inserted.status === 201) expect(filtered.json.results.map((r: { _id: string }) => r._id)).toContain(`rec-${name}`);
      await stillServes();
    });
  }
});

describe('regular expressions JavaScript cannot compile', () => {
  // Valid for the engine (PCRE) but not for JavaScript's RegExp, or for neither: stored all the same.
  const PATTERNS = ['(?i)abc', 'a++', '\\Aabc\\z', ')'];

  it('are read back, listed, exported and merged into, never a 5xx', async () => {
    for (const [i, pattern] of PATTERNS.entries()) {
      const id = `regex-${i}`;
      const stored = await call(app.url, 'POST', base, { token, body: { _id: id, re: { $regularExpression: { pattern, options: 'i' } } } });
      expect(stored.status, JSON.stringify(stored.json)).toBe(201);
      const read = await call(app.url, 'GET', `${base}${id}/`, { token });
      expect(read.status, read.text.slice(0, 300)).toBe(200);
      expect(read.json.re).toEqual({ $regex: pattern, $options: 'i' });
      const merged = await call(app.url, 'PATCH', `${base}${id}/`, { token, body: { n: i } });
      expect(merged.status, merged.text.slice(0, 300)).toBe(200);
      expect(merged.json).toMatchObject({ n: i, re: { $regex: pattern, $options: 'i' } });
    }
    const query = encodeURIComponent(JSON.stringify({ filter: { _id: { $regex: '^regex-' } } }));
    for (const format of ['json', 'csv', 'ndjson', 'xml', 'api']) {
      const listed = await call(app.url, 'GET', `${base}?query=${query}&format=${format}`, { token });
      expect(listed.status, `${format}: ${listed.text.slice(0, 300)}`).toBe(200);
      expect(listed.text).toContain('a++');
    }
    const distinct = await call(app.url, 'GET', `${base}?distinct=re`, { token });
    expect(distinct.status, distinct.text.slice(0, 300)).toBe(200);
    await stillServes();
  });
});
