/**
 * The permission rules as one table: each row is a principal, a question and the expected
 * answer. A rule that changes makes a row fail.
 */
import { describe, expect, it } from 'vitest';
import {
  actionForMethod,
  canAccessCollection,
  canManageContainers,
  canRunTask,
  canSeeCollection,
  canSeeDatabase,
  collectionCodename,
  databaseCodename,
  isAreaAdmin,
  isTaskAdmin,
  taskCodename,
  type DocumentAction,
  type AreaName,
  type ReadPolicy,
} from '../../../src/auth/permissions.js';
import { GrantSet } from '../../../src/auth/grant-set.js';
import { ANONYMOUS, type Principal } from '../../../src/auth/principal.js';

function user(permissions: string[] = [], flags: { superuser?: boolean } = {}): Principal {
  return {
    authMethod: 'token',
    userId: '65f000000000000000000001',
    username: 'someone',
    isSuperuser: flags.superuser ?? false,
    isStaff: false,
    permissions: new Set(permissions),
    grants: GrantSet.fromCodenames(permissions),
  };
}

const closed: ReadPolicy = { anonymousRead: false, safeMethodPermRequired: new Set() };
const open: ReadPolicy = { anonymousRead: true, safeMethodPermRequired: new Set(['db1.secret', 'db1_old_style']) };

const superuser = user([], { superuser: true });
const dsAdmin = user(['data_store.datastore_admin']);
const catAdmin = user(['catalog.catalog_admin']);
const dsCreator = user(['data_store.datastore_create']);
const catCreator = user(['catalog.catalog_create']);
const colReader = user(['data_store.db1.col1.safe']);
const colWriter = user(['data_store.db1.col1.add', 'data_store.db1.col1.update']);
const dbReader = user(['data_store.db1.safe']);
const dbDeleter = user(['data_store.db1.delete']);
const catDbGrant = user(['catalog.db1.safe']); // database-level grants exist only in the data store
const catColReader = user(['catalog.cat.col1.safe']);
const nobody = user([]);

interface AccessRow {
  who: string;
  p: Principal;
  area: AreaName;
  db: string;
  col: string;
  action: DocumentAction;
  policy: ReadPolicy;
  expected: boolean;
}

