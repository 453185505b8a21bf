/**
 * Device cookies (OWASP's scheme, docs/security.md): a successful password login gives the client
 * a signed cookie naming the account, and a login presenting it is judged by that cookie's own
 * failures only. So failures elsewhere — a flood on random names from one address (every client of
 * a local install is 127.0.0.1), guesses at the administrator's password, guesses spread over many
 * addresses — never slow a device they have logged in from, while a forged, borrowed or over-used
 * cookie buys a guesser nothing. (The right password gets in from unknown devices as well; what a
 * known device is spared is the 429 answer to its wrong passwords: spray-flood.test.ts.) Default limits unless a test says
 * otherwise: 5 free failures per account and address, 20 per account, 100 per address.
 */
import jwt from 'jsonwebtoken';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LOGIN_ATTEMPTS_COLLECTION } from '../../../src/auth/login-throttle.js';
import { startTestApp, type CallResult, type TestApp } from '../../support/app.js';
import { Browser, closeAndDrop, expectError } from './helpers.js';

const ADMIN = { username: 'admin', email: 'admin@example.org', password: 'admin-pass-123' } as const;

let app: TestApp;

/** A password login through /api/token/ (what the Python client uses), from `from` when given. */
function tokenLogin(browser: Browser, username: string, password: string, from?: string): Promise<CallResult> {
  return browser.postJson('/api/token/', { username, password }, from === undefined ? {} : { 'X-Forwarded-For': from });
}

/** The name and value of the browser's device cookie (it has one per account it logged in as). */
function deviceCookie(browser: Browser): [string, string] {
  const found = [...browser.cookies].filter(([name]) => name.startsWith('device_'));
  expect(found).toHaveLength(1);
  return found[0] as [string, string];
}

/** A browser that has logged in as the administrator before: it holds the administrator's device cookie. */
async function knownDevice(from?: string): Promise<Browser> {
  const browser = new Browser(app.url);
  expect((await tokenLogin(browser, ADMIN.username, ADMIN.password, from)).status).toBe(200);
  return browser;
}

/** `count` failed logins from a client without cookies, `parallel` at a time; every answer a 401 or 429. */
async function failures(count: number, attempt: (i: number) => Promise<CallResult>, parallel = 1): Promise<void> {
  for (let i = 0; i < count; i += parallel) {
    const answers = await Promise.all(Array.from({ length: Math.min(parallel, count - i) }, (_, j) => attempt(i + j)));
    for (const answer of answers) expect([401, 429], answer.text).toContain(answer.status);
  }
}

beforeAll(async () => {
  // Behind a trusted proxy, so attempts can come from several addresses; without X-Forwarded-For a
  // request comes from 127.0.0.1, as every client of a local install does.
  app = await startTestApp({ TRUST_PROXY: 'true', LOGIN_WINDOW_S: '600' });
  await app.users.ensureSuperuser({ ...ADMIN });
  await app.users.createUser({ username: 'mallory', password: 'mallory-pass-123' });
});

beforeEach(async () => {
  await app.ctx.serviceDb.collection(LOGIN_ATTEMPTS_COLLECTION).deleteMany({});
});

afterAll(async () => {
  await closeAndDrop(app);
});

