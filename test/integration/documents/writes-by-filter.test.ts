/**
 * Updates and deletes of every record a filter matches (PATCH and DELETE on a collection with
 * `query={"filter": ...}`), through the real HTTP server and engine: the counts they answer, the
 * records they change, the input they refuse without writing anything, and who may send them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';

let app: TestApp;
let token: string;
let db: string;
const BASE = '/api/data_store/data';
const q = (v: unknown) => encodeURIComponent(JSON.stringify(v));
const byFilter = (col: string, filter: unknown) => `${BASE}/${db}/${col}/?query=${q({ filter })}`;

interface Sample {
  _id: string;
  n: number;
  site: string;
  [field: string]: unknown;
}

/** A fresh collection of six records: n 0..5, site alpha/beta alternating. */
async function freshCollection(): Promise<string> {
  const col = uniqueName('c');
  expect((await call(app.url, 'POST', `${BASE}/${db}/`, { token, body: { collection: col } })).status).toBe(201);
  const records = Array.from({ length: 6 }, (_, n) => ({ _id: `r${n}`, n, site: n % 2 === 0 ? 'alpha' : 'beta' }));
  expect((await call(app.url, 'POST', `${BASE}/${db}/${col}/`, { token, body: records })).status).toBe(201);
  return col;
}

async function recordsOf(col: string, tokenOf = token): Promise<Sample[]> {
  const res = await call(app.url, 'GET', `${BASE}/${db}/${col}/?page_size=0&query=${q({ sort: { n: 1 } })}`, { token: tokenOf });
  expect(res.status, res.text).toBe(200);
  return res.json.results as Sample[];
}

beforeAll(async () => {
  app = await startTestApp();
  await app.users.createUser({ username: 'owner', password: 'correct horse battery', isSuperuser: true });
  token = await app.users.tokenFor('owner');
  db = `${app.prefix}bulk`;
  expect((await call(app.url, 'POST', `${BASE}/`, { token, body: { database: db } })).status).toBe(201);
});

afterAll(async () => {
  await app?.close();
});

describe('PATCH by filter', () => {
  it('merges plain fields into every matching record and answers how many matched and changed', async () => {
    const col = await freshCollection();
    const res = await call(app.url, 'PATCH', byFilter(col, { site: 'alpha' }), { token, body: { checked: true } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ matched_count: 3, modified_count: 3 });
    const records = await recordsOf(col);
    expect(records.filter((r) => r.checked === true).map((r) => r._id)).toEqual(['r0', 'r2', 'r4']);
    expect(records.filter((r) => r.site === 'beta').every((r) => !('checked' in r))).toBe(true);
  });

  it('applies update operators, and counts as modified only the records that changed', async () => {
    const col = await freshCollection();
    const inc = await call(app.url, 'PATCH', byFilter(col, { n: { $gte: 4 } }), { token, body: { $inc: { n: 10 } } });
    expect(inc.json).toEqual({ matched_count: 2, modified_count: 2 });
    expect((await recordsOf(col)).map((r) => r.n)).toEqual([0, 1, 2, 3, 14, 15]);
    // Setting what two of the three already hold changes one record.
    const set = await call(app.url, 'PATCH', byFilter(col, { n: { $in: [0, 1, 2] } }), { token, body: { $set: { site: 'alpha' } } });
    expect(set.json).toEqual({ matched_count: 3, modified_count: 1 });
    const none = await call(app.url, 'PATCH', byFilter(col, { site: 'nowhere' }), { token, body: { x: 1 } });
    expect(none.json).toEqual({ matched_count: 0, modified_count: 0 });
  });

  it('reads the filter as a query does: Extended JSON values and a 24-hex _id as ObjectId or string', async () => {
    const col = await freshCollection();
    const oid = 'cccccccccccccccccccccccc';
    expect(
      (
        await call(app.url, 'POST', `${BASE}/${db}/${col}/`, {
          token,
          body: { _id: { $oid: oid }, n: 9, when: { $date: '2020-01-01T00:00:00Z' } },
        })
      ).status,
    ).toBe(201);
    const byId = await call(app.url, 'PATCH', byFilter(col, { _id: oid }), { token, body: { found: 'by id' } });
    expect(byId.json.matched_count).toBe(1);
    const byDate = await call(app.url, 'PATCH', byFilter(col, { when: { $lt: { $date: '2021-01-01T00:00:00Z' } } }), {
      token,
      body: { found: 'by date' },
    });
    expect(byDate.json.matched_count).toBe(1);
    expect((await recordsOf(col)).find((r) => r._id === oid)?.found).toBe('by date');
  });

  it('refuses a missing filter, other query keys, forbidden operators and bad updates, writing nothing', async () => {
    const col = await freshCollection();
    const before = await recordsOf(col);
    const path = `${BASE}/${db}/${col}/`;
    const cases: { url: string; body?: unknown; code: string }[] = [
      { url: path, body: { x: 1 }, code: 'missing_filter' },
      { url: `${path}?query=${q({})}`, body: { x: 1 }, code: 'missing_filter' },
      { url: `${path}?query=`, body: { x: 1 }, code: 'missing_filter' },
      { url: `${path}?query=${q({ filter: {}, sort: { n: 1 } })}`, body: { x: 1 }, code: 'invalid_combination' },
      { url: `${path}?query=${q({ filter: { $where: 'true' } })}`, body: { x: 1 }, code: 'forbidden_operator' },
      { url: `${path}?query=${q({ filter: [] })}`, body: { x: 1 }, code: 'invalid_query' },
      { url: `${path}?query={not json`, body: { x: 1 }, code: 'malformed_json' },
      { url: `${path}?query=${q({ filter: {} })}&page=2`, body: { x: 1 }, code: 'unknown_parameter' },
      { url: byFilter(col, {}), code: 'missing_body' },
      { url: byFilter(col, {}), body: {}, code: 'empty_update' },
      { url: byFilter(col, {}), body: { x: 1, $inc: { n: 1 } }, code: 'mixed_update' },
      { url: byFilter(col, {}), body: { $setOnInsert: { x: 1 } }, code: 'forbidden_operator' },
      { url: byFilter(col, {}), body: { $set: { _id: 'new' } }, code: 'immutable_id' },
      { url: byFilter(col, {}), body: { _id: 'new' }, code: 'immutable_id' },
      { url: byFilter(col, {}), body: { $set: { 'bad\u0001name': 1 } }, code: 'invalid_field_name' },
      { url: byFilter(col, {}), body: [{ x: 1 }], code: 'invalid_body' },
    ];
    for (const { url, body, code } of cases) {
      const res = await call(app.url, 'PATCH', url, { token, body });
      expect(res.status, `${url} ${JSON.stringify(body)}: ${res.text}`).toBe(400);
      expect(res.json.error.code, url).toBe(code);
    }
    expect(await recordsOf(col)).toEqual(before);
  });

  it('answers 404 for a collection or database that does not exist, and creates neither', async () => {
    const missing = await call(app.url, 'PATCH', byFilter('nosuchcol', {}), { token, body: { x: 1 } });
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('no_such_collection');
    const collections = await call(app.url, 'GET', `${BASE}/${db}/?page_size=0`, { token });
    expect(collections.json.results.map((r: { collection: string }) => r.collection)).not.toContain('nosuchcol');
    const noDb = await call(app.url, 'PATCH', `${BASE}/${db}x/c/?query=${q({ filter: {} })}`, { token, body: { x: 1 } });
    expect(noDb.status).toBe(404);
    expect(noDb.json.error.code).toBe('no_such_database');
  });
});

