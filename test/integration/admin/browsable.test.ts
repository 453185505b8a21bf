/**
 * The browsable API's HTML pages: every value from the database or the request escaped (records
 * with <script>, quotes and </textarea>, hostile names and keys), breadcrumbs and paging links,
 * forms only where the caller may write, the page script, security headers on HTML responses,
 * and the session cookie's flags over HTTP and behind an HTTPS proxy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PageForm } from '../../../src/render/html-forms.js';
import { browserScript } from '../../../src/http/browser-bundle.js';
import { browsableScriptPath } from '../../../src/render/html-script.js';
import { htmlDocument } from '../../../src/render/html.js';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { Browser, closeAndDrop } from '../auth/helpers.js';
import { ROOT, ensureRoot, loggedIn } from './support.js';

const HOSTILE = '<script>alert("x")</script> \' " </textarea><img src=x onerror=alert(1)>';
/** A key with markup and both quotes. */
const HOSTILE_KEY = '</textarea><script>alert("2")</script>\'';
/** Quotes, ampersand and markup in a collection name. */
const HOSTILE_COLLECTION = `c'"&<x>`;

let app: TestApp;
let token: string;
let db: string;
let rootBrowser: Browser;
let readerBrowser: Browser;
let recordId: string;

const html = { accept: 'text/html' };
const colPath = () => `/api/data_store/data/${db}/samples/`;

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000' });
  await ensureRoot(app);
  token = await app.users.tokenFor('root');
  db = app.prefix;
  await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db } });
  for (const collection of ['samples', HOSTILE_COLLECTION]) {
    const created = await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token, body: { collection } });
    expect(created.status, created.text).toBe(201);
  }
  const inserted = await call(app.url, 'POST', colPath(), {
    token,
    body: { note: HOSTILE, [HOSTILE_KEY]: 1, link: 'javascript:alert(1)' },
  });
  expect(inserted.status, inserted.text).toBe(201);
  recordId = inserted.json._id as string;
  const more = Array.from({ length: 11 }, (_, i) => ({ i }));
  await call(app.url, 'POST', colPath(), { token, body: more });
  await app.users.createUser({ username: 'reader', password: 'reader-pass-123', permissions: [`data_store.${db}.samples.safe`] });
  rootBrowser = await loggedIn(app, ROOT.username, ROOT.password);
  readerBrowser = await loggedIn(app, 'reader', 'reader-pass-123');
});

afterAll(async () => {
  await call(app.url, 'POST', '/api/data_store/data/', { token, body: { database: db, action: 'delete' } }).catch(() => undefined);
  await closeAndDrop(app);
});

/** The only tags a page may contain: its own markup; no script except the page script file. */
function expectEscaped(text: string): void {
  expect(text).not.toContain('<script>alert');
  expect(text).not.toContain('<img src=x');
  const scripts = text.match(/<script\b[^>]*>/g) ?? [];
  for (const tag of scripts)
    expect(tag).toMatch(/^<script src="\/api\/static\/browsable\.[A-Za-z0-9]{12}\.js" nonce="[A-Za-z0-9+/=]+" defer>$/);
  // Our own form has at most one textarea per field; a record value must not close one early.
  const opened = (text.match(/<textarea\b/g) ?? []).length;
  expect((text.match(/<\/textarea>/g) ?? []).length).toBe(opened);
}

