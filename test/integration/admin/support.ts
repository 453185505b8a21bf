/**
 * Helpers for the admin site tests: logged-in browsers over fetch (cookies kept, redirects not
 * followed) and calls to AdminJS's own JSON API the way its frontend makes them (form posts
 * with the X-XSRF-TOKEN header and a same-site Origin).
 */
import { expect } from 'vitest';
import type { CallResult, TestApp } from '../../support/app.js';
import { Browser } from '../auth/helpers.js';

export { Browser };

export const ADMIN = '/api/admin';

/** The superuser every admin test starts with. */
export const ROOT = { username: 'root', email: 'root@example.org', password: 'root-pass-123' } as const;

export async function ensureRoot(app: TestApp): Promise<void> {
  await app.users.ensureSuperuser({ ...ROOT });
}

export async function loggedIn(app: TestApp, username: string, password: string): Promise<Browser> {
  const browser = new Browser(app.url);
  await browser.loginJson(username, password);
  return browser;
}

/** Loads an admin page first, which sets the XSRF-TOKEN cookie AdminJS's client sends back. */
export async function adminBrowser(app: TestApp, username: string, password: string): Promise<Browser> {
  const browser = await loggedIn(app, username, password);
  const page = await browser.get(`${ADMIN}`, { accept: 'text/html' });
  expect(page.status, page.text).toBe(200);
  expect(browser.cookies.get('XSRF-TOKEN')).toBeDefined();
  return browser;
}

/** GET on AdminJS's API (what the admin frontend fetches), parsed as JSON. */
export async function adminApiGet(browser: Browser, path: string): Promise<CallResult> {
  return browser.get(`${ADMIN}/api${path}`);
}

/** POST a form to AdminJS's API the way its frontend does (flattened fields, CSRF header, Origin). */
export async function adminApiPost(
  browser: Browser,
  path: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<CallResult> {
  return browser.request('POST', `${ADMIN}/api${path}`, {
    headers: { 'X-XSRF-TOKEN': browser.cookies.get('XSRF-TOKEN') ?? '', origin: browser.baseUrl, ...headers },
    body: new URLSearchParams(fields).toString(),
    contentType: 'application/x-www-form-urlencoded',
  });
}

/** POST JSON to AdminJS's API (what custom components send with a plain `data` object). */
export async function adminApiPostJson(browser: Browser, path: string, body: unknown): Promise<CallResult> {
  return browser.request('POST', `${ADMIN}/api${path}`, {
    headers: { 'X-XSRF-TOKEN': browser.cookies.get('XSRF-TOKEN') ?? '', origin: browser.baseUrl },
    body: JSON.stringify(body),
  });
}

/** The stored password hash of a user, read straight from the database. */
export async function storedHash(app: TestApp, username: string): Promise<string> {
  const user = await app.ctx.serviceDb.collection('auth_user').findOne({ username });
  if (user === null) throw new Error(`no user ${username}`);
  return user.password as string;
}

export async function userId(app: TestApp, username: string): Promise<string> {
  const user = await app.ctx.serviceDb.collection('auth_user').findOne({ username }, { projection: { _id: 1 } });
  if (user === null) throw new Error(`no user ${username}`);
  return user._id.toString();
}
