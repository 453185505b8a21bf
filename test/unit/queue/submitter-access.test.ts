/** The submitter's data-store permissions in a task message: what the API sends, what a worker accepts. */
import { describe, expect, it } from 'vitest';
import {
  SUBMITTER_ACCESS_HEADER,
  decodeSubmitterAccess,
  encodeSubmitterAccess,
  submitterAccessOf,
} from '../../../src/queue/protocol/submitter-access.js';

describe('submitter access header', () => {
  it('carries only the superuser flag and the data-store codenames', () => {
    const access = submitterAccessOf({
      username: 'ada',
      isSuperuser: false,
      permissions: new Set(['cybercom_queue.task_admin', 'data_store.lab.safe', 'catalog.c.x.safe', 'data_store.datastore_admin']),
    });
    expect(encodeSubmitterAccess(access)).toEqual({
      [SUBMITTER_ACCESS_HEADER]: {
        user: 'ada',
        is_superuser: false,
        data_store_permissions: ['data_store.datastore_admin', 'data_store.lab.safe'],
      },
    });
  });

  it('round-trips for the user the task names', () => {
    const access = submitterAccessOf({ username: 'ada', isSuperuser: true, permissions: ['data_store.lab.add'] });
    expect(decodeSubmitterAccess(encodeSubmitterAccess(access), 'ada')).toEqual(access);
  });

  it.each([
    ['absent', {}, 'ada'],
    ['no authenticated user', { [SUBMITTER_ACCESS_HEADER]: { user: 'ada', is_superuser: true, data_store_permissions: [] } }, null],
    ['another user', { [SUBMITTER_ACCESS_HEADER]: { user: 'bob', is_superuser: true, data_store_permissions: [] } }, 'ada'],
    ['a non-boolean flag', { [SUBMITTER_ACCESS_HEADER]: { user: 'ada', is_superuser: 'yes', data_store_permissions: [] } }, 'ada'],
    [
      'permissions not a list',
      { [SUBMITTER_ACCESS_HEADER]: { user: 'ada', is_superuser: false, data_store_permissions: 'data_store.x.add' } },
      'ada',
    ],
    [
      'a codename of another area',
      { [SUBMITTER_ACCESS_HEADER]: { user: 'ada', is_superuser: false, data_store_permissions: ['cybercom_queue.task_admin'] } },
      'ada',
    ],
    ['a list instead of a table', { [SUBMITTER_ACCESS_HEADER]: ['ada', true] }, 'ada'],
  ])('counts as absent when %s', (_name, headers, user) => {
    expect(decodeSubmitterAccess(headers as never, user)).toBeNull();
  });
});
