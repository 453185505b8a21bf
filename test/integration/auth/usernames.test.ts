/**
 * Usernames are unique without regard to case, on every path that creates or renames a user (the
 * user service the installer and tests use, createsuperuser, the admin site's forms); the admin
 * site refuses a rename onto a taken name with a message and stores nothing; and users an earlier
 * version stored with names that differ only in case are told apart at start-up (the later ones
 * renamed, each rename reported in the log).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCreateSuperuser } from '../../../src/auth/cli-createsuperuser.js';
import { testServices } from '../../support/services.js';
import { serviceDatabaseName, startTestApp, TEST_SECRET_KEY, type TestApp } from '../../support/app.js';
import { adminApiPost, adminBrowser, ensureRoot, ROOT, userId, type Browser } from '../admin/support.js';
import { closeAndDrop, startAppWithCapturedLogs } from './helpers.js';

let app: TestApp;
let root: Browser;

const stored = (username: string) => app.ctx.serviceDb.collection('auth_user').findOne({ username });
const names = async (): Promise<string[]> =>
  (await app.ctx.serviceDb.collection('auth_user').find({}).toArray()).map((u) => u.username as string).sort();

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000' });
  await ensureRoot(app);
  await app.users.createUser({ username: 'sec_task', password: 'sec-task-pass-1' });
  await app.users.createUser({ username: 'other', password: 'other-pass-123', email: 'other@example.org' });
  root = await adminBrowser(app, ROOT.username, ROOT.password);
});

afterAll(async () => {
  await closeAndDrop(app);
});

describe('the user service and createsuperuser', () => {
  it('refuses a new user whose name differs from a taken one only in case', async () => {
    await expect(app.users.createUser({ username: 'SEC_TASK', password: 'sec-task-pass-2' })).rejects.toMatchObject({
      status: 409,
      code: 'user_exists',
    });
    expect(await names()).toEqual(['other', 'root', 'sec_task']);
  });

  it('refuses to make a superuser of a case variant of another account, and changes nothing', async () => {
    const before = await stored('sec_task');
    await expect(
      app.users.ensureSuperuser({ username: 'Sec_Task', email: 'x@example.org', password: 'super-pass-123' }),
    ).rejects.toMatchObject({
      status: 409,
      code: 'user_exists',
    });
    expect(await stored('sec_task')).toEqual(before);
    expect(await names()).toEqual(['other', 'root', 'sec_task']);
  });

  it('answers createsuperuser with an error for a case variant', async () => {
    let stderr = '';
    const env = {
      ...testServices().env,
      SECRET_KEY: TEST_SECRET_KEY,
      SERVICE_DATABASE: app.ctx.serviceDb.databaseName,
      LOG_LEVEL: 'silent',
    };
    const code = await runCreateSuperuser(
      ['--username', 'OTHER', '--email', 'o@example.org', '--password-env', 'PW_FOR_TEST'],
      {
        ...env,
        PW_FOR_TEST: 'other-super-pass-1',
      },
      { stdout: { write: () => true }, stderr: { write: (t: string) => (stderr += t) } },
    );
    expect(code).toBe(1);
    expect(stderr).toMatch(/already exists/);
    expect((await stored('other'))?.is_superuser).toBe(false);
  });
});

describe('the admin site', () => {
  it('refuses a rename onto a taken name with a message under the field, and stores nothing', async () => {
    const id = await userId(app, 'other');
    for (const taken of ['sec_task', 'SEC_TASK', 'Root']) {
      const res = await adminApiPost(root, `/resources/User/records/${id}/edit`, { username: taken });
      expect(res.status, res.text).toBe(200);
      expect(res.json.notice.type, res.text).toBe('error');
      expect(res.json.record.errors.username.message, res.text).toMatch(/already/);
      expect(res.json.notice.message).not.toMatch(/success/i);
    }
    expect(await names()).toEqual(['other', 'root', 'sec_task']);
  });

  it('still renames onto a free name, and onto a change of case of the same account', async () => {
    const id = await userId(app, 'other');
    const renamed = await adminApiPost(root, `/resources/User/records/${id}/edit`, { username: 'Other' });
    expect(renamed.json.notice.type, renamed.text).toBe('success');
    expect(await stored('Other')).not.toBeNull();
    const back = await adminApiPost(root, `/resources/User/records/${id}/edit`, { username: 'other' });
    expect(back.json.notice.type, back.text).toBe('success');
    expect(await names()).toEqual(['other', 'root', 'sec_task']);
  });

  it('refuses a new user whose name is taken in another case', async () => {
    const res = await adminApiPost(root, '/resources/User/actions/new', { username: 'ROOT', newPassword: 'new-root-pass-1' });
    expect(res.json.notice.type, res.text).toBe('error');
    expect(res.json.record.errors.username.message, res.text).toMatch(/already/);
    expect(await names()).toEqual(['other', 'root', 'sec_task']);
  });
});

describe('names an earlier version stored in several cases', () => {
  it('renames all but the oldest account at start-up and reports each rename', async () => {
    const database = serviceDatabaseName();
    const before = await startTestApp({ SERVICE_DATABASE: database });
    // Written as an earlier version wrote them: no case-insensitive key, names apart only in case.
    const users = before.ctx.serviceDb.collection('auth_user');
    const base = {
      email: '',
      first_name: '',
      last_name: '',
      password: '!',
      is_active: true,
      is_staff: false,
      is_superuser: false,
      groups: [],
      permissions: [],
      last_login: null,
    };
    await users.insertMany([
      { ...base, username: 'sec_task', date_joined: new Date('2024-01-01') },
      { ...base, username: 'SEC_TASK', date_joined: new Date('2024-02-01') },
      { ...base, username: 'Sec_Task', date_joined: new Date('2024-03-01') },
      { ...base, username: 'SEC_TASK-2', date_joined: new Date('2024-04-01') },
      { ...base, username: 'solo', date_joined: new Date('2024-01-01') },
    ]);
    await users.updateMany({}, { $unset: { username_key: '' } });
    await before.close();

    const after = await startAppWithCapturedLogs({ SERVICE_DATABASE: database });
    try {
      const stored = await after.ctx.serviceDb.collection('auth_user').find({}).toArray();
      const byKey = new Map(stored.map((u) => [u.username_key as string, u.username as string]));
      expect([...byKey.keys()].sort()).toEqual(['sec_task', 'sec_task-2', 'sec_task-3', 'sec_task-4', 'solo']);
      expect(byKey.get('sec_task')).toBe('sec_task');
      expect(byKey.get('sec_task-2')).toBe('SEC_TASK-2');
      expect(stored.map((u) => u.username as string).sort()).toEqual(['SEC_TASK-2', 'SEC_TASK-3', 'Sec_Task-4', 'sec_task', 'solo'].sort());
      const report = after.logLines();
      expect(report).toContain('"from":"SEC_TASK","to":"SEC_TASK-3"');
      expect(report).toContain('"from":"Sec_Task","to":"Sec_Task-4"');
      // From now on the case variants are refused.
      await expect(after.users.createUser({ username: 'SOLO', password: 'solo-pass-1234' })).rejects.toMatchObject({ status: 409 });
    } finally {
      await after.close();
    }
  });
});
