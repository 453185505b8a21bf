/**
 * The permission matrix: every document endpoint × every kind of caller × every method,
 * through the real HTTP server. Expected statuses follow the rules of docs/api-behaviour.md
 * ("Permissions"), written out by hand per row so a rule change shows up as a failing row.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';

type Actor = 'anonymous' | 'nogrant' | 'readonly' | 'collection' | 'database' | 'group' | 'admin' | 'superuser';
const ACTORS: Actor[] = ['anonymous', 'nogrant', 'readonly', 'collection', 'database', 'group', 'admin', 'superuser'];
const ACTIONS = ['safe', 'add', 'update', 'delete'];

let app: TestApp;
const tokens = new Map<Actor, string | undefined>();
let db: string;
let catalogDb: string;
const col = 'records';

beforeAll(async () => {
  catalogDb = uniqueName('cat');
  app = await startTestApp({ CATALOG_DATABASES: catalogDb });
  db = `${app.prefix}perm`;
  const su = 'root';
  await app.users.createUser({ username: su, password: 'pw-superuser-1', isSuperuser: true });
  const suToken = await app.users.tokenFor(su);
  tokens.set('superuser', suToken);
  tokens.set('anonymous', undefined);
  const grants: Record<Exclude<Actor, 'anonymous' | 'superuser' | 'group'>, string[]> = {
    nogrant: [],
    readonly: [`data_store.${db}.${col}.safe`, `catalog.${catalogDb}.${col}.safe`],
    collection: ACTIONS.flatMap((a) => [`data_store.${db}.${col}.${a}`, `catalog.${catalogDb}.${col}.${a}`]),
    // A database grant covers the data store's collections; the catalog has no database grants
    // (a codename for one is refused), so this actor holds nothing there.
    database: ACTIONS.map((a) => `data_store.${db}.${a}`),
    admin: ['data_store.datastore_admin', 'catalog.catalog_admin'],
  };
  for (const [actor, codes] of Object.entries(grants)) {
    await app.users.createUser({ username: actor, password: `pw-${actor}-123`, permissions: codes });
    tokens.set(actor as Actor, await app.users.tokenFor(actor));
  }
  await app.users.createGroup(
    'editors',
    ACTIONS.flatMap((a) => [`data_store.${db}.${col}.${a}`, `catalog.${catalogDb}.${col}.${a}`]),
  );
  await app.users.createUser({ username: 'grouped', password: 'pw-grouped-123' });
  await app.users.addToGroup('grouped', 'editors');
  tokens.set('group', await app.users.tokenFor('grouped'));

  for (const [base, database] of [
    ['/api/data_store/data', db],
    ['/api/catalog/data', catalogDb],
  ] as const) {
    if (base === '/api/data_store/data') {
      expect((await call(app.url, 'POST', `${base}/`, { token: suToken, body: { database } })).status).toBe(201);
    }
    expect((await call(app.url, 'POST', `${base}/${database}/`, { token: suToken, body: { collection: col } })).status).toBe(201);
  }
});

afterAll(async () => {
  await app?.close();
});

/** A fresh record for each write so rows don't depend on each other. */
async function freshRecord(base: string, database: string): Promise<string> {
  const res = await call(app.url, 'POST', `${base}/${database}/${col}/`, { token: tokens.get('superuser'), body: { v: 1 } });
  expect(res.status).toBe(201);
  return res.json._id as string;
}

const OK_ALL: Record<Actor, number | 'ok'> = {
  anonymous: 401,
  nogrant: 403,
  readonly: 403,
  collection: 'ok',
  database: 'ok',
  group: 'ok',
  admin: 'ok',
  superuser: 'ok',
};
const OK_READ: Record<Actor, number | 'ok'> = { ...OK_ALL, readonly: 'ok' };
const MANAGE: Record<Actor, number | 'ok'> = {
  anonymous: 401,
  nogrant: 403,
  readonly: 403,
  collection: 403,
  database: 403,
  group: 403,
  admin: 'ok',
  superuser: 'ok',
};
const SEE_DB: Record<Actor, number | 'ok'> = { ...OK_READ, nogrant: 403 };
const LIST: Record<Actor, number | 'ok'> = { ...Object.fromEntries(ACTORS.map((a) => [a, 'ok'])), anonymous: 401 } as Record<
  Actor,
  number | 'ok'