const accessRows: AccessRow[] = [
  // superuser: everything, everywhere
  { who: 'superuser', p: superuser, area: 'data_store', db: 'db1', col: 'col1', action: 'delete', policy: closed, expected: true },
  { who: 'superuser', p: superuser, area: 'catalog', db: 'cat', col: 'x', action: 'add', policy: closed, expected: true },
  // area admin: its own area only
  { who: 'data store admin', p: dsAdmin, area: 'data_store', db: 'any', col: 'thing', action: 'update', policy: closed, expected: true },
  { who: 'data store admin in catalog', p: dsAdmin, area: 'catalog', db: 'cat', col: 'x', action: 'safe', policy: closed, expected: false },
  { who: 'catalog admin', p: catAdmin, area: 'catalog', db: 'cat', col: 'x', action: 'delete', policy: closed, expected: true },
  {
    who: 'catalog admin in data store',
    p: catAdmin,
    area: 'data_store',
    db: 'db1',
    col: 'col1',
    action: 'safe',
    policy: closed,
    expected: false,
  },
  // create role manages containers but grants no record access
  {
    who: 'data store creator reading records',
    p: dsCreator,
    area: 'data_store',
    db: 'db1',
    col: 'col1',
    action: 'safe',
    policy: closed,
    expected: false,
  },
  // collection grants: exactly the granted action on exactly that collection
  { who: 'collection reader', p: colReader, area: 'data_store', db: 'db1', col: 'col1', action: 'safe', policy: closed, expected: true },
  {
    who: 'collection reader writing',
    p: colReader,
    area: 'data_store',
    db: 'db1',
    col: 'col1',
    action: 'add',
    policy: closed,
    expected: false,
  },
  {
    who: 'collection reader, other collection',
    p: colReader,
    area: 'data_store',
    db: 'db1',
    col: 'col2',
    action: 'safe',
    policy: closed,
    expected: false,
  },
  { who: 'collection writer add', p: colWriter, area: 'data_store', db: 'db1', col: 'col1', action: 'add', policy: closed, expected: true },
  {
    who: 'collection writer update',
    p: colWriter,
    area: 'data_store',
    db: 'db1',
    col: 'col1',
    action: 'update',
    policy: closed,
    expected: true,
  },
  {
    who: 'collection writer delete',
    p: colWriter,
    area: 'data_store',
    db: 'db1',
    col: 'col1',
    action: 'delete',
    policy: closed,
    expected: false,
  },
  // database grant covers its collections in the data store
  {
    who: 'database reader, any collection',
    p: dbReader,
    area: 'data_store',
    db: 'db1',
    col: 'whatever',
    action: 'safe',
    policy: closed,
    expected: true,
  },
  {
    who: 'database reader, other database',
    p: dbReader,
    area: 'data_store',
    db: 'db2',
    col: 'col1',
    action: 'safe',
    policy: closed,
    expected: false,
  },
  {
    who: 'database reader writing',
    p: dbReader,
    area: 'data_store',
    db: 'db1',
    col: 'col1',
    action: 'add',
    policy: closed,
    expected: false,
  },
  { who: 'database deleter', p: dbDeleter, area: 'data_store', db: 'db1', col: 'col9', action: 'delete', policy: closed, expected: true },
  // ... but not in the catalog
  {
    who: 'catalog database-level grant',
    p: catDbGrant,
    area: 'catalog',
    db: 'db1',
    col: 'col1',
    action: 'safe',
    policy: closed,
    expected: false,
  },
  {
    who: 'catalog collection reader',
    p: catColReader,
    area: 'catalog',
    db: 'cat',
    col: 'col1',
    action: 'safe',
    policy: closed,
    expected: true,
  },
  {
    who: 'data store grant does not reach catalog',
    p: colReader,
    area: 'catalog',
    db: 'db1',
    col: 'col1',
    action: 'safe',
    policy: closed,
    expected: false,
  },
  // anonymous reads: only when configured, only safe, not for SAFE_METHOD_PERM_REQUIRED pairs
  {
    who: 'anonymous, reads off',
    p: ANONYMOUS,
    area: 'data_store',
    db: 'db1',
    col: 'col1',
    action: 'safe',
    policy: closed,
    expected: false,
  },
  { who: 'anonymous, reads on', p: ANONYMOUS, area: 'data_store', db: 'db1', col: 'col1', action: 'safe', policy: open, expected: true },
  {
    who: 'anonymous, reads on, write',
    p: ANONYMOUS,
    area: 'data_store',
    db: 'db1',
    col: 'col1',
    action: 'add',
    policy: open,
    expected: false,
  },
  {
    who: 'anonymous, protected pair',
    p: ANONYMOUS,
    area: 'data_store',
    db: 'db1',
    col: 'secret',
    action: 'safe',
    policy: open,
    expected: false,
  },
  {
    who: 'anonymous, pair protected the old way',
    p: ANONYMOUS,
    area: 'data_store',
    db: 'db1',
    col: 'old_style',
    action: 'safe',
    policy: open,
    expected: false,
  },
  {
    who: 'anonymous, an old-style pair protects every spelling',
    p: ANONYMOUS,
    area: 'data_store',
    db: 'db1_old',
    col: 'style',
    action: 'safe',
    policy: open,
    expected: false,
  },
  { who: 'anonymous, catalog reads on', p: ANONYMOUS, area: 'catalog', db: 'cat', col: 'x', action: 'safe', policy: open, expected: true },
  {
    who: 'user without grant, protected pair',
    p: nobody,
    area: 'data_store',
    db: 'db1',
    col: 'secret',
    action: 'safe',
    policy: open,
    expected: false,
  },
  {
    who: 'user with grant, protected pair',
    p: user(['data_store.db1.secret.safe']),
    area: 'data_store',
    db: 'db1',
    col: 'secret',
    action: 'safe',
    policy: open,
    expected: true,
  },
  // unauthenticated principals never use grants, even if a set were attached by mistake
  {
    who: 'unauthenticated with permissions',
    p: { ...ANONYMOUS, permissions: new Set(['data_store.db1.col1.safe']), grants: GrantSet.fromCodenames(['data_store.db1.col1.safe']) },
    area: 'data_store',
    db: 'db1',
    col: 'col1',
    action: 'safe',
    policy: closed,
    expected: false,
  },
  {
    who: 'authenticated, no grants',
    p: nobody,
    area: 'data_store',
    db: 'db1',
    col: 'col1',
    action: 'safe',
    policy: closed,
    expected: false,
  },
  // names that used to share a codename are different grants
  {
    who: 'a_b/c grant on a/b_c',
    p: user(['data_store.a_b.c.safe']),
    area: 'data_store',
    db: 'a',
    col: 'b_c',
    action: 'safe',
    policy: closed,
    expected: false,
  },
  {
    who: 'a/b_c grant on a_b/c',
    p: user(['data_store.a.b_c.safe']),
    area: 'data_store',
    db: 'a_b',
    col: 'c',
    action: 'safe',
    policy: closed,
    expected: false,
  },
  {
    who: 'database a_b grant on a/b',
    p: user(['data_store.a_b.safe']),
    area: 'data_store',
    db: 'a',
    col: 'b',
    action: 'safe',
    policy: closed,
    expected: false,
  },
  {
    who: 'collection a/b grant on a_b/x',
    p: user(['data_store.a.b.safe']),
    area: 'data_store',
    db: 'a_b',
    col: 'x',
    action: 'safe',
    policy: closed,
    expected: false,
  },
  {
    who: 'collection with dots',
    p: user(['data_store.a.b.c.safe']),
    area: 'data_store',
    db: 'a',
    col: 'b.c',
    action: 'safe',
    policy: closed,
    expected: true,
  },
  {
    who: 'names from a URL that spell another grant',
    p: user(['data_store.a.b.c.safe']),
    area: 'data_store',
    db: 'a.b',
    col: 'c',
    action: 'safe',
    policy: closed,
    expected: false,
  },
  // legacy document codenames are rewritten at start-up; one left over grants nothing
  {
    who: 'left-over legacy codename',
    p: user(['data_store.db1_col1_safe']),
    area: 'data_store',
    db: 'db1',
    col: 'col1',
    action: 'safe',
    policy: closed,
    expected: false,
  },
];

