/**
 * Start-up migration of old-style permission codenames. Users, groups and catalog rows are
 * written straight into the service database with old codenames, as an earlier version left
 * them; the service is then started on that database, and access must work as before while
 * every codename that could be read is stored in the canonical form.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { grantTargets } from '../../../src/auth/grant-targets.js';
import { areaListings } from '../../../src/app/service-context.js';
import { migrateLegacyGrants } from '../../../src/auth/grants-migration.js';
import { TaskLog } from '../../../src/queue/api/task-log.js';
import type { Logger } from '../../../src/log/logger.js';
import { call, serviceDatabaseName, startTestApp, uniqueName, type TestApp } from '../../support/app.js';
import { closeAndDrop } from './helpers.js';

let app: TestApp;
let p: string;
let catDb: string;
let token: string;
let memberToken: string;
const ds = '/api/data_store/data';

/** The data the old version left behind: what exists, and who holds which old codenames. */
async function seedLegacyDeployment(before: TestApp): Promise<void> {
  await before.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  const su = await before.users.tokenFor('root');
  const make = async (base: string, db: string, cols: string[], createDb: boolean) => {
    if (createDb) expect((await call(before.url, 'POST', `${base}/`, { token: su, body: { database: db } })).status).toBe(201);
    for (const col of cols)
      expect((await call(before.url, 'POST', `${base}/${db}/`, { token: su, body: { collection: col } })).status).toBe(201);
  };
  await make(ds, `${p}lab`, ['samples'], true);
  await make(ds, `${p}a_b`, ['c'], true);
  await make(ds, `${p}a`, ['b_c'], true);
  await make('/api/catalog/data', catDb, ['sites'], false);

  const db = before.ctx.serviceDb;
  await before.users.createUser({ username: 'legacy', password: 'pw-legacy-123' });
  await before.users.createUser({ username: 'member', password: 'pw-member-123' });
  const { insertedId: groupId } = await db
    .collection('auth_group')
    .insertOne({ name: 'old-writers', permissions: [`data_store.${p}lab_samples_add`] });
  await db.collection('auth_user').updateOne({ username: 'member' }, { $set: { groups: [groupId] } });
  await db.collection('auth_user').updateOne(
    { username: 'legacy' },
    {
      $set: {
        permissions: [
          `data_store.${p}lab_samples_safe`, // only the collection exists
          `data_store.${p}lab_update`, // a database grant (no other reading)
          `data_store.${p}a_b_c_safe`, // a_b/c and a/b_c both exist
          `data_store.${p}no_such_safe`, // nothing exists: every reading is kept
          `catalog.${catDb}_sites_safe`,
          'cybercom_queue.proj_tasks_add', // a task the log knows
          'cybercom_queue.proj_tasks_gone', // a task nobody knows: kept, deprecated
          'data_store.datastore_create', // a role: unchanged
        ],
      },
    },
  );
  await db
    .collection('task_log')
    .insertOne({ _id: uniqueName('task'), task_name: 'proj.tasks.add', user: 'legacy', timestamp: new Date() } as never);
  await db.collection('auth_permission').insertMany([
    { codename: `data_store.${p}lab_samples_safe`, name: 'old name', area: 'data_store' },
    { codename: `data_store.${p}a_b_c_safe`, name: 'old name', area: 'data_store' },
    { codename: 'cybercom_queue.proj_tasks_gone', name: 'old name', area: 'cybercom_queue' },
  ]);
  token = await before.users.tokenFor('legacy');
  memberToken = await before.users.tokenFor('member');
}

beforeAll(async () => {
  catDb = uniqueName('cat');
  const service = serviceDatabaseName();
  const settings = { SERVICE_DATABASE: service, CATALOG_DATABASES: catDb };
  const before = await startTestApp(settings);
  // Without an underscore: the old codenames join names with underscores, and the readings this
  // test expects are those of names that have none of their own (the worker prefix has one).
  p = uniqueName('m');
  await seedLegacyDeployment(before);
  await before.close();
  app = await startTestApp(settings);
});

afterAll(async () => {
  if (app !== undefined) for (const db of [`${p}lab`, `${p}a_b`, `${p}a`, catDb]) await app.ctx.mongo.db(db).dropDatabase();
  await closeAndDrop(app);
});

const permissionsOf = async (collection: 'auth_user' | 'auth_group', filter: object) =>
  ((await app.ctx.serviceDb.collection(collection).findOne(filter))?.permissions ?? []) as string[];

