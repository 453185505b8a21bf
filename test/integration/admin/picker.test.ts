/**
 * The permission picker: its choices come from the real data store, catalog and task list; it
 * creates exactly the codenames the API checks (so a grant made with it opens exactly that
 * collection to the API); it validates before writing; deleting a permission revokes it.
 * Plus the picker's pure rules as a table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codenamesForGrant, parseGrantSpec } from '../../../src/admin/picker/grant-codenames.js';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { closeAndDrop, expectError } from '../auth/helpers.js';
import { Browser, adminApiGet, adminApiPost, adminApiPostJson, adminBrowser, ensureRoot, ROOT } from './support.js';

let app: TestApp;
let root: Browser;
let db: string;
let rootToken: string;

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000' }, () => ({
    admin: { taskNames: async () => ['proj.tasks.add', 'proj.tasks.mul'] },
  }));
  await ensureRoot(app);
  await app.users.createUser({ username: 'rita', password: 'rita-pass-123' });
  await app.users.createGroup('readers', []);
  await app.users.addToGroup('rita', 'readers');
  rootToken = await app.users.tokenFor('root');
  db = app.prefix;
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token: rootToken, body: { database: db } })).status).toBe(201);
  for (const collection of ['samples', 'secrets']) {
    expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token: rootToken, body: { collection } })).status).toBe(201);
    await call(app.url, 'POST', `/api/data_store/data/${db}/${collection}/`, { token: rootToken, body: { kind: collection } });
  }
  root = await adminBrowser(app, ROOT.username, ROOT.password);
});

afterAll(async () => {
  await call(app.url, 'POST', '/api/data_store/data/', { token: rootToken, body: { database: db, action: 'delete' } }).catch(
    () => undefined,
  );
  await closeAndDrop(app);
});

const picker = (query: string) => adminApiGet(root, `/resources/Permission/actions/picker?${query}`);
const spec = (value: unknown) => encodeURIComponent(JSON.stringify(value));

describe('choices', () => {
  it('offers the existing databases, groups, users and the registered tasks', async () => {
    const res = await picker('op=choices');
    expect(res.status, res.text).toBe(200);
    expect(res.json.areas.data_store.databases).toContain(db);
    expect(res.json.areas.catalog.databases).toEqual(['catalog']);
    expect(res.json.tasks).toEqual(['proj.tasks.add', 'proj.tasks.mul']);
    expect(res.json.tasksError).toBeNull();
    expect(res.json.groups).toEqual(['readers']);
    expect(res.json.users).toEqual(['rita', 'root']);
  });

  it("offers a database's collections when it is chosen", async () => {
    const res = await picker(`op=collections&area=data_store&database=${db}`);
    expect(res.json.collections).toEqual(['samples', 'secrets']);
    expect((await picker('op=collections&area=data_store&database=nosuchdb')).json.collections).toEqual([]);
  });

  it('previews the codenames of a choice, or says what is missing', async () => {
    const ok = await picker(
      `op=preview&spec=${spec({ area: 'data_store', scope: 'collection', database: db, collection: 'samples', actions: ['add', 'safe'] })}`,
    );
    expect(ok.json.error).toBeNull();
    expect(ok.json.codenames).toEqual([
      { codename: `data_store.${db}.samples.safe`, area: 'data_store', name: `Can read data store collection ${db} / samples` },
      { codename: `data_store.${db}.samples.add`, area: 'data_store', name: `Can add to data store collection ${db} / samples` },
    ]);
    const missing = await picker(`op=preview&spec=${spec({ area: 'data_store', scope: 'collection', database: db, actions: ['safe'] })}`);
    expect(missing.json.codenames).toEqual([]);
    expect(missing.json.error).toBe('Choose a collection.');
  });
});

describe('granting', () => {
  it('creates the codenames and grants them to a group: the API then opens exactly that collection', async () => {
    const ritaToken = await app.users.tokenFor('rita');
    expect((await call(app.url, 'GET', `/api/data_store/data/${db}/samples/`, { token: ritaToken })).status).toBe(403);

    const choice = { area: 'data_store', scope: 'collection', database: db, collection: 'samples', actions: ['safe', 'add'] };
    const res = await adminApiPostJson(root, '/resources/Permission/actions/picker', {
      spec: JSON.stringify(choice),
      group: 'readers',
      user: '',
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json.codenames).toEqual([`data_store.${db}.samples.safe`, `data_store.${db}.samples.add`]);
    expect(res.json.summary).toBe(`Granted data_store.${db}.samples.safe, data_store.${db}.samples.add to group readers.`);

    const group = await app.ctx.serviceDb.collection('auth_group').findOne({ name: 'readers' });
    expect(group?.permissions).toEqual([`data_store.${db}.samples.safe`, `data_store.${db}.samples.add`]);
    const catalog = await app.ctx.serviceDb
      .collection('auth_permission')
      .find({ codename: { $regex: `^data_store\\.${db}\\.` } })
      .toArray();
    expect(catalog.map((p) => p.codename).sort()).toEqual([`data_store.${db}.samples.add`, `data_store.${db}.samples.safe`]);

    await new Promise((resolve) => setTimeout(resolve, 2_100)); // rita's cached account (2 s) expires
    const read = await call(app.url, 'GET', `/api/data_store/data/${db}/samples/`, { token: ritaToken });
    expect(read.status, read.text).toBe(200);
    expect(read.json.results[0].kind).toBe('samples');
    expect((await call(app.url, 'POST', `/api/data_store/data/${db}/samples/`, { token: ritaToken, body: { by: 'rita' } })).status).toBe(
      201,
    );
    expect((await call(app.url, 'GET', `/api/data_store/data/${db}/secrets/`, { token: ritaToken })).status).toBe(403);
  });

  it('grants task and role codenames to a user directly', async () => {
    const res = await adminApiPostJson(root, '/resources/Permission/actions/picker', {
      spec: JSON.stringify({ area: 'cybercom_queue', scope: 'task', task: 'proj.tasks.add' }),
      user: 'rita',
    });
    expect(res.json.codenames).toEqual(['cybercom_queue.task.proj.tasks.add']);
    const rita = await app.ctx.serviceDb.collection('auth_user').findOne({ username: 'rita' });
    expect(rita?.permissions).toEqual(['cybercom_queue.task.proj.tasks.add']);
  });

  it('validates everything before writing anything', async () => {
    const before = await app.ctx.serviceDb.collection('auth_permission').countDocuments();
    const badSpec = await adminApiPostJson(root, '/resources/Permission/actions/picker', {
      spec: JSON.stringify({ area: 'data_store', scope: 'collection', database: 'a/b', collection: 'c', actions: ['safe'] }),
    });
    expectError(badSpec, 400, 'invalid_name');
    const noGroup = await adminApiPostJson(root, '/resources/Permission/actions/picker', {
      spec: JSON.stringify({ area: 'catalog', scope: 'admin' }),
      group: 'nobody-here',
    });
    expectError(noGroup, 404, 'no_such_group');
    expect(await app.ctx.serviceDb.collection('auth_permission').countDocuments()).toBe(before);
  });

  it('offers the known codenames to the users and groups forms', async () => {
    const res = await adminApiGet(root, '/resources/Permission/actions/codenames');
    const codenames = (res.json.codenames as { codename: string }[]).map((c) => c.codename);
    expect(codenames).toContain('data_store.datastore_admin');
    expect(codenames).toContain(`data_store.${db}.samples.safe`);
    expect(codenames).toEqual([...codenames].sort());
  });

  it('revokes a deleted permission from every holder', async () => {
    const codename = `data_store.${db}.samples.add`;
    const permission = await app.ctx.serviceDb.collection('auth_permission').findOne({ codename });
    const res = await adminApiPost(root, `/resources/Permission/records/${permission?._id.toString()}/delete`, {});
    expect(res.json.notice.type, res.text).toBe('success');
    const group = await app.ctx.serviceDb.collection('auth_group').findOne({ name: 'readers' });
    expect(group?.permissions).toEqual([`data_store.${db}.samples.safe`]);
  });

  it('validates codenames typed into a group form', async () => {
    const res = await adminApiPost(root, '/resources/Group/actions/new', { name: 'typos', 'permissions.0': 'datastore.x_y_safe' });
    expect(res.json.notice.type).toBe('error');
    expect(res.json.record.errors.permissions.message).toMatch(/is not a permission codename/);
    const ok = await adminApiPost(root, '/resources/Group/actions/new', { name: 'writers', 'permissions.0': `data_store.${db}.add` });
    expect(ok.json.notice.type, ok.text).toBe('success');
    expect(await app.ctx.serviceDb.collection('auth_permission').countDocuments({ codename: `data_store.${db}.add` })).toBe(1);
  });

  it('converts an old-style codename with one meaning, and refuses one with several', async () => {
    // It could be database `<db>_samples` or collection samples of `<db>`; only the second exists.
    const ok = await adminApiPost(root, '/resources/Group/actions/new', {
      name: 'legacy',
      'permissions.0': `data_store.${db}_samples_update`,
    });
    expect(ok.json.notice.type, ok.text).toBe('success');
    const group = await app.ctx.serviceDb.collection('auth_group').findOne({ name: 'legacy' });
    expect(group?.permissions).toEqual([`data_store.${db}.samples.update`]);
    // Nothing named like this exists: database x_y, or collection y of database x?
    const res = await adminApiPost(root, '/resources/Group/actions/new', { name: 'vague', 'permissions.0': 'data_store.x_y_safe' });
    expect(res.json.notice.type).toBe('error');
    expect(res.json.record.errors.permissions.message).toContain('could mean data_store.x_y.safe or data_store.x.y.safe');
  });
});

describe('the codename rules (pure)', () => {
  const codes = (value: unknown) => codenamesForGrant(parseGrantSpec(value)).map((p) => p.codename);

  it.each([
    [
      { area: 'data_store', scope: 'collection', database: 'lab', collection: 'runs', actions: ['delete', 'safe'] },
      ['data_store.lab.runs.safe', 'data_store.lab.runs.delete'],
    ],
    [{ area: 'data_store', scope: 'collection', database: 'a_b', collection: 'c', actions: ['safe'] }, ['data_store.a_b.c.safe']],
    [{ area: 'data_store', scope: 'collection', database: 'a', collection: 'b_c', actions: ['safe'] }, ['data_store.a.b_c.safe']],
    [
      { area: 'data_store', scope: 'collection', database: 'lab', collection: 'runs.2024 raw', actions: ['add'] },
      ['data_store.lab.runs.2024 raw.add'],
    ],
    [{ area: 'data_store', scope: 'database', database: 'lab', actions: ['update'] }, ['data_store.lab.update']],
    [{ area: 'data_store', scope: 'create' }, ['data_store.datastore_create']],
    [{ area: 'data_store', scope: 'admin' }, ['data_store.datastore_admin']],
    [{ area: 'catalog', scope: 'collection', database: 'catalog', collection: 'sites', actions: ['safe'] }, ['catalog.catalog.sites.safe']],
    [{ area: 'catalog', scope: 'create' }, ['catalog.catalog_create']],
    [{ area: 'cybercom_queue', scope: 'task', task: 'a.b.c' }, ['cybercom_queue.task.a.b.c']],
    [{ area: 'cybercom_queue', scope: 'task', task: 'a_b.c' }, ['cybercom_queue.task.a_b.c']],
    [{ area: 'cybercom_queue', scope: 'task_admin' }, ['cybercom_queue.task_admin']],
    [{ area: 'cybercom_queue', scope: 'metrics_read' }, ['cybercom_queue.metrics_read']],
  ])('%j → %j', (input, expected) => {
    expect(codes(input)).toEqual(expected);
  });

  it.each([
    [{ area: 'nowhere', scope: 'admin' }, /Choose an area/],
    [{ area: 'catalog', scope: 'database', database: 'catalog', actions: ['safe'] }, /choose one of/],
    [{ area: 'data_store', scope: 'collection', database: 'lab', collection: 'runs', actions: [] }, /at least one action/],
    [{ area: 'data_store', scope: 'collection', database: 'lab', collection: 'runs', actions: ['drop'] }, /Unknown action "drop"/],
    [{ area: 'data_store', scope: 'collection', database: 'lab', collection: '$bad', actions: ['safe'] }, /contains "\$"/],
    [{ area: 'cybercom_queue', scope: 'task', task: 'rm -rf' }, /is not a task name/],
    ['just a string', /JSON object/],
  ])('refuses %j', (input, message) => {
    expect(() => codes(input)).toThrow(message);
  });
});
