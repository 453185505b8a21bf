/**
 * Passwords in the admin site: hashed on every path that sets one (create, edit, the
 * set-password action), checked against the password rules, never shown (not in forms, lists or
 * answers), never writable as a raw field; and what staff who are not superusers may not do.
 */
import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../../src/auth/passwords.js';
import { startTestApp, type TestApp } from '../../support/app.js';
import { closeAndDrop } from '../auth/helpers.js';
import { Browser, adminApiGet, adminApiPost, adminApiPostJson, adminBrowser, storedHash, userId, ensureRoot, ROOT } from './support.js';

let app: TestApp;
let root: Browser;

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000' });
  await ensureRoot(app);
  await app.users.createUser({ username: 'staffer', password: 'staff-pass-123', isStaff: true });
  root = await adminBrowser(app, ROOT.username, ROOT.password);
});

afterAll(async () => {
  await closeAndDrop(app);
});

/** Nothing that looks like a stored hash, and not the typed password either. */
function expectNoSecrets(text: string, ...secrets: string[]): void {
  expect(text).not.toContain('scrypt$');
  expect(text).not.toMatch(/"password"\s*:/);
  for (const secret of secrets) expect(text).not.toContain(secret);
}

async function canLogIn(username: string, password: string): Promise<boolean> {
  const res = await new Browser(app.url).postJson('/api/auth/login/', { username, password });
  return res.status === 200;
}

