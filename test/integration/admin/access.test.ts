/**
 * Who may enter the admin site, and how its pages and requests are protected: anonymous → login
 * page, non-staff → refused with the login page, tokens → refused, staff → in; CSRF on the admin's
 * own requests; the page's security headers, no external resources, Django's URLs; and that it
 * intercepts nothing else under /api/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/app.js';
import { closeAndDrop, expectError } from '../auth/helpers.js';
import { ADMIN, Browser, adminApiGet, adminApiPost, adminBrowser, loggedIn, ensureRoot, ROOT } from './support.js';

let app: TestApp;
let staffToken: string;

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000', APPLICATION_TITLE: 'Lab <Data> "Hub"' });
  await ensureRoot(app);
  await app.users.createUser({ username: 'staffer', password: 'staff-pass-123', isStaff: true });
  await app.users.createUser({ username: 'researcher', password: 'research-pass-123' });
  staffToken = await app.users.tokenFor('staffer');
});

afterAll(async () => {
  await closeAndDrop(app);
});

describe('entering the admin site', () => {
  it('sends anonymous visitors to the login page, with the way back', async () => {
    const b = new Browser(app.url);
    for (const path of [ADMIN, `${ADMIN}/`, `${ADMIN}/resources/User`]) {
      const res = await b.get(path, { accept: 'text/html' });
      expect(res.status, path).toBe(302);
      expect(res.headers.get('location')).toBe(`/api/auth/login/?next=${encodeURIComponent(path)}`);
    }
    // AdminJS's own API calls get the same redirect (its client then reloads the login page).
    const api = await b.get(`${ADMIN}/api/resources/User/actions/list`);
    expect(api.status).toBe(302);
    expect(api.headers.get('location')).toMatch(/^\/api\/auth\/login\/\?next=/);
  });

  it("replaces AdminJS's login and logout URLs with the API's pages", async () => {
    const b = new Browser(app.url);
    const login = await b.get(`${ADMIN}/login`, { accept: 'text/html' });
    expect(login.status).toBe(302);
    expect(login.headers.get('location')).toBe('/api/auth/login/?next=%2Fapi%2Fadmin');
    const logout = await b.get(`${ADMIN}/logout`, { accept: 'text/html' });
    expect(logout.headers.get('location')).toBe('/api/auth/logout/');
  });

  it('shows a logged-in account without staff status the login page with a clear message', async () => {
    const b = await loggedIn(app, 'researcher', 'research-pass-123');
    const res = await b.get(ADMIN, { accept: 'text/html' });
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.text).toContain('You are logged in as researcher, but this account may not use the administration site');
    expect(res.text).toContain('action="/api/auth/login/"');
    expect(res.text).toContain('name="next" value="/api/admin"');
    // The form's CSRF field equals the cookie, so switching accounts works from this page.
    const field = /name="csrfmiddlewaretoken" value="([^"]+)"/.exec(res.text)?.[1];
    expect(field).toBe(b.cookies.get('csrftoken'));
    const api = await b.get(`${ADMIN}/api/resources/User/actions/list`);
    expect(api.status).toBe(403);
    expect(api.text).not.toContain('staffer');
  });

  it('refuses API tokens: the admin site is for browser sessions', async () => {
    const res = await new Browser(app.url).get(`${ADMIN}/api/resources/User/actions/list`, { authorization: `Token ${staffToken}` });
    expectError(res, 403, 'admin_needs_session');
  });

  it('lets staff in: the dashboard page, hardened', async () => {
    const b = await loggedIn(app, 'staffer', 'staff-pass-123');
    const res = await b.get(ADMIN, { accept: 'text/html' });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    // The configured title, escaped, in the <title> and in AdminJS's state (escaped for a script).
    expect(res.text).toContain('<title>Lab &lt;Data&gt; &quot;Hub&quot;</title>');
    expect(res.text).toContain('Lab \\u003cData>');
    expect(res.text).not.toContain('<Data>');
    // Nothing from the internet, every script carries the nonce of a strict script policy.
    expect(res.text).not.toMatch(/fonts\.googleapis|fonts\.gstatic|(src|href)="(https?:)?\/\//);
    const csp = res.headers.get('content-security-policy') ?? '';
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    expect(csp).toMatch(/script-src 'self' 'nonce-[^']+'(;|$)/);
    expect(csp).toContain("frame-ancestors 'none'");
    const scripts = res.text.match(/<script\b[^>]*>/g) ?? [];
    expect(scripts.length).toBeGreaterThan(3);
    for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('referrer-policy')).toBe('same-origin');
    // The cookie AdminJS's client echoes as X-XSRF-TOKEN is the session's CSRF secret.
    expect(b.cookies.get('XSRF-TOKEN')).toBe(b.cookies.get('csrftoken'));
    const xsrf = b.lastSetCookie.find((c) => c.startsWith('XSRF-TOKEN='));
    expect(xsrf).toMatch(/Path=\/api\/admin/);
    expect(xsrf).toMatch(/SameSite=Lax/i);
  });

  it('serves its frontend itself: production bundles and the components bundle', async () => {
    const b = await loggedIn(app, 'staffer', 'staff-pass-123');
    const bundle = await b.get(`${ADMIN}/frontend/assets/components.bundle.js`, { accept: '*/*' });
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/javascript/);
    expect(bundle.text).toContain('AdminJS.UserComponents.PermissionPicker');
    const app_ = await b.get(`${ADMIN}/frontend/assets/app.bundle.js`, { accept: '*/*' });
    expect(app_.status).toBe(200);
    expect(app_.text.length).toBeLessThan(2_000_000); // the production build, not the 4.6 MB one
  });

  it("lands Django's admin URLs on the lists", async () => {
    const b = await loggedIn(app, ROOT.username, ROOT.password);
    const res = await b.get(`${ADMIN}/auth/user/`, { accept: 'text/html' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(`${ADMIN}/resources/User`);
    const list = await b.get(`${ADMIN}/resources/User`, { accept: 'text/html' });
    expect(list.status).toBe(200);
    expect((await b.get(`${ADMIN}/auth/group`, { accept: 'text/html' })).headers.get('location')).toBe(`${ADMIN}/resources/Group`);
  });

  it('does not intercept other /api/ paths', async () => {
    const res = await new Browser(app.url).get('/api/administrator/');
    expect(res.status).toBe(404);
    const health = await new Browser(app.url).get('/api/health/');
    expect(health.status).toBe(200);
  });
});