>;
const NOT_ALLOWED: Record<Actor, number | 'ok'> = Object.fromEntries(ACTORS.map((a) => [a, 405])) as Record<Actor, number | 'ok'>;

interface Row {
  area: 'data_store' | 'catalog';
  endpoint: string;
  method: string;
  expect: Record<Actor, number | 'ok'>;
}

function rows(area: 'data_store' | 'catalog'): Row[] {
  const record = area === 'data_store' ? OK_ALL : OK_ALL;
  // In the catalog a database grant means nothing: only collection grants and roles count.
  const catalogFix = (r: Record<Actor, number | 'ok'>): Record<Actor, number | 'ok'> => (area === 'catalog' ? { ...r, database: 403 } : r);
  return [
    { area, endpoint: 'databases', method: 'GET', expect: LIST },
    { area, endpoint: 'databases', method: 'POST', expect: area === 'data_store' ? MANAGE : NOT_ALLOWED },
    { area, endpoint: 'databases', method: 'PUT', expect: NOT_ALLOWED },
    { area, endpoint: 'collections', method: 'GET', expect: catalogFix(SEE_DB) },
    { area, endpoint: 'collections', method: 'POST', expect: MANAGE },
    { area, endpoint: 'collections', method: 'DELETE', expect: NOT_ALLOWED },
    { area, endpoint: 'collection', method: 'GET', expect: catalogFix(OK_READ) },
    { area, endpoint: 'collection', method: 'POST', expect: catalogFix(record) },
    { area, endpoint: 'collection', method: 'PATCH', expect: catalogFix(record) },
    { area, endpoint: 'collection', method: 'DELETE', expect: catalogFix(record) },
    { area, endpoint: 'collection', method: 'PUT', expect: NOT_ALLOWED },
    { area, endpoint: 'record', method: 'GET', expect: catalogFix(OK_READ) },
    { area, endpoint: 'record', method: 'PUT', expect: catalogFix(record) },
    { area, endpoint: 'record', method: 'PATCH', expect: catalogFix(record) },
    { area, endpoint: 'record', method: 'DELETE', expect: catalogFix(record) },
    { area, endpoint: 'record', method: 'POST', expect: NOT_ALLOWED },
  ];
}

const cases = [...rows('data_store'), ...rows('catalog')].flatMap((row) => ACTORS.map((actor) => ({ ...row, actor })));

describe('permission matrix', () => {
  it.each(cases)('$area $endpoint $method as $actor', async ({ area, endpoint, method, actor, expect: expected }) => {
    const base = area === 'data_store' ? '/api/data_store/data' : '/api/catalog/data';
    const database = area === 'data_store' ? db : catalogDb;
    let path: string;
    let body: unknown;
    switch (endpoint) {
      case 'databases':
        path = `${base}/`;
        body = { database: uniqueName(`${app.prefix}n`) };
        break;
      case 'collections':
        path = `${base}/${database}/`;
        body = { collection: uniqueName('c') };
        break;
      case 'collection':
        path = `${base}/${database}/${col}/`;
        // Updates and deletes by filter: one that matches nothing, so rows don't depend on each other.
        if (method === 'PATCH' || method === 'DELETE') path += `?query=${encodeURIComponent('{"filter": {"no_such_field": true}}')}`;
        body = { made_by: actor };
        break;
      default:
        path = `${base}/${database}/${col}/${await freshRecord(base, database)}/`;
        body = { changed_by: actor };
    }
    const res = await call(app.url, method, path, {
      token: tokens.get(actor),
      body: method === 'GET' || method === 'DELETE' ? undefined : body,
    });
    const want = expected[actor];
    if (want === 'ok') {
      expect(res.status, res.text).toBeGreaterThanOrEqual(200);
      expect(res.status, res.text).toBeLessThan(300);
    } else {
      expect(res.status, res.text).toBe(want);
      expect(res.json?.error?.status).toBe(want);
      if (want === 401) expect(res.headers.get('www-authenticate')).toBe('Token');
    }
  });

  it('lists only the databases and collections a caller may read', async () => {
    const other = `${app.prefix}hidden`;
    const su = tokens.get('superuser');
    expect((await call(app.url, 'POST', '/api/data_store/data/', { token: su, body: { database: other } })).status).toBe(201);
    const seenBy = async (actor: Actor): Promise<string[]> =>
      (await call(app.url, 'GET', '/api/data_store/data/?page_size=0', { token: tokens.get(actor) })).json.results.map(
        (r: { database: string }) => r.database,
      );
    expect(await seenBy('nogrant')).not.toContain(db);
    expect(await seenBy('readonly')).toContain(db);
    expect(await seenBy('readonly')).not.toContain(other);
    expect(await seenBy('superuser')).toEqual(expect.arrayContaining([db, other]));
  });
});