describe('DELETE by filter', () => {
  it('removes every matching record and answers how many, {} removing all', async () => {
    const col = await freshCollection();
    const some = await call(app.url, 'DELETE', byFilter(col, { n: { $lt: 2 } }), { token });
    expect(some.status, some.text).toBe(200);
    expect(some.json).toEqual({ deleted_count: 2 });
    expect((await recordsOf(col)).map((r) => r._id)).toEqual(['r2', 'r3', 'r4', 'r5']);
    expect((await call(app.url, 'DELETE', byFilter(col, { n: 99 }), { token })).json).toEqual({ deleted_count: 0 });
    expect((await call(app.url, 'DELETE', byFilter(col, {}), { token })).json).toEqual({ deleted_count: 4 });
    expect(await recordsOf(col)).toEqual([]);
    // The collection itself stays.
    expect((await call(app.url, 'GET', `${BASE}/${db}/${col}/`, { token })).status).toBe(200);
  });

  it('refuses a DELETE that names no filter, and writes nothing', async () => {
    const col = await freshCollection();
    for (const url of [`${BASE}/${db}/${col}/`, `${BASE}/${db}/${col}/?query=${q({ sort: { n: 1 } })}`]) {
      const res = await call(app.url, 'DELETE', url, { token });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('missing_filter');
    }
    const forbidden = await call(app.url, 'DELETE', byFilter(col, { $where: 'true' }), { token });
    expect(forbidden.json.error.code).toBe('forbidden_operator');
    expect(await recordsOf(col)).toHaveLength(6);
  });
});

describe('permissions', () => {
  it('needs the update right for PATCH and the delete right for DELETE on the collection', async () => {
    const col = await freshCollection();
    const grant = (action: string) => `data_store.${db}.${col}.${action}`;
    const users: Record<string, string[]> = {
      updater: [grant('safe'), grant('update')],
      deleter: [grant('safe'), grant('delete')],
      reader: [grant('safe')],
    };
    const tokens: Record<string, string> = {};
    for (const [name, permissions] of Object.entries(users)) {
      await app.users.createUser({ username: `${name}${col}`, password: `pw-${name}-12345`, permissions });
      tokens[name] = await app.users.tokenFor(`${name}${col}`);
    }
    const patch = (who: string | undefined) => call(app.url, 'PATCH', byFilter(col, { n: 0 }), { token: who, body: { by: 'x' } });
    const remove = (who: string | undefined) => call(app.url, 'DELETE', byFilter(col, { n: 5 }), { token: who });

    expect((await patch(undefined)).status).toBe(401);
    expect((await remove(undefined)).status).toBe(401);
    expect((await patch(tokens.reader)).status).toBe(403);
    expect((await remove(tokens.reader)).status).toBe(403);
    expect((await remove(tokens.updater)).status).toBe(403);
    expect((await patch(tokens.deleter)).status).toBe(403);
    // A refusal on permission comes before the filter is read: no hint about the input.
    const noFilter = await call(app.url, 'DELETE', `${BASE}/${db}/${col}/`, { token: tokens.reader });
    expect(noFilter.status).toBe(403);
    expect(await recordsOf(col)).toHaveLength(6);

    expect((await patch(tokens.updater)).json).toEqual({ matched_count: 1, modified_count: 1 });
    expect((await remove(tokens.deleter)).json).toEqual({ deleted_count: 1 });
    const records = await recordsOf(col);
    expect(records.map((r) => r._id)).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']);
    expect(records[0]?.by).toBe('x');
  });
});
