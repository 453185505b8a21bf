/**
 * Browser sessions on the data store: unsafe requests need X-CSRFToken equal to the csrftoken
 * cookie; without it the request is refused with 403 and nothing is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { Browser } from '../auth/helpers.js';

let app: TestApp;
let browser: Browser;
let db: string;

beforeAll(async () => {
  app = await startTestApp();
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  const token = await app.users.tokenFor('root');
  db = `${app.prefix}csrf`;
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db } })).status).toBe(201);
  expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token, body: { collection: 'c' } })).status).toBe(201);
  browser = new Browser(app.url);
  const login = await browser.request('POST', '/api/auth/login/', {
    body: JSON.stringify({ username: 'root', password: 'pw-superuser-1' }),
  });
  expect(login.status).toBe(200);
  expect(browser.cookies.get('csrftoken')).toBeTruthy();
});

afterAll(async () => {
  await app?.close();
});

const count = async (): Promise<number> => (await browser.request('GET', `/api/data_store/data/${db}/c/`)).json.count as number;

describe('CSRF on session-authenticated writes', () => {
  it('reads with the session cookie alone', async () => {
    expect(await count()).toBe(0);
  });

  it.each([
    ['missing header', {}],
    ['wrong header', { 'x-csrftoken': 'not-the-token' }],
  ])('refuses a write with a %s and writes nothing', async (_name, headers) => {
    const res = await browser.request('POST', `/api/data_store/data/${db}/c/`, { headers, body: JSON.stringify({ a: 1 }) });
    expect(res.status).toBe(403);
    expect(res.json.error.code).toBe('csrf_failed');
    expect(await count()).toBe(0);
    const drop = await browser.request('POST', '/api/data_store/data/', {
      headers,
      body: JSON.stringify({ action: 'delete', database: db }),
    });
    expect(drop.status).toBe(403);
    expect((await browser.request('GET', `/api/data_store/data/${db}/`)).status).toBe(200);
  });

  it('accepts the write with the header equal to the cookie', async () => {
    const res = await browser.request('POST', `/api/data_store/data/${db}/c/`, {
      headers: { 'x-csrftoken': browser.cookies.get('csrftoken') as string },
      body: JSON.stringify({ a: 1 }),
    });
    expect(res.status).toBe(201);
    expect(await count()).toBe(1);
  });
});