describe('aggregation lookups', () => {
  it('refuses $lookup, $graphLookup and $unionWith into a collection the caller may not read, before running', async () => {
    const su = tokens.get('superuser');
    expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token: su, body: { collection: 'private' } })).status).toBe(201);
    const q = (v: unknown) => encodeURIComponent(JSON.stringify(v));
    const pipelines = [
      [{ $lookup: { from: 'private', localField: 'v', foreignField: 'v', as: 'x' } }],
      [{ $graphLookup: { from: 'private', startWith: '$v', connectFromField: 'v', connectToField: 'v', as: 'x' } }],
      [{ $unionWith: { coll: 'private', pipeline: [] } }],
      [{ $facet: { inner: [{ $lookup: { from: 'private', pipeline: [], as: 'x' } }] } }],
    ];
    for (const pipeline of pipelines) {
      const res = await call(app.url, 'GET', `/api/data_store/data/${db}/${col}/?aggregate=${q(pipeline)}`, {
        token: tokens.get('readonly'),
      });
      expect(res.status, JSON.stringify(pipeline)).toBe(403);
      expect(res.json.error.code).toBe('forbidden_lookup');
      expect(res.json.error.message).toContain('private');
    }
    // The same pipeline is not refused on permission grounds for a caller who may read both.
    const allowed = await call(app.url, 'GET', `/api/data_store/data/${db}/${col}/?aggregate=${q(pipelines[0])}`, {
      token: tokens.get('database'),
    });
    expect(allowed.status).not.toBe(403);
    expect(allowed.status).toBeLessThan(500);
  });
});

describe('anonymous reads when configured', () => {
  let open: TestApp;
  let openDb: string;
  beforeAll(async () => {
    open = await startTestApp({ DATA_STORE_ANONYMOUS: 'true', SAFE_METHOD_PERM_REQUIRED: '' });
    openDb = `${open.prefix}open`;
    await open.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
    const su = await open.users.tokenFor('root');
    expect((await call(open.url, 'POST', '/api/data_store/data/', { token: su, body: { database: openDb } })).status).toBe(201);
    for (const c of ['public', 'secret']) {
      expect((await call(open.url, 'POST', `/api/data_store/data/${openDb}/`, { token: su, body: { collection: c } })).status).toBe(201);
    }
    await open.close();
    // Restart with the secret collection protected, as an operator would configure it.
    open = await startTestApp({
      DATA_STORE_ANONYMOUS: 'true',
      SAFE_METHOD_PERM_REQUIRED: `${openDb}_secret`,
      SERVICE_DATABASE: open.ctx.settings.serviceDatabase,
    });
  });
  afterAll(async () => {
    await open?.close();
  });

  it('lets anonymous callers read but not write, except collections listed in SAFE_METHOD_PERM_REQUIRED', async () => {
    expect((await call(open.url, 'GET', `/api/data_store/data/${openDb}/public/`)).status).toBe(200);
    expect((await call(open.url, 'GET', `/api/data_store/data/${openDb}/`)).status).toBe(200);
    expect((await call(open.url, 'POST', `/api/data_store/data/${openDb}/public/`, { body: { a: 1 } })).status).toBe(401);
    expect((await call(open.url, 'GET', `/api/data_store/data/${openDb}/secret/`)).status).toBe(401);
    const su = await open.users.tokenFor('root');
    expect((await call(open.url, 'GET', `/api/data_store/data/${openDb}/secret/`, { token: su })).status).toBe(200);
  });
});
