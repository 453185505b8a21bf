/**
 * Indexes through the API (docs/api-behaviour.md, "Indexes"): list, create, drop on the data
 * store and the catalog, who may do what, the errors, and that a long build does not hold up
 * other requests. Real server, real engine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';

let app: TestApp;
let su: string;
let reader: string;
let creator: string;
let blindCreator: string;
let ttlCreator: string;
let db: string;
let catalogDb: string;
const INDEXES = '/api/data_store/indexes';

const names = (res: { json: { indexes: { name: string }[] } }) => res.json.indexes.map((index) => index.name);

async function collection(col: string, records: unknown[] = []): Promise<string> {
  expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token: su, body: { collection: col } })).status).toBe(201);
  if (records.length > 0)
    expect((await call(app.url, 'POST', `/api/data_store/data/${db}/${col}/`, { token: su, body: records })).status).toBe(201);
  return `${INDEXES}/${db}/${col}/`;
}

beforeAll(async () => {
  catalogDb = uniqueName('catalog');
  db = uniqueName('idx');
  app = await startTestApp({ CATALOG_DATABASES: catalogDb });
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  su = await app.users.tokenFor('root');
  await app.users.createUser({ username: 'reader', password: 'pw-reader-123', permissions: [`data_store.${db}.safe`] });
  reader = await app.users.tokenFor('reader');
  await app.users.createUser({
    username: 'creator',
    password: 'pw-creator-12',
    permissions: ['data_store.datastore_create', `data_store.${db}.safe`],
  });
  creator = await app.users.tokenFor('creator');
  // May create and delete collections, but read none of them.
  await app.users.createUser({ username: 'blind', password: 'pw-blind-1234', permissions: ['data_store.datastore_create'] });
  blindCreator = await app.users.tokenFor('blind');
  await app.users.createUser({
    username: 'ttl',
    password: 'pw-ttl-123456',
    permissions: ['data_store.datastore_create', `data_store.${db}.safe`, `data_store.${db}.ttl_ok.delete`],
  });
  ttlCreator = await app.users.tokenFor('ttl');
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token: su, body: { database: db } })).status).toBe(201);
});

afterAll(async () => {
  await app?.close();
});

describe('listing, creating and dropping', () => {
  it('lists _id_, creates single and compound indexes with their key order, and drops them', async () => {
    const path = await collection('basic', [{ a: 1, b: 2, c: 3 }]);
    const initial = await call(app.url, 'GET', path, { token: su });
    expect(initial.status).toBe(200);
    expect(initial.json.indexes).toEqual([{ name: '_id_', key: { _id: 1 } }]);

    const single = await call(app.url, 'POST', path, { token: su, body: { keys: { a: 1 } } });
    expect(single.status).toBe(201);
    expect(single.json).toEqual({ name: 'a_1' });
    const compound = await call(app.url, 'POST', path, {
      token: su,
      body: {
        keys: [
          ['c', -1],
          ['b', 1],
        ],
        name: 'c_then_b',
      },
    });
    expect(compound.status).toBe(201);
    expect(compound.json).toEqual({ name: 'c_then_b' });

    const listed = await call(app.url, 'GET', path, { token: su });
    const compoundIndex = (listed.json.indexes as { name: string; key: Record<string, number> }[]).find((i) => i.name === 'c_then_b');
    expect(Object.entries(compoundIndex?.key ?? {})).toEqual([
      ['c', -1],
      ['b', 1],
    ]);
    expect(names(listed)).toEqual(['_id_', 'a_1', 'c_then_b']);

    const dropped = await call(app.url, 'DELETE', `${path}a_1/`, { token: su });
    expect(dropped.status).toBe(200);
    expect(dropped.json).toEqual({ deleted: 'a_1' });
    expect(names(await call(app.url, 'GET', path, { token: su }))).toEqual(['_id_', 'c_then_b']);
  });

  it('creates unique, sparse, partial and TTL indexes and lists their options', async () => {
    const path = await collection('options', [{ email: 'a@x', at: { $date: '2024-01-01T00:00:00Z' } }]);
    expect((await call(app.url, 'POST', path, { token: su, body: { keys: { email: 1 }, unique: true, name: 'email' } })).status).toBe(201);
    expect((await call(app.url, 'POST', path, { token: su, body: { keys: { at: 1 }, expireAfterSeconds: 3600 } })).status).toBe(201);
    const partial = await call(app.url, 'POST', path, {
      token: su,
      body: { keys: { score: -1 }, partialFilterExpression: { score: { $gt: 10 } } },
    });
    expect(partial.status, JSON.stringify(partial.json)).toBe(201);
    const indexes = (await call(app.url, 'GET', path, { token: su })).json.indexes as Record<string, unknown>[];
    expect(indexes.find((i) => i.name === 'email')).toEqual({ name: 'email', key: { email: 1 }, unique: true });
    expect(indexes.find((i) => i.name === 'at_1')).toEqual({ name: 'at_1', key: { at: 1 }, expireAfterSeconds: 3600 });
    expect(indexes.find((i) => i.name === 'score_-1')).toEqual({
      name: 'score_-1',
      key: { score: -1 },
      partialFilterExpression: { score: { $gt: 10 } },
    });

    // The unique index now refuses a second record with the same value.
    const duplicate = await call(app.url, 'POST', `/api/data_store/data/${db}/options/`, { token: su, body: { email: 'a@x' } });
    expect(duplicate.status).toBe(409);
  });

  it('creates a 2dsphere index on GeoJSON points, and queries can use it', async () => {
    const path = await collection('places', [
      { name: 'Norman', loc: { type: 'Point', coordinates: [-97.44, 35.22] } },
      { name: 'Tulsa', loc: { type: 'Point', coordinates: [-95.99, 36.15] } },
    ]);
    const created = await call(app.url, 'POST', path, { token: su, body: { keys: { loc: '2dsphere' } } });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    expect(created.json.name).toBe('loc_2dsphere');
    const near = encodeURIComponent(
      JSON.stringify({
        filter: { loc: { $geoWithin: { $centerSphere: [[-97.44, 35.22], 50 / 6378.1] } } },
        projection: { _id: 0, name: 1 },
      }),
    );
    const found = await call(app.url, 'GET', `/api/data_store/data/${db}/places/?query=${near}`, { token: su });
    expect(found.status, JSON.stringify(found.json)).toBe(200);
    expect(found.json.results).toEqual([{ name: 'Norman' }]);
  });

  it('creates a text index, and $text searches use it', async () => {
    const path = await collection('texts', [{ body: 'the quick brown fox' }, { body: 'a lazy dog' }]);
    const res = await call(app.url, 'POST', path, { token: su, body: { keys: { body: 'text' } } });
    expect(res.status, JSON.stringify(res.json)).toBe(201);
    expect(names(await call(app.url, 'GET', path, { token: su }))).toContain(res.json.name);
    const search = encodeURIComponent(JSON.stringify({ filter: { $text: { $search: 'fox' } }, projection: { _id: 0 } }));
    const found = await call(app.url, 'GET', `/api/data_store/data/${db}/texts/?query=${search}`, { token: su });
    expect(found.status, JSON.stringify(found.json)).toBe(200);
    expect(found.json.results).toEqual([{ body: 'the quick brown fox' }]);
  });

  it('answers an index the engine cannot build with 400 and its reason, not a 5xx', async () => {
    const path = await collection('geo_compound', [{ a: 1, g: { type: 'Point', coordinates: [1, 2] } }]);
    const res = await call(app.url, 'POST', path, {
      token: su,
      body: {
        keys: [
          ['g', '2dsphere'],
          ['a', 1],
        ],
      },
    });
    const buildInfo = await app.ctx.mongo.db('admin').command({ buildInfo: 1 });
    if (buildInfo.ferretdb !== undefined) {
      // DocumentDB has no compound index of a 2dsphere and a regular key; MongoDB has.
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('invalid_index');
      expect(res.json.error.message).toMatch(/not supported/);
    } else {
      expect(res.status).toBe(201);
    }
  });

  it('works on the catalog at /api/catalog/indexes/', async () => {
    expect((await call(app.url, 'POST', `/api/catalog/data/${catalogDb}/`, { token: su, body: { collection: 'sets' } })).status).toBe(201);
    const path = `/api/catalog/indexes/${catalogDb}/sets/`;
    expect((await call(app.url, 'POST', path, { token: su, body: { keys: { year: -1 } } })).status).toBe(201);
    expect(names(await call(app.url, 'GET', path, { token: su }))).toEqual(['_id_', 'year_-1']);
    expect((await call(app.url, 'DELETE', `${path}year_-1/`, { token: su })).status).toBe(200);
    // A data-store database is not the catalog's.
    expect((await call(app.url, 'GET', `/api/catalog/indexes/${db}/basic/`, { token: su })).status).toBe(404);
  });
});

describe('errors', () => {
  let path: string;
  beforeAll(async () => {
    path = await collection('errs', [
      { k: 1, v: 'same' },
      { k: 2, v: 'same' },
    ]);
  });

  it('refuses bad keys and options with 400 and the JSON error body, creating nothing', async () => {
    for (const body of [
      {},
      { keys: {} },
      { keys: { k: 2 } },
      { keys: { $k: 1 } },
      { keys: { k: 1 }, expireAfterSeconds: 'soon' },
      { keys: { k: 1, v: 1 }, expireAfterSeconds: 5 },
    ]) {
      const res = await call(app.url, 'POST', path, { token: su, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error).toMatchObject({ status: 400, code: 'invalid_index' });
    }
    expect(names(await call(app.url, 'GET', path, { token: su }))).toEqual(['_id_']);
  });

  it('answers 409 for a name that exists and for a unique index over duplicate values', async () => {
    expect((await call(app.url, 'POST', path, { token: su, body: { keys: { k: 1 }, name: 'by_k' } })).status).toBe(201);
    const sameName = await call(app.url, 'POST', path, { token: su, body: { keys: { v: 1 }, name: 'by_k' } });
    expect(sameName.status).toBe(409);
    expect(sameName.json.error.code).toBe('index_exists');
    const unique = await call(app.url, 'POST', path, { token: su, body: { keys: { v: 1 }, unique: true } });
    expect(unique.status, JSON.stringify(unique.json)).toBe(409);
    expect(unique.json.error.code).toBe('duplicate_values');
    expect(names(await call(app.url, 'GET', path, { token: su }))).toEqual(['_id_', 'by_k']);
  });

  it('answers 404 for an unknown collection, database or index, and 400 for dropping _id_', async () => {
    expect((await call(app.url, 'GET', `${INDEXES}/${db}/nothing/`, { token: su })).json.error.code).toBe('no_such_collection');
    expect((await call(app.url, 'POST', `${INDEXES}/${db}/nothing/`, { token: su, body: { keys: { a: 1 } } })).status).toBe(404);
    expect((await call(app.url, 'GET', `${INDEXES}/nodb${db}/x/`, { token: su })).json.error.code).toBe('no_such_database');
    const unknown = await call(app.url, 'DELETE', `${path}nope/`, { token: su });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error.code).toBe('no_such_index');
    // "*" would mean "every index" to the engine: it is just an unknown name here.
    expect((await call(app.url, 'DELETE', `${path}*/`, { token: su })).status).toBe(404);
    const id = await call(app.url, 'DELETE', `${path}_id_/`, { token: su });
    expect(id.status).toBe(400);
    expect(names(await call(app.url, 'GET', path, { token: su }))).toContain('by_k');
  });
});

describe('permissions', () => {
  it('lets readers list, and only the area admins and creators who may read the collection create and drop', async () => {
    const path = await collection('perm', [{ a: 1 }]);
    expect((await call(app.url, 'GET', path, { token: reader })).status).toBe(200);
    expect((await call(app.url, 'POST', path, { token: reader, body: { keys: { a: 1 } } })).status).toBe(403);
    expect((await call(app.url, 'GET', path)).status).toBe(401);
    expect((await call(app.url, 'POST', path, { body: { keys: { a: 1 } } })).status).toBe(401);

    expect((await call(app.url, 'POST', path, { token: creator, body: { keys: { a: 1 } } })).status).toBe(201);
    expect((await call(app.url, 'DELETE', `${path}a_1/`, { token: reader })).status).toBe(403);
    expect((await call(app.url, 'DELETE', `${path}a_1/`, { token: creator })).status).toBe(200);
  });
});

describe("index management under the reader's rules", () => {
  it('refuses a creator who may not read the collection: creating and dropping, whatever the body holds', async () => {
    const path = await collection('unread', [
      { _id: 'r1', v: 'same' },
      { _id: 'r2', v: 'same' },
    ]);
    expect((await call(app.url, 'POST', path, { token: su, body: { keys: { v: 1 }, name: 'by_v' } })).status).toBe(201);
    for (const body of [
      { keys: { v: 1 } },
      // Once a count oracle: 409 when two records of _id > "r1" share a value, 201 when not.
      { keys: { v: 1 }, unique: true, partialFilterExpression: { _id: { $gt: 'r1' } } },
      { keys: { nothing: 1 } },
    ]) {
      const res = await call(app.url, 'POST', path, { token: blindCreator, body });
      expect(res.status, JSON.stringify(body)).toBe(403);
      expect(res.json.error.code).toBe('permission_denied');
    }
    expect((await call(app.url, 'DELETE', `${path}by_v/`, { token: blindCreator })).status).toBe(403);
    expect(names(await call(app.url, 'GET', path, { token: su }))).toEqual(['_id_', 'by_v']);
  });

  it('makes TTL indexes only for those who may delete every record of the collection', async () => {
    const record = { at: { $date: '2000-01-01T00:00:00Z' } };
    const path = await collection('ttl_refused', [record]);
    const refused = await call(app.url, 'POST', path, { token: creator, body: { keys: { at: 1 }, expireAfterSeconds: 1 } });
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe('forbidden_ttl_index');
    expect(names(await call(app.url, 'GET', path, { token: su }))).toEqual(['_id_']);
    // Other indexes stay the creator's to make.
    expect((await call(app.url, 'POST', path, { token: creator, body: { keys: { at: 1 } } })).status).toBe(201);

    const allowedPath = await collection('ttl_ok', [record]);
    const allowed = await call(app.url, 'POST', allowedPath, { token: ttlCreator, body: { keys: { at: 1 }, expireAfterSeconds: 1 } });
    expect(allowed.status, JSON.stringify(allowed.json)).toBe(201);
    // Its delete right is on this collection only.
    expect((await call(app.url, 'POST', path, { token: ttlCreator, body: { keys: { at: -1 }, expireAfterSeconds: 1 } })).status).toBe(403);
  });

  it('answers a build the records do not fit without quoting any record', async () => {
    const secret = '123-45-6789';
    const path = await collection('leaky', [
      { _id: 'id-of-a-secret', ssn: secret, loc: `at ${secret}`, tags: [secret], language: `lang-${secret}`, body: 'text' },
      { _id: 'id-of-another', ssn: secret, loc: { type: 'Point', coordinates: [1, 2] } },
    ]);
    for (const [body, status, field] of [
      [{ keys: { loc: '2dsphere' } }, 400, 'loc'],
      [{ keys: { tags: 'hashed' } }, 400, 'tags'],
      [{ keys: { body: 'text' } }, 400, 'language'],
      [{ keys: { ssn: 1 }, unique: true }, 409, undefined],
    ] as const) {
      const res = await call(app.url, 'POST', path, { token: creator, body });
      expect(res.status, JSON.stringify(res.json)).toBe(status);
      expect(res.text).not.toContain(secret);
      expect(res.text).not.toContain('id-of-a');
      if (field !== undefined) expect(res.json.error.message).toContain(`"${field}"`);
    }
    expect(names(await call(app.url, 'GET', path, { token: su }))).toEqual(['_id_']);
  });

  it('checks a partialFilterExpression by the rules of a query filter', async () => {
    const path = await collection('partial_rules', [{ v: 1 }]);
    const fieldText = await call(app.url, 'POST', path, {
      token: creator,
      body: { keys: { v: 1 }, partialFilterExpression: { v: { $text: { $search: 'x' } } } },
    });
    expect(fieldText.status, JSON.stringify(fieldText.json)).toBe(400);
    expect(fieldText.json.error).toMatchObject({ code: 'invalid_query', detail: { field: 'v' } });
    const where = await call(app.url, 'POST', path, { token: creator, body: { keys: { v: 1 }, partialFilterExpression: { $where: '1' } } });
    expect(where.status).toBe(400);
    expect(where.json.error.code).toBe('forbidden_operator');
    expect(names(await call(app.url, 'GET', path, { token: su }))).toEqual(['_id_']);
  });
});

describe('the browsable page', () => {
  it('offers the create/drop form to index managers only, and the collection page links to it', async () => {
    const path = await collection('html', [{ a: 1 }]);
    const page = await call(app.url, 'GET', path, { token: su, accept: 'text/html' });
    expect(page.status).toBe(200);
    expect(page.text).toContain(`data-browsable="indexes" data-url="${path}"`);
    const readerPage = await call(app.url, 'GET', path, { token: reader, accept: 'text/html' });
    expect(readerPage.status).toBe(200);
    expect(readerPage.text).not.toContain('data-browsable="indexes"');
    const collectionPage = await call(app.url, 'GET', `/api/data_store/data/${db}/html/`, { token: su, accept: 'text/html' });
    expect(collectionPage.text).toContain(`<a href="${path}">Indexes of this collection</a>`);
  });
});

describe('a long index build', () => {
  const TOTAL = 100_000;
  let path: string;

  beforeAll(async () => {
    path = await collection('large');
    // Fixture data written straight into the engine: 100,000 records through HTTP would only slow the suite.
    const store = app.ctx.mongo.db(db).collection('large');
    for (let start = 0; start < TOTAL; start += 10_000) {
      await store.insertMany(
        Array.from({ length: 10_000 }, (_, i) => ({ n: start + i, s: `value-${((start + i) * 7919) % TOTAL}`, t: `${i % 97}-${start}` })),
      );
    }
  }, 300_000);

  it('does not hold up other requests while it runs', async () => {
    let builtAt = 0;
    const build = call(app.url, 'POST', path, {
      token: su,
      body: {
        keys: [
          ['s', 1],
          ['t', -1],
          ['n', 1],
        ],
      },
    }).then((res) => {
      builtAt = performance.now();
      return res;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const read = await call(app.url, 'GET', `/api/data_store/data/${db}/large/?page_size=5`, { token: su });
    const readAt = performance.now();
    expect(read.status).toBe(200);
    expect(read.json.results).toHaveLength(5);
    expect(builtAt).toBe(0); // the build has not answered yet
    const built = await build;
    expect(built.status, JSON.stringify(built.json)).toBe(201);
    expect(builtAt).toBeGreaterThan(readAt);
  }, 300_000);
});
