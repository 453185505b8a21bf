/**
 * An operator clears a lockout: the admin site's "Clear login failures" action on a user's page,
 * and the operator command ops/clear-login-failures (here its work against the test database,
 * and its command line), for an account or for a client address.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clearLoginFailuresIn, runClearLoginFailures } from '../../../src/ops/commands/clear-login-failures.js';
import { call, startTestApp, type CallResult, type TestApp } from '../../support/app.js';
import { adminApiPostJson, adminBrowser, ensureRoot, ROOT, userId } from '../admin/support.js';
import { closeAndDrop, expectError } from './helpers.js';

const tokenLogin = (app: TestApp, username: string, password: string, from?: string): Promise<CallResult> =>
  call(app.url, 'POST', '/api/token/', { body: { username, password }, headers: from === undefined ? {} : { 'X-Forwarded-For': from } });

async function lockOut(app: TestApp, username: string, from?: string): Promise<void> {
  for (let i = 0; i < 4; i++) await tokenLogin(app, username, `wrong-${i}-pass`, from);
  expectError(await tokenLogin(app, username, 'wrong-again-pass', from), 429, 'throttled');
}

let app: TestApp;
const ADDRESS_MAX_FAILURES = 15;

beforeAll(async () => {
  // A low per-address ceiling: the spray below reaches it in a few seconds even on a loaded machine.
  app = await startTestApp({
    LOGIN_MAX_FAILURES: '3',
    LOGIN_ADDRESS_MAX_FAILURES: String(ADDRESS_MAX_FAILURES),
    LOGIN_WINDOW_S: '600',
    TRUST_PROXY: 'loopback',
  });
  await ensureRoot(app);
  await app.users.createUser({ username: 'locked', password: 'locked-pass-123' });
  await app.users.createUser({ username: 'staffer', password: 'staff-pass-123', isStaff: true });
});

afterAll(async () => {
  await closeAndDrop(app);
});

describe("the admin site's user page", () => {
  it('clears the failures of that account, from every address', async () => {
    await lockOut(app, 'locked', '198.51.100.1');
    await lockOut(app, 'locked', '198.51.100.2');
    const root = await adminBrowser(app, ROOT.username, ROOT.password);
    const id = await userId(app, 'locked');
    const res = await adminApiPostJson(root, `/resources/User/records/${id}/clearLoginFailures`, {});
    expect(res.status, res.text).toBe(200);
    expect(res.json.notice.type, res.text).toBe('success');
    expect(res.json.notice.message).toMatch(/locked/);
    // A wrong password is an ordinary failure again (401), from either address.
    expectError(await tokenLogin(app, 'locked', 'wrong-after-clear', '198.51.100.1'), 401, 'invalid_credentials');
    expectError(await tokenLogin(app, 'locked', 'wrong-after-clear', '198.51.100.2'), 401, 'invalid_credentials');
  });

  it('is refused to staff who may not manage superusers, for a superuser', async () => {
    await lockOut(app, ROOT.username, '198.51.100.3');
    const staff = await adminBrowser(app, 'staffer', 'staff-pass-123');
    const res = await adminApiPostJson(staff, `/resources/User/records/${await userId(app, ROOT.username)}/clearLoginFailures`, {});
    expect(res.json?.notice?.type).not.toBe('success');
    expectError(await tokenLogin(app, ROOT.username, 'wrong-root-pass', '198.51.100.3'), 429, 'throttled');
  });
});

describe('ops/clear-login-failures', () => {
  it("clears an account's failures, then an address's", async () => {
    await lockOut(app, 'locked', '198.51.100.20');
    const settings = app.ctx.settings;
    const lines: string[] = [];
    expect(await clearLoginFailuresIn(settings, { username: 'LOCKED' }, (l) => lines.push(l))).toBeGreaterThan(0);
    expect(lines.join('\n')).toMatch(/account "LOCKED"/);
    expectError(await tokenLogin(app, 'locked', 'wrong-after-clear', '198.51.100.20'), 401, 'invalid_credentials');

    // An address that sprayed names: its own counter over all accounts.
    for (let i = 0; i <= ADDRESS_MAX_FAILURES; i++) await tokenLogin(app, `nobody-${i}`, 'spray-pass-123', '198.51.100.30');
    expectError(await tokenLogin(app, 'nobody-new', 'spray-pass-123', '198.51.100.30'), 429, 'throttled');
    expect(await clearLoginFailuresIn(settings, { address: '198.51.100.30' }, () => undefined)).toBeGreaterThan(0);
    expectError(await tokenLogin(app, 'nobody-new', 'spray-pass-123', '198.51.100.30'), 401, 'invalid_credentials');
  }, 60_000);

  it('has --help, and refuses a call that names nothing to clear or no installation', async () => {
    const out: string[] = [];
    const capture = { stdout: { write: (t: string) => out.push(t) }, stderr: { write: (t: string) => out.push(t) } };
    expect(await runClearLoginFailures(['--help'], capture)).toBe(0);
    expect(out.join('')).toMatch(/Usage: ops\/clear-login-failures/);
    expect(await runClearLoginFailures([], capture)).toBe(2);
    expect(await runClearLoginFailures(['--user', 'x', '--dir', '/nonexistent/cybercom'], capture)).toBe(3);
  });

  it('reports nothing cleared for an account without failures', async () => {
    await app.users.createUser({ username: 'calm', password: 'calm-pass-1234' });
    expect(await clearLoginFailuresIn(app.ctx.settings, { username: 'calm' }, () => undefined)).toBe(0);
  });
});
