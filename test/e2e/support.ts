/**
 * Browser-test helpers: Debian's Chromium driven by playwright-core (no browser download), a
 * record of every request each page makes (to prove nothing leaves the machine) and of every
 * Content-Security-Policy complaint, and screenshots for people to look at.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Git-ignored; every run writes the current screenshots here. */
export const SCREENSHOT_DIR = join(repoRoot, 'test-output', 'screenshots');
/** The manual's images (docs/administration.md); refreshed only when asked (UPDATE_DOC_SCREENSHOTS=1), then committed. */
const DOC_SCREENSHOT_DIR = join(repoRoot, 'docs', 'screenshots');

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: the browser tests use Debian's chromium (bash test/support/prepare-env.sh installs it).`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

export interface Watched {
  context: BrowserContext;
  page: Page;
  /** Every URL any page of this context requested. */
  requests: string[];
  /** Console messages about blocked content (Content-Security-Policy violations). */
  cspViolations: string[];
  /** Uncaught script errors. */
  pageErrors: string[];
}

export async function watchedPage(browser: Browser): Promise<Watched> {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
  const watched: Watched = { context, page: await context.newPage(), requests: [], cspViolations: [], pageErrors: [] };
  context.on('request', (request) => watched.requests.push(request.url()));
  watched.page.on('console', (message) => {
    if (/Content Security Policy|Refused to (load|execute|apply)/i.test(message.text())) watched.cspViolations.push(message.text());
  });
  watched.page.on('pageerror', (error) => watched.pageErrors.push(error.message));
  return watched;
}

/** The requests that did not go to `origin` (data: and blob: URLs stay in the page). */
export function externalRequests(watched: Watched, origin: string): string[] {
  return watched.requests.filter((url) => !url.startsWith(`${origin}/`) && !/^(data|blob):/.test(url));
}

/** The viewport (what a person sees first, and small files), or the whole page when asked. */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const file = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, animations: 'disabled', fullPage: options.fullPage === true });
  if (process.env.UPDATE_DOC_SCREENSHOTS === '1') {
    await mkdir(DOC_SCREENSHOT_DIR, { recursive: true });
    await copyFile(file, join(DOC_SCREENSHOT_DIR, `${name}.png`));
  }
  return file;
}

/**
 * Opens an admin page as a person would: the page sends the browser to the login form, which
 * brings it back once the password is accepted. The wait is generous because the first admin
 * page of a process may build the components bundle first.
 */
export async function signInThrough(page: Page, url: string, username: string, password: string): Promise<void> {
  await page.goto(url);
  if (new URL(page.url()).pathname !== '/api/auth/login/') throw new Error(`expected the login form, got ${page.url()}`);
  await page.fill('#id_username', username);
  await page.fill('#id_password', password);
  await Promise.all([page.waitForNavigation({ timeout: 100_000 }), page.click('button[type=submit]')]);
}