describe('CSRF on the admin site', () => {
  it('needs the X-XSRF-TOKEN header and a same-site Origin on every write', async () => {
    const b = await adminBrowser(app, ROOT.username, ROOT.password);
    const form = { name: 'csrf-group' };
    const noHeader = await adminApiPost(b, '/resources/Group/actions/new', form, { 'X-XSRF-TOKEN': '' });
    expectError(noHeader, 403, 'csrf_failed');
    const wrongToken = await adminApiPost(b, '/resources/Group/actions/new', form, { 'X-XSRF-TOKEN': 'x'.repeat(43) });
    expectError(wrongToken, 403, 'csrf_failed');
    const foreign = await adminApiPost(b, '/resources/Group/actions/new', form, { origin: 'https://evil.example' });
    expectError(foreign, 403, 'csrf_failed');
    expect(await app.ctx.serviceDb.collection('auth_group').countDocuments({ name: 'csrf-group' })).toBe(0);

    const ok = await adminApiPost(b, '/resources/Group/actions/new', form);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.notice.type).toBe('success');
    expect(await app.ctx.serviceDb.collection('auth_group').countDocuments({ name: 'csrf-group' })).toBe(1);
  });

  it('lists records through the API for staff, without any password data', async () => {
    const b = await adminBrowser(app, 'staffer', 'staff-pass-123');
    const list = await adminApiGet(b, '/resources/User/actions/list?perPage=50');
    expect(list.status, list.text).toBe(200);
    const names = (list.json.records as { params: { username: string } }[]).map((r) => r.params.username).sort();
    expect(names).toEqual(['researcher', 'root', 'staffer']);
    expect(list.text).not.toMatch(/scrypt\$|"password"/);
  });
});
