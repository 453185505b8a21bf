/** Login throttling: per username and per client address, on /auth/login/ and /token/. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { Browser, closeAndDrop, expectError } from './helpers.js';

describe('per-username throttle', () => {
  let app: TestApp;
  beforeAll(async () => {
    // Behind a trusted proxy, so each attempt can come from its own address (X-Forwarded-For):
    // the lock below is then the username's, not the address's.
    app = await startTestApp({ LOGIN_MAX_FAILURES: '3', LOGIN_WINDOW_S: '600', TRUST_PROXY: 'true' });
    await app.users.createUser({ username: 'victim', password: 'victim-pass-1' });
  });
  afterAll(async () => {
    await closeAndDrop(app);
  });

  it('answers 429 with Retry-After after LOGIN_MAX_FAILURES failures, even for the right password', async () => {
    const b = new Browser(app.url);
    for (let i = 0; i < 3; i++) {
      const res = await b.postJson(
        '/api/auth/login/',
        { username: 'victim', password: `guess-${i}-xyz` },
        { 'X-Forwarded-For': `198.51.100.${i + 1}` },
      );
      expectError(res, 401, 'invalid_credentials');
    }
    const locked = await b.postJson(
      '/api/auth/login/',
      { username: 'victim', password: 'victim-pass-1' },
      { 'X-Forwarded-For': '198.51.100.99' },
    );
    expectError(locked, 429, 'throttled');
    const retryAfter = Number(locked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(590);
    expect(retryAfter).toBeLessThanOrEqual(600);
    expect(b.cookies.has('sessionid')).toBe(false);
    // The JWT endpoint shares the counters.
    const viaJwt = await call(app.url, 'POST', '/api/token/', {
      body: { username: 'victim', password: 'victim-pass-1' },
      headers: { 'X-Forwarded-For': '198.51.100.98' },
    });
    expectError(viaJwt, 429, 'throttled');
    // Other users from those addresses are not affected.
    await app.users.createUser({ username: 'bystander', password: 'bystander-pass-1' });
    const other = await call(app.url, 'POST', '/api/token/', {
      body: { username: 'bystander', password: 'bystander-pass-1' },
      headers: { 'X-Forwarded-For': '198.51.100.1' },
    });
    expect(other.status, other.text).toBe(200);
  });
});

describe('per-address throttle', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ LOGIN_MAX_FAILURES: '3', LOGIN_WINDOW_S: '600' });
    await app.users.createUser({ username: 'fine', password: 'fine-pass-123' });
  });
  afterAll(async () => {
    await closeAndDrop(app);
  });

  it('locks the client address after failures spread over many usernames', async () => {
    for (const name of ['a1', 'a2']) {
      expectError(
        await call(app.url, 'POST', '/api/token/', { body: { username: name, password: 'whatever-123' } }),
        401,
        'invalid_credentials',
      );
    }
    // A correct login in between does not reset the address counter.
    expect((await call(app.url, 'POST', '/api/token/', { body: { username: 'fine', password: 'fine-pass-123' } })).status).toBe(200);
    expectError(
      await call(app.url, 'POST', '/api/token/', { body: { username: 'a3', password: 'whatever-123' } }),
      401,
      'invalid_credentials',
    );
    const locked = await call(app.url, 'POST', '/api/token/', { body: { username: 'fine', password: 'fine-pass-123' } });
    expectError(locked, 429, 'throttled');
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    // The form login answers 429 as well.
    const b = new Browser(app.url);
    await b.get('/api/auth/login/', { accept: 'text/html' });
    const form = await b.postForm(
      '/api/auth/login/',
      { username: 'fine', password: 'fine-pass-123', csrfmiddlewaretoken: b.cookies.get('csrftoken') ?? '' },
      { accept: 'application/json' },
    );
    expectError(form, 429, 'throttled');
    // Token-authenticated requests are not login attempts and keep working.
    const token = await app.users.tokenFor('fine');
    expect((await call(app.url, 'GET', '/api/user/', { token })).status).toBe(200);
  });
});

describe('wrong current password on a password change', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ LOGIN_MAX_FAILURES: '2', LOGIN_WINDOW_S: '600' });
    await app.users.createUser({ username: 'stolen', password: 'stolen-pass-1' });
  });
  afterAll(async () => {
    await closeAndDrop(app);
  });

  it('counts against the throttle (a stolen token cannot be used to guess the password)', async () => {
    const token = await app.users.tokenFor('stolen');
    for (let i = 0; i < 2; i++) {
      const res = await call(app.url, 'POST', '/api/user/', {
        token,
        body: { current_password: `guess-${i}-abc`, password: 'new-pass-9876' },
      });
      expectError(res, 400, 'wrong_password');
    }
    const locked = await call(app.url, 'POST', '/api/user/', {
      token,
      body: { current_password: 'stolen-pass-1', password: 'new-pass-9876' },
    });
    expectError(locked, 429, 'throttled');
  });
});

describe('parallel guessing', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ LOGIN_MAX_FAILURES: '5', LOGIN_WINDOW_S: '600' });
    await app.users.createUser({ username: 'target', password: 'target-pass-123' });
  });
  afterAll(async () => {
    await closeAndDrop(app);
  });

  it('verifies at most LOGIN_MAX_FAILURES of many simultaneous attempts; the rest get 429 unchecked', async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        call(app.url, 'POST', '/api/token/', { body: { username: 'target', password: `guess-${i}-xyz` } }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401).length, statuses.join(',')).toBeLessThanOrEqual(5);
    expect(statuses.filter((s) => s === 429).length, statuses.join(',')).toBeGreaterThanOrEqual(35);
    expect(
      statuses.every((s) => s === 401 || s === 429),
      statuses.join(','),
    ).toBe(true);
    // Locked for the right password too, as after sequential failures.
    expectError(
      await call(app.url, 'POST', '/api/token/', { body: { username: 'target', password: 'target-pass-123' } }),
      429,
      'throttled',
    );
  });
});
