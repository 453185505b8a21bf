/**
 * Login throttling on /auth/login/ (JSON and form), /token/ and the admin site's login, for
 * unknown devices: per account and client address, per account, and a far higher ceiling per
 * address, each with growing delays, during which a wrong password is answered 429 and the right
 * one still gets in; a wrong current password on /user/ counts against the account only. Devices
 * a user has logged in from (device cookies) are judged by their own failures only: see
 * device-cookies.test.ts; sprays and floods: spray-flood.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type CallResult, type TestApp } from '../../support/app.js';
import { FIRST_DELAY_MS } from '../../../src/auth/login-delays.js';
import { Browser, closeAndDrop, expectError, sleep } from './helpers.js';

const jwtLogin = (app: TestApp, username: string, password: string, from?: string): Promise<CallResult> =>
  call(app.url, 'POST', '/api/token/', {
    body: { username, password },
    headers: from === undefined ? {} : { 'X-Forwarded-For': from },
  });

const sessionLogin = (app: TestApp, username: string, password: string, from?: string): Promise<CallResult> =>
  new Browser(app.url).postJson('/api/auth/login/', { username, password }, from === undefined ? {} : { 'X-Forwarded-For': from });

/** The HTML login form, the way the admin site sends its visitors to it. */
async function formLogin(app: TestApp, username: string, password: string): Promise<{ res: CallResult; browser: Browser }> {
  const browser = new Browser(app.url);
  await browser.get('/api/auth/login/?next=/api/admin', { accept: 'text/html' });
  const res = await browser.postForm('/api/auth/login/', {
    username,
    password,
    next: '/api/admin',
    csrfmiddlewaretoken: browser.cookies.get('csrftoken') ?? '',
  });
  return { res, browser };
}

async function failTimes(n: number, attempt: () => Promise<CallResult>): Promise<void> {
  for (let i = 0; i < n; i++) expectError(await attempt(), 401, 'invalid_credentials');
}

/**
 * A service of its own for the describe block that calls this (started before its tests, stopped
 * and dropped after them), with these settings and users (username: password); `app()` reaches it.
 */
function serviceWith(settings: Record<string, string>, users: Record<string, string>): () => TestApp {
  let app: TestApp | undefined;
  beforeAll(async () => {
    app = await startTestApp({ LOGIN_WINDOW_S: '600', ...settings });
    for (const [username, password] of Object.entries(users)) await app.users.createUser({ username, password });
  });
  afterAll(async () => {
    await closeAndDrop(app);
  });
  return () => app as TestApp;
}

