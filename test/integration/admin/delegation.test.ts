/**
 * Who may hand out rights in the admin site, through its own HTTP endpoints: staff who are not
 * superusers grant only permissions they hold and never an area-wide role (to nobody, themselves
 * included), put nobody into a group granting more, and issue, see, rotate and revoke only their
 * own API token; superusers do all of it. Refusals are errors shown in the admin site (never a
 * 500), and nothing is written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type CallResult, type TestApp } from '../../support/app.js';
import { closeAndDrop, expectError } from '../auth/helpers.js';
import { Browser, adminApiGet, adminApiPost, adminApiPostJson, adminBrowser, ensureRoot, storedHash, userId, ROOT } from './support.js';

let app: TestApp;
let root: Browser;
let staff: Browser;
const groupIds: Record<string, string> = {};

const STAFF_HOLDS = ['data_store.lab.safe', 'cybercom_queue.task.tasks.add'];

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000' });
  await ensureRoot(app);
  await app.users.createUser({ username: 'staffer', password: 'staff-pass-123', isStaff: true, permissions: STAFF_HOLDS });
  await app.users.createUser({ username: 'worker', password: 'worker-pass-123' });
  await app.users.createUser({
    username: 'bigshot',
    password: 'bigshot-pass-1',
    isStaff: true,
    permissions: ['data_store.datastore_admin'],
  });
  await app.users.createUser({ username: 'newbie', password: 'newbie-pass-123' });
  await app.users.createGroup('store-admins', ['data_store.datastore_admin']);
  await app.users.createGroup('task-admins', ['cybercom_queue.task_admin']);
  await app.users.createGroup('lab-readers', ['data_store.lab.safe']);
  await app.users.createGroup('lab-writers', ['data_store.lab.add']);
  for (const group of await app.ctx.serviceDb.collection('auth_group').find({}).toArray()) {
    groupIds[group.name as string] = group._id.toString();
  }
  root = await adminBrowser(app, ROOT.username, ROOT.password);
  staff = await adminBrowser(app, 'staffer', 'staff-pass-123');
});

afterAll(async () => {
  await closeAndDrop(app);
});

const stored = (username: string) => app.ctx.serviceDb.collection('auth_user').findOne({ username });
const storedGroup = (name: string) => app.ctx.serviceDb.collection('auth_group').findOne({ name });
const tokenDoc = async (username: string) => {
  const user = await stored(username);
  return app.ctx.serviceDb.collection('authtoken_token').findOne({ user: user?._id });
};

/** AdminJS's answer to a refused form: 200 with an error notice and the field marked. */
function expectRefusedForm(res: CallResult, field: string): void {
  expect(res.status, res.text).toBe(200);
  expect(res.json.notice.type, res.text).toBe('error');
  expect(res.json.notice.message).toMatch(/superuser/);
  expect(res.json.record.errors[field].type, res.text).toBe('not_delegable');
}

/** A user's permissions and group ids as stored, for before/after comparisons. */
async function rights(username: string): Promise<{ permissions: string[]; groups: string[] }> {
  const user = await stored(username);
  return { permissions: user?.permissions as string[], groups: (user?.groups as unknown[]).map(String) };
}

