import { describe, expect, it } from 'vitest';
import { BUILTIN_PERMISSIONS, parseCodename } from '../../../src/auth/codenames.js';

describe('permission codenames', () => {
  it.each([
    ['data_store.mydb_safe', 'data_store', 'Can read data store mydb'],
    ['data_store.mydb_samples_add', 'data_store', 'Can add to data store mydb_samples'],
    ['catalog.catalog_records_update', 'catalog', 'Can update catalog catalog_records'],
    ['cybercom_queue.cybercomq_tasks_add', 'cybercom_queue', 'Run task cybercomq_tasks_add'],
    ['data_store.datastore_admin', 'data_store', 'Data store administrator (all databases and collections)'],
  ])('%s → area %s, name %s', (codename, area, name) => {
    expect(parseCodename(codename)).toEqual({ codename, area, name });
  });

  it.each(['datastore_admin', 'other.thing', 'data_store.', 'data_store.has space', 'data_store.$bad', 'catalog..x', ''])('refuses %j', (codename) => {
    expect(() => parseCodename(codename)).toThrowError(expect.objectContaining({ status: 400, code: 'invalid_permission' }));
  });

  it('seeds every built-in role codename of the contract', () => {
    expect(BUILTIN_PERMISSIONS.map((p) => p.codename).sort()).toEqual([
      'catalog.catalog_admin',
      'catalog.catalog_create',
      'cybercom_queue.task_admin',
      'data_store.datastore_admin',
      'data_store.datastore_create',
    ]);
  });
});
