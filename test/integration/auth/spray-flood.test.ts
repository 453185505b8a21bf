/**
 * No spray of names and no flood of guesses on one account keeps a legitimate user out: the right
 * password gets in from a client that keeps no cookies (curl, a new Python process, `cybercom
 * login`), while wrong guesses are still answered 429. The address a limit is keyed on is the
 * socket's peer, or the client a trusted proxy names; X-Forwarded-For from anyone else is not
 * believed.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, uniqueName, type CallResult, type TestApp } from '../../support/app.js';
import { repoRoot } from '../worker/support.js';
import { closeAndDrop, expectError } from './helpers.js';

/** A login as curl makes it: no cookie jar, nothing remembered between calls. */
const tokenLogin = (app: TestApp, username: string, password: string, headers: Record<string, string> = {}): Promise<CallResult> =>
  call(app.url, 'POST', '/api/token/', { body: { username, password }, headers });

const sessionLogin = (app: TestApp, username: string, password: string): Promise<CallResult> =>
  call(app.url, 'POST', '/api/auth/login/', { body: { username, password } });

/** Failed logins on names that do not exist, from this process's one address (127.0.0.1). */
async function spray(app: TestApp, count: number, headers: Record<string, string> = {}): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await tokenLogin(app, uniqueName('nobody-'), 'spray-pass-123', headers)).status);
  return statuses;
}

/**
 * `cybercom login` of the Python client, in a fresh process with a fresh configuration; stopped
 * after `limitMs` (the client waits out a 429's Retry-After a few times before it gives up).
 */
async function cliLogin(
  app: TestApp,
  username: string,
  password: string,
  limitMs: number,
): Promise<{ code: number | null; output: string }> {
  const home = await mkdtemp(join(tmpdir(), 'cybercom-login-'));
  try {
    return await new Promise((resolve) => {
      const child = spawn(join(repoRoot, '.venv-client/bin/cybercom'), ['login', '--url', app.url, '--username', username, '--rotate'], {
        env: { PATH: process.env.PATH ?? '', HOME: home, CYBERCOM_CONFIG: join(home, 'config.json'), CYBERCOM_PASSWORD: password },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      const limit = setTimeout(() => child.kill('SIGKILL'), limitMs);
      child.stdout.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr.on('data', (c: Buffer) => (output += c.toString()));
      child.on('exit', (code) => {
        clearTimeout(limit);
        resolve({ code, output });
      });
    });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

describe('a name spray from the address everyone shares (a local install)', () => {
  let app: TestApp;
  beforeAll(async () => {
    // The defaults: 5 free failures per account and address, 100 per address.
    app = await startTestApp({ LOGIN_WINDOW_S: '600' });
    await app.users.ensureSuperuser({ username: 'admin', email: 'admin@example.org', password: 'admin-pass-123' });
    await app.users.createUser({ username: 'untouched', password: 'untouched-pass-123' });
    await app.users.createUser({ username: 'researcher', password: 'researcher-pass-123' });
    const statuses = await spray(app, 105);
    // The spray itself is slowed once the address's free failures are used up.
    expect(statuses.slice(0, 100).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(100).every((s) => s === 429)).toBe(true);
  }, 120_000);
  afterAll(async () => {
    await closeAndDrop(app);
  });

  it("lets every account's right password in from clients that keep no cookies", async () => {
    expect((await tokenLogin(app, 'admin', 'admin-pass-123')).status).toBe(200);
    expect((await tokenLogin(app, 'untouched', 'untouched-pass-123')).status).toBe(200);
    expect((await sessionLogin(app, 'untouched', 'untouched-pass-123')).status).toBe(200);
  });

  it('lets them in while the spray goes on', async () => {
    const ongoing = spray(app, 20);
    const logins = await Promise.all([tokenLogin(app, 'admin', 'admin-pass-123'), sessionLogin(app, 'untouched', 'untouched-pass-123')]);
    expect((await ongoing).every((s) => s === 429)).toBe(true);
    for (const res of logins) expect(res.status, res.text).toBe(200);
  });

  it('still answers a wrong password 429 while the address is slowed', async () => {
    const wrong = await tokenLogin(app, 'untouched', 'not-the-password-1');
    expectError(wrong, 429, 'throttled');
    expect(Number(wrong.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The answer to a wrong password names nothing more about the account than a wrong name's does.
    const unknown = await tokenLogin(app, uniqueName('nobody-'), 'not-the-password-1');
    expectError(unknown, 429, 'throttled');
    expect(wrong.json).toEqual(unknown.json);
  });

  it("signs in with the Python client's `cybercom login` while the spray goes on", async () => {
    let sprayed = 0;
    let done = false;
    const sprayer = (async () => {
      while (!done) sprayed += (await spray(app, 1)).filter((s) => s === 429).length;
    })();
    const result = await cliLogin(app, 'researcher', 'researcher-pass-123', 20_000);
    done = true;
    await sprayer;
    expect(sprayed).toBeGreaterThan(0);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain('Signed in to');
  }, 60_000);
});

describe('a flood of wrong passwords on one account', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ LOGIN_WINDOW_S: '600', TRUST_PROXY: '127.0.0.1' });
    await app.users.createUser({ username: 'victim', password: 'victim-pass-1234' });
    await app.users.createUser({ username: 'bystander', password: 'bystander-pass-1234' });
    // From this address and from many others (through the trusted proxy): the account's own
    // counters, for one address and for all of them, are both far past their free failures.
    for (let i = 0; i < 12; i++) await tokenLogin(app, 'victim', `guess-${i}-pass`);
    for (let i = 0; i < 30; i++) await tokenLogin(app, 'victim', `guess-${i}-pass`, { 'X-Forwarded-For': `198.51.100.${i + 1}` });
  }, 120_000);
  afterAll(async () => {
    await closeAndDrop(app);
  });

  it('answers every further wrong password 429, from the flooding address and from a new one', async () => {
    expectError(await tokenLogin(app, 'victim', 'one-more-guess'), 429, 'throttled');
    expectError(await tokenLogin(app, 'victim', 'one-more-guess', { 'X-Forwarded-For': '203.0.113.9' }), 429, 'throttled');
  });

  it("lets the account's right password in from a fresh client, on every login path", async () => {
    expect((await tokenLogin(app, 'victim', 'victim-pass-1234')).status).toBe(200);
    expect((await tokenLogin(app, 'victim', 'victim-pass-1234', { 'X-Forwarded-For': '203.0.113.10' })).status).toBe(200);
    expect((await sessionLogin(app, 'victim', 'victim-pass-1234')).status).toBe(200);
    expect((await tokenLogin(app, 'bystander', 'bystander-pass-1234')).status).toBe(200);
  });

  it('lets it in while the flood goes on', async () => {
    const flood = (async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 15; i++) statuses.push((await tokenLogin(app, 'victim', `flood-${i}-pass`)).status);
      return statuses;
    })();
    const logins = await Promise.all([tokenLogin(app, 'victim', 'victim-pass-1234'), sessionLogin(app, 'victim', 'victim-pass-1234')]);
    for (const res of logins) expect(res.status, res.text).toBe(200);
    // A right password let in does not reset the account's counters for the guesser.
    expect(await flood).toEqual(new Array<number>(15).fill(429));
    expectError(await tokenLogin(app, 'victim', 'after-flood-guess'), 429, 'throttled');
  });
});

