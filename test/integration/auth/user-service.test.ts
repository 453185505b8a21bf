/** UserService (CLI, installer, admin site, tests) against the real database. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { runCreateSuperuser } from '../../../src/auth/cli-createsuperuser.js';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_SECRET_KEY, serviceDatabaseName } from '../../support/app.js';
import { testServices } from '../../support/services.js';
import { closeAndDrop } from './helpers.js';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await closeAndDrop(app);
});

describe('UserService', () => {
  it('creates users with hashed passwords and refuses duplicates', async () => {
    const summary = await app.users.createUser({ username: 'u1', password: 'u1-pass-1234', email: 'u1@example.org', isStaff: true });
    expect(summary).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      username: 'u1',
      email: 'u1@example.org',
      isStaff: true,
      isSuperuser: false,
      isActive: true,
    });
    const doc = await app.ctx.serviceDb.collection('auth_user').findOne({ username: 'u1' });
    expect(doc?.password).toMatch(/^scrypt\$/);
    expect(doc?.date_joined).toBeInstanceOf(Date);
    await expect(app.users.createUser({ username: 'u1', password: 'x-pass-1234' })).rejects.toMatchObject({
      status: 409,
      code: 'user_exists',
    });
  });

  it('validates usernames, e-mail addresses, codenames and groups', async () => {
    await expect(app.users.createUser({ username: 'bad name' })).rejects.toMatchObject({ status: 400, code: 'invalid_username' });
    await expect(app.users.createUser({ username: 'ok1', email: 'nope' })).rejects.toMatchObject({ status: 400, code: 'invalid_email' });
    await expect(app.users.createUser({ username: 'ok2', permissions: ['not.a.codename'] })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_permission',
    });
    await expect(app.users.createUser({ username: 'ok3', groups: ['missing'] })).rejects.toMatchObject({
      status: 404,
      code: 'no_such_group',
    });
    expect(await app.ctx.serviceDb.collection('auth_user').countDocuments({ username: /^ok/ })).toBe(0);
  });

  it('creates users without a password that cannot log in', async () => {
    await app.users.createUser({ username: 'nopw' });
    expect(await app.users.checkCredentials('nopw', '')).toBeNull();
    expect(await app.users.checkCredentials('nopw', '!')).toBeNull();
  });

  it('builds principals with the effective permissions of user and groups', async () => {
    await app.users.createGroup('readers', ['data_store.lab.safe', 'catalog.cat.things.safe']);
    await app.users.createGroup('readers', ['data_store.lab.add']); // re-run adds, never fails
    await app.users.createUser({ username: 'eff', password: 'eff-pass-1234', permissions: ['cybercom_queue.task.tasks.add'] });
    expect((await app.users.principalFor('eff')).permissions.size).toBe(1);
    await app.users.addToGroup('eff', 'readers');
    // An old-style codename with a single meaning is accepted and stored in the canonical form.
    await app.users.grantPermissions('eff', ['data_store.other_safe']);
    const principal = await app.users.principalFor('eff');
    expect([...principal.permissions].sort()).toEqual([
      'catalog.cat.things.safe',
      'cybercom_queue.task.tasks.add',
      'data_store.lab.add',
      'data_store.lab.safe',
      'data_store.other.safe',
    ]);
    expect(principal.grants.has({ kind: 'collection', area: 'catalog', db: 'cat', col: 'things', action: 'safe' })).toBe(true);
    expect(principal).toMatchObject({ username: 'eff', isSuperuser: false, userId: expect.any(String) });
    await expect(app.users.addToGroup('eff', 'nosuch')).rejects.toMatchObject({ status: 404 });
    await expect(app.users.grantPermissions('nobody', ['data_store.x.safe'])).rejects.toMatchObject({ status: 404, code: 'no_such_user' });
    // Old-style codenames that could mean several grants, or name no known task, are refused.
    await expect(app.users.grantPermissions('eff', ['data_store.x_y_safe'])).rejects.toMatchObject({
      status: 400,
      code: 'invalid_permission',
    });
    await expect(app.users.grantPermissions('eff', ['cybercom_queue.tasks_mul'])).rejects.toMatchObject({
      status: 400,
      code: 'invalid_permission',
    });
  });

  it('keeps the permission catalog for the admin site', async () => {
    const codes = (await app.ctx.serviceDb.collection('auth_permission').find({}).toArray()).map((p) => p.codename as string);
    for (const code of [
      'data_store.datastore_admin',
      'catalog.catalog_create',
      'cybercom_queue.task_admin',
      'data_store.lab.safe',
      'data_store.other.safe',
      'cybercom_queue.task.tasks.add',
    ]) {
      expect(codes).toContain(code);
    }
    expect(new Set(codes).size).toBe(codes.length);
    const perm = await app.ctx.serviceDb.collection('auth_permission').findOne({ codename: 'data_store.lab.safe' });
    expect(perm).toMatchObject({ area: 'data_store', name: 'Can read every collection of data store database lab' });
  });

  it('sets passwords and checks credentials', async () => {
    await app.users.createUser({ username: 'sp', password: 'sp-first-1234' });
    await app.users.setPassword('sp', 'sp-second-5678');
    expect(await app.users.checkCredentials('sp', 'sp-first-1234')).toBeNull();
    expect((await app.users.checkCredentials('sp', 'sp-second-5678'))?.username).toBe('sp');
    await expect(app.users.setPassword('ghost', 'whatever-123')).rejects.toMatchObject({ status: 404 });
  });

  it('ensureSuperuser creates, then updates on re-run', async () => {
    const first = await app.users.ensureSuperuser({ username: 'admin', email: 'a@example.org', password: 'admin-pass-1' });
    expect(first).toMatchObject({ username: 'admin', isSuperuser: true, isStaff: true, isActive: true });
    const second = await app.users.ensureSuperuser({ username: 'admin', email: 'b@example.org', password: 'admin-pass-2' });
    expect(second.id).toBe(first.id);
    expect(second.email).toBe('b@example.org');
    expect(await app.ctx.serviceDb.collection('auth_user').countDocuments({ username: 'admin' })).toBe(1);
    expect(await app.users.checkCredentials('admin', 'admin-pass-1')).toBeNull();
    expect((await app.users.checkCredentials('admin', 'admin-pass-2'))?.isSuperuser).toBe(true);
  });
});

describe('createsuperuser command', () => {
  it('creates the administrator, then updates it, with the password from a file or the environment', async () => {
    const database = serviceDatabaseName();
    const env = { ...testServices().env, SECRET_KEY: TEST_SECRET_KEY, SERVICE_DATABASE: database, ALLOWED_HOSTS: 'localhost' };
    const dir = await mkdtemp(join(tmpdir(), 'csu-'));
    const file = join(dir, 'password');
    await writeFile(file, 'Root-Pass-2024\n', { mode: 0o600 });
    const out = { stdout: '', stderr: '' };
    const io = { stdout: { write: (t: string) => (out.stdout += t) }, stderr: { write: (t: string) => (out.stderr += t) } };

    expect(await runCreateSuperuser(['--username', 'root', '--email', 'root@example.org', '--password-file', file], env, io)).toBe(0);
    expect(out.stdout).toContain('Superuser "root" created.');
    expect(
      await runCreateSuperuser(
        ['--username', 'root', '--email', 'ops@example.org', '--password-env', 'ROOT_PW'],
        { ...env, ROOT_PW: 'Root-Pass-2025' },
        io,
      ),
    ).toBe(0);
    expect(out.stdout).toContain('Superuser "root" updated.');
    expect(out.stdout + out.stderr).not.toContain('Root-Pass');

    const other = await startTestApp({ SERVICE_DATABASE: database });
    try {
      expect((await call(other.url, 'POST', '/api/token/', { body: { username: 'root', password: 'Root-Pass-2024' } })).status).toBe(401);
      const ok = await call(other.url, 'POST', '/api/token/', { body: { username: 'root', password: 'Root-Pass-2025' } });
      expect(ok.status).toBe(200);
      expect((await other.users.principalFor('root')).isSuperuser).toBe(true);
      const doc = await other.ctx.serviceDb.collection('auth_user').findOne({ username: 'root' });
      expect(doc?.email).toBe('ops@example.org');
    } finally {
      await closeAndDrop(other);
    }
  });
});