describe('escaping', () => {
  it('escapes hostile values and keys on the collection page', async () => {
    const page = await rootBrowser.get(colPath(), html);
    expect(page.status).toBe(200);
    expectEscaped(page.text);
    expect(page.text).toContain('&lt;script&gt;alert(\\&quot;x\\&quot;)&lt;/script&gt;');
    expect(page.text).toContain('&lt;/textarea&gt;');
    expect(page.text).not.toMatch(/href="javascript:/);
  });

  it('escapes them on the record page, whose form is filled by the script, not the server', async () => {
    const page = await rootBrowser.get(`${colPath()}${recordId}/`, html);
    expect(page.status).toBe(200);
    expectEscaped(page.text);
    expect(page.text).toMatch(/<textarea id="api-form-content" name="content"[^>]*><\/textarea>/);
  });

  it('escapes hostile collection names in links, breadcrumbs and form URLs', async () => {
    const list = await rootBrowser.get(`/api/data_store/data/${db}/`, html);
    expectEscaped(list.text);
    // Inside the JSON shown on the page: JSON-escaped first (\"), then HTML-escaped.
    expect(list.text).toContain('c&#39;\\&quot;&amp;&lt;x&gt;');
    const page = await rootBrowser.get(`/api/data_store/data/${db}/${encodeURIComponent(HOSTILE_COLLECTION)}/`, html);
    expect(page.status).toBe(200);
    expectEscaped(page.text);
    expect(page.text).toContain('data-url="/api/data_store/data/');
  });

  it('escapes what comes from the request URL', async () => {
    const page = await rootBrowser.get(`${colPath()}?page_size=2&x=${encodeURIComponent('"><script>alert(2)</script>')}`, html);
    expectEscaped(page.text);
  });
});

describe('navigation', () => {
  it('shows breadcrumbs Api Root / Data store / database / collection / record', async () => {
    const page = await rootBrowser.get(`${colPath()}${recordId}/`, html);
    const crumbs = [
      ...(/<ul class="breadcrumb">([\s\S]*?)<\/ul>/.exec(page.text)?.[1] ?? '').matchAll(/<a href="([^"]+)">([^<]+)<\/a>/g),
    ].map((m) => [m[1], m[2]]);
    expect(crumbs).toEqual([
      ['/api/', 'Api Root'],
      ['/api/data_store/data/', 'Data store'],
      [`/api/data_store/data/${db}/`, db],
      [colPath(), 'samples'],
      [`${colPath()}${recordId}/`, recordId],
    ]);
  });

  it('links the next and previous pages', async () => {
    const first = await rootBrowser.get(colPath(), html);
    expect(first.text).toContain('Page 1 of 2 (12 in all)');
    expect(first.text).toMatch(new RegExp(`<a href="http://127\\.0\\.0\\.1:\\d+${colPath()}\\?page=2" rel="next">Next »</a>`));
    expect(first.text).toContain('<span class="disabled">« Previous</span>');
    const second = await rootBrowser.get(`${colPath()}?page=2`, html);
    expect(second.text).toMatch(/rel="prev">« Previous<\/a>/);
  });

  it('shows the logged-in user with a logout link, and anonymous visitors a login link', async () => {
    const page = await rootBrowser.get('/api/', html);
    expect(page.text).toContain('root · <a href="/api/auth/logout/">Log out</a>');
    const anonymous = await new Browser(app.url).get('/api/', html);
    expect(anonymous.text).toContain('<a href="/api/auth/login/?next=%2Fapi%2F">Log in</a>');
  });
});

describe('forms', () => {
  const formKind = (text: string) => /<form class="api-form" data-browsable="([^"]+)" data-url="([^"]+)"/.exec(text)?.slice(1);

  it('offers each write form only to callers who may write', async () => {
    expect(formKind((await rootBrowser.get('/api/data_store/data/', html)).text)).toEqual(['databases', '/api/data_store/data/']);
    expect(formKind((await rootBrowser.get(`/api/data_store/data/${db}/`, html)).text)).toEqual([
      'collections',
      `/api/data_store/data/${db}/`,
    ]);
    expect(formKind((await rootBrowser.get(colPath(), html)).text)).toEqual(['collection', colPath()]);
    expect(formKind((await rootBrowser.get(`${colPath()}${recordId}/`, html)).text)).toEqual(['record', `${colPath()}${recordId}/`]);
    const readerPage = await readerBrowser.get(colPath(), html);
    expect(readerPage.status).toBe(200);
    expect(formKind(readerPage.text)).toBeUndefined();
    expect(readerPage.text).not.toContain('browsable.js');
    // Not on error pages, and not in the machine formats.
    const refused = await readerBrowser.get(`/api/data_store/data/${db}/${encodeURIComponent(HOSTILE_COLLECTION)}/`, html);
    expect(refused.status).toBe(403);
    expect(formKind(refused.text)).toBeUndefined();
    expect((await rootBrowser.get(`${colPath()}?format=json`)).text).not.toContain('<form');
  });

  it('offers the schedule form on the schedules list to callers who may schedule, and not to others', async () => {
    expect(formKind((await rootBrowser.get('/api/queue/schedules/', html)).text)).toEqual(['schedule', '/api/queue/schedules/']);
    const readerPage = await readerBrowser.get('/api/queue/schedules/', html);
    expect(readerPage.status).toBe(200);
    expect(formKind(readerPage.text)).toBeUndefined();
  });

  it('serves the page script itself (the bundle of browser/browsable.ts): by the hashed name pages load, cached for good, and by its plain name, revalidated', async () => {
    const page = await rootBrowser.get(colPath(), html);
    const src = /<script src="([^"]+)"/.exec(page.text)?.[1] ?? '';
    expect(src).toBe(browsableScriptPath());
    const script = await new Browser(app.url).get(src, { accept: '*/*' });
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(script.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(script.text).toBe(browserScript('browsable'));
    expect(script.text).toContain('X-CSRFToken');
    expect(script.text).toContain('csrftoken');
    const plain = await new Browser(app.url).get('/api/static/browsable.js', { accept: '*/*' });
    expect(plain.text).toBe(script.text);
    expect(plain.headers.get('cache-control')).toBe('no-cache');
    const again = await new Browser(app.url).get('/api/static/browsable.js', {
      accept: '*/*',
      'if-none-match': plain.headers.get('etag') ?? '',
    });
    expect(again.status).toBe(304);
    expect((await new Browser(app.url).get('/api/static/other.js', { accept: '*/*' })).status).not.toBe(200);
  });
});

