/**
 * The delegation rules as a table: who may grant which codename, and manage whose token. A rule
 * that changes makes a row fail.
 */
import { describe, expect, it } from 'vitest';
import { mayManageTokenOf, mayTakeOver, undelegable, type Grantor } from '../../../src/auth/delegation.js';
import { GrantSet } from '../../../src/auth/grant-set.js';

const ME = '65f000000000000000000001';
const OTHER = '65f000000000000000000002';

function grantor(permissions: string[], superuser = false): Grantor {
  return { id: ME, isSuperuser: superuser, permissions: new Set(permissions), grants: GrantSet.fromCodenames(permissions) };
}

const superuser = grantor([], true);
const plainStaff = grantor([]);
const dbReader = grantor(['data_store.lab.safe', 'cybercom_queue.task.tasks.add', 'cybercom_queue.metrics_read']);
const storeAdmin = grantor(['data_store.datastore_admin']);
const taskAdmin = grantor(['cybercom_queue.task_admin']);
const catalogAdmin = grantor(['catalog.catalog_admin']);

const ROLES = [
  'data_store.datastore_admin',
  'data_store.datastore_create',
  'catalog.catalog_admin',
  'catalog.catalog_create',
  'cybercom_queue.task_admin',
];

describe('undelegable', () => {
  const rows: [string, Grantor, string, boolean][] = [
    // superusers give anything
    ...ROLES.map((r): [string, Grantor, string, boolean] => ['superuser', superuser, r, true]),
    ['superuser', superuser, 'data_store.lab.samples.delete', true],
    // area-wide roles are the superusers' to give, even for staff who hold them
    ...ROLES.map((r): [string, Grantor, string, boolean] => ['plain staff', plainStaff, r, false]),
    ['datastore admin', storeAdmin, 'data_store.datastore_admin', false],
    ['datastore admin', storeAdmin, 'data_store.datastore_create', false],
    ['task admin', taskAdmin, 'cybercom_queue.task_admin', false],
    ['catalog admin', catalogAdmin, 'catalog.catalog_create', false],
    // what one holds, by the same grant or a wider one
    ['db reader', dbReader, 'data_store.lab.safe', true],
    ['db reader', dbReader, 'data_store.lab.samples.safe', true],
    ['db reader', dbReader, 'cybercom_queue.task.tasks.add', true],
    ['db reader', dbReader, 'cybercom_queue.metrics_read', true],
    ['datastore admin', storeAdmin, 'data_store.lab.delete', true],
    ['datastore admin', storeAdmin, 'data_store.other.samples.update', true],
    ['task admin', taskAdmin, 'cybercom_queue.task.tasks.mul', true],
    ['catalog admin', catalogAdmin, 'catalog.cat.items.add', true],
    // what one does not hold
    ['db reader', dbReader, 'data_store.lab.add', false],
    ['db reader', dbReader, 'data_store.lab.samples.add', false],
    ['db reader', dbReader, 'data_store.other.safe', false],
    ['db reader', dbReader, 'catalog.lab.samples.safe', false],
    ['db reader', dbReader, 'cybercom_queue.task.tasks.mul', false],
    ['datastore admin', storeAdmin, 'catalog.cat.items.add', false],
    ['datastore admin', storeAdmin, 'cybercom_queue.task.tasks.add', false],
    ['plain staff', plainStaff, 'cybercom_queue.metrics_read', false],
    // a codename that reads as no grant: only its holder passes it on
    ['plain staff', plainStaff, 'not-a-codename', false],
    ['holder', grantor(['not-a-codename']), 'not-a-codename', true],
  ];
  it.each(rows)('%s giving %s → %s', (_who, g, codename, allowed) => {
    expect(undelegable(g, [codename])).toEqual(allowed ? [] : [codename]);
  });

  it('names every refused codename once, in order', () => {
    expect(
      undelegable(dbReader, ['data_store.lab.add', 'data_store.lab.safe', 'data_store.datastore_admin', 'data_store.lab.add']),
    ).toEqual(['data_store.lab.add', 'data_store.datastore_admin']);
  });
});

describe('mayManageTokenOf', () => {
  it('lets superusers manage every token and staff only their own', () => {
    expect(mayManageTokenOf({ id: ME, isSuperuser: true }, OTHER)).toBe(true);
    expect(mayManageTokenOf({ id: ME, isSuperuser: true }, ME)).toBe(true);
    expect(mayManageTokenOf({ id: ME, isSuperuser: false }, ME)).toBe(true);
    expect(mayManageTokenOf({ id: ME, isSuperuser: false }, OTHER)).toBe(false);
  });
});

describe("mayTakeOver (setting another account's password)", () => {
  const account = (id: string, permissions: string[], superuser = false): Grantor => ({ ...grantor(permissions, superuser), id });
  it("lets staff set their own and lesser accounts' passwords, superusers anyone's", () => {
    expect(mayTakeOver(dbReader, account(ME, ['data_store.datastore_admin']))).toBe(true);
    expect(mayTakeOver(dbReader, account(OTHER, []))).toBe(true);
    expect(mayTakeOver(dbReader, account(OTHER, ['data_store.lab.samples.safe']))).toBe(true);
    expect(mayTakeOver(dbReader, account(OTHER, ['data_store.lab.add']))).toBe(false);
    expect(mayTakeOver(storeAdmin, account(OTHER, ['data_store.datastore_admin']))).toBe(false);
    expect(mayTakeOver(dbReader, account(OTHER, [], true))).toBe(false);
    expect(mayTakeOver(superuser, account(OTHER, ['cybercom_queue.task_admin'], true))).toBe(true);
  });
});
