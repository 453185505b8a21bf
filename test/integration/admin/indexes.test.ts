/**
 * The admin site's Indexes page data and actions (/api/admin/indexes/*) through the real HTTP
 * server and engine: a superuser lists databases, collections and a collection's indexes,
 * creates and drops one (CSRF-checked), and a staff member without rights over the data store
 * sees no more than the API would show them and may change nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { closeAndDrop } from '../auth/helpers.js';
import { Browser, ROOT, ensureRoot, loggedIn } from './support.js';

const BASE = '/api/admin/indexes';
let app: TestApp;
let root: Browser;
let staffer: Browser;
let db: string;

const write = (b: Browser, method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
  b.request(method, `${BASE}${path}`, {
    headers: headers ?? { 'X-XSRF-TOKEN': b.cookies.get('XSRF-TOKEN') ?? '', origin: b.baseUrl },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

async function adminSession(username: string, password: string): Promise<Browser> {
  const b = await loggedIn(app, username, password);
  expect((await b.get(`${BASE}/data_store/`)).status).toBe(200);
  return b;
}

beforeAll(async () => {
  app = await startTestApp();
  await ensureRoot(app);
  await app.users.createUser({ username: 'staffer', password: 'staff-pass-123', isStaff: true });
  db = `${app.prefix}idx`;
  const token = await app.users.tokenFor(ROOT.username);
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db } })).status).toBe(201);
  expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token, body: { collection: 'stations' } })).status).toBe(201);
  root = await adminSession(ROOT.username, ROOT.password);
  staffer = await adminSession('staffer', 'staff-pass-123');
});

afterAll(async () => {
  await app?.ctx.mongo
    .db(db)
    .dropDatabase()
    .catch(() => undefined);
  await closeAndDrop(app);
});

describe('the Indexes page data', () => {
  it('lists databases, collections and the indexes of a collection', async () => {
    expect((await root.get(`${BASE}/data_store/`)).json.databases).toContain(db);
    expect((await root.get(`${BASE}/data_store/${db}/`)).json.collections).toEqual(['stations']);
    const view = await root.get(`${BASE}/data_store/${db}/stations/`);
    expect(view.status, view.text).toBe(200);
    expect(view.json).toMatchObject({ can_manage: true, indexes: [{ name: '_id_', key: { _id: 1 } }] });
  });

  it('creates and drops an index through the documents service, as the API does', async () => {
    const created = await write(root, 'POST', `/data_store/${db}/stations/`, {
      keys: [
        ['site', 1],
        ['when', -1],
      ],
      unique: true,
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json.name).toBe('site_1_when_-1');
    // The API sees the same index.
    const token = await app.users.tokenFor(ROOT.username);
    const listed = await call(app.url, 'GET', `/api/data_store/indexes/${db}/stations/`, { token });
    expect(listed.json.indexes.map((i: { name: string }) => i.name)).toContain('site_1_when_-1');
    expect(listed.json.indexes.find((i: { name: string }) => i.name === 'site_1_when_-1')).toMatchObject({ unique: true });
    // The API's rules apply: a second index of that name is a conflict, _id_ cannot be dropped.
    expect((await write(root, 'POST', `/data_store/${db}/stations/`, { keys: { other: 1 }, name: 'site_1_when_-1' })).status).toBe(409);
    expect((await write(root, 'DELETE', `/data_store/${db}/stations/_id_/`)).status).toBe(400);
    const dropped = await write(root, 'DELETE', `/data_store/${db}/stations/site_1_when_-1/`);
    expect(dropped.status, dropped.text).toBe(200);
    expect((await root.get(`${BASE}/data_store/${db}/stations/`)).json.indexes.map((i: { name: string }) => i.name)).toEqual(['_id_']);
  });

  it('refuses writes without the CSRF header or from another origin', async () => {
    const path = `/data_store/${db}/stations/`;
    expect((await write(root, 'POST', path, { keys: { a: 1 } }, { origin: root.baseUrl })).status).toBe(403);
    expect(
      (
        await write(
          root,
          'POST',
          path,
          { keys: { a: 1 } },
          { 'X-XSRF-TOKEN': root.cookies.get('XSRF-TOKEN') ?? '', origin: 'https://elsewhere.example' },
        )
      ).status,
    ).toBe(403);
  });

  it('shows a staff member without data-store rights only what the API would, and lets them change nothing', async () => {
    expect((await staffer.get(`${BASE}/data_store/`)).json.databases).not.toContain(db);
    expect((await staffer.get(`${BASE}/data_store/${db}/stations/`)).status).toBe(403);
    expect((await write(staffer, 'POST', `/data_store/${db}/stations/`, { keys: { a: 1 } })).status).toBe(403);
    expect((await staffer.get(`${BASE}/elsewhere/`)).status).toBe(404);
  });

  it('is behind the admin gate', async () => {
    expect((await call(app.url, 'GET', `${BASE}/data_store/`)).status).not.toBe(200);
  });
});
