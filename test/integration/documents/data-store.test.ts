/**
 * The data store through the real HTTP server: databases, collections, records, queries,
 * paging, distinct, aggregate and formats, as a script using a token would see them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { XMLParser } from 'fast-xml-parser';
import { call, startTestApp, type TestApp } from '../../support/app.js';

let app: TestApp;
let token: string;
let db: string;
const BASE = '/api/data_store/data';

const get = (path: string, opts: Parameters<typeof call>[3] = {}) => call(app.url, 'GET', path, { token, ...opts });
const post = (path: string, body: unknown) => call(app.url, 'POST', path, { token, body });
const q = (v: unknown) => encodeURIComponent(JSON.stringify(v));

beforeAll(async () => {
  app = await startTestApp();
  await app.users.createUser({ username: 'owner', password: 'correct horse battery', isSuperuser: true, isStaff: true });
  token = await app.users.tokenFor('owner');
  db = `${app.prefix}main`;
  expect((await post(`${BASE}/`, { database: db })).status).toBe(201);
  expect((await post(`${BASE}/${db}/`, { collection: 'samples' })).status).toBe(201);
  const records = Array.from({ length: 25 }, (_, i) => ({
    n: i,
    site: ['alpha', 'beta', 'gamma'][i % 3],
    kind: i % 2 === 0 ? 'even' : 'odd',
    tags: [`t${i % 4}`],
  }));
  const inserted = await post(`${BASE}/${db}/samples/`, records);
  expect(inserted.status).toBe(201);
  expect(inserted.json.inserted_ids).toHaveLength(25);
});

afterAll(async () => {
  await app?.close();
});

describe('databases and collections', () => {
  it('creates a database that is listed while still empty, and refuses a duplicate with 409', async () => {
    const name = `${app.prefix}empty`;
    const created = await post(`${BASE}/`, { database: name });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ database: name });
    const list = await get(`${BASE}/?page_size=0`);
    expect(list.status).toBe(200);
    expect(list.json.results.map((r: { database: string }) => r.database)).toContain(name);
    const again = await post(`${BASE}/`, { database: name });
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('database_exists');
  });

  it('deletes a database with action=delete, then 404 for a missing one', async () => {
    const name = `${app.prefix}gone`;
    expect((await post(`${BASE}/`, { database: name })).status).toBe(201);
    expect((await post(`${BASE}/${name}/`, { collection: 'c' })).status).toBe(201);
    const deleted = await post(`${BASE}/`, { action: 'delete', database: name });
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({ deleted: name });
    const list = await get(`${BASE}/?page_size=0`);
    expect(list.json.results.map((r: { database: string }) => r.database)).not.toContain(name);
    expect((await post(`${BASE}/`, { action: 'delete', database: name })).status).toBe(404);
    expect((await get(`${BASE}/${name}/`)).status).toBe(404);
  });

  it('creates, lists and deletes collections', async () => {
    const created = await post(`${BASE}/${db}/`, { collection: 'extra.things' });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ database: db, collection: 'extra.things' });
    expect((await post(`${BASE}/${db}/`, { collection: 'extra.things' })).status).toBe(409);
    const list = await get(`${BASE}/${db}/`);
    expect(list.status).toBe(200);
    const names = list.json.results.map((r: { collection: string }) => r.collection);
    expect(names).toEqual(expect.arrayContaining(['samples', 'extra.things']));
    expect(list.json.results[0].url).toMatch(new RegExp(`^${app.url}/api/data_store/data/${db}/`));
    const deleted = await post(`${BASE}/${db}/`, { action: 'delete', collection: 'extra.things' });
    expect(deleted.status).toBe(200);
    expect((await post(`${BASE}/${db}/`, { action: 'delete', collection: 'extra.things' })).status).toBe(404);
    expect((await post(`${BASE}/${db}/`, { collection: 'x', action: 'drop' })).status).toBe(400);
  });

  it('never lists or opens the system and internal databases', async () => {
    const list = await get(`${BASE}/?page_size=0`);
    const names: string[] = list.json.results.map((r: { database: string }) => r.database);
    for (const hidden of ['admin', 'config', 'local', app.ctx.settings.serviceDatabase, 'catalog']) {
      expect(names).not.toContain(hidden);
    }
    expect((await get(`${BASE}/admin/`)).status).toBe(404);
    expect((await get(`${BASE}/${app.ctx.settings.serviceDatabase}/`)).status).toBe(404);
    expect((await get(`${BASE}/${app.ctx.settings.serviceDatabase}/users/`)).status).toBe(404);
    for (const name of ['admin', 'Config', 'local', app.ctx.settings.serviceDatabase]) {
      const created = await post(`${BASE}/`, { database: name });
      expect(created.status, name).toBe(400);
    }
  });
});

describe('records', () => {
  it('inserts one record and reads, replaces, merges and deletes it by id', async () => {
    const created = await post(`${BASE}/${db}/samples/`, { name: 'one', value: 1, when: { $date: '2024-05-01T12:00:00Z' } });
    expect(created.status).toBe(201);
    const id: string = created.json._id;
    expect(id).toMatch(/^[0-9a-f]{24}$/);

    const read = await get(`${BASE}/${db}/samples/${id}/`);
    expect(read.status).toBe(200);
    expect(read.json).toEqual({ _id: id, name: 'one', value: 1, when: '2024-05-01T12:00:00.000Z' });

    const replaced = await call(app.url, 'PUT', `${BASE}/${db}/samples/${id}/`, { token, body: { name: 'uno' } });
    expect(replaced.status).toBe(200);
    expect((await get(`${BASE}/${db}/samples/${id}/`)).json).toEqual({ _id: id, name: 'uno' });

    const merged = await call(app.url, 'PATCH', `${BASE}/${db}/samples/${id}/`, { token, body: { extra: true } });
    expect(merged.status).toBe(200);
    expect(merged.json).toEqual({ _id: id, name: 'uno', extra: true });

    const incremented = await call(app.url, 'PATCH', `${BASE}/${db}/samples/${id}/`, { token, body: { $inc: { count: 2 } } });
    expect(incremented.json.count).toBe(2);

    const deleted = await call(app.url, 'DELETE', `${BASE}/${db}/samples/${id}/`, { token });
    expect(deleted.status).toBe(200);
    expect((await get(`${BASE}/${db}/samples/${id}/`)).status).toBe(404);
    expect((await call(app.url, 'DELETE', `${BASE}/${db}/samples/${id}/`, { token })).status).toBe(404);
  });

  it('matches a 24-hex id as an ObjectId or as a string', async () => {
    const hex = 'aaaaaaaaaaaaaaaaaaaaaaaa';
    const created = await post(`${BASE}/${db}/samples/`, { _id: hex, label: 'string id' });
    expect(created.status).toBe(201);
    expect(created.json._id).toBe(hex);
    expect((await get(`${BASE}/${db}/samples/${hex}/`)).json.label).toBe('string id');
    const byFilter = await get(`${BASE}/${db}/samples/?query=${q({ filter: { _id: hex } })}`);
    expect(byFilter.json.count).toBe(1);
    const oid = await post(`${BASE}/${db}/samples/`, { _id: { $oid: 'bbbbbbbbbbbbbbbbbbbbbbbb' }, label: 'oid' });
    expect(oid.json._id).toBe('bbbbbbbbbbbbbbbbbbbbbbbb');
    const byOid = await get(`${BASE}/${db}/samples/?query=${q({ filter: { _id: 'bbbbbbbbbbbbbbbbbbbbbbbb' } })}`);
    expect(byOid.json.results[0].label).toBe('oid');
    for (const id of [hex, 'bbbbbbbbbbbbbbbbbbbbbbbb']) {
      expect((await call(app.url, 'DELETE', `${BASE}/${db}/samples/${id}/`, { token })).status).toBe(200);
    }
  });

  it('refuses a duplicate _id with 409 and reports which records of an array were written', async () => {
    const col = 'dupes';
    expect((await post(`${BASE}/${db}/`, { collection: col })).status).toBe(201);
    expect((await post(`${BASE}/${db}/${col}/`, { _id: 'a' })).status).toBe(201);
    const single = await post(`${BASE}/${db}/${col}/`, { _id: 'a' });
    expect(single.status).toBe(409);
    const batch = await post(`${BASE}/${db}/${col}/`, [{ _id: 'b' }, { _id: 'c' }, { _id: 'a' }, { _id: 'd' }]);
    expect(batch.status).toBe(409);
    expect(batch.json.error.detail.inserted_ids).toEqual(['b', 'c']);
    expect(batch.json.error.detail.failed_index).toBe(2);
    const all = await get(`${BASE}/${db}/${col}/?page_size=0`);
    expect(all.json.results.map((r: { _id: string }) => r._id).sort()).toEqual(['a', 'b', 'c']);
  });

  it('answers an insert with its count alone for answer=count, and still names what was written when it fails', async () => {
    const col = 'counted';
    expect((await post(`${BASE}/${db}/`, { collection: col })).status).toBe(201);
    const counted = (body: unknown, answer = 'count') => post(`${BASE}/${db}/${col}/?answer=${answer}`, body);
    const many = await counted([{ _id: 'a' }, { _id: 'b' }, { n: 3 }]);
    expect(many.status).toBe(201);
    expect(many.json).toEqual({ inserted_count: 3 });
    const one = await counted({ _id: 'c' });
    expect(one.status).toBe(201);
    expect(one.json).toEqual({ inserted_count: 1 });
    expect((await counted([{ _id: 'd' }], 'ids')).json).toEqual({ inserted_ids: ['d'] });
    // A failure answers as without the parameter: the records written are named.
    const failed = await counted([{ _id: 'e' }, { _id: 'a' }, { _id: 'f' }]);
    expect(failed.status).toBe(409);
    expect(failed.json.error.detail).toMatchObject({ inserted_ids: ['e'], inserted_count: 1, failed_index: 1 });
    // Any other value is a 400, before anything is written.
    const wrong = await counted([{ _id: 'g' }], 'none');
    expect(wrong.status).toBe(400);
    expect(wrong.json.error.code).toBe('invalid_answer');
    const stored = await get(`${BASE}/${db}/${col}/?page_size=0`);
    expect(stored.json.count).toBe(6);
    expect(stored.json.results.map((r: { _id: unknown }) => r._id)).not.toContain('g');
  });
});

describe('paging', () => {
  it('defaults to 10 per page with absolute next/previous links that keep other parameters', async () => {
    const first = await get(`${BASE}/${db}/samples/?query=${q({ sort: { n: 1 } })}`);
    expect(first.status).toBe(200);
    expect(first.json.count).toBe(25);
    expect(first.json.meta).toEqual({ page: 1, page_size: 10, pages: 3 });
    expect(first.json.results).toHaveLength(10);
    expect(first.json.previous).toBeNull();
    const next = new URL(first.json.next);
    expect(next.origin).toBe(app.url);
    expect(next.searchParams.get('page')).toBe('2');
    expect(JSON.parse(next.searchParams.get('query') as string)).toEqual({ sort: { n: 1 } });
    const second = await get(next.pathname + next.search);
    expect(second.json.results[0].n).toBe(10);
    expect(new URL(second.json.previous).searchParams.get('page')).toBe('1');
  });

  it('returns the last page for a page beyond the end and page 1 for page 0', async () => {
    const beyond = await get(`${BASE}/${db}/samples/?page=99&query=${q({ sort: { n: 1 } })}`);
    expect(beyond.json.meta).toEqual({ page: 3, page_size: 10, pages: 3 });
    expect(beyond.json.results.map((r: { n: number }) => r.n)).toEqual([20, 21, 22, 23, 24]);
    expect(beyond.json.next).toBeNull();
    const zero = await get(`${BASE}/${db}/samples/?page=0&query=${q({ sort: { n: 1 } })}`);
    expect(zero.json.meta.page).toBe(1);
    expect(zero.json.results[0].n).toBe(0);
  });

  it('returns every record with page_size=0', async () => {
    const all = await get(`${BASE}/${db}/samples/?page_size=0`);
    expect(all.json.count).toBe(25);
    expect(all.json.results).toHaveLength(25);
    expect(all.json.meta).toEqual({ page: 1, page_size: 0, pages: 1 });
    expect(all.json.next).toBeNull();
  });

  it('gives one empty page for an empty collection', async () => {
    expect((await post(`${BASE}/${db}/`, { collection: 'nothing' })).status).toBe(201);
    const empty = await get(`${BASE}/${db}/nothing/`);
    expect(empty.json).toEqual({ count: 0, meta: { page: 1, page_size: 10, pages: 1 }, next: null, previous: null, results: [] });
  });

  it('answers an empty 200 (not a 404) when a read of an existing collection finds nothing', async () => {
    const none = { count: 0, next: null, previous: null, results: [] };
    const filtered = await get(`${BASE}/${db}/samples/?query=${q({ filter: { site: 'nowhere' } })}`);
    expect(filtered.status, filtered.text).toBe(200);
    expect(filtered.json).toMatchObject(none);
    expect((await get(`${BASE}/${db}/nothing/?distinct=site`)).json).toMatchObject(none);
    expect((await get(`${BASE}/${db}/nothing/?distinct=site,kind`)).json).toMatchObject(none);
    expect((await get(`${BASE}/${db}/samples/?aggregate=${q([{ $match: { site: 'nowhere' } }])}`)).json).toMatchObject(none);
    const noRecord = await get(`${BASE}/${db}/samples/cccccccccccccccccccccccc/`);
    expect(noRecord.status).toBe(404);
    expect(noRecord.json.error.code).toBe('no_such_record');
  });
});

describe('queries', () => {
  it('filters, projects and sorts', async () => {
    const res = await get(
      `${BASE}/${db}/samples/?page_size=5&query=${q({ filter: { site: 'beta', n: { $gte: 4 } }, projection: { n: 1, _id: 0 }, sort: { n: -1 } })}`,
    );
    expect(res.status).toBe(200);
    // beta is n % 3 == 1: 1,4,7,...,22 → n >= 4 gives 4..22 (7 values)
    expect(res.json.count).toBe(7);
    expect(res.json.results).toEqual([{ n: 22 }, { n: 19 }, { n: 16 }, { n: 13 }, { n: 10 }]);
  });

  it('returns distinct values of one field, with the query filter applied', async () => {
    const all = await get(`${BASE}/${db}/samples/?distinct=site`);
    expect(all.json.results.slice().sort()).toEqual(['alpha', 'beta', 'gamma']);
    expect(all.json.count).toBe(3);
    const filtered = await get(`${BASE}/${db}/samples/?distinct=site&query=${q({ filter: { n: { $lt: 2 } } })}`);
    expect(filtered.json.results.slice().sort()).toEqual(['alpha', 'beta']);
  });

  it('returns distinct combinations of several fields', async () => {
    const res = await get(`${BASE}/${db}/samples/?distinct=site,kind&page_size=0`);
    expect(res.status).toBe(200);
    const combos = res.json.results.map((r: { site: string; kind: string }) => `${r.site}/${r.kind}`).sort();
    expect(combos).toEqual(['alpha/even', 'alpha/odd', 'beta/even', 'beta/odd', 'gamma/even', 'gamma/odd']);
    expect(res.json.count).toBe(6);
  });

  it('runs an aggregation with $match/$group/$sort, prepending the query filter', async () => {
    const pipeline = [{ $group: { _id: '$site', total: { $sum: '$n' } } }, { $sort: { _id: 1 } }];
    const res = await get(`${BASE}/${db}/samples/?aggregate=${q(pipeline)}&query=${q({ filter: { kind: 'even' } })}`);
    expect(res.status).toBe(200);
    const sums: Record<string, number> = { alpha: 0, beta: 0, gamma: 0 };
    for (let i = 0; i < 25; i += 2) {
      const site = ['alpha', 'beta', 'gamma'][i % 3] as string;
      sums[site] = (sums[site] ?? 0) + i;
    }
    expect(res.json.results).toEqual([
      { _id: 'alpha', total: sums.alpha },
      { _id: 'beta', total: sums.beta },
      { _id: 'gamma', total: sums.gamma },
    ]);
    expect(res.json.count).toBe(3);
    const matched = await get(`${BASE}/${db}/samples/?aggregate=${q([{ $match: { n: { $lt: 3 } } }, { $sort: { n: 1 } }])}`);
    expect(matched.json.results.map((r: { n: number }) => r.n)).toEqual([0, 1, 2]);
  });

  it('pages aggregation results like records: a page beyond the end is the last page', async () => {
    const pipeline = q([{ $match: { n: { $gte: 5 } } }, { $sort: { n: -1 } }]);
    const second = await get(`${BASE}/${db}/samples/?aggregate=${pipeline}&page_size=8&page=2`);
    expect(second.json.meta).toEqual({ page: 2, page_size: 8, pages: 3 });
    expect(second.json.results.map((r: { n: number }) => r.n)).toEqual([16, 15, 14, 13, 12, 11, 10, 9]);
    const beyond = await get(`${BASE}/${db}/samples/?aggregate=${pipeline}&page_size=8&page=7`);
    expect(beyond.json.count).toBe(20);
    expect(beyond.json.meta).toEqual({ page: 3, page_size: 8, pages: 3 });
    expect(beyond.json.results.map((r: { n: number }) => r.n)).toEqual([8, 7, 6, 5]);
    expect(beyond.json.next).toBeNull();
  });

  it('refuses $out, $merge, $where, $function and $accumulator and writes nothing', async () => {
    const before = (await get(`${BASE}/${db}/?page_size=0`)).json.count;
    const cases = [
      ['aggregate', [{ $out: 'stolen' }]],
      ['aggregate', [{ $merge: { into: 'stolen' } }]],
      ['aggregate', [{ $match: { $where: 'true' } }]],
      ['aggregate', [{ $group: { _id: null, x: { $accumulator: { init: 'function(){}' } } } }]],
      ['query', { filter: { $where: 'sleep(1000)' } }],
      ['query', { filter: { $expr: { $function: { body: 'x', args: [], lang: 'js' } } } }],
    ] as const;
    for (const [param, value] of cases) {
      const res = await get(`${BASE}/${db}/samples/?${param}=${q(value)}`);
      expect(res.status, JSON.stringify(value)).toBe(400);
      expect(res.json.error.code).toBe('forbidden_operator');
    }
    expect((await get(`${BASE}/${db}/?page_size=0`)).json.count).toBe(before);
  });
});

describe('formats', () => {
  it('serves JSON with the exact content type via ?format=json and the /.json suffix', async () => {
    for (const path of [`${BASE}/${db}/samples/?format=json`, `${BASE}/${db}/samples/.json`]) {
      const res = await get(path, { accept: '*/*' });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(JSON.parse(res.text).count).toBe(25);
    }
  });

  it('serves JSONP with a validated callback', async () => {
    const res = await get(`${BASE}/${db}/samples/?format=jsonp&callback=handle.data&page_size=2`, { accept: '*/*' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    const match = /^(?:\/\*\*\/)?handle\.data\(([\s\S]*)\);?\s*$/.exec(res.text);
    expect(match).not.toBeNull();
    expect(JSON.parse((match as RegExpExecArray)[1] as string).results).toHaveLength(2);
    const bad = await get(`${BASE}/${db}/samples/?format=jsonp&callback=alert(1)`, { accept: '*/*' });
    expect(bad.status).toBe(400);
  });

  it('serves well-formed XML that parses back to the same envelope', async () => {
    const res = await get(
      `${BASE}/${db}/samples/?format=xml&page_size=3&query=${q({ sort: { n: 1 }, projection: { _id: 0, n: 1, site: 1 } })}`,
      { accept: '*/*' },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/xml; charset=utf-8');
    const parsed = new XMLParser().parse(res.text);
    expect(parsed.root.count).toBe(25);
    expect(parsed.root.meta).toEqual({ page: 1, page_size: 3, pages: 9 });
    const items = parsed.root.results['list-item'];
    expect(items.map((i: { n: number }) => i.n)).toEqual([0, 1, 2]);
    expect(items[1].site).toBe('beta');
  });

  it('serves the browsable HTML page by default and JSON for Accept: application/json', async () => {
    const html = await get(`${BASE}/${db}/samples/`, { accept: 'text/html,application/xhtml+xml' });
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(html.text).toContain('<html');
    expect(html.text).toContain('&quot;count&quot;');
    const json = await get(`${BASE}/${db}/samples/`);
    expect(json.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  it('marks answers to a signed-in caller and every machine answer as not storable, and leaves anonymous pages alone', async () => {
    for (const path of [`${BASE}/`, `${BASE}/${db}/samples/?page_size=1`, `${BASE}/${db}/samples/?format=xml`]) {
      const res = await get(path, { accept: '*/*' });
      expect(res.status, path).toBe(200);
      expect(res.headers.get('cache-control'), path).toBe('no-store');
    }
    const refused = await get(`${BASE}/${db}/nope/`);
    expect(refused.headers.get('cache-control')).toBe('no-store');
    const anonymous = await call(app.url, 'GET', '/api/health/');
    expect(anonymous.headers.get('cache-control')).toBe('no-store');
    const anonymousPage = await call(app.url, 'GET', '/api/health/', { accept: 'text/html' });
    expect(anonymousPage.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(anonymousPage.headers.get('cache-control')).toBeNull();
  });

  it('refuses an unknown format with a JSON error', async () => {
    const res = await get(`${BASE}/${db}/samples/?format=yaml`, { accept: '*/*' });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).error.code).toBe('invalid_format');
  });

  it('redirects GET without the trailing slash and accepts POST without it', async () => {
    const res = await get(`${BASE}/${db}/samples?page=2`);
    expect(res.status).toBe(301);
    expect(res.headers.get('location')).toBe(`${BASE}/${db}/samples/?page=2`);
    const created = await call(app.url, 'POST', `${BASE}/${db}`, { token, body: { collection: 'noslash' } });
    expect(created.status).toBe(201);
  });
});