describe('headers and cookies', () => {
  it('sends the security headers with HTML pages', async () => {
    const page = await rootBrowser.get(colPath(), html);
    const csp = page.headers.get('content-security-policy') ?? '';
    const nonce = /<style nonce="([^"]+)">/.exec(page.text)?.[1];
    expect(nonce).toBeDefined();
    expect(csp).toContain(`script-src 'self' 'nonce-${nonce}'`);
    expect(csp).toContain(`style-src 'self' 'nonce-${nonce}'`);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('referrer-policy')).toBe('same-origin');
    expect(page.headers.get('strict-transport-security')).toBeNull(); // plain HTTP here
  });

  it('sends machine answers (a record, its CSV, an error) the API set instead: no nonce, no page headers, no-store', async () => {
    const answers = [
      await call(app.url, 'GET', `${colPath()}${recordId}/`, { token }),
      await call(app.url, 'GET', `${colPath()}?format=csv`, { token }),
      await call(app.url, 'GET', `${colPath()}?format=ndjson`),
      await call(app.url, 'GET', `/api/data_store/data/${db}/missing/x/`, { token }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 401, 404]);
    for (const answer of answers) {
      expect(answer.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('x-frame-options')).toBe('DENY');
      expect(answer.headers.get('cross-origin-resource-policy')).toBe('same-origin');
      expect(answer.headers.get('referrer-policy')).toBeNull();
      expect(answer.headers.get('x-xss-protection')).toBeNull();
      expect(answer.headers.get('x-request-id')).not.toBeNull();
    }
  });

  it('sets the session cookie HttpOnly and SameSite=Lax, not Secure over plain HTTP', async () => {
    const b = new Browser(app.url);
    await b.postJson('/api/auth/login/', { username: 'reader', password: 'reader-pass-123' });
    const session = b.lastSetCookie.find((c) => c.startsWith('sessionid='));
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Lax/i);
    expect(session).not.toMatch(/Secure/i);
  });

  it('marks the cookies Secure when served over HTTPS (behind the trusted proxy)', async () => {
    const proxied = await startTestApp({ LOGIN_MAX_FAILURES: '1000', TRUST_PROXY: 'true' });
    try {
      await proxied.users.createUser({ username: 'sam', password: 'sam-pass-123' });
      const b = new Browser(proxied.url);
      const res = await b.request('POST', '/api/auth/login/', {
        headers: { 'x-forwarded-proto': 'https' },
        body: JSON.stringify({ username: 'sam', password: 'sam-pass-123' }),
      });
      expect(res.status, res.text).toBe(200);
      for (const name of ['sessionid', 'csrftoken']) {
        const cookie = b.lastSetCookie.find((c) => c.startsWith(`${name}=`));
        expect(cookie, name).toMatch(/;\s*Secure/i);
        expect(cookie, name).toMatch(/SameSite=Lax/i);
      }
      expect(b.lastSetCookie.find((c) => c.startsWith('sessionid='))).toMatch(/HttpOnly/i);
    } finally {
      await closeAndDrop(proxied);
    }
  });
});

describe('the task-run form (rendered for the queue routes)', () => {
  const page = (form: unknown) =>
    htmlDocument(200, {
      title: 'T',
      requestUrl: 'http://localhost/api/queue/run/tasks.add/',
      breadcrumbs: [{ name: 'Api Root', href: '/api/' }],
      user: { username: 'u' },
      method: 'GET',
      form: form as PageForm,
    }).whole({ task: 'tasks.add' });

  it('offers args, kwargs, tags and queue, posting to the page itself', () => {
    const html = page({ kind: 'task-run', postUrl: 'http://localhost/api/queue/run/tasks.add/', task: 'tasks.add' });
    expect(html).toContain(
      '<form class="api-form" data-browsable="task-run" data-url="/api/queue/run/tasks.add/" data-task="tasks.add" hidden>',
    );
    for (const field of ['args', 'kwargs', 'tags', 'queue']) expect(html).toContain(`name="${field}"`);
    expect(html).toContain(`<script src="${browsableScriptPath()}" defer></script>`);
  });

  it('escapes the task name and refuses URLs that are not this site', () => {
    const html = page({ kind: 'task-run', postUrl: '/api/queue/run/x/', task: '"><script>alert(1)</script>' });
    expect(html).not.toContain('<script>alert');
    expect(html).toContain('data-task="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
    for (const postUrl of ['//evil.example/x', 'javascript:alert(1)', '/a b']) {
      expect(page({ kind: 'task-run', postUrl, task: 't' })).not.toContain('<form');
    }
  });
});
