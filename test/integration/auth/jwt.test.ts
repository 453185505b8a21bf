/** JWT endpoints: obtain, refresh, verify, use as Bearer; expired, tampered and stale tokens refused. */
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, TEST_SECRET_KEY, type TestApp } from '../../support/app.js';
import { closeAndDrop, expectError, sleep } from './helpers.js';

let app: TestApp;

async function obtain(target: TestApp, username: string, password: string): Promise<{ access: string; refresh: string }> {
  const res = await call(target.url, 'POST', '/api/token/', { body: { username, password } });
  expect(res.status, res.text).toBe(200);
  return res.json;
}

function tamper(token: string): string {
  const [h, p, s] = token.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
  claims.exp = (claims.exp as number) + 3600;
  return `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`;
}

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000' });
  await app.users.createUser({ username: 'jo', password: 'jo-pass-1234', email: 'jo@example.org' });
});

afterAll(async () => {
  await closeAndDrop(app);
});

describe('JWT obtain / use / refresh / verify', () => {
  it('obtains an access and a refresh token and authenticates with the access token', async () => {
    const { access, refresh } = await obtain(app, 'jo', 'jo-pass-1234');
    expect(access.split('.')).toHaveLength(3);
    expect(refresh).not.toBe(access);
    const claims = jwt.decode(access) as Record<string, unknown>;
    expect(claims).toMatchObject({ token_type: 'access', user_id: expect.stringMatching(/^[0-9a-f]{24}$/), jti: expect.any(String) });
    expect((claims.exp as number) - (claims.iat as number)).toBe(300); // JWT_ACCESS_TTL_S default
    const res = await call(app.url, 'GET', '/api/user/', { bearer: access });
    expect(res.status, res.text).toBe(200);
    expect(res.json.username).toBe('jo');
  });

  it('exempts Bearer requests from CSRF', async () => {
    const { access } = await obtain(app, 'jo', 'jo-pass-1234');
    const res = await call(app.url, 'POST', '/api/user/', { bearer: access, body: { last_name: 'Jones' } });
    expect(res.status, res.text).toBe(200);
  });

  it('refreshes: a new access token and a new refresh token, which refreshes again', async () => {
    const { refresh } = await obtain(app, 'jo', 'jo-pass-1234');
    const res = await call(app.url, 'POST', '/api/token/refresh/', { body: { refresh } });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.json).sort()).toEqual(['access', 'refresh']);
    expect(res.json.refresh).not.toBe(refresh);
    expect((await call(app.url, 'GET', '/api/user/', { bearer: res.json.access })).status).toBe(200);
    const again = await call(app.url, 'POST', '/api/token/refresh/', { body: { refresh: res.json.refresh } });
    expect(again.status, again.text).toBe(200);
  });

  it('uses each refresh token once; a reused one revokes every refresh token of its login', async () => {
    const { refresh: first } = await obtain(app, 'jo', 'jo-pass-1234');
    const { refresh: otherLogin } = await obtain(app, 'jo', 'jo-pass-1234');
    const rotated = await call(app.url, 'POST', '/api/token/refresh/', { body: { refresh: first } });
    expect(rotated.status).toBe(200);
    // Someone replays the first token (stolen, or sent twice): refused, and its family ends.
    expectError(await call(app.url, 'POST', '/api/token/refresh/', { body: { refresh: first } }), 401, 'token_not_valid');
    expectError(await call(app.url, 'POST', '/api/token/refresh/', { body: { refresh: rotated.json.refresh } }), 401, 'token_not_valid');
    expectError(await call(app.url, 'POST', '/api/token/verify/', { body: { token: rotated.json.refresh } }), 401, 'token_not_valid');
    expectError(await call(app.url, 'POST', '/api/token/verify/', { body: { token: first } }), 401, 'token_not_valid');
    // Another login of the same user is not affected.
    expect((await call(app.url, 'POST', '/api/token/refresh/', { body: { refresh: otherLogin } })).status).toBe(200);
    // Simultaneous refreshes with one token: exactly one succeeds.
    const { refresh: raced } = await obtain(app, 'jo', 'jo-pass-1234');
    const statuses = (
      await Promise.all(Array.from({ length: 5 }, () => call(app.url, 'POST', '/api/token/refresh/', { body: { refresh: raced } })))
    ).map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 401)).toHaveLength(4);
  });

  it('verifies good tokens with 200 {}', async () => {
    const { access, refresh } = await obtain(app, 'jo', 'jo-pass-1234');
    for (const token of [access, refresh]) {
      const res = await call(app.url, 'POST', '/api/token/verify/', { body: { token } });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({});
    }
  });

  it('refuses bad credentials', async () => {
    expectError(
      await call(app.url, 'POST', '/api/token/', { body: { username: 'jo', password: 'not-it-at-all' } }),
      401,
      'invalid_credentials',
    );
    expectError(
      await call(app.url, 'POST', '/api/token/', { body: { username: 'nobody', password: 'not-it-at-all' } }),
      401,
      'invalid_credentials',
    );
  });

  it('refuses inactive accounts', async () => {
    await app.users.createUser({ username: 'off', password: 'off-pass-1234', isActive: false });
    expectError(
      await call(app.url, 'POST', '/api/token/', { body: { username: 'off', password: 'off-pass-1234' } }),
      401,
      'invalid_credentials',
    );
  });
});

