/** The catalog: the same engine restricted to the configured catalog databases. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';

let app: TestApp;
let su: string;
let curator: string;
let catalogDb: string;
const BASE = '/api/catalog/data';

beforeAll(async () => {
  catalogDb = uniqueName('catalog');
  app = await startTestApp({ CATALOG_DATABASES: catalogDb, CATALOG_ANONYMOUS: 'true' });
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  su = await app.users.tokenFor('root');
  await app.users.createUser({ username: 'curator', password: 'pw-curator-12', permissions: ['catalog.catalog_create'] });
  curator = await app.users.tokenFor('curator');
});

afterAll(async () => {
  await app?.close();
});

describe('catalog', () => {
  it('lists exactly the configured catalog databases, even before they hold data', async () => {
    const res = await call(app.url, 'GET', `${BASE}/`, { token: su });
    expect(res.status).toBe(200);
    expect(res.json.results.map((r: { database: string }) => r.database)).toEqual([catalogDb]);
  });

  it('does not create databases through the API', async () => {
    const res = await call(app.url, 'POST', `${BASE}/`, { token: su, body: { database: 'another' } });
    expect(res.status).toBe(405);
    expect(res.json.error.code).toBe('method_not_allowed');
  });

  it('lets a catalog_create user make collections, and the same query language works', async () => {
    const created = await call(app.url, 'POST', `${BASE}/${catalogDb}/`, { token: curator, body: { collection: 'datasets' } });
    expect(created.status).toBe(201);
    // catalog_create does not grant writing records: that needs catalog.<db>.<col>.add
    expect((await call(app.url, 'POST', `${BASE}/${catalogDb}/datasets/`, { token: curator, body: { a: 1 } })).status).toBe(403);
    const inserted = await call(app.url, 'POST', `${BASE}/${catalogDb}/datasets/`, {
      token: su,
      body: [
        { title: 'Rain', year: 2020 },
        { title: 'Snow', year: 2021 },
        { title: 'Hail', year: 2021 },
      ],
    });
    expect(inserted.status).toBe(201);
    const q = encodeURIComponent(JSON.stringify({ filter: { year: 2021 }, sort: { title: 1 }, projection: { _id: 0, title: 1 } }));
    const res = await call(app.url, 'GET', `${BASE}/${catalogDb}/datasets/?query=${q}`);
    expect(res.status).toBe(200);
    expect(res.json.results).toEqual([{ title: 'Hail' }, { title: 'Snow' }]);
  });

  it('allows anonymous reads when CATALOG_ANONYMOUS is on, but never anonymous writes', async () => {
    expect((await call(app.url, 'GET', `${BASE}/${catalogDb}/datasets/`)).status).toBe(200);
    expect((await call(app.url, 'POST', `${BASE}/${catalogDb}/datasets/`, { body: { a: 1 } })).status).toBe(401);
    expect((await call(app.url, 'POST', `${BASE}/${catalogDb}/`, { body: { collection: 'x' } })).status).toBe(401);
  });

  it('keeps catalog databases out of the data store', async () => {
    const list = await call(app.url, 'GET', '/api/data_store/data/?page_size=0', { token: su });
    expect(list.json.results.map((r: { database: string }) => r.database)).not.toContain(catalogDb);
    expect((await call(app.url, 'GET', `/api/data_store/data/${catalogDb}/datasets/`, { token: su })).status).toBe(404);
  });
});