describe('canAccessCollection', () => {
  it.each(accessRows)('$who: $area $db.$col $action → $expected', ({ p, area, db, col, action, policy, expected }) => {
    expect(canAccessCollection(p, area, db, col, action, policy)).toBe(expected);
  });
});

describe('container management (create role)', () => {
  it.each([
    { who: 'superuser', p: superuser, area: 'data_store' as const, expected: true },
    { who: 'data store admin', p: dsAdmin, area: 'data_store' as const, expected: true },
    { who: 'data store creator', p: dsCreator, area: 'data_store' as const, expected: true },
    { who: 'data store creator in catalog', p: dsCreator, area: 'catalog' as const, expected: false },
    { who: 'catalog creator', p: catCreator, area: 'catalog' as const, expected: true },
    { who: 'collection reader', p: colReader, area: 'data_store' as const, expected: false },
    { who: 'anonymous', p: ANONYMOUS, area: 'data_store' as const, expected: false },
  ])('$who in $area → $expected', ({ p, area, expected }) => {
    expect(canManageContainers(p, area)).toBe(expected);
  });

  it('area admin is per area', () => {
    expect(isAreaAdmin(dsAdmin, 'data_store')).toBe(true);
    expect(isAreaAdmin(dsAdmin, 'catalog')).toBe(false);
    expect(isAreaAdmin(catAdmin, 'catalog')).toBe(true);
    expect(isAreaAdmin(dsCreator, 'data_store')).toBe(false);
  });
});

describe('database and collection visibility', () => {
  it.each([
    { who: 'collection reader sees its database', p: colReader, area: 'data_store' as const, db: 'db1', policy: closed, expected: true },
    { who: 'collection reader, other database', p: colReader, area: 'data_store' as const, db: 'db2', policy: closed, expected: false },
    { who: 'database reader', p: dbReader, area: 'data_store' as const, db: 'db1', policy: closed, expected: true },
    { who: 'database deleter', p: dbDeleter, area: 'data_store' as const, db: 'db1', policy: closed, expected: true },
    {
      who: 'prefix must end at the underscore',
      p: user(['data_store.db10.col.safe']),
      area: 'data_store' as const,
      db: 'db1',
      policy: closed,
      expected: false,
    },
    { who: 'creator sees all', p: dsCreator, area: 'data_store' as const, db: 'db7', policy: closed, expected: true },
    { who: 'anonymous, reads off', p: ANONYMOUS, area: 'data_store' as const, db: 'db1', policy: closed, expected: false },
    { who: 'anonymous, reads on', p: ANONYMOUS, area: 'data_store' as const, db: 'db1', policy: open, expected: true },
    { who: 'authenticated without grants', p: nobody, area: 'catalog' as const, db: 'cat', policy: closed, expected: false },
    { who: 'catalog collection reader', p: catColReader, area: 'catalog' as const, db: 'cat', policy: closed, expected: true },
    {
      who: 'a_b/c grant does not reveal a',
      p: user(['data_store.a_b.c.safe']),
      area: 'data_store' as const,
      db: 'a',
      policy: closed,
      expected: false,
    },
    {
      who: 'a/b grant does not reveal a_b',
      p: user(['data_store.a.b.safe']),
      area: 'data_store' as const,
      db: 'a_b',
      policy: closed,
      expected: false,
    },
    {
      who: 'data store grant does not reveal a catalog database',
      p: colReader,
      area: 'catalog' as const,
      db: 'db1',
      policy: closed,
      expected: false,
    },
  ])('$who → $expected', ({ p, area, db, policy, expected }) => {
    expect(canSeeDatabase(p, area, db, policy)).toBe(expected);
  });

  it.each([
    { who: 'reader sees the collection', p: colReader, col: 'col1', policy: closed, expected: true },
    { who: 'writer-only grant still lists it', p: user(['data_store.db1.col1.add']), col: 'col1', policy: closed, expected: true },
    { who: 'other collection hidden', p: colReader, col: 'col2', policy: closed, expected: false },
    { who: 'database grant lists all', p: dbReader, col: 'col2', policy: closed, expected: true },
    { who: 'anonymous, protected pair hidden', p: ANONYMOUS, col: 'secret', policy: open, expected: false },
  ])('$who → $expected', ({ p, col, policy, expected }) => {
    expect(canSeeCollection(p, 'data_store', 'db1', col, policy)).toBe(expected);
  });
});

