import { describe, expect, it } from 'vitest';
import { BUILTIN_PERMISSIONS, parseCodename } from '../../../src/auth/codenames.js';

describe('permission codenames', () => {
  it.each([
    ['data_store.mydb.safe', 'data_store', 'Can read every collection of data store database mydb'],
    ['data_store.mydb.samples.add', 'data_store', 'Can add to data store collection mydb / samples'],
    ['catalog.cat.sites.delete', 'catalog', 'Can delete from catalog collection cat / sites'],
    ['cybercom_queue.task.cybercomq.tasks.add', 'cybercom_queue', 'Run task cybercomq.tasks.add'],
    ['data_store.datastore_admin', 'data_store', 'Data store administrator (all databases and collections)'],
  ])('%s → area %s, name %s', (codename, area, name) => {
    expect(parseCodename(codename)).toEqual({ codename, area, name });
  });

  it.each([
    'datastore_admin',
    'other.thing',
    'data_store.',
    'data_store.has space.safe',
    'data_store.$bad.safe',
    'catalog..x.safe',
    '',
    // legacy codenames are converted by the permission catalog, never taken as canonical
    'data_store.mydb_safe',
    'cybercom_queue.tasks_add',
    // the catalog has no database grants
    'catalog.cat.safe',
    'data_store.db.col.read',
    'data_store.db.system.users.safe',
    'catalog.datastore_admin',
    'cybercom_queue.task.',
  ])('refuses %j', (codename) => {
    expect(() => parseCodename(codename)).toThrowError(expect.objectContaining({ status: 400, code: 'invalid_permission' }));
  });

  it('seeds every built-in role codename', () => {
    expect(BUILTIN_PERMISSIONS.map((p) => p.codename).sort()).toEqual([
      'catalog.catalog_admin',
      'catalog.catalog_create',
      'cybercom_queue.metrics_read',
      'cybercom_queue.schedule_tasks',
      'cybercom_queue.task_admin',
      'data_store.datastore_admin',
      'data_store.datastore_create',
    ]);
  });
});