describe('migrating old permission codenames at start-up', () => {
  it('stores the canonical codenames on users and groups', async () => {
    expect(await permissionsOf('auth_user', { username: 'legacy' })).toEqual([
      `data_store.${p}lab.samples.safe`,
      `data_store.${p}lab.update`,
      `data_store.${p}a.b_c.safe`,
      `data_store.${p}a_b.c.safe`,
      `data_store.${p}no_such.safe`,
      `data_store.${p}no.such.safe`,
      `catalog.${catDb}.sites.safe`,
      'cybercom_queue.task.proj.tasks.add',
      'cybercom_queue.proj_tasks_gone',
      'data_store.datastore_create',
    ]);
    expect(await permissionsOf('auth_group', { name: 'old-writers' })).toEqual([`data_store.${p}lab.samples.add`]);
  });

  it('rewrites the permission catalog', async () => {
    const codes = (await app.ctx.serviceDb.collection('auth_permission').find({}).toArray()).map((row) => row.codename as string);
    expect(codes).not.toContain(`data_store.${p}lab_samples_safe`);
    expect(codes).not.toContain(`data_store.${p}a_b_c_safe`);
    expect(codes).toEqual(
      expect.arrayContaining([
        `data_store.${p}lab.samples.safe`,
        `data_store.${p}a.b_c.safe`,
        `data_store.${p}a_b.c.safe`,
        'cybercom_queue.proj_tasks_gone',
      ]),
    );
  });

  it('keeps access working', async () => {
    const get = async (path: string, t = token) => (await call(app.url, 'GET', `${ds}${path}`, { token: t })).status;
    expect(await get(`/${p}lab/samples/`)).toBe(200);
    expect(await get(`/${p}a_b/c/`)).toBe(200);
    expect(await get(`/${p}a/b_c/`)).toBe(200);
    expect((await call(app.url, 'GET', `/api/catalog/data/${catDb}/sites/`, { token })).status).toBe(200);
    const add = await call(app.url, 'POST', `${ds}/${p}lab/samples/`, { token: memberToken, body: { by: 'member' } });
    expect(add.status, add.text).toBe(201);
    // The task grant and the kept legacy one both still pass the permission check.
    for (const task of ['proj.tasks.add', 'proj.tasks.gone']) {
      expect((await call(app.url, 'POST', `/api/queue/run/${task}/`, { token, body: {} })).status, task).not.toBe(403);
    }
    expect((await call(app.url, 'POST', '/api/queue/run/proj.tasks.mul/', { token, body: {} })).status).toBe(403);
  });

  it('is idempotent, and names every codename left with several meanings', async () => {
    const warn = vi.fn();
    const logger = { warn, info: vi.fn() } as unknown as Logger;
    const targets = grantTargets(areaListings(app.ctx.documents), () => new TaskLog(app.ctx.serviceDb).taskNames());
    const before = await permissionsOf('auth_user', { username: 'legacy' });
    expect(await migrateLegacyGrants(app.ctx.auth.models, app.ctx.auth.permissionCatalog, targets, logger)).toMatchObject({
      users: 0,
      groups: 0,
      converted: 0,
    });
    expect(await permissionsOf('auth_user', { username: 'legacy' })).toEqual(before);
    // Only the deprecated task codename is still mentioned.
    expect(warn.mock.calls.map(([fields]) => (fields as { codename: string }).codename)).toEqual(['cybercom_queue.proj_tasks_gone']);

    warn.mockClear();
    await app.ctx.serviceDb.collection('auth_group').insertOne({ name: 'late', permissions: [`data_store.${p}a_b_c_add`] });
    expect(await migrateLegacyGrants(app.ctx.auth.models, app.ctx.auth.permissionCatalog, targets, logger)).toMatchObject({
      groups: 1,
      converted: 1,
      ambiguous: 1,
    });
    expect(await permissionsOf('auth_group', { name: 'late' })).toEqual([`data_store.${p}a.b_c.add`, `data_store.${p}a_b.c.add`]);
    const ambiguous = warn.mock.calls.find(([fields]) => (fields as { codename: string }).codename === `data_store.${p}a_b_c_add`);
    expect(ambiguous?.[0]).toMatchObject({ now: [`data_store.${p}a.b_c.add`, `data_store.${p}a_b.c.add`], holders: ['group late'] });
  });
});
