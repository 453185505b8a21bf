/**
 * The explorer's table in Chromium on records that differ from one another: a field most records
 * lack stays a column when sorted by it, its header reversing the sort with the records that lack
 * it last both ways; a 300-character field name is cut short (the page no wider than the window,
 * on the table, schema and chart tabs) with the whole name as its tooltip; whole doubles read
 * `21.0`; no request of any page fails (the favicon is there), no script error, no CSP complaint;
 * pages and files arrive compressed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { call, startTestApp, type TestApp } from '../support/app.js';
import { createFixtureCollection } from '../support/explorer-fixture.js';
import { launchChromium, screenshot, watchedPage, type Watched } from './support.js';

const RECORDS = 60;
const MISSING = 40;
const LONG_NAME = `long_${'n'.repeat(300)}`;
let app: TestApp;
let browser: Browser;
let watched: Watched;
let token: string;
let db: string;
const col = 'stations';
/** Every response of a failed status, and the encodings pages and files came in. */
const failed: string[] = [];
const encodings = new Map<string, string>();

function recordJson(i: number): string {
  const fields = [
    `"n": ${i}`,
    `"station": "${String(i % 7).padStart(5, '0')}"`,
    `"${LONG_NAME}": ${i}`,
    `"when": {"$date": "2024-01-0${1 + (i % 9)}T00:00:00Z"}`,
  ];
  if (i >= MISSING) fields.push(`"temp": ${i - MISSING + 10}.0`);
  return `{${fields.join(', ')}}`;
}

beforeAll(async () => {
  app = await startTestApp();
  await app.users.createUser({ username: 'root', password: 'pw-root-12345', isSuperuser: true });
  token = await app.users.tokenFor('root');
  db = `${app.prefix}columns`;
  await createFixtureCollection(app.url, token, db, col);
  const res = await call(app.url, 'POST', `/api/data_store/data/${db}/${col}/`, {
    token,
    rawBody: `[${Array.from({ length: RECORDS }, (_, i) => recordJson(i)).join(',')}]`,
  });
  expect(res.status, res.text.slice(0, 300)).toBe(201);
  browser = await launchChromium();
  watched = await watchedPage(browser);
  await watched.context.setExtraHTTPHeaders({ authorization: `Token ${token}` });
  watched.context.on('response', (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    const encoding = response.headers()['content-encoding'];
    if (encoding !== undefined) encodings.set(new URL(response.url()).pathname, encoding);
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (app === undefined) return;
  await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db, action: 'delete' } }).catch(() => undefined);
  await app.close();
});

const base = () => `${app.url}/api/explore/data_store/${db}/${col}/`;

/** The text of each row's cell under the header of `field`. */
async function columnTexts(field: string): Promise<string[]> {
  const { page } = watched;
  const fields = await page
    .locator('[data-testid="records"] thead th')
    .evaluateAll((ths) => ths.map((th) => th.getAttribute('data-field')));
  const index = fields.indexOf(field);
  if (index < 0) throw new Error(`no column ${field}`);
  return page
    .locator('[data-testid="record-row"]')
    .evaluateAll((rows, i) => rows.map((row) => row.children[i]?.firstChild?.textContent ?? ''), index);
}