describe('the address limits are keyed on', () => {
  it('ignores X-Forwarded-For from a peer that is not a configured proxy', async () => {
    const app = await startTestApp({ LOGIN_WINDOW_S: '600', LOGIN_ADDRESS_MAX_FAILURES: '10', TRUST_PROXY: '192.0.2.1' });
    try {
      // A sprayer naming a new address in every request is still one address: its own.
      for (let i = 0; i < 10; i++) await tokenLogin(app, uniqueName('nobody-'), 'spray-pass-123', { 'X-Forwarded-For': `198.51.100.${i}` });
      expectError(await tokenLogin(app, uniqueName('nobody-'), 'spray-pass-123', { 'X-Forwarded-For': '203.0.113.1' }), 429, 'throttled');
    } finally {
      await closeAndDrop(app);
    }
  });

  it('believes the client a trusted proxy names', async () => {
    const app = await startTestApp({ LOGIN_WINDOW_S: '600', LOGIN_ADDRESS_MAX_FAILURES: '10', TRUST_PROXY: 'loopback' });
    try {
      for (let i = 0; i < 10; i++) await tokenLogin(app, uniqueName('nobody-'), 'spray-pass-123', { 'X-Forwarded-For': '198.51.100.7' });
      expectError(await tokenLogin(app, uniqueName('nobody-'), 'spray-pass-123', { 'X-Forwarded-For': '198.51.100.7' }), 429, 'throttled');
      expectError(await tokenLogin(app, uniqueName('nobody-'), 'spray-pass-123', { 'X-Forwarded-For': '198.51.100.8' }), 401);
    } finally {
      await closeAndDrop(app);
    }
  });
});
