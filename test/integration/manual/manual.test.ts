/**
 * The manual served by the service itself through the real HTTP server: its pages, assets and
 * search index from the built site, under the manual's own Content-Security-Policy (the inline
 * scripts VitePress writes allowed by hash, nothing inline otherwise, same origin only); 404s
 * for a missing page and for a server whose manual was never built; and the "Manual" link on
 * the browsable API, the explorer and the admin site.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { builtManual } from '../../support/manual.js';
import { ADMIN, ROOT, ensureRoot, loggedIn } from '../admin/support.js';

let app: TestApp;
let bare: TestApp;
let scratch: string;
let manualDir: string;
let token: string;

const get = (path: string, accept = 'text/html', on: TestApp = app) => call(on.url, 'GET', path, { accept });
const directive = (policy: string, name: string) =>
  policy
    .split(/;\s*/)
    .find((d) => d.startsWith(`${name} `))
    ?.split(' ')
    .slice(1) ?? [];

beforeAll(async () => {
  manualDir = await builtManual();
  scratch = await mkdtemp(join(tmpdir(), 'cybercom-manual-test-'));
  // A components bundle of this checkout's own (the shared cache may hold another checkout's).
  app = await startTestApp({ MANUAL_DIR: manualDir, ADMIN_BUNDLE_DIR: join(scratch, 'adminjs') });
  bare = await startTestApp({ MANUAL_DIR: join(scratch, 'never-built') });
  await ensureRoot(app);
  token = await app.users.tokenFor(ROOT.username);
}, 180_000);

afterAll(async () => {
  await app?.close();
  await bare?.close();
  if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
});

describe('the manual at /api/manual/', () => {
  it('serves its index under a policy that allows exactly its inline scripts by hash', async () => {
    const res = await get('/api/manual/');
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).toContain('<script type="module" src="/api/manual/assets/app.');
    const policy = res.headers.get('content-security-policy') ?? '';
    expect(policy).not.toContain('unsafe-inline');
    expect(policy).not.toContain('nonce-');
    expect(policy).not.toMatch(/https?:/);
    const scripts = directive(policy, 'script-src');
    const inline = [...res.text.matchAll(/<script\b(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map((m) => m[1] ?? '');
    expect(inline.length).toBeGreaterThan(0);
    for (const text of inline) expect(scripts).toContain(`'sha256-${createHash('sha256').update(text).digest('base64')}'`);
    // The code highlighting's colours, as style attributes, by hash too.
    const page = await get('/api/manual/using-the-api.html');
    const style = /\sstyle="([^"]+)"/.exec(page.text)?.[1] ?? '';
    expect(style).not.toBe('');
    expect(directive(page.headers.get('content-security-policy') ?? '', 'style-src')).toContain(
      `'sha256-${createHash('sha256').update(style).digest('base64')}'`,
    );
    expect(directive(policy, 'default-src')).toEqual(["'self'"]);
    expect(directive(policy, 'connect-src')).toEqual(["'self'"]);
    expect(directive(policy, 'frame-ancestors')).toEqual(["'none'"]);
    expect(res.headers.get('cache-control')).toBe('no-cache');
  });

  it('serves a page and an asset with their types, the hashed assets cached for good', async () => {
    const res = await get('/api/manual/explorer.html');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).toContain('Data explorer');
    const script = /src="(\/api\/manual\/assets\/app\.[^"]+\.js)"/.exec(res.text)?.[1] ?? '';
    const asset = await get(script, '*/*');
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/^(application|text)\/javascript/);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const css = /href="(\/api\/manual\/assets\/style\.[^"]+\.css)"/.exec(res.text)?.[1] ?? '';
    expect((await get(css, 'text/css,*/*')).headers.get('content-type')).toMatch(/^text\/css/);
    const image = await get(
      '/api/manual/assets/' +
        (/assets\/(explorer-map\.[^"]+\.png)/.exec(await readFile(join(manualDir, 'explorer.html'), 'utf8'))?.[1] ?? ''),
      'image/*',
    );
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
  });

  it('redirects /api/manual to the slash, answers 404 for a missing page and refuses writes', async () => {
    const bareRoot = await get('/api/manual');
    expect(bareRoot.status).toBe(301);
    expect(bareRoot.headers.get('location')).toBe('/api/manual/');
    const missing = await call(app.url, 'GET', '/api/manual/no-such-page.html');
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('no_such_page');
    // The build's stamp and other dot-files are not pages.
    expect((await call(app.url, 'GET', '/api/manual/.source-digest')).status).toBe(404);
    const outside = await call(app.url, 'GET', '/api/manual/assets/%2e%2e%2f..%2fpackage.json');
    expect(outside.status, outside.text).toBe(404);
    const post = await call(app.url, 'POST', '/api/manual/', { token, body: {} });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('answers 404 manual_not_built, in JSON and as a page, where the manual was not built', async () => {
    const json = await call(bare.url, 'GET', '/api/manual/');
    expect(json.status).toBe(404);
    expect(json.json.error.code).toBe('manual_not_built');
    expect(json.json.error.message).toContain('ops/build-manual.sh');
    const html = await get('/api/manual/installing.html', 'text/html', bare);
    expect(html.status).toBe(404);
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html.text).toContain('manual_not_built');
  });
});

describe('links to the manual', () => {
  it('is linked from the browsable API and listed at its root', async () => {
    const res = await get('/api/');
    expect(res.text).toContain('<a href="/api/manual/" class="manual">Manual</a>');
    const json = await call(app.url, 'GET', '/api/');
    expect(json.json.manual).toBe(`${app.url}/api/manual/`);
  });

  it('is linked from the explorer', async () => {
    const db = `${app.prefix}manual_links`;
    expect((await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db } })).status).toBe(201);
    expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token, body: { collection: 'c' } })).status).toBe(201);
    try {
      const res = await call(app.url, 'GET', `/api/explore/data_store/${db}/c/`, { token, accept: 'text/html' });
      expect(res.status, res.text).toBe(200);
      expect(res.text).toContain('<a class="manual" href="/api/manual/">Manual</a>');
    } finally {
      await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db, action: 'delete' } });
    }
  });

  it('is linked from the admin site dashboard', async () => {
    const browser = await loggedIn(app, ROOT.username, ROOT.password);
    const page = await browser.get(ADMIN, { accept: 'text/html' });
    expect(page.status).toBe(200);
    const bundle = await browser.get(`${ADMIN}/frontend/assets/components.bundle.js`, { accept: '*/*' });
    expect(bundle.status).toBe(200);
    expect(bundle.text).toContain('/api/manual/');
  }, 180_000);
});