describe('the table in a browser', () => {
  it('keeps the sorted column when the page lacks it, and its header reverses the sort, missing values last both ways', async () => {
    const { page } = watched;
    await page.goto(`${base()}?sort=temp&size=10&page=3`);
    // The third page holds only records without a temp: the column is still there.
    expect(await columnTexts('temp')).toEqual(Array.from({ length: 10 }, () => ''));
    await page.goto(`${base()}?sort=temp&size=10`);
    expect((await columnTexts('temp'))[0]).toBe('10.0');
    await Promise.all([page.waitForNavigation(), page.locator('th[data-field="temp"] a.sort').click()]);
    expect(new URL(page.url()).searchParams.get('sort')).toBe('-temp');
    expect((await columnTexts('temp'))[0]).toBe('29.0');
    await Promise.all([page.waitForNavigation(), page.locator('th[data-field="temp"] a.sort').click()]);
    expect(new URL(page.url()).searchParams.get('sort')).toBe('temp');
  });

  it("filters, facets, sorts down and hides from a column's menu", async () => {
    const { page } = watched;
    await page.goto(`${base()}?col=n&col=station&col=temp&col=when`);
    const menu = page.locator('th[data-field="temp"] [data-testid="column-menu"]');
    await menu.locator('summary').click();
    await menu.locator('select[name="op"]').selectOption('gte');
    await menu.locator('input[name="v"]').fill('25');
    await Promise.all([page.waitForNavigation(), menu.getByRole('button', { name: 'Filter' }).click()]);
    const url = new URL(page.url());
    expect([url.searchParams.get('f'), url.searchParams.get('op'), url.searchParams.get('v')]).toEqual(['temp', 'gte', '25']);
    expect(await columnTexts('temp')).toEqual(['25.0', '26.0', '27.0', '28.0', '29.0']);
    const station = page.locator('th[data-field="station"] [data-testid="column-menu"]');
    await station.locator('summary').click();
    await Promise.all([page.waitForNavigation(), station.getByTestId('menu-facet').click()]);
    expect(await page.locator('[data-testid="facet"][data-field="station"]').count()).toBe(1);
    const n = page.locator('th[data-field="n"] [data-testid="column-menu"]');
    await n.locator('summary').click();
    await Promise.all([page.waitForNavigation(), n.getByTestId('menu-sort-down').click()]);
    expect((await columnTexts('n'))[0]).toBe('59');
    // Hide: the column leaves the URL's columns; those the view sorts, filters or facets by have no Hide.
    expect(await n.getByTestId('menu-hide').count()).toBe(0);
    const when = page.locator('th[data-field="when"] [data-testid="column-menu"]');
    await when.locator('summary').click();
    await Promise.all([page.waitForNavigation(), when.getByTestId('menu-hide').click()]);
    expect(new URL(page.url()).searchParams.getAll('col')).toEqual(['n', 'station', 'temp']);
    const fields = await page
      .locator('[data-testid="records"] thead th')
      .evaluateAll((ths) => ths.map((th) => th.getAttribute('data-field')));
    expect(fields).toEqual(['n', 'station', 'temp']);
  });

  it('cuts a 300-character field name short on every tab, with the whole name as its tooltip', async () => {
    const { page } = watched;
    const chart = new URLSearchParams({ tab: 'chart', x: 'when', y: LONG_NAME });
    for (const url of [
      `${base()}?col=${LONG_NAME}&col=n`,
      `${base()}?tab=schema`,
      `${base()}?${chart.toString()}`,
      `${base()}?facet=${LONG_NAME}`,
    ]) {
      await page.goto(url);
      const width = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(width, url).toBeLessThanOrEqual(1440);
      expect(await page.locator(`[title="${LONG_NAME}"]`).count(), url).toBeGreaterThan(0);
    }
  });

  it('summarizes by a field from the Summarize tab: a table, a bar chart and the pipeline', async () => {
    const { page } = watched;
    await page.goto(base());
    await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Summarize' }).click()]);
    await page.locator('[data-testid="summary-group"]').first().selectOption('station');
    await page.locator('[data-testid="summary-measure"]').selectOption('temp');
    await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Summarize' }).click()]);
    expect(await page.locator('[data-testid="summary-row"]').count()).toBe(7);
    expect(await page.locator('[data-testid="summary-chart"] rect').count()).toBe(7);
    expect(await page.getByTestId('summary-pipeline').textContent()).toContain('"$group"');
    await screenshot(page, 'explorer-summary');
    await Promise.all([page.waitForNavigation(), page.locator('[data-testid="summary-row"] a').first().click()]);
    expect(new URL(page.url()).searchParams.get('f')).toBe('station');
    expect(await page.locator('[data-testid="record-row"]').count()).toBe(9);
  });

  it('asks for nothing that fails (the favicon is there), with no script error or CSP complaint, compressed', async () => {
    await watched.page.goto(`${base()}?tab=chart&x=when&y=n`);
    await watched.page.locator('#explorer-chart canvas').first().waitFor();
    await watched.page.goto(`${base()}?tab=map`);
    expect(failed).toEqual([]);
    expect(watched.pageErrors).toEqual([]);
    expect(watched.cspViolations).toEqual([]);
    expect(encodings.get(new URL(base()).pathname)).toMatch(/^(br|gzip)$/);
    const files = [...encodings].filter(([path]) => path.startsWith('/api/explore/static/'));
    expect(files.length).toBeGreaterThan(2);
    for (const [path, encoding] of files) expect(encoding, path).toMatch(/^(br|gzip)$/);
  });
});
