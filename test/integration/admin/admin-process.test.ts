/**
 * The admin site's AdminJS pages made in a process of their own (ADMIN_PROCESS=separate, the
 * served API's default): started on the first admin page, stopped when idle and started again on
 * the next, started again after a crash, stopped with the API; it makes pages only for the
 * administrator the API forwarded, whatever a client's headers claim.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_HEADER, encodeAdmin } from '../../../src/admin/process/admin-process.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { until } from '../../support/until.js';
import { closeAndDrop } from '../auth/helpers.js';
import { ADMIN, ROOT, ensureRoot, loggedIn, type Browser } from './support.js';

let app: TestApp;
let staff: Browser;

/** The admin processes this test process started (its children running the admin entry). */
function adminChildren(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('admin-child')) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  app = await startTestApp({ ADMIN_PROCESS: 'separate', ADMIN_IDLE_EXIT_S: '3', LOGIN_MAX_FAILURES: '1000' });
  await ensureRoot(app);
  await app.users.createUser({ username: 'staffer', password: 'staff-pass-123', isStaff: true });
  staff = await loggedIn(app, 'staffer', 'staff-pass-123');
}, 60_000);

afterAll(async () => {
  await closeAndDrop(app);
});

describe('the admin process', () => {
  it('is started by the first admin page, which it makes for the administrator the API forwarded', async () => {
    expect(adminChildren()).toEqual([]);
    // The staff member claims to be the superuser in the header the API uses to forward.
    const forged = encodeAdmin({
      email: ROOT.username,
      title: 'Superuser',
      id: 'x',
      username: ROOT.username,
      isSuperuser: true,
      isTaskAdmin: true,
    });
    const res = await staff.get(ADMIN, { accept: 'text/html', [ADMIN_HEADER]: forged });
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expect(res.headers.get('content-security-policy')).toMatch(/script-src 'self' 'nonce-[^']+'/);
    expect(res.text).toContain('"email":"staffer"');
    expect(res.text).not.toContain('"title":"Superuser"');
    expect(adminChildren()).toHaveLength(1);
  }, 120_000);

  it('serves AdminJS API calls and its assets through the same process', async () => {
    const [pid] = adminChildren();
    const list = await staff.get(`${ADMIN}/api/resources/User/actions/list`);
    expect(list.status, list.text.slice(0, 300)).toBe(200);
    expect(list.json.records.map((r: { params: { username: string } }) => r.params.username)).toContain('staffer');
    const asset = await staff.get(`${ADMIN}/frontend/assets/components.bundle.js`, { accept: '*/*' });
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect(adminChildren()).toEqual([pid]);
  });

  it('stops when idle and starts again on the next page', async () => {
    const [pid] = adminChildren();
    expect(pid).toBeDefined();
    await until(async () => !alive(pid!), 20_000, 'the idle admin process to stop');
    expect(adminChildren()).toEqual([]);
    const res = await staff.get(ADMIN, { accept: 'text/html' });
    expect(res.status).toBe(200);
    const [next] = adminChildren();
    expect(next).toBeDefined();
    expect(next).not.toBe(pid);
  }, 120_000);

  it('is started again after it died', async () => {
    const [pid] = adminChildren();
    if (pid === undefined) throw new Error('no admin process running');
    process.kill(pid, 'SIGKILL');
    await until(async () => !alive(pid) && adminChildren().length === 0, 10_000, 'the killed admin process to be gone');
    // Right after its death an answer is a 503 with the JSON error body, or the page from a new one.
    let res = await staff.get(ADMIN, { accept: 'text/html' });
    if (res.status === 503) {
      expect(res.json.error.code).toBe('admin_unavailable');
      await sleep(500);
      res = await staff.get(ADMIN, { accept: 'text/html' });
    }
    expect(res.status).toBe(200);
    expect(adminChildren()).toHaveLength(1);
  }, 120_000);

  it('is stopped with the API', async () => {
    const [pid] = adminChildren();
    if (pid === undefined) throw new Error('no admin process running');
    await app.close();
    expect(alive(pid)).toBe(false);
    app = await startTestApp({ ADMIN_PROCESS: 'separate' });
  }, 60_000);
});