describe('creating a user', () => {
  it('hashes the password typed in the form (scrypt) and never echoes it', async () => {
    const res = await adminApiPost(root, '/resources/User/actions/new', {
      username: 'alice',
      newPassword: 'alice-first-pass',
      email: 'alice@example.org',
      is_staff: 'false',
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json.notice.type).toBe('success');
    expectNoSecrets(res.text, 'alice-first-pass');
    const hash = await storedHash(app, 'alice');
    expect(hash).toMatch(/^scrypt\$/);
    expect(await verifyPassword('alice-first-pass', hash)).toBe(true);
    expect(await canLogIn('alice', 'alice-first-pass')).toBe(true);
    const stored = await app.ctx.serviceDb.collection('auth_user').findOne({ username: 'alice' });
    expect(stored?.is_active).toBe(true); // the default, not offered on the new form
  });

  it('creates an account without a usable password when none is given', async () => {
    const res = await adminApiPost(root, '/resources/User/actions/new', { username: 'robot' });
    expect(res.json.notice.type, res.text).toBe('success');
    const hash = await storedHash(app, 'robot');
    expect(hash.startsWith('!')).toBe(true);
    expect(await canLogIn('robot', '')).toBe(false);
  });

  it('refuses a weak password under the field, and creates nothing', async () => {
    const res = await adminApiPost(root, '/resources/User/actions/new', { username: 'weakling', newPassword: '12345678' });
    expect(res.status).toBe(200);
    expect(res.json.notice.type).toBe('error');
    expect(res.json.record.errors.newPassword.message).toMatch(/digits only|too common/);
    expect(await app.ctx.serviceDb.collection('auth_user').countDocuments({ username: 'weakling' })).toBe(0);
  });

  it('ignores a hash smuggled in as a raw `password` field', async () => {
    const smuggled = await hashPassword('smuggled-pass-1');
    const res = await adminApiPost(root, '/resources/User/actions/new', { username: 'smuggler', password: smuggled });
    expect(res.json.notice.type, res.text).toBe('success');
    expect(await storedHash(app, 'smuggler')).not.toBe(smuggled);
    expect(await canLogIn('smuggler', 'smuggled-pass-1')).toBe(false);
  });

  it('checks the username and e-mail under their fields', async () => {
    const res = await adminApiPost(root, '/resources/User/actions/new', { username: 'bad name!', email: 'not-an-address' });
    expect(res.json.notice.type).toBe('error');
    expect(res.json.record.errors.username.message).toMatch(/letters, digits/);
  });
});

describe('editing a user', () => {
  it('shows an edit form without the hash', async () => {
    const id = await userId(app, 'alice');
    for (const action of ['edit', 'show']) {
      const res = await adminApiGet(root, `/resources/User/records/${id}/${action}`);
      expect(res.status, res.text).toBe(200);
      expect(res.json.record.params.username).toBe('alice');
      expectNoSecrets(res.text);
    }
  });

  it('keeps the password when the field is left empty, and hashes a new one', async () => {
    const id = await userId(app, 'alice');
    const before = await storedHash(app, 'alice');
    await app.users.tokenFor('alice');
    const tokens = app.ctx.serviceDb.collection('authtoken_token');
    const keep = await adminApiPost(root, `/resources/User/records/${id}/edit`, {
      username: 'alice',
      first_name: 'Alice',
      newPassword: '',
    });
    expect(keep.json.notice.type, keep.text).toBe('success');
    expect(await storedHash(app, 'alice')).toBe(before);
    expect(await tokens.countDocuments({ user: new ObjectId(id) }), 'the token stays while the password does').toBe(1);
    expect((await app.ctx.serviceDb.collection('auth_user').findOne({ username: 'alice' }))?.first_name).toBe('Alice');

    const change = await adminApiPost(root, `/resources/User/records/${id}/edit`, { username: 'alice', newPassword: 'alice-second-pass' });
    expect(change.json.notice.type, change.text).toBe('success');
    expectNoSecrets(change.text, 'alice-second-pass');
    const after = await storedHash(app, 'alice');
    expect(after).not.toBe(before);
    expect(await verifyPassword('alice-second-pass', after)).toBe(true);
    expect(await tokens.countDocuments({ user: new ObjectId(id) }), 'a new password revokes the API token').toBe(0);
  });

  it('never writes a raw `password` field from the edit form', async () => {
    const id = await userId(app, 'alice');
    const before = await storedHash(app, 'alice');
    const smuggled = await hashPassword('smuggled-pass-2');
    const res = await adminApiPost(root, `/resources/User/records/${id}/edit`, {
      username: 'alice',
      password: smuggled,
      'password.0': 'x',
    });
    expect(res.json.notice.type, res.text).toBe('success');
    expect(await storedHash(app, 'alice')).toBe(before);
  });
});

describe('the set-password action', () => {
  it('hashes the new password through the user service', async () => {
    const id = await userId(app, 'alice');
    await app.users.tokenFor('alice');
    const res = await adminApiPostJson(root, `/resources/User/records/${id}/setPassword`, {
      password: 'alice-third-pass',
      confirm: 'alice-third-pass',
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json.notice.type).toBe('success');
    expect(
      await app.ctx.serviceDb.collection('authtoken_token').countDocuments({ user: new ObjectId(id) }),
      'the API token is revoked',
    ).toBe(0);
    expectNoSecrets(res.text, 'alice-third-pass');
    expect(await verifyPassword('alice-third-pass', await storedHash(app, 'alice'))).toBe(true);
    expect(await canLogIn('alice', 'alice-third-pass')).toBe(true);
  });

  it('refuses two different passwords and weak ones, changing nothing', async () => {
    const id = await userId(app, 'alice');
    const before = await storedHash(app, 'alice');
    const mismatch = await adminApiPostJson(root, `/resources/User/records/${id}/setPassword`, {
      password: 'alice-fourth-pass',
      confirm: 'other',
    });
    expect(mismatch.json.record.errors.password.message).toBe('The two passwords differ.');
    const weak = await adminApiPostJson(root, `/resources/User/records/${id}/setPassword`, { password: 'alice', confirm: 'alice' });
    expect(weak.json.record.errors.password.message).toMatch(/at least 8|username/);
    expect(await storedHash(app, 'alice')).toBe(before);
  });
});

describe('staff who are not superusers', () => {
  let staff: Browser;
  beforeAll(async () => {
    staff = await adminBrowser(app, 'staffer', 'staff-pass-123');
  });

  it('cannot make anyone a superuser', async () => {
    const res = await adminApiPost(staff, '/resources/User/actions/new', {
      username: 'climber',
      newPassword: 'climber-pass-1',
      is_superuser: 'true',
    });
    expect(res.json.notice.type, res.text).toBe('success');
    const stored = await app.ctx.serviceDb.collection('auth_user').findOne({ username: 'climber' });
    expect(stored?.is_superuser).toBe(false);
    const id = await userId(app, 'climber');
    await adminApiPost(staff, `/resources/User/records/${id}/edit`, { username: 'climber', is_superuser: 'true' });
    expect((await app.ctx.serviceDb.collection('auth_user').findOne({ username: 'climber' }))?.is_superuser).toBe(false);
  });

  it('cannot make itself or anyone a superuser through the flattened or nested keys the admin accepts', async () => {
    const self = await userId(app, 'staffer');
    const attempts: Record<string, string>[] = [
      { 'is_superuser.0': 'true' },
      { 'is_superuser.0': 'true', 'is_superuser.1': 'true' },
      { 'is_superuser.x': 'true' },
      { 'is_superuser[0]': 'true' },
    ];
    for (const extra of attempts) {
      await adminApiPost(staff, `/resources/User/records/${self}/edit`, { username: 'staffer', ...extra });
      const stored = await app.ctx.serviceDb.collection('auth_user').findOne({ username: 'staffer' });
      expect(stored?.is_superuser, JSON.stringify(extra)).toBe(false);
      expect(
        Object.keys(stored ?? {}).filter((k) => k.startsWith('is_superuser')),
        JSON.stringify(extra),
      ).toEqual(['is_superuser']);
    }
    await adminApiPost(staff, '/resources/User/actions/new', {
      username: 'climber2',
      newPassword: 'climber-pass-2',
      'is_superuser.0': 'true',
    });
    expect((await app.ctx.serviceDb.collection('auth_user').findOne({ username: 'climber2' }))?.is_superuser).toBe(false);
  });

  it("cannot change a superuser's password or account", async () => {
    const id = await userId(app, 'root');
    const before = await storedHash(app, 'root');
    const set = await adminApiPostJson(staff, `/resources/User/records/${id}/setPassword`, {
      password: 'taken-over-1',
      confirm: 'taken-over-1',
    });
    expect(set.json.notice.type, set.text).toBe('error');
    const edit = await adminApiPost(staff, `/resources/User/records/${id}/edit`, { username: 'root', newPassword: 'taken-over-2' });
    expect(edit.json.notice.type, edit.text).toBe('error');
    expect(await storedHash(app, 'root')).toBe(before);
  });
});
