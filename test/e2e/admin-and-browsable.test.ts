/**
 * The administration site and the browsable API in a real browser (Debian's Chromium through
 * playwright-core), against the real service, database and broker:
 *   a superuser logs in to /api/admin, creates a group, grants it a data-store collection with
 *   the permission picker, creates a user with a password in that group, changes the password
 *   with "Set password" and issues the user an API token; the new user logs in
 *   through the browsable API, adds a record with the page's form (CSRF header checked), reads it
 *   back, is refused a collection it has no grant for, and logs out; the admin site refuses it;
 *   /api/admin/auth/user/ shows the user list. Every request must stay on this machine and no
 *   page may trip the Content-Security-Policy. Screenshots go to test-output/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { verifyPassword } from '../../src/auth/passwords.js';
import { call, startTestApp, type TestApp } from '../support/app.js';
import { externalRequests, launchChromium, screenshot, watchedPage, type Watched } from './support.js';

const TITLE = 'Cybercommons Test Lab';

let app: TestApp;
let browser: Browser;
let admin: Watched;
let researcher: Watched;
let db: string;
let rootToken: string;

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000', APPLICATION_TITLE: TITLE });
  await app.users.ensureSuperuser({ username: 'root', email: 'root@example.org', password: 'root-pass-123' });
  rootToken = await app.users.tokenFor('root');
  db = `lab${app.prefix}`;
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token: rootToken, body: { database: db } })).status).toBe(201);
  for (const collection of ['samples', 'private']) {
    expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token: rootToken, body: { collection } })).status).toBe(201);
  }
  await call(app.url, 'POST', `/api/data_store/data/${db}/samples/`, {
    token: rootToken,
    body: [
      { sample: 's-0', site: 'North plot', depth_cm: 10 },
      { sample: 's-00', site: 'South plot', depth_cm: 25 },
    ],
  });
  await call(app.url, 'POST', `/api/data_store/data/${db}/private/`, { token: rootToken, body: { secret: true } });
  browser = await launchChromium();
  admin = await watchedPage(browser);
  researcher = await watchedPage(browser);
});

afterAll(async () => {
  await browser?.close();
  if (app !== undefined) {
    await call(app.url, 'POST', '/api/data_store/data/', { token: rootToken, body: { database: db, action: 'delete' } }).catch(
      () => undefined,
    );
    await app.ctx.serviceDb.dropDatabase().catch(() => undefined);
    await app.close();
  }
});

async function logIn(w: Watched, username: string, password: string): Promise<void> {
  await w.page.fill('#id_username', username);
  await w.page.fill('#id_password', password);
  await Promise.all([w.page.waitForNavigation(), w.page.click('button[type=submit]')]);
}

describe('the admin site', () => {
  it('lets a superuser log in and shows the dashboard', async () => {
    const { page } = admin;
    await page.goto(`${app.url}/api/admin`);
    expect(new URL(page.url()).pathname).toBe('/api/auth/login/');
    await logIn(admin, 'root', 'root-pass-123');
    expect(new URL(page.url()).pathname).toBe('/api/admin');
    await expect.poll(() => page.getByTestId('dashboard-title').textContent()).toBe(`${TITLE}: administration`);
    expect(await page.title()).toBe(TITLE);
    await page.getByTestId('count-users').waitFor();
    await screenshot(page, 'admin-dashboard');
  });

  it('creates a group', async () => {
    const { page } = admin;
    await page.goto(`${app.url}/api/admin/resources/Group/actions/new`);
    await page.fill('[name="name"]', 'researchers');
    await Promise.all([page.waitForURL(/\/api\/admin\/resources\/Group(\?|$)/), page.getByRole('button', { name: 'Save' }).click()]);
    await page.getByText('researchers').first().waitFor();
  });

  it('grants the group a data-store collection with the permission picker', async () => {
    const { page } = admin;
    await page.goto(`${app.url}/api/admin/resources/Permission/actions/picker`);
    await page.getByTestId('permission-picker').waitFor();
    await page.fill('#picker-database', db);
    await page.fill('#picker-collection', 'samples');
    await page.check('input[name="action-add"]');
    await page.selectOption('#picker-group', 'researchers');
    const preview = page.getByTestId('picker-preview');
    await expect.poll(() => preview.textContent()).toContain(`data_store.${db}.samples.add`);
    expect(await preview.textContent()).toContain(`data_store.${db}.samples.safe`);
    await page.getByTestId('picker-submit').click();
    await expect
      .poll(() => page.getByTestId('picker-result').textContent())
      .toContain(`Granted data_store.${db}.samples.safe, data_store.${db}.samples.add to group researchers.`);
    const group = await app.ctx.serviceDb.collection('auth_group').findOne({ name: 'researchers' });
    expect(group?.permissions).toEqual([`data_store.${db}.samples.safe`, `data_store.${db}.samples.add`]);
  });

  it('creates a user with a password in that group', async () => {
    const { page } = admin;
    await page.goto(`${app.url}/api/admin/resources/User/actions/new`);
    await page.fill('[name="username"]', 'rosa');
    await page.fill('[name="newPassword"]', 'rosa-pass-123');
    await page.fill('[name="email"]', 'rosa@example.org');
    await page.fill('[name="first_name"]', 'Rosa');
    // Groups: "Add new item", then search the reference select and pick the group.
    await page.getByTestId('groups-add').click();
    const groupItem = page.getByTestId('groups.0');
    await groupItem.locator('input').fill('research');
    await groupItem.getByText('researchers', { exact: true }).click();
    await Promise.all([page.waitForURL(/\/api\/admin\/resources\/User(\?|$)/), page.getByRole('button', { name: 'Save' }).click()]);

    const rosa = await app.ctx.serviceDb.collection('auth_user').findOne({ username: 'rosa' });
    const group = await app.ctx.serviceDb.collection('auth_group').findOne({ name: 'researchers' });
    expect(rosa?.groups.map(String)).toEqual([group?._id.toString()]);
    expect(rosa?.is_active).toBe(true);
    expect(await verifyPassword('rosa-pass-123', rosa?.password as string)).toBe(true);
  });

  it("shows the group's permissions in its edit form as picked codenames", async () => {
    const { page } = admin;
    const group = await app.ctx.serviceDb.collection('auth_group').findOne({ name: 'researchers' });
    await page.goto(`${app.url}/api/admin/resources/Group/records/${group?._id.toString()}/edit`);
    const field = page.getByTestId('permissions-select');
    await expect
      .poll(() => field.textContent())
      .toContain(`data_store.${db}.samples.add (Can add to data store collection ${db} / samples)`);
    expect(await field.textContent()).toContain(`data_store.${db}.samples.safe`);
  });

  it("sets the user's password with the Set password action", async () => {
    const { page } = admin;
    const rosa = await app.ctx.serviceDb.collection('auth_user').findOne({ username: 'rosa' });
    await page.goto(`${app.url}/api/admin/resources/User/records/${rosa?._id.toString()}/setPassword`);
    await page.fill('#new-password', 'rosa-new-pass-456');
    await page.fill('#confirm-password', 'rosa-new-pass-456');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('The password was changed.').waitFor();
    const stored = await app.ctx.serviceDb.collection('auth_user').findOne({ username: 'rosa' });
    expect(await verifyPassword('rosa-new-pass-456', stored?.password as string)).toBe(true);
  });

  it('issues an API token whose key is shown once and works', async () => {
    const { page } = admin;
    await page.goto(`${app.url}/api/admin/resources/Token/actions/issue`);
    await page.fill('#token-username', 'rosa');
    await page.getByRole('button', { name: 'Issue token' }).click();
    const key = (await page.getByTestId('token-key').textContent()) ?? '';
    expect(key).toMatch(/^[0-9a-f]{40}$/);
    expect((await call(app.url, 'GET', '/api/user/', { token: key })).json.username).toBe('rosa');
    await page.goto(`${app.url}/api/admin/resources/Token`);
    await page.getByRole('cell', { name: `${key.slice(0, 8)}…` }).waitFor();
    expect(await page.content()).not.toContain(key);
  });

  it('shows the user list at /api/admin/auth/user/', async () => {
    const { page } = admin;
    await page.goto(`${app.url}/api/admin/auth/user/`);
    expect(new URL(page.url()).pathname).toBe('/api/admin/resources/User');
    await page.getByRole('cell', { name: 'rosa', exact: true }).waitFor();
    await page.getByRole('cell', { name: 'root', exact: true }).waitFor();
    await screenshot(page, 'admin-users');
  });

  it('needed nothing from outside this machine and tripped no security policy', () => {
    expect(admin.requests.length).toBeGreaterThan(10);
    expect(externalRequests(admin, app.url)).toEqual([]);
    expect(admin.cspViolations).toEqual([]);
    expect(admin.pageErrors).toEqual([]);
  });
});

describe('the browsable API', () => {
  const collectionUrl = () => `${app.url}/api/data_store/data/${db}/samples/`;

  it('lets the new user log in from a collection page', async () => {
    const { page } = researcher;
    const first = await page.goto(collectionUrl());
    expect(first?.status()).toBe(401);
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Log in' }).click()]);
    expect(new URL(page.url()).pathname).toBe('/api/auth/login/');
    await logIn(researcher, 'rosa', 'rosa-new-pass-456');
    expect(page.url()).toBe(collectionUrl());
    expect(await page.locator('header.navbar').textContent()).toContain('rosa');
    expect(await page.locator('header.navbar .brand').textContent()).toBe(TITLE);
  });

  it('adds a record with the page form, sending JSON with the CSRF header', async () => {
    const { page, context } = researcher;
    const form = page.locator('form[data-browsable="collection"]');
    await form.waitFor({ state: 'visible' });
    await form.locator('textarea[name="content"]').fill('{"sample": "s-1", "site": "East plot", "depth_cm": 40}');
    const [request] = await Promise.all([
      page.waitForRequest((r) => r.method() === 'POST' && r.url() === collectionUrl()),
      form.getByRole('button', { name: 'POST' }).click(),
    ]);
    const csrf = (await context.cookies()).find((c) => c.name === 'csrftoken')?.value;
    expect(csrf).toBeDefined();
    expect(request.headers()['x-csrftoken']).toBe(csrf);
    expect(request.headers()['content-type']).toBe('application/json');
    expect(JSON.parse(request.postData() ?? '')).toEqual({ sample: 's-1', site: 'East plot', depth_cm: 40 });
    await expect.poll(() => form.locator('.result .status').textContent()).toBe('HTTP 201 Created');

    await Promise.all([page.waitForNavigation(), form.getByRole('link', { name: 'Open the new record' }).click()]);
    const record = JSON.parse((await page.locator('pre.content').textContent()) ?? '{}') as Record<string, unknown>;
    expect(record).toMatchObject({ sample: 's-1', site: 'East plot', depth_cm: 40 });
    const stored = await app.ctx.mongo.db(db).collection('samples').findOne({ sample: 's-1' });
    expect(stored?._id.toString()).toBe(record._id);

    await page.goto(collectionUrl());
    expect(await page.locator('pre.content').textContent()).toContain('"s-1"');
    await screenshot(page, 'browsable-collection', { fullPage: true });
  });

  it('refuses a collection the user has no grant for', async () => {
    const { page } = researcher;
    const response = await page.goto(`${app.url}/api/data_store/data/${db}/private/`);
    expect(response?.status()).toBe(403);
    expect(await page.locator('pre.content').textContent()).toContain('permission_denied');
    expect(await page.locator('form[data-browsable]').count()).toBe(0);
  });

  it('is refused by the admin site', async () => {
    const { page } = researcher;
    const response = await page.goto(`${app.url}/api/admin`);
    expect(response?.status()).toBe(403);
    expect(await page.getByRole('alert').textContent()).toContain(
      'You are logged in as rosa, but this account may not use the administration site',
    );
  });

  it('logs out', async () => {
    const { page } = researcher;
    await page.goto(`${app.url}/api/`);
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Log out' }).click()]);
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Log out' }).click()]);
    expect(new URL(page.url()).pathname).toBe('/api/');
    await page.getByRole('link', { name: 'Log in' }).waitFor();
    const after = await page.goto(collectionUrl());
    expect(after?.status()).toBe(401);
  });

  it('needed nothing from outside this machine and tripped no security policy', () => {
    expect(externalRequests(researcher, app.url)).toEqual([]);
    expect(researcher.cspViolations).toEqual([]);
    expect(researcher.pageErrors).toEqual([]);
  });
});
