/**
 * Browser sessions: the login page and form, JSON login, session cookie flags, session id
 * regeneration, CSRF on unsafe session requests, logout, and inactive accounts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { Browser, closeAndDrop, expectError, sleep } from './helpers.js';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000' });
  await app.users.createUser({ username: 'sam', password: 'sam-pass-123', email: 'sam@example.org' });
  await app.users.createUser({ username: 'kim', password: 'kim-pass-123' });
});

afterAll(async () => {
  await closeAndDrop(app);
});

function hiddenField(html: string, name: string): string {
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (match === null) throw new Error(`no hidden field ${name} in page`);
  return match[1] as string;
}

function setCookie(browser: Browser, name: string): string | undefined {
  return browser.lastSetCookie.find((line) => line.startsWith(`${name}=`));
}

describe('login page and form', () => {
  it('renders a self-contained form with a CSRF cookie and field', async () => {
    const b = new Browser(app.url);
    const page = await b.get('/api/auth/login/?next=/api/queue/', { accept: 'text/html' });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    const token = hiddenField(page.text, 'csrfmiddlewaretoken');
    expect(b.cookies.get('csrftoken')).toBe(token);
    expect(setCookie(b, 'csrftoken')).toMatch(/SameSite=Lax/i);
    expect(setCookie(b, 'csrftoken')).not.toMatch(/HttpOnly/i); // page scripts must read it
    expect(hiddenField(page.text, 'next')).toBe('/api/queue/');
    // No external assets; the inline style carries the CSP nonce.
    expect(page.text).not.toMatch(/(src|href)="https?:/);
    const nonce = /<style nonce="([^"]+)">/.exec(page.text)?.[1];
    expect(nonce).toBeDefined();
    expect(page.headers.get('content-security-policy')).toContain(`'nonce-${nonce}'`);
  });

  it('escapes what it echoes and drops off-site `next` values', async () => {
    const b = new Browser(app.url);
    const page = await b.get(`/api/auth/login/?next=${encodeURIComponent('https://evil.example/"><script>')}`, { accept: 'text/html' });
    expect(page.text).not.toContain('<script>');
    expect(hiddenField(page.text, 'next')).toBe('/api/');
    const xss = await b.get(`/api/auth/login/?next=${encodeURIComponent('/api/"><script>alert(1)</script>')}`, { accept: 'text/html' });
    expect(xss.text).not.toContain('<script>alert(1)</script>');
  });

  it('logs in with the form and redirects to `next`', async () => {
    const b = new Browser(app.url);
    const page = await b.get('/api/auth/login/', { accept: 'text/html' });
    const res = await b.postForm('/api/auth/login/', {
      username: 'sam',
      password: 'sam-pass-123',
      csrfmiddlewaretoken: hiddenField(page.text, 'csrfmiddlewaretoken'),
      next: '/api/data_store/data/',
    });
    expect(res.status, res.text).toBe(302);
    expect(res.headers.get('location')).toBe('/api/data_store/data/');
    const session = setCookie(b, 'sessionid');
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Lax/i);
    expect(session).not.toMatch(/Secure/i); // plain HTTP here
    const profile = await b.get('/api/user/');
    expect(profile.status).toBe(200);
    expect(profile.json.username).toBe('sam');
  });

  it('redirects to /api/ by default and ignores an off-site `next`', async () => {
    const b = new Browser(app.url);
    const page = await b.get('/api/auth/login/', { accept: 'text/html' });
    const res = await b.postForm('/api/auth/login/', {
      username: 'sam',
      password: 'sam-pass-123',
      csrfmiddlewaretoken: hiddenField(page.text, 'csrfmiddlewaretoken'),
      next: '//evil.example/',
    });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/api/');
    // Paths that become protocol-relative only after dot segments are resolved.
    for (const next of ['/.//evil.example', '/a/..//evil.example', '/%2e//evil.example']) {
      const again = new Browser(app.url);
      const form = await again.get('/api/auth/login/', { accept: 'text/html' });
      const answer = await again.postForm('/api/auth/login/', {
        username: 'sam',
        password: 'sam-pass-123',
        csrfmiddlewaretoken: hiddenField(form.text, 'csrfmiddlewaretoken'),
        next,
      });
      expect(answer.status, next).toBe(302);
      expect(answer.headers.get('location'), next).toBe('/api/');
    }
  });

  it('refuses a form post without the CSRF cookie/field pair', async () => {
    const b = new Browser(app.url);
    const noCookie = await b.postForm(
      '/api/auth/login/',
      { username: 'sam', password: 'sam-pass-123', csrfmiddlewaretoken: 'x'.repeat(43) },
      { accept: 'application/json' },
    );
    expectError(noCookie, 403, 'csrf_failed');
    await b.get('/api/auth/login/', { accept: 'text/html' });
    const noField = await b.postForm('/api/auth/login/', { username: 'sam', password: 'sam-pass-123' }, { accept: 'application/json' });
    expectError(noField, 403, 'csrf_failed');
    const wrongField = await b.postForm(
      '/api/auth/login/',
      { username: 'sam', password: 'sam-pass-123', csrfmiddlewaretoken: 'y'.repeat(43) },
      { accept: 'application/json' },
    );
    expectError(wrongField, 403, 'csrf_failed');
    expect(b.cookies.has('sessionid')).toBe(false);
  });

  it('accepts the header instead of the field (double submit)', async () => {
    const b = new Browser(app.url);
    await b.get('/api/auth/login/', { accept: 'text/html' });
    const res = await b.postForm(
      '/api/auth/login/',
      { username: 'sam', password: 'sam-pass-123' },
      { 'X-CSRFToken': b.cookies.get('csrftoken') ?? '' },
    );
    expect(res.status).toBe(302);
  });

  it('re-renders the form with 400 on bad credentials', async () => {
    const b = new Browser(app.url);
    const page = await b.get('/api/auth/login/', { accept: 'text/html' });
    const res = await b.postForm('/api/auth/login/', {
      username: 'sam',
      password: 'wrong-password',
      csrfmiddlewaretoken: hiddenField(page.text, 'csrfmiddlewaretoken'),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.text).toMatch(/correct username and password/);
    expect(res.text).not.toContain('wrong-password');
    expect(hiddenField(res.text, 'csrfmiddlewaretoken')).toBe(b.cookies.get('csrftoken'));
    expect(b.cookies.has('sessionid')).toBe(false);
  });
});

describe('JSON login', () => {
  it('returns the username and a CSRF token, and sets both cookies', async () => {
    const b = new Browser(app.url);
    const res = await b.postJson('/api/auth/login/', { username: 'sam', password: 'sam-pass-123' });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ username: 'sam', csrftoken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(b.cookies.get('csrftoken')).toBe(res.json.csrftoken);
    expect(b.cookies.has('sessionid')).toBe(true);
  });

  it('refuses bad credentials with 401 invalid_credentials', async () => {
    const b = new Browser(app.url);
    expectError(await b.postJson('/api/auth/login/', { username: 'sam', password: 'nope-nope-nope' }), 401, 'invalid_credentials');
    expectError(await b.postJson('/api/auth/login/', { username: 'ghost', password: 'nope-nope-nope' }), 401, 'invalid_credentials');
    expect(b.cookies.has('sessionid')).toBe(false);
  });

  it('refuses to start a session for a request that carries an API token', async () => {
    const b = new Browser(app.url);
    const token = await app.users.tokenFor('sam');
    const res = await b.postJson('/api/auth/login/', { username: 'sam', password: 'sam-pass-123' }, { authorization: `Token ${token}` });
    expectError(res, 400, 'session_unavailable');
    expect(b.cookies.has('sessionid')).toBe(false);
  });

  it('regenerates the session id on login; the old id is dead', async () => {
    const b = new Browser(app.url);
    await b.loginJson('sam', 'sam-pass-123');
    const first = b.cookies.get('sessionid') as string;
    await b.loginJson('kim', 'kim-pass-123');
    const second = b.cookies.get('sessionid') as string;
    expect(second).not.toBe(first);
    expect((await b.get('/api/user/')).json.username).toBe('kim');
    const stale = await call(app.url, 'GET', '/api/user/', { headers: { cookie: `sessionid=${first}` } });
    expectError(stale, 401, 'not_authenticated');
  });

  it('records last_login', async () => {
    const b = new Browser(app.url);
    const before = Date.now();
    await b.loginJson('kim', 'kim-pass-123');
    const doc = await app.ctx.serviceDb.collection('auth_user').findOne({ username: 'kim' });
    expect((doc?.last_login as Date).getTime()).toBeGreaterThanOrEqual(before - 1000);
  });
});

describe('CSRF on session requests', () => {
  let b: Browser;
  let csrf: string;

  beforeAll(async () => {
    b = new Browser(app.url);
    csrf = await b.loginJson('sam', 'sam-pass-123');
  });

  it('allows safe methods without a token', async () => {
    expect((await b.get('/api/user/')).status).toBe(200);
  });

  it('refuses an unsafe request without the header', async () => {
    expectError(await b.postJson('/api/user/', { first_name: 'Mallory' }), 403, 'csrf_failed');
  });

  it('refuses a wrong header', async () => {
    expectError(await b.postJson('/api/user/', { first_name: 'Mallory' }, { 'X-CSRFToken': 'z'.repeat(43) }), 403, 'csrf_failed');
  });

  it('refuses a header that differs from the cookie', async () => {
    const forged = new Browser(app.url);
    forged.cookies.set('sessionid', b.cookies.get('sessionid') as string);
    forged.cookies.set('csrftoken', 'q'.repeat(43));
    expectError(await forged.postJson('/api/user/', { first_name: 'Mallory' }, { 'X-CSRFToken': csrf }), 403, 'csrf_failed');
  });

  it('refuses a header equal to a forged cookie that is not the session token', async () => {
    const forged = new Browser(app.url);
    forged.cookies.set('sessionid', b.cookies.get('sessionid') as string);
    forged.cookies.set('csrftoken', 'q'.repeat(43));
    expectError(await forged.postJson('/api/user/', { first_name: 'Mallory' }, { 'X-CSRFToken': 'q'.repeat(43) }), 403, 'csrf_failed');
  });

  it('refuses other unsafe endpoints too (data store)', async () => {
    expectError(await b.postJson('/api/data_store/data/', { database: 'csrfdb' }), 403, 'csrf_failed');
  });

  it('passes with the right header, and nothing changed before', async () => {
    const profile = await b.get('/api/user/');
    expect(profile.json.first_name).toBe('');
    const res = await b.postWithCsrf('/api/user/', { first_name: 'Samuel' });
    expect(res.status, res.text).toBe(200);
    expect(res.json.first_name).toBe('Samuel');
  });
});

describe('logout', () => {
  it('GET shows a confirmation page with a POST form (HTML), or says to POST (JSON)', async () => {
    const b = new Browser(app.url);
    await b.loginJson('kim', 'kim-pass-123');
    const page = await b.get('/api/auth/logout/', { accept: 'text/html' });
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<form method="post" action="\/api\/auth\/logout\/">/);
    expect(hiddenField(page.text, 'csrfmiddlewaretoken')).toBe(b.cookies.get('csrftoken'));
    const json = await b.get('/api/auth/logout/');
    expect(json.json).toMatchObject({ username: 'kim' });
    expect((await b.get('/api/user/')).status).toBe(200); // GET did not log out
  });

  it('POST needs the CSRF token when logged in', async () => {
    const b = new Browser(app.url);
    await b.loginJson('kim', 'kim-pass-123');
    expectError(await b.postJson('/api/auth/logout/', {}), 403, 'csrf_failed');
    expect((await b.get('/api/user/')).status).toBe(200);
  });

  it('JSON logout destroys the session', async () => {
    const b = new Browser(app.url);
    await b.loginJson('kim', 'kim-pass-123');
    const sid = b.cookies.get('sessionid') as string;
    const res = await b.request('POST', '/api/auth/logout/', { headers: { 'X-CSRFToken': b.cookies.get('csrftoken') ?? '' } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ detail: 'Logged out.' });
    expect(b.cookies.has('sessionid')).toBe(false);
    expectError(await call(app.url, 'GET', '/api/user/', { headers: { cookie: `sessionid=${sid}` } }), 401, 'not_authenticated');
  });

  it('the confirmation form logs out and redirects to /api/', async () => {
    const b = new Browser(app.url);
    await b.loginJson('kim', 'kim-pass-123');
    const page = await b.get('/api/auth/logout/', { accept: 'text/html' });
    const res = await b.postForm('/api/auth/logout/', { csrfmiddlewaretoken: hiddenField(page.text, 'csrfmiddlewaretoken') });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/api/');
    expectError(await b.get('/api/user/'), 401, 'not_authenticated');
  });
});

describe('inactive accounts', () => {
  it('cannot log in', async () => {
    await app.users.createUser({ username: 'idle', password: 'idle-pass-123', isActive: false });
    expectError(
      await new Browser(app.url).postJson('/api/auth/login/', { username: 'idle', password: 'idle-pass-123' }),
      401,
      'invalid_credentials',
    );
  });

  it('lose their session when deactivated (within the 2 s account cache)', async () => {
    await app.users.createUser({ username: 'soonidle', password: 'soon-pass-123' });
    const b = new Browser(app.url);
    await b.loginJson('soonidle', 'soon-pass-123');
    expect((await b.get('/api/user/')).status).toBe(200);
    // Deactivated by another process (e.g. the admin site): no in-process invalidation.
    await app.ctx.serviceDb.collection('auth_user').updateOne({ username: 'soonidle' }, { $set: { is_active: false } });
    await sleep(2_100);
    expectError(await b.get('/api/user/'), 401, 'not_authenticated');
  });
});

describe('HTTPS behind a trusted proxy', () => {
  it('marks cookies Secure only when the request came over HTTPS and the proxy is trusted', async () => {
    const proxied = await startTestApp({ TRUST_PROXY: 'true' });
    try {
      await proxied.users.createUser({ username: 'pat', password: 'pat-pass-123' });
      const secure = new Browser(proxied.url);
      await secure.request('POST', '/api/auth/login/', {
        headers: { 'X-Forwarded-Proto': 'https' },
        body: JSON.stringify({ username: 'pat', password: 'pat-pass-123' }),
      });
      expect(setCookie(secure, 'sessionid')).toMatch(/;\s*Secure/i);
      expect(setCookie(secure, 'csrftoken')).toMatch(/;\s*Secure/i);
      const plain = new Browser(proxied.url);
      await plain.loginJson('pat', 'pat-pass-123');
      expect(setCookie(plain, 'sessionid')).not.toMatch(/Secure/i);
    } finally {
      await closeAndDrop(proxied);
    }
    // Without TRUST_PROXY the header is not believed.
    const direct = new Browser(app.url);
    await direct.request('POST', '/api/auth/login/', {
      headers: { 'X-Forwarded-Proto': 'https' },
      body: JSON.stringify({ username: 'sam', password: 'sam-pass-123' }),
    });
    expect(setCookie(direct, 'sessionid')).toBeDefined();
    expect(setCookie(direct, 'sessionid')).not.toMatch(/Secure/i);
  });
});
