/** Reading old-style codenames: what each could mean, and which meanings survive. */
import { describe, expect, it } from 'vitest';
import { encodeGrant } from '../../../src/auth/grants.js';
import { LegacyGrantResolver, documentInterpretations, parseLegacyCodename, type GrantTargets } from '../../../src/auth/legacy-grants.js';

function targets(dataStore: Record<string, string[]>, catalog: Record<string, string[]> = {}, tasks: string[] = []): GrantTargets {
  const of = (area: string) => (area === 'data_store' ? dataStore : catalog);
  return {
    databases: async (area) => Object.keys(of(area)),
    collections: async (area, db) => of(area)[db] ?? [],
    taskNames: async () => tasks,
  };
}

async function resolve(codename: string, t?: GrantTargets) {
  const legacy = parseLegacyCodename(codename);
  if (legacy === null) throw new Error(`${codename} is not legacy`);
  const r = await new LegacyGrantResolver(t).resolve(legacy);
  return { ...r, codenames: r.grants.map(encodeGrant) };
}

describe('legacy codenames', () => {
  it.each([
    ['data_store.a_b_c_safe', { kind: 'document', area: 'data_store', joined: 'a_b_c', action: 'safe' }],
    ['catalog.cat_my.col_delete', { kind: 'document', area: 'catalog', joined: 'cat_my.col', action: 'delete' }],
    ['cybercom_queue.tasks_add', { kind: 'task', flattened: 'tasks_add' }],
  ])('%s is legacy', (codename, expected) => {
    expect(parseLegacyCodename(codename)).toEqual(expected);
  });

  it.each([
    'data_store.a_b.c.safe',
    'data_store.a.safe',
    'cybercom_queue.task.a.b',
    'cybercom_queue.task_admin',
    'data_store.datastore_admin',
    'other.a_safe',
  ])('%s is not legacy', (codename) => expect(parseLegacyCodename(codename)).toBeNull());

  it('lists every split and the database', () => {
    const legacy = parseLegacyCodename('data_store.a_b_c_safe');
    if (legacy?.kind !== 'document') throw new Error('not a document codename');
    expect(documentInterpretations(legacy).map(encodeGrant)).toEqual([
      'data_store.a_b_c.safe',
      'data_store.a.b_c.safe',
      'data_store.a_b.c.safe',
    ]);
  });

  it('keeps only the meanings that exist', async () => {
    const r = await resolve('data_store.a_b_c_safe', targets({ a_b: ['c'], a: ['x'] }));
    expect(r).toMatchObject({ codenames: ['data_store.a_b.c.safe'], ambiguous: false, unresolved: false });
  });

  it('keeps several existing meanings, flagged as ambiguous', async () => {
    const r = await resolve('data_store.a_b_c_add', targets({ a_b: ['c'], a: ['b_c'], a_b_c: [] }));
    expect(r).toMatchObject({
      codenames: ['data_store.a_b_c.add', 'data_store.a.b_c.add', 'data_store.a_b.c.add'],
      ambiguous: true,
      unresolved: false,
    });
  });

  it('keeps every meaning when none exists', async () => {
    const r = await resolve('data_store.a_b_safe', targets({}));
    expect(r).toMatchObject({ codenames: ['data_store.a_b.safe', 'data_store.a.b.safe'], ambiguous: true, unresolved: true });
    expect((await resolve('data_store.a_b_safe')).codenames).toEqual(r.codenames);
  });

  it('has no database meanings in the catalog, and none at all without an underscore there', async () => {
    expect((await resolve('catalog.cat_sites_safe', targets({}, { cat: ['sites'] }))).codenames).toEqual(['catalog.cat.sites.safe']);
    expect((await resolve('catalog.cat_safe', targets({}, { cat: [] }))).grants).toEqual([]);
  });

  it('matches task codenames to known task names, or keeps them as deprecated legacy grants', async () => {
    const t = targets({}, {}, ['a.b_c', 'a_b.c', 'tasks.add']);
    expect(await resolve('cybercom_queue.tasks_add', t)).toMatchObject({ codenames: ['cybercom_queue.task.tasks.add'], ambiguous: false });
    expect(await resolve('cybercom_queue.a_b_c', t)).toMatchObject({
      codenames: ['cybercom_queue.task.a.b_c', 'cybercom_queue.task.a_b.c'],
      ambiguous: true,
    });
    expect(await resolve('cybercom_queue.tasks_mul', t)).toMatchObject({
      grants: [{ kind: 'legacy_task', flattened: 'tasks_mul' }],
      unresolved: true,
    });
  });
});