describe('task permissions', () => {
  it.each([
    { who: 'superuser', p: superuser, task: 'cybercomq.tasks.add', expected: true },
    { who: 'task admin', p: user(['cybercom_queue.task_admin']), task: 'cybercomq.tasks.add', expected: true },
    { who: 'task grant', p: user(['cybercom_queue.task.cybercomq.tasks.add']), task: 'cybercomq.tasks.add', expected: true },
    { who: 'grant for another task', p: user(['cybercom_queue.task.cybercomq.tasks.add']), task: 'cybercomq.tasks.mul', expected: false },
    { who: 'task a.b_c grant on a_b.c', p: user(['cybercom_queue.task.a.b_c']), task: 'a_b.c', expected: false },
    { who: 'task a.b_c grant on a.b_c', p: user(['cybercom_queue.task.a.b_c']), task: 'a.b_c', expected: true },
    { who: 'task grant is not task admin', p: user(['cybercom_queue.task.task_admin']), task: 'other', expected: false },
    {
      who: 'deprecated legacy task grant (dots → underscores)',
      p: user(['cybercom_queue.cybercomq_tasks_add']),
      task: 'cybercomq.tasks.add',
      expected: true,
    },
    {
      who: 'deprecated legacy task grant, other task',
      p: user(['cybercom_queue.cybercomq_tasks_add']),
      task: 'cybercomq.tasks.mul',
      expected: false,
    },
    { who: 'no grant', p: nobody, task: 'cybercomq.tasks.add', expected: false },
    { who: 'anonymous', p: ANONYMOUS, task: 'cybercomq.tasks.add', expected: false },
    { who: 'data store admin', p: dsAdmin, task: 'cybercomq.tasks.add', expected: false },
  ])('$who running $task → $expected', ({ p, task, expected }) => {
    expect(canRunTask(p, task)).toBe(expected);
  });

  it('task admin is only the task_admin codename or a superuser', () => {
    expect(isTaskAdmin(user(['cybercom_queue.task_admin']))).toBe(true);
    expect(isTaskAdmin(superuser)).toBe(true);
    expect(isTaskAdmin(user(['cybercom_queue.task.cybercomq.tasks.add']))).toBe(false);
    expect(isTaskAdmin(user(['cybercom_queue.task.task_admin']))).toBe(false);
  });
});

describe('codenames and methods', () => {
  it.each([
    ['GET', 'safe'],
    ['HEAD', 'safe'],
    ['OPTIONS', 'safe'],
    ['post', 'add'],
    ['PUT', 'update'],
    ['PATCH', 'update'],
    ['DELETE', 'delete'],
    ['PROPFIND', 'update'],
  ])('%s → %s', (method, action) => {
    expect(actionForMethod(method)).toBe(action);
  });

  it('builds canonical codenames', () => {
    expect(collectionCodename('data_store', 'db1', 'col1', 'safe')).toBe('data_store.db1.col1.safe');
    expect(collectionCodename('catalog', 'cat', 'x.y', 'add')).toBe('catalog.cat.x.y.add');
    expect(databaseCodename('db1', 'delete')).toBe('data_store.db1.delete');
    expect(taskCodename('a.b.c')).toBe('cybercom_queue.task.a.b.c');
  });
});
