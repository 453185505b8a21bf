/**
 * The manual the service serves itself, in a real browser (Debian's Chromium): reached from the
 * browsable API's "Manual" link and the admin site's (its dashboard's link, its sidebar's page), it runs as the VitePress site it is
 * (moving to another page without reloading, the built-in search, the code highlighting's
 * colours) under its own Content-Security-Policy, which it never trips, and nothing is
 * requested off this machine.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.js';
import { builtManual } from '../support/manual.js';
import { externalRequests, launchChromium, screenshot, signInThrough, watchedPage, type Watched } from './support.js';

let app: TestApp;
let browser: Browser;
let reader: Watched;
let scratch: string;

beforeAll(async () => {
  const manualDir = await builtManual();
  scratch = await mkdtemp(join(tmpdir(), 'cybercom-manual-e2e-'));
  // A components bundle of this checkout's own (the shared cache may hold another checkout's).
  app = await startTestApp({ MANUAL_DIR: manualDir, ADMIN_BUNDLE_DIR: join(scratch, 'adminjs') });
  await app.users.ensureSuperuser({ username: 'root', email: 'root@example.org', password: 'root-pass-123' });
  browser = await launchChromium();
  reader = await watchedPage(browser);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

describe('the manual in a browser', () => {
  it("opens from the browsable API's Manual link and moves to another page without reloading", async () => {
    const { page } = reader;
    await page.goto(`${app.url}/api/`);
    await Promise.all([page.waitForURL(`${app.url}/api/manual/`), page.locator('a.manual', { hasText: 'Manual' }).click()]);
    await page.locator('.VPContent h1').first().waitFor();
    // Marks the document: a full reload would lose the mark, VitePress's own navigation keeps it.
    await page.evaluate(() => {
      (window as unknown as { __samePage: boolean }).__samePage = true;
    });
    await Promise.all([
      page.waitForURL(`${app.url}/api/manual/explorer.html`),
      page.locator('.VPSidebar a', { hasText: 'Data explorer' }).first().click(),
    ]);
    await expect.poll(() => page.locator('.VPContent h1').first().innerText()).toContain('Data explorer');
    expect(await page.evaluate(() => (window as unknown as { __samePage?: boolean }).__samePage)).toBe(true);
    await screenshot(page, 'manual-explorer');
  });

  it('shows code in colour: the highlighting style values are allowed', async () => {
    const { page } = reader;
    await page.goto(`${app.url}/api/manual/using-the-api.html`);
    const token = page.locator('.vp-code span[style]').first();
    await token.waitFor();
    expect(await token.evaluate((el) => getComputedStyle(el).getPropertyValue('--shiki-light').trim())).toMatch(/^#[0-9A-Fa-f]{6}$/);
  });

  it('searches the manual with its built-in search', async () => {
    const { page } = reader;
    await page.locator('#local-search button').click();
    await page.locator('.VPLocalSearchBox input').fill('histogram');
    await page.locator('.VPLocalSearchBox .result').first().waitFor();
    expect(await page.locator('.VPLocalSearchBox .result').count()).toBeGreaterThan(0);
    await page.keyboard.press('Escape');
  });

  it("is linked from the admin site's dashboard and sidebar", async () => {
    const admin = await watchedPage(browser);
    try {
      await signInThrough(admin.page, `${app.url}/api/admin`, 'root', 'root-pass-123');
      const link = admin.page.getByTestId('manual-link');
      await link.waitFor({ timeout: 100_000 });
      await Promise.all([admin.page.waitForURL(`${app.url}/api/manual/`), link.click()]);
      await admin.page.locator('.VPContent h1').first().waitFor();
      // The sidebar's Manual page, on every admin page, sends the browser to the manual too.
      await admin.page.goto(`${app.url}/api/admin/pages/operations`);
      const entry = admin.page.locator('a[href="/api/admin/pages/manual"]').first();
      await entry.waitFor({ timeout: 60_000 });
      expect(await entry.innerText()).toContain('Manual');
      await Promise.all([admin.page.waitForURL(`${app.url}/api/manual/`), entry.click()]);
      await admin.page.locator('.VPContent h1').first().waitFor();
      expect(admin.cspViolations).toEqual([]);
      expect(externalRequests(admin, app.url)).toEqual([]);
    } finally {
      await admin.context.close();
    }
  }, 180_000);

  it('never tripped the Content-Security-Policy, raised no error, and requested nothing off this machine', () => {
    expect(reader.cspViolations).toEqual([]);
    expect(reader.pageErrors).toEqual([]);
    expect(externalRequests(reader, app.url)).toEqual([]);
    // The pages, their scripts and the search index all came from /api/manual/.
    expect(reader.requests.some((url) => /\/api\/manual\/assets\/chunks\/@localSearchIndex/.test(url))).toBe(true);
  });
});