describe('one client address shared by everyone (a local install)', () => {
  // No proxy: every request comes from 127.0.0.1, as on a local install.
  const app = serviceWith({ LOGIN_MAX_FAILURES: '3' }, { alice: 'alice-pass-123', bob: 'bob-pass-1234' });
  beforeAll(async () => {
    await app().users.ensureSuperuser({ username: 'admin', email: 'admin@example.org', password: 'admin-pass-123' });
  });

  it('failures on a name that does not exist and on one account never delay another account', async () => {
    await failTimes(3, () => jwtLogin(app(), 'nobody-here', 'whatever-123'));
    expectError(await jwtLogin(app(), 'nobody-here', 'whatever-123'), 429, 'throttled');
    await failTimes(3, () => sessionLogin(app(), 'alice', 'wrong-pass-123'));
    expectError(await sessionLogin(app(), 'alice', 'wrong-pass-456'), 429, 'throttled');
    expect((await sessionLogin(app(), 'alice', 'alice-pass-123')).status).toBe(200);

    expect((await jwtLogin(app(), 'bob', 'bob-pass-1234')).status).toBe(200);
    expect((await sessionLogin(app(), 'bob', 'bob-pass-1234')).status).toBe(200);
    expect((await jwtLogin(app(), 'admin', 'admin-pass-123')).status).toBe(200);
    // The admin site's login is the session login form; the superuser gets in.
    const { res, browser } = await formLogin(app(), 'admin', 'admin-pass-123');
    expect(res.status, res.text).toBe(302);
    expect(res.headers.get('location')).toBe('/api/admin');
    expect((await browser.get('/api/admin', { accept: 'text/html' })).status).toBe(200);
  });

  it('delays the account whose password is guessed, on every login path', async () => {
    await failTimes(3, () => jwtLogin(app(), 'bob', 'guess-bob-123'));
    const locked = await jwtLogin(app(), 'bob', 'guess-bob-456');
    expectError(locked, 429, 'throttled');
    // The first wait past the free failures is 2 s; this guess, a further failure, doubles it.
    const retryAfter = Number(locked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(2);
    expect(retryAfter).toBeLessThanOrEqual(4);
    expectError(await sessionLogin(app(), 'bob', 'guess-bob-789'), 429, 'throttled');
    // The throttle compares names without case.
    expectError(await sessionLogin(app(), 'BOB', 'guess-bob-000'), 429, 'throttled');
    const form = await formLogin(app(), 'bob', 'guess-bob-111');
    expect(form.res.status).toBe(429);
    expect(form.browser.cookies.has('sessionid')).toBe(false);
  });

  it('lets the right password in on every login path while the account is delayed', async () => {
    expectError(await jwtLogin(app(), 'bob', 'guess-bob-222'), 429, 'throttled');
    expect((await jwtLogin(app(), 'bob', 'bob-pass-1234')).status).toBe(200);
    expect((await sessionLogin(app(), 'bob', 'bob-pass-1234')).status).toBe(200);
    const form = await formLogin(app(), 'bob', 'bob-pass-1234');
    expect(form.res.status, form.res.text).toBe(302);
    expect(form.browser.cookies.has('sessionid')).toBe(true);
    // Let in while delayed, it leaves the delay to whoever guesses on.
    expectError(await jwtLogin(app(), 'bob', 'guess-bob-333'), 429, 'throttled');
  });
});

describe('growing delays for an unknown device', () => {
  const app = serviceWith({ LOGIN_MAX_FAILURES: '2' }, { typist: 'typist-pass-123' });

  /** The Retry-After of a wrong password answered 429: the wait its own failure brings. */
  async function waitAsked(): Promise<number> {
    const refused = await jwtLogin(app(), 'typist', 'typo-pass-456');
    expectError(refused, 429, 'throttled');
    return Number(refused.headers.get('retry-after'));
  }

  it('makes each failure past the free ones double the wait (2 s, 4 s, 8 s), not lock for the window', async () => {
    await failTimes(2, () => jwtLogin(app(), 'typist', 'typo-pass-123'));
    // Past the free failures: the next attempt waits 2 s; a wrong password then is a further
    // failure, and the answer names the wait after it, 4 s.
    const first = await waitAsked();
    expect(first).toBeGreaterThan(2);
    expect(first).toBeLessThanOrEqual(4);
    // Once that wait is over one attempt is judged undelayed: a wrong password is an ordinary failure.
    await sleep(first * 1000 + 100);
    await failTimes(1, () => jwtLogin(app(), 'typist', 'typo-pass-123'));
    const second = await waitAsked();
    expect(second).toBeGreaterThan(8);
    expect(second).toBeLessThanOrEqual(16);
    // The right password is never asked to wait.
    expect((await jwtLogin(app(), 'typist', 'typist-pass-123')).status).toBe(200);
  }, 60_000);
});

describe('per account and per account and address', () => {
  // Behind a trusted proxy, so each attempt can come from its own address (X-Forwarded-For).
  const app = serviceWith(
    {
      LOGIN_MAX_FAILURES: '2',
      LOGIN_ACCOUNT_MAX_FAILURES: '4',
      LOGIN_ADDRESS_MAX_FAILURES: '100',
      TRUST_PROXY: 'true',
    },
    { victim: 'victim-pass-1', traveller: 'traveller-pass-1', bystander: 'bystander-pass-1' },
  );

  it('delays one account from one address after LOGIN_MAX_FAILURES, not from elsewhere', async () => {
    await failTimes(2, () => jwtLogin(app(), 'traveller', 'guess-123456', '198.51.100.7'));
    expectError(await jwtLogin(app(), 'traveller', 'guess-654321', '198.51.100.7'), 429, 'throttled');
    expectError(await sessionLogin(app(), 'traveller', 'guess-654321', '198.51.100.7'), 429, 'throttled');
    expect((await jwtLogin(app(), 'traveller', 'traveller-pass-1', '198.51.100.7')).status).toBe(200);
    // The same account from another address, and another account from that address, log in.
    expect((await jwtLogin(app(), 'traveller', 'traveller-pass-1', '198.51.100.8')).status).toBe(200);
    expect((await jwtLogin(app(), 'bystander', 'bystander-pass-1', '198.51.100.7')).status).toBe(200);
  });

  it('delays an account on unknown devices everywhere after LOGIN_ACCOUNT_MAX_FAILURES spread over addresses', async () => {
    for (let i = 0; i < 4; i++) {
      expectError(await sessionLogin(app(), 'victim', `guess-${i}-xyz`, `203.0.113.${i + 1}`), 401, 'invalid_credentials');
    }
    const locked = await sessionLogin(app(), 'victim', 'guess-4-xyz', '203.0.113.99');
    expectError(locked, 429, 'throttled');
    expect(Number(locked.headers.get('retry-after'))).toBeLessThanOrEqual(4);
    expectError(await jwtLogin(app(), 'victim', 'guess-5-xyz', '203.0.113.98'), 429, 'throttled');
    expect((await jwtLogin(app(), 'victim', 'victim-pass-1', '203.0.113.97')).status).toBe(200);
    // Other accounts from those addresses are not affected.
    expect((await jwtLogin(app(), 'bystander', 'bystander-pass-1', '203.0.113.1')).status).toBe(200);
  });
});

describe('the per-address ceiling', () => {
  const app = serviceWith({ LOGIN_MAX_FAILURES: '2', LOGIN_ADDRESS_MAX_FAILURES: '6', TRUST_PROXY: 'true' }, { fine: 'fine-pass-123' });

  it('slows an address spraying many names once their failures reach LOGIN_ADDRESS_MAX_FAILURES', async () => {
    const sprayer = '192.0.2.50';
    await failTimes(2, () => jwtLogin(app(), 'name-1', 'whatever-123', sprayer));
    await failTimes(2, () => jwtLogin(app(), 'name-2', 'whatever-123', sprayer));
    // Below the ceiling: other accounts from that address are unaffected, and a success there does
    // not reset the address's count.
    expect((await jwtLogin(app(), 'fine', 'fine-pass-123', sprayer)).status).toBe(200);
    await failTimes(2, () => jwtLogin(app(), 'name-3', 'whatever-123', sprayer));
    const locked = await jwtLogin(app(), 'fine', 'fine-guess-123', sprayer);
    expectError(locked, 429, 'throttled');
    expect(Number(locked.headers.get('retry-after'))).toBeLessThanOrEqual(4);
    expect((await jwtLogin(app(), 'fine', 'fine-pass-123', sprayer)).status).toBe(200);
    expectError(await sessionLogin(app(), 'name-4', 'whatever-123', sprayer), 429, 'throttled');
    // Only that address.
    expect((await jwtLogin(app(), 'fine', 'fine-pass-123', '192.0.2.51')).status).toBe(200);
    // Token-authenticated requests are not login attempts and keep working from it.
    const token = await app().users.tokenFor('fine');
    expect((await call(app().url, 'GET', '/api/user/', { token, headers: { 'X-Forwarded-For': sprayer } })).status).toBe(200);
  });
});

describe('wrong current password on a password change', () => {
  const app = serviceWith({ LOGIN_MAX_FAILURES: '2' }, { stolen: 'stolen-pass-1', neighbour: 'neighbour-pass-1' });

  it('counts against that account only (a stolen token cannot be used to guess its password)', async () => {
    const token = await app().users.tokenFor('stolen');
    for (let i = 0; i < 2; i++) {
      const res = await call(app().url, 'POST', '/api/user/', {
        token,
        body: { current_password: `guess-${i}-abc`, password: 'new-pass-9876' },
      });
      expectError(res, 400, 'wrong_password');
    }
    const locked = await call(app().url, 'POST', '/api/user/', {
      token,
      body: { current_password: 'guess-2-abc', password: 'new-pass-9876' },
    });
    expectError(locked, 429, 'throttled');
    expectError(await jwtLogin(app(), 'stolen', 'guess-3-abc'), 429, 'throttled');
    // The account's owner, who knows the password, is not held up.
    const changed = await call(app().url, 'POST', '/api/user/', {
      token,
      body: { current_password: 'stolen-pass-1', password: 'new-pass-9876' },
    });
    expect(changed.status, changed.text).toBe(200);
    // Other accounts on the same address log in and change their passwords.
    expect((await jwtLogin(app(), 'neighbour', 'neighbour-pass-1')).status).toBe(200);
    const other = await call(app().url, 'POST', '/api/user/', {
      token: await app().users.tokenFor('neighbour'),
      body: { current_password: 'neighbour-pass-1', password: 'neighbour-pass-2' },
    });
    expect(other.status, other.text).toBe(200);
  });
});

describe('parallel guessing', () => {
  const app = serviceWith({ LOGIN_MAX_FAILURES: '5' }, { target: 'target-pass-123' });

  it('answers at most LOGIN_MAX_FAILURES of many simultaneous wrong guesses 401; the rest get 429', async () => {
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        call(app().url, 'POST', '/api/token/', { body: { username: 'target', password: `guess-${i}-xyz` } }),
      ),
    );
    // Past the free failures each further attempt waits 2 s, then 4 s, 8 s ...: on a machine so
    // loaded that the 40 answers take seconds, an attempt may come after such a wait and be judged
    // undelayed. Those are the only extra 401s allowed: a number that grows with the log of the time.
    const waitsPassed = Math.floor(Math.log2((Date.now() - started) / FIRST_DELAY_MS + 1));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401).length, statuses.join(',')).toBeLessThanOrEqual(5 + waitsPassed);
    expect(statuses.filter((s) => s === 429).length, statuses.join(',')).toBeGreaterThanOrEqual(35 - waitsPassed);
    expect(
      statuses.every((s) => s === 401 || s === 429),
      statuses.join(','),
    ).toBe(true);
    // The right password gets in all the same.
    expect((await call(app().url, 'POST', '/api/token/', { body: { username: 'target', password: 'target-pass-123' } })).status).toBe(200);
  });
});