describe('the device cookie', () => {
  it('is issued by every password login path: JSON and form login, and /api/token/', async () => {
    const json = new Browser(app.url);
    expect((await json.postJson('/api/auth/login/', { username: ADMIN.username, password: ADMIN.password })).status).toBe(200);
    const line = json.lastSetCookie.find((l) => l.startsWith(deviceCookie(json)[0]));
    expect(line).toMatch(/HttpOnly/i);
    expect(line).toMatch(/Path=\/api\//);
    expect(line).toMatch(/SameSite=Lax/i);

    const form = new Browser(app.url);
    await form.get('/api/auth/login/', { accept: 'text/html' });
    const posted = await form.postForm('/api/auth/login/', {
      ...ADMIN,
      next: '/api/admin',
      csrfmiddlewaretoken: form.cookies.get('csrftoken') ?? '',
    });
    expect(posted.status, posted.text).toBe(302);
    deviceCookie(form);

    deviceCookie(await knownDevice());
    // None for a failed login.
    const failed = new Browser(app.url);
    expectError(await tokenLogin(failed, ADMIN.username, 'wrong-pass-123'), 401, 'invalid_credentials');
    expect([...failed.cookies.keys()].some((name) => name.startsWith('device_'))).toBe(false);
  });
});

describe("the administrator's known device", () => {
  it('still logs in after a flood of failures on random names from its own address', async () => {
    const device = await knownDevice();
    await failures(110, (i) => tokenLogin(new Browser(app.url), `random-${i}-${Math.random()}`, 'whatever-123'), 10);
    // The flood has its effect on unknown devices' wrong passwords at that address ...
    expectError(await tokenLogin(new Browser(app.url), ADMIN.username, 'guess-admin-000'), 429, 'throttled');
    // ... but not on the device the administrator has logged in from, on any login path.
    expect((await tokenLogin(device, ADMIN.username, ADMIN.password)).status).toBe(200);
    expect((await device.postJson('/api/auth/login/', { username: ADMIN.username, password: ADMIN.password })).status).toBe(200);
    // 110 failed logins are 110 password hashes (a wrong name is hashed like a right one): 20–30 s
    // on a quiet machine, over 60 s with the rest of the suite beside it.
  }, 180_000);

  it('still logs in after wrong passwords for admin from the same address', async () => {
    const device = await knownDevice();
    await failures(8, () => tokenLogin(new Browser(app.url), ADMIN.username, 'guess-admin-123'));
    expectError(await tokenLogin(new Browser(app.url), ADMIN.username, 'guess-admin-456'), 429, 'throttled');
    // A mistyped password on the known device is an ordinary failure there.
    expectError(await tokenLogin(device, ADMIN.username, 'typo-admin-123'), 401, 'invalid_credentials');
    expect((await tokenLogin(device, ADMIN.username, ADMIN.password)).status).toBe(200);
  });

  it('still logs in after 20 failures spread over 5 addresses', async () => {
    const device = await knownDevice('198.51.100.200');
    await failures(20, (i) => tokenLogin(new Browser(app.url), ADMIN.username, `guess-${i}-xyz`, `203.0.113.${(i % 5) + 1}`));
    // Unknown devices' wrong passwords are slowed everywhere for this account ...
    expectError(await tokenLogin(new Browser(app.url), ADMIN.username, 'guess-admin-789', '192.0.2.77'), 429, 'throttled');
    // ... the administrator's device, wherever it is now, is not.
    expect((await tokenLogin(device, ADMIN.username, ADMIN.password, '192.0.2.78')).status).toBe(200);
  });
});

describe('a device cookie that is not the account’s own', () => {
  /** Puts the administrator's account under delays for unknown devices (20 failures over 5 addresses). */
  async function delayAdmin(): Promise<void> {
    await failures(20, (i) => tokenLogin(new Browser(app.url), ADMIN.username, `guess-${i}-xyz`, `203.0.113.${(i % 5) + 1}`));
  }

  it('forged, or issued to another account, does not bypass the delays', async () => {
    const cookieName = deviceCookie(await knownDevice())[0];
    await delayAdmin();
    const forged = new Browser(app.url);
    forged.cookies.set(
      cookieName,
      jwt.sign({}, 'a-guessed-secret-key-of-some-length', { audience: 'login-device', subject: ADMIN.username, jwtid: 'x' }),
    );
    expectError(await tokenLogin(forged, ADMIN.username, 'forged-guess-123'), 429, 'throttled');

    const borrowed = new Browser(app.url);
    expect((await tokenLogin(borrowed, 'mallory', 'mallory-pass-123')).status).toBe(200);
    const [, malloryValue] = deviceCookie(borrowed);
    borrowed.cookies.clear();
    borrowed.cookies.set(cookieName, malloryValue);
    expectError(await tokenLogin(borrowed, ADMIN.username, 'borrowed-guess-123'), 429, 'throttled');
  });

  it('stolen, buys a guesser LOGIN_MAX_FAILURES guesses, then is no longer trusted', async () => {
    const [name, value] = deviceCookie(await knownDevice());
    await delayAdmin();
    const thief = new Browser(app.url);
    thief.cookies.set(name, value);
    for (let i = 0; i < 5; i++) expectError(await tokenLogin(thief, ADMIN.username, `stolen-guess-${i}`), 401, 'invalid_credentials');
    // From now on it is an unknown device's: delayed. Once the account's wait (2 s from its newest
    // failure) is over, one guess at a time is judged, as for any unknown device.
    const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => tokenLogin(thief, ADMIN.username, `burst-${i}`)));
    const statuses = burst.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length, statuses.join(',')).toBeLessThanOrEqual(1);
    expect(statuses.filter((s) => s === 429).length, statuses.join(',')).toBeGreaterThanOrEqual(9);
  });

  it('of many simultaneous guesses with one valid cookie, at most LOGIN_MAX_FAILURES are judged on its trust', async () => {
    const [name, value] = deviceCookie(await knownDevice());
    await delayAdmin();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => {
        const thief = new Browser(app.url);
        thief.cookies.set(name, value);
        return tokenLogin(thief, ADMIN.username, `parallel-${i}`);
      }),
    );
    // Five on the cookie's trust, and at most one more as an unknown device once the account's wait is over.
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 401).length, statuses.join(',')).toBeLessThanOrEqual(6);
    expect(statuses.filter((s) => s === 429).length, statuses.join(',')).toBeGreaterThanOrEqual(24);
  });
});
