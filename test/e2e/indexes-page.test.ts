/**
 * The admin site's Indexes page in a real browser (Debian's Chromium through playwright-core),
 * against the real service and database: a superuser opens a collection's indexes from a link
 * (the choice lives in the URL), creates a compound index, sees it listed, drops it only after
 * confirming, and the page neither requests anything off this machine nor trips the
 * Content-Security-Policy. Screenshots go to test-output/screenshots/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { call, startTestApp, type TestApp } from '../support/app.js';
import { externalRequests, launchChromium, screenshot, signInThrough, watchedPage, type Watched } from './support.js';

const PAGE = '/api/admin/pages/indexes';

let app: TestApp;
let browser: Browser;
let admin: Watched;
let token: string;
let db: string;

const indexNames = async (): Promise<string[]> => {
  const res = await call(app.url, 'GET', `/api/data_store/indexes/${db}/stations/`, { token });
  expect(res.status).toBe(200);
  const body = res.json as { indexes: { name: string }[] };
  return body.indexes.map((index) => index.name).sort();
};

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000' });
  await app.users.ensureSuperuser({ username: 'root', email: 'root@example.org', password: 'root-pass-123' });
  token = await app.users.tokenFor('root');
  db = `${app.prefix}idxpage`;
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db } })).status).toBe(201);
  expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token, body: { collection: 'stations' } })).status).toBe(201);
  browser = await launchChromium();
  admin = await watchedPage(browser);
});

afterAll(async () => {
  await browser?.close();
  if (app !== undefined) {
    await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db, action: 'delete' } }).catch(() => undefined);
    await app.close();
  }
});

describe('the Indexes page', () => {
  it('opens a collection from a link and lists its indexes', async () => {
    const { page } = admin;
    await signInThrough(page, `${app.url}${PAGE}`, 'root', 'root-pass-123');
    await page.goto(`${app.url}${PAGE}?area=data_store&db=${encodeURIComponent(db)}&col=stations`);
    await page.getByTestId('indexes-title').waitFor();
    await page.locator('[data-testid="index-row"][data-name="_id_"]').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('index-list').textContent()).toContain(`${db}.stations`);
  });

  it('creates a compound index, which the API then lists', async () => {
    const { page } = admin;
    await page.getByTestId('key-field-0').fill('site');
    await page.getByTestId('add-key').click();
    await page.getByTestId('key-field-1').fill('when');
    await page.getByTestId('key-type-1').selectOption('-1');
    await page.getByTestId('create-index-submit').click();
    await page.locator('[data-testid="index-row"][data-name="site_1_when_-1"]').waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('indexes-notice').textContent()).toContain('site_1_when_-1');
    expect(await indexNames()).toEqual(['_id_', 'site_1_when_-1']);
    await screenshot(page, 'admin-indexes');
  });

  it('drops an index only after the confirmation', async () => {
    const { page } = admin;
    const row = page.locator('[data-testid="index-row"][data-name="site_1_when_-1"]');
    await row.getByTestId('drop-index').click();
    await page.getByTestId('drop-confirm').waitFor();
    await page.getByTestId('drop-confirm-no').click();
    expect(await indexNames()).toEqual(['_id_', 'site_1_when_-1']);
    await row.getByTestId('drop-index').click();
    await page.getByTestId('drop-confirm-yes').click();
    await row.waitFor({ state: 'detached', timeout: 30_000 });
    expect(await indexNames()).toEqual(['_id_']);
  });

  it('stays on this machine and within the Content-Security-Policy', () => {
    expect(externalRequests(admin, app.url)).toEqual([]);
    expect(admin.cspViolations).toEqual([]);
    expect(admin.pageErrors).toEqual([]);
  });
});
