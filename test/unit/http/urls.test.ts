import { describe, expect, it } from 'vitest';
import { apiMounts, fullPath, PAGES } from '../../../src/app/route-table.js';
import { pathOf } from '../../../src/http/route-table.js';
import { recordsPath, urls } from '../../../src/http/urls.js';

// Each URL builder against the route the app declares for it: a route moved in its table and
// not in urls.ts (or the other way round) fails here.

const m = apiMounts({
  dataStore: { name: 'data_store', canCreateDatabases: true },
  catalog: { name: 'catalog', canCreateDatabases: false },
});
const filled = (mount: (typeof m)[keyof typeof m], decl: Parameters<typeof fullPath>[1], values: Record<string, string> = {}) =>
  mount.prefix + pathOf(decl, values);

describe('the URL builders', () => {
  it('name the declared auth, root, manual and admin routes', () => {
    expect(urls.root()).toBe(`${fullPath(m.root, m.root.at.root)}`);
    expect(urls.login()).toBe(fullPath(m.auth, m.auth.at.login));
    expect(urls.logout()).toBe(fullPath(m.auth, m.auth.at.logout));
    expect(urls.token()).toBe(fullPath(m.auth, m.auth.at.token));
    expect(urls.tokenRefresh()).toBe(fullPath(m.auth, m.auth.at.refresh));
    expect(urls.tokenVerify()).toBe(fullPath(m.auth, m.auth.at.verify));
    expect(urls.manual()).toBe(`${PAGES.manual.path}/`);
    expect(urls.admin()).toBe(PAGES.admin.path);
  });

  it('build records and index paths as the document routes declare them, each part encoded', () => {
    const values = { db: 'lab one', col: 'a/b', id: '64b0' };
    expect(urls.records('data_store')).toBe(fullPath(m.dataStore, m.dataStore.at.databases));
    expect(urls.records('catalog', 'lab one')).toBe(filled(m.catalog, m.catalog.at.database, values));
    expect(urls.records('data_store', 'lab one', 'a/b')).toBe(filled(m.dataStore, m.dataStore.at.collection, values));
    expect(urls.records('data_store', 'lab one', 'a/b', '64b0')).toBe(filled(m.dataStore, m.dataStore.at.record, values));
    expect(urls.indexes('catalog', 'lab/samples/')).toBe(
      filled(m.catalogIndexes, m.catalogIndexes.at.indexes, { db: 'lab', col: 'samples' }),
    );
  });

  it("build the explorer's collection page under the explorer's page path", () => {
    expect(urls.explore('data_store', 'lab one', 'a/b')).toBe(`${PAGES.explorer.path}/data_store/lab%20one/a%2Fb/`);
    expect(PAGES.explorerStatic.path.startsWith(`${PAGES.explorer.path}/`)).toBe(true);
  });

  it('tell which records mount a path is under', () => {
    expect(recordsPath('/api/catalog/data/lab/samples/?page=2')).toEqual({ area: 'catalog', rest: 'lab/samples/?page=2' });
    expect(recordsPath('/api/data_store/indexes/lab/')).toBeNull();
    expect(urls.login('/api/x/?a=1')).toBe(`${urls.login()}?next=%2Fapi%2Fx%2F%3Fa%3D1`);
  });
});