describe('invalid tokens are 401, never anonymous', () => {
  it('refuses a tampered token everywhere', async () => {
    const { access, refresh } = await obtain(app, 'jo', 'jo-pass-1234');
    expectError(await call(app.url, 'GET', '/api/user/', { bearer: tamper(access) }), 401, 'token_not_valid');
    // even on a page that anonymous callers may see
    expectError(await call(app.url, 'GET', '/api/auth/login/', { bearer: tamper(access) }), 401, 'token_not_valid');
    expectError(await call(app.url, 'POST', '/api/token/verify/', { body: { token: tamper(access) } }), 401, 'token_not_valid');
    expectError(await call(app.url, 'POST', '/api/token/refresh/', { body: { refresh: tamper(refresh) } }), 401, 'token_not_valid');
  });

  it('refuses a token signed with another key or with alg none', async () => {
    const { access } = await obtain(app, 'jo', 'jo-pass-1234');
    const claims = jwt.decode(access) as Record<string, unknown>;
    const foreign = jwt.sign(claims, 'some-other-secret-key-0123456789abcdefghij', { algorithm: 'HS256' });
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${access.split('.')[1]}.`;
    for (const token of [foreign, none, 'garbage']) {
      expectError(await call(app.url, 'GET', '/api/user/', { bearer: token }), 401, 'token_not_valid');
    }
  });

  it('refuses a refresh token as Bearer and an access token for refreshing', async () => {
    const { access, refresh } = await obtain(app, 'jo', 'jo-pass-1234');
    expectError(await call(app.url, 'GET', '/api/user/', { bearer: refresh }), 401, 'token_not_valid');
    expectError(await call(app.url, 'POST', '/api/token/refresh/', { body: { refresh: access } }), 401, 'token_not_valid');
  });

  it('refuses a correctly signed token with the wrong claims', async () => {
    const token = jwt.sign({ token_type: 'access', user_id: '65f000000000000000000009', jti: 'x', pwd: 'y' }, TEST_SECRET_KEY, {
      expiresIn: 60,
    });
    expectError(await call(app.url, 'GET', '/api/user/', { bearer: token }), 401, 'token_not_valid');
  });

  it('invalidates issued tokens when the password changes', async () => {
    await app.users.createUser({ username: 'pw', password: 'pw-first-123' });
    const { access, refresh } = await obtain(app, 'pw', 'pw-first-123');
    const changed = await call(app.url, 'POST', '/api/user/', {
      bearer: access,
      body: { current_password: 'pw-first-123', password: 'pw-second-456' },
    });
    expect(changed.status, changed.text).toBe(200);
    expectError(await call(app.url, 'GET', '/api/user/', { bearer: access }), 401, 'token_not_valid');
    expectError(await call(app.url, 'POST', '/api/token/refresh/', { body: { refresh } }), 401, 'token_not_valid');
    expect((await obtain(app, 'pw', 'pw-second-456')).access).toBeDefined();
  });
});

describe('expiry', () => {
  /** Sleeps until the token's own `exp` (whole seconds) has passed on this clock. */
  async function waitPastExpiry(token: string): Promise<void> {
    const { exp } = jwt.decode(token) as { exp: number };
    const remaining = exp * 1000 - Date.now();
    await sleep(Math.max(0, remaining) + 50);
  }

  it('refuses expired access and refresh tokens', async () => {
    // TTLs of a few seconds: `exp` is truncated to whole seconds, so a 1-second token may be
    // valid for only a few milliseconds on a loaded machine.
    const short = await startTestApp({ JWT_ACCESS_TTL_S: '3', JWT_REFRESH_TTL_S: '5' });
    try {
      await short.users.createUser({ username: 'brief', password: 'brief-pass-1' });
      const { access, refresh } = await obtain(short, 'brief', 'brief-pass-1');
      expect((await call(short.url, 'GET', '/api/user/', { bearer: access })).status).toBe(200);
      await waitPastExpiry(access);
      const expired = await call(short.url, 'GET', '/api/user/', { bearer: access });
      expectError(expired, 401, 'token_not_valid');
      expect(expired.json.error.message).toMatch(/expired/i);
      expectError(await call(short.url, 'POST', '/api/token/verify/', { body: { token: access } }), 401, 'token_not_valid');
      await waitPastExpiry(refresh);
      expectError(await call(short.url, 'POST', '/api/token/refresh/', { body: { refresh } }), 401, 'token_not_valid');
    } finally {
      await closeAndDrop(short);
    }
  });
});