describe('staff who are not superusers', () => {
  it('cannot grant datastore_admin or task_admin to themselves', async () => {
    const self = await userId(app, 'staffer');
    const before = await rights('staffer');
    for (const role of ['data_store.datastore_admin', 'cybercom_queue.task_admin']) {
      const res = await adminApiPost(staff, `/resources/User/records/${self}/edit`, {
        username: 'staffer',
        'permissions.0': STAFF_HOLDS[0] as string,
        'permissions.1': STAFF_HOLDS[1] as string,
        'permissions.2': role,
      });
      expectRefusedForm(res, 'permissions');
    }
    expect(await rights('staffer')).toEqual(before);
  });

  it('cannot grant them to others, on a new user or an existing one', async () => {
    const worker = await userId(app, 'worker');
    for (const role of ['data_store.datastore_admin', 'cybercom_queue.task_admin']) {
      expectRefusedForm(await adminApiPost(staff, `/resources/User/records/${worker}/edit`, { 'permissions.0': role }), 'permissions');
    }
    expect((await stored('worker'))?.permissions).toEqual([]);
    const created = await adminApiPost(staff, '/resources/User/actions/new', {
      username: 'newcomer',
      newPassword: 'newcomer-pass-1',
      'permissions.0': 'cybercom_queue.task_admin',
    });
    expectRefusedForm(created, 'permissions');
    expect(await stored('newcomer')).toBeNull();
  });

  it('cannot grant them through the permission picker, to a user or a group', async () => {
    const before = await Promise.all([rights('staffer'), storedGroup('lab-readers')]);
    for (const target of [{ user: 'staffer' }, { user: 'worker' }, { group: 'lab-readers' }]) {
      for (const spec of [
        { area: 'data_store', scope: 'admin' },
        { area: 'cybercom_queue', scope: 'task_admin' },
      ]) {
        const res = await adminApiPostJson(staff, '/resources/Permission/actions/picker', { spec: JSON.stringify(spec), ...target });
        expectError(res, 403, 'not_delegable');
      }
    }
    expect(await Promise.all([rights('staffer'), storedGroup('lab-readers')])).toEqual(before);
    expect((await stored('worker'))?.permissions).toEqual([]);
  });

  it('cannot add an admin-level permission to a group, new or existing', async () => {
    const res = await adminApiPost(staff, `/resources/Group/records/${groupIds['lab-readers']}/edit`, {
      name: 'lab-readers',
      'permissions.0': 'data_store.lab.safe',
      'permissions.1': 'data_store.datastore_admin',
    });
    expectRefusedForm(res, 'permissions');
    expect((await storedGroup('lab-readers'))?.permissions).toEqual(['data_store.lab.safe']);
    const created = await adminApiPost(staff, '/resources/Group/actions/new', {
      name: 'sneaky',
      'permissions.0': 'cybercom_queue.task_admin',
    });
    expectRefusedForm(created, 'permissions');
    expect(await storedGroup('sneaky')).toBeNull();
  });

  it('cannot put themselves or anyone into a group that carries an admin-level permission', async () => {
    const self = await userId(app, 'staffer');
    const worker = await userId(app, 'worker');
    const before = await rights('staffer');
    for (const group of ['store-admins', 'task-admins']) {
      expectRefusedForm(
        await adminApiPost(staff, `/resources/User/records/${self}/edit`, { username: 'staffer', 'groups.0': groupIds[group] as string }),
        'groups',
      );
      expectRefusedForm(
        await adminApiPost(staff, `/resources/User/records/${worker}/edit`, { 'groups.0': groupIds[group] as string }),
        'groups',
      );
    }
    expect(await rights('staffer')).toEqual(before);
    expect((await rights('worker')).groups).toEqual([]);
  });

  it('cannot grant, or give group memberships carrying, permissions they do not hold', async () => {
    const worker = await userId(app, 'worker');
    expectRefusedForm(
      await adminApiPost(staff, `/resources/User/records/${worker}/edit`, { 'permissions.0': 'data_store.lab.add' }),
      'permissions',
    );
    expectRefusedForm(
      await adminApiPost(staff, `/resources/User/records/${worker}/edit`, { 'groups.0': groupIds['lab-writers'] as string }),
      'groups',
    );
    expect(await rights('worker')).toEqual({ permissions: [], groups: [] });
  });

  it('grant what they hold, add members to groups granting no more, and edit accounts holding more than they do', async () => {
    const worker = await userId(app, 'worker');
    const granted = await adminApiPost(staff, `/resources/User/records/${worker}/edit`, {
      'permissions.0': 'data_store.lab.samples.safe',
      'permissions.1': 'cybercom_queue.task.tasks.add',
      'groups.0': groupIds['lab-readers'] as string,
    });
    expect(granted.json.notice.type, granted.text).toBe('success');
    expect(await rights('worker')).toEqual({
      permissions: ['data_store.lab.samples.safe', 'cybercom_queue.task.tasks.add'],
      groups: [groupIds['lab-readers']],
    });
    const picked = await adminApiPostJson(staff, '/resources/Permission/actions/picker', {
      spec: JSON.stringify({ area: 'data_store', scope: 'database', database: 'lab', actions: ['safe'] }),
      user: 'worker',
    });
    expect(picked.status, picked.text).toBe(200);
    expect((await stored('worker'))?.permissions).toContain('data_store.lab.safe');

    // What a superuser gave stays when staff change something else, and staff may take it away.
    await app.users.grantPermissions('worker', ['cybercom_queue.task_admin']);
    const permissions = (await stored('worker'))?.permissions as string[];
    const fields = Object.fromEntries(permissions.map((p, i) => [`permissions.${i}`, p]));
    const renamed = await adminApiPost(staff, `/resources/User/records/${worker}/edit`, { ...fields, first_name: 'Wanda' });
    expect(renamed.json.notice.type, renamed.text).toBe('success');
    expect((await stored('worker'))?.first_name).toBe('Wanda');
    expect((await stored('worker'))?.permissions).toContain('cybercom_queue.task_admin');
    const revoked = await adminApiPost(staff, `/resources/User/records/${worker}/edit`, { 'permissions.0': 'data_store.lab.safe' });
    expect(revoked.json.notice.type, revoked.text).toBe('success');
    expect((await stored('worker'))?.permissions).toEqual(['data_store.lab.safe']);
  });

  it('cannot set the password of an account holding more than they may grant, so cannot log in as it', async () => {
    const id = await userId(app, 'bigshot');
    const key = await app.users.tokenFor('bigshot');
    const [hash, token] = [await storedHash(app, 'bigshot'), await tokenDoc('bigshot')];
    const set = await adminApiPostJson(staff, `/resources/User/records/${id}/setPassword`, {
      password: 'taken-over-1',
      confirm: 'taken-over-1',
    });
    expect(set.status, set.text).toBe(200);
    expect(set.json.notice.type, set.text).toBe('error');
    expect(set.json.notice.message).toMatch(/superuser/);
    const edit = await adminApiPost(staff, `/resources/User/records/${id}/edit`, { username: 'bigshot', newPassword: 'taken-over-2' });
    expectRefusedForm(edit, 'newPassword');
    expect(await storedHash(app, 'bigshot')).toBe(hash);
    expect((await tokenDoc('bigshot'))?.key_hash).toBe(token?.key_hash);
    expect(key).toMatch(/^[0-9a-f]{40}$/);
    // An account holding nothing more, and their own, are theirs to set.
    const newbie = await userId(app, 'newbie');
    const ok = await adminApiPostJson(staff, `/resources/User/records/${newbie}/setPassword`, {
      password: 'newbie-pass-456',
      confirm: 'newbie-pass-456',
    });
    expect(ok.json.notice.type, ok.text).toBe('success');
    const byRoot = await adminApiPostJson(root, `/resources/User/records/${id}/setPassword`, {
      password: 'bigshot-pass-2',
      confirm: 'bigshot-pass-2',
    });
    expect(byRoot.json.notice.type, byRoot.text).toBe('success');
  });

  it('cannot rename an account holding more than they may grant; may rename one holding nothing more', async () => {
    const id = await userId(app, 'bigshot');
    const renamed = await adminApiPost(staff, `/resources/User/records/${id}/edit`, { username: 'bigshot-away' });
    expectRefusedForm(renamed, 'username');
    expect(await stored('bigshot')).not.toBeNull();
    expect(await stored('bigshot-away')).toBeNull();
    const newbie = await userId(app, 'newbie');
    const ok = await adminApiPost(staff, `/resources/User/records/${newbie}/edit`, { username: 'newbie-2' });
    expect(ok.json.notice.type, ok.text).toBe('success');
    expect((await stored('newbie-2'))?._id.toString()).toBe(newbie);
    const back = await adminApiPost(staff, `/resources/User/records/${newbie}/edit`, { username: 'newbie' });
    expect(back.json.notice.type, back.text).toBe('success');
  });

  it('issue, see and rotate only their own token', async () => {
    const issuedByRoot = await adminApiPostJson(root, '/resources/Token/actions/issue', { username: 'worker' });
    expect(issuedByRoot.status, issuedByRoot.text).toBe(200);
    const workerToken = await tokenDoc('worker');

    const refused = await adminApiPostJson(staff, '/resources/Token/actions/issue', { username: 'worker' });
    expectError(refused, 403, 'superuser_only');
    expect((await tokenDoc('worker'))?.key_hash).toBe(workerToken?.key_hash);

    const own = await adminApiPostJson(staff, '/resources/Token/actions/issue', { username: 'staffer' });
    expect(own.status, own.text).toBe(200);
    expect(own.json.issued.username).toBe('staffer');

    const list = await adminApiGet(staff, '/resources/Token/actions/list');
    expect(list.status, list.text).toBe(200);
    expect(list.json.records.map((r: { populated: { user: { title: string } } }) => r.populated.user.title)).toEqual(['staffer']);
    expect(list.json.meta.total).toBe(1);
    const workerId = await userId(app, 'worker');
    const filtered = await adminApiGet(staff, `/resources/Token/actions/list?filters.user=${workerId}`);
    expect(filtered.json.records).toEqual([]);

    const tokenId = workerToken?._id.toString() as string;
    const show = await adminApiGet(staff, `/resources/Token/records/${tokenId}/show`);
    expect(show.status).toBeLessThan(500);
    expect(show.text).not.toContain(workerToken?.key_prefix as string);
    const rotate = await adminApiPostJson(staff, `/resources/Token/records/${tokenId}/rotate`, { confirm: 'yes' });
    expect(rotate.status).toBeLessThan(500);
    expect(rotate.json.issued).toBeUndefined();
    const revoke = await adminApiPost(staff, `/resources/Token/records/${tokenId}/delete`, {});
    expect(revoke.status).toBeLessThan(500);
    expect(revoke.json.notice.type, revoke.text).toBe('error');
    expect((await tokenDoc('worker'))?.key_hash).toBe(workerToken?.key_hash);
  });
});

describe('superusers', () => {
  it('grant admin-level permissions and memberships, to staff and to themselves', async () => {
    const staffer = await userId(app, 'staffer');
    const res = await adminApiPost(root, `/resources/User/records/${staffer}/edit`, {
      'permissions.0': 'data_store.datastore_admin',
      'permissions.1': 'cybercom_queue.task_admin',
      'groups.0': groupIds['store-admins'] as string,
    });
    expect(res.json.notice.type, res.text).toBe('success');
    expect(await rights('staffer')).toEqual({
      permissions: ['data_store.datastore_admin', 'cybercom_queue.task_admin'],
      groups: [groupIds['store-admins']],
    });
    const self = await userId(app, ROOT.username);
    const own = await adminApiPost(root, `/resources/User/records/${self}/edit`, { 'groups.0': groupIds['task-admins'] as string });
    expect(own.json.notice.type, own.text).toBe('success');
    const picked = await adminApiPostJson(root, '/resources/Permission/actions/picker', {
      spec: JSON.stringify({ area: 'cybercom_queue', scope: 'task_admin' }),
      group: 'lab-readers',
    });
    expect(picked.status, picked.text).toBe(200);
    expect((await storedGroup('lab-readers'))?.permissions).toContain('cybercom_queue.task_admin');
  });

  it("issue, see, rotate and revoke anyone's token", async () => {
    const issued = await adminApiPostJson(root, '/resources/Token/actions/issue', { username: 'staffer' });
    expect(issued.status, issued.text).toBe(200);
    const list = await adminApiGet(root, '/resources/Token/actions/list');
    const owners = list.json.records.map((r: { populated: { user: { title: string } } }) => r.populated.user.title).sort();
    expect(owners).toEqual(['staffer', 'worker']);
    const workerToken = await tokenDoc('worker');
    const rotate = await adminApiPostJson(root, `/resources/Token/records/${workerToken?._id.toString()}/rotate`, { confirm: 'yes' });
    expect(rotate.json.issued.username, rotate.text).toBe('worker');
    const revoke = await adminApiPost(root, `/resources/Token/records/${workerToken?._id.toString()}/delete`, {});
    expect(revoke.json.notice.type, revoke.text).toBe('success');
    expect(await tokenDoc('worker')).toBeNull();
  });
});
