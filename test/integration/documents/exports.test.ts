/**
 * CSV and NDJSON exports of collection reads (docs/api-behaviour.md, "CSV and NDJSON") on the
 * data store and the catalog, through the real server and engine: query, projection, sort,
 * `fields`, paging, path suffixes, Extended JSON types, a large export streamed with bounded
 * memory, and signed links for clients without credentials.
 */
import { once } from 'node:events';
import http from 'node:http';
import { Router, type Response as ExpressResponse } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';

let app: TestApp;
let su: string;
let reader: string;
let db: string;
let catalogDb: string;
let base: string;
/** The response of the last request under /api/data_store/data/<db>/big/, as the server holds it. */
let bigResponse: ExpressResponse | undefined;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const q = (value: unknown) => encodeURIComponent(JSON.stringify(value));
const lines = (text: string, eol: string) => text.split(eol).slice(0, -1);

beforeAll(async () => {
  catalogDb = uniqueName('catalog');
  db = uniqueName('exp');
  // Test instrumentation, not a stand-in: it only keeps a reference to the real response object.
  const watch = Router().use((_req, res, next) => {
    bigResponse = res;
    next();
  });
  app = await startTestApp({ CATALOG_DATABASES: catalogDb }, () => ({
    beforeBody: [{ path: `/api/data_store/data/${db}/big`, router: watch }],
  }));
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  su = await app.users.tokenFor('root');
  await app.users.createUser({ username: 'reader', password: 'pw-reader-123', permissions: [`data_store.${db}.stations.safe`] });
  reader = await app.users.tokenFor('reader');

  expect((await call(app.url, 'POST', '/api/data_store/data/', { token: su, body: { database: db } })).status).toBe(201);
  for (const col of ['stations', 'big']) {
    expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token: su, body: { collection: col } })).status).toBe(201);
  }
  base = `/api/data_store/data/${db}/stations/`;
  const inserted = await call(app.url, 'POST', base, {
    token: su,
    body: [
      {
        _id: { $oid: '65a1b2c3d4e5f60718293a01' },
        name: 'Norman',
        elev: 357,
        installed: { $date: '2001-04-01T00:00:00Z' },
        loc: { lat: 35.2, lon: -97.4 },
        tags: ['a', 'b'],
        active: true,
        price: { $numberDecimal: '19.99' },
        raw: { $binary: { base64: 'aGk=', subType: '00' } },
        note: 'says "hi", twice\nand more',
      },
      { _id: { $oid: '65a1b2c3d4e5f60718293a02' }, name: 'Tulsa', elev: 194, loc: { lat: 36.1 }, active: false, note: null },
      { _id: { $oid: '65a1b2c3d4e5f60718293a03' }, name: 'Boise City', elev: 1265 },
    ],
  });
  expect(inserted.status).toBe(201);
});

afterAll(async () => {
  await app?.close();
});

describe('CSV', () => {
  it('answers the records with a header, the sampled columns, _id first and types converted', async () => {
    const res = await call(app.url, 'GET', `${base}?format=csv`, { token: su });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(lines(res.text, '\r\n')).toEqual([
      '_id,name,elev,installed,loc.lat,loc.lon,tags,active,price,raw,note',
      // A line break inside a value stays inside its quoted field.
      '65a1b2c3d4e5f60718293a01,Norman,357,2001-04-01T00:00:00.000Z,35.2,-97.4,"[""a"",""b""]",true,19.99,aGk=,"says ""hi"", twice\nand more"',
      '65a1b2c3d4e5f60718293a02,Tulsa,194,,36.1,,,false,,,',
      '65a1b2c3d4e5f60718293a03,Boise City,1265,,,,,,,,',
    ]);
  });

  it('applies filter, projection and sort, and `fields` chooses and orders the columns', async () => {
    const query = q({ filter: { elev: { $gt: 300 } }, projection: { name: 1, elev: 1, loc: 1 }, sort: { elev: -1 } });
    const res = await call(app.url, 'GET', `${base}?format=csv&query=${query}&fields=name,loc.lat,elev`, { token: su });
    expect(res.status).toBe(200);
    expect(res.text).toBe('name,loc.lat,elev\r\nBoise City,,1265\r\nNorman,35.2,357\r\n');
  });

  it('answers one page when page or page_size is given, the whole result otherwise', async () => {
    const sorted = `&query=${q({ sort: { elev: 1 } })}&fields=name`;
    expect((await call(app.url, 'GET', `${base}?format=csv${sorted}&page_size=1&page=2`, { token: su })).text).toBe('name\r\nNorman\r\n');
    expect((await call(app.url, 'GET', `${base}?format=csv${sorted}&page_size=2`, { token: su })).text).toBe('name\r\nTulsa\r\nNorman\r\n');
    expect((await call(app.url, 'GET', `${base}?format=csv${sorted}`, { token: su })).text).toBe(
      'name\r\nTulsa\r\nNorman\r\nBoise City\r\n',
    );
  });

  it('is also reached with the /.csv suffix', async () => {
    const res = await call(app.url, 'GET', `${base}.csv?fields=name&query=${q({ filter: { elev: 194 } })}`, { token: su });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.text).toBe('name\r\nTulsa\r\n');
  });

  it('exports aggregation results and distinct values', async () => {
    const pipeline = q([{ $group: { _id: null, total: { $sum: '$elev' } } }]);
    expect((await call(app.url, 'GET', `${base}?format=csv&aggregate=${pipeline}`, { token: su })).text).toBe('_id,total\r\n,1816\r\n');
    const distinct = await call(app.url, 'GET', `${base}?format=csv&distinct=name`, { token: su });
    expect(lines(distinct.text, '\r\n').sort()).toEqual(['Boise City', 'Norman', 'Tulsa', 'value']);
  });

  it('gives a key with a dot and a nested key of the same path a column each, and `fields` names either', async () => {
    expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token: su, body: { collection: 'dotted' } })).status).toBe(201);
    const path = `/api/data_store/data/${db}/dotted/`;
    const record = { _id: 'd1', a: { b: 'nested' }, 'a.b': 'literal', 'c\\': { d: 'backslash' } };
    expect((await call(app.url, 'POST', path, { token: su, body: record })).status).toBe(201);
    const all = await call(app.url, 'GET', `${path}?format=csv`, { token: su });
    expect(all.status).toBe(200);
    expect(all.text).toBe('_id,a.b,a\\.b,c\\\\.d\r\nd1,nested,literal,backslash\r\n');
    const chosen = await call(app.url, 'GET', `${path}?format=csv&fields=${encodeURIComponent('a\\.b,a.b,a')}`, { token: su });
    expect(chosen.text).toBe('a\\.b,a.b,a\r\nliteral,nested,"{""b"":""nested""}"\r\n');
  });

  it('refuses bad `fields`, and `fields` without CSV, with the JSON error body', async () => {
    for (const fields of ['a,,b', 'a,a', '.x', 'a\\b', 'a\\']) {
      const res = await call(app.url, 'GET', `${base}?format=csv&fields=${encodeURIComponent(fields)}`, { token: su });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.json.error.code).toBe('invalid_fields');
    }
    const json = await call(app.url, 'GET', `${base}?format=json&fields=name`, { token: su });
    expect(json.status).toBe(400);
    expect(json.json.error.code).toBe('invalid_combination');
  });

  it('answers errors in JSON: a bad query, a missing collection, no permission', async () => {
    const bad = await call(app.url, 'GET', `${base}?format=csv&query=nope`, { token: su });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('malformed_json');
    const missing = await call(app.url, 'GET', `/api/data_store/data/${db}/nothing/.csv`, { token: su });
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('no_such_collection');
    const anonymous = await call(app.url, 'GET', `${base}.ndjson`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.json.error.status).toBe(401);
  });

  it('keeps refusing unknown formats as before', async () => {
    const res = await call(app.url, 'GET', `${base}?format=tsv`, { token: su });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('invalid_format');
  });
});

describe('NDJSON', () => {
  it('answers one record per line in the JSON rendering of records, with filter, sort and paging', async () => {
    const res = await call(app.url, 'GET', `${base}?format=ndjson&query=${q({ filter: { elev: { $lt: 1000 } }, sort: { elev: 1 } })}`, {
      token: su,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    const records = lines(res.text, '\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    const asJson = await call(app.url, 'GET', `${base}?page_size=0&query=${q({ filter: { elev: { $lt: 1000 } }, sort: { elev: 1 } })}`, {
      token: su,
    });
    expect(records).toEqual(asJson.json.results);
    expect(records[1]).toMatchObject({
      _id: '65a1b2c3d4e5f60718293a01',
      installed: '2001-04-01T00:00:00.000Z',
      price: '19.99',
      raw: 'aGk=',
    });

    const page = await call(
      app.url,
      'GET',
      `${base}.ndjson?page_size=1&query=${q({ sort: { elev: -1 }, projection: { name: 1, _id: 0 } })}`,
      {
        token: su,
      },
    );
    expect(page.text).toBe('{"name":"Boise City"}\n');
  });
});

describe('the catalog', () => {
  it('exports as CSV and NDJSON too', async () => {
    const col = `/api/catalog/data/${catalogDb}/datasets/`;
    expect((await call(app.url, 'POST', `/api/catalog/data/${catalogDb}/`, { token: su, body: { collection: 'datasets' } })).status).toBe(
      201,
    );
    const body = [
      { _id: 'rain', title: 'Rain', year: 2020, when: { $date: '2020-01-01T00:00:00Z' } },
      { _id: 'snow', title: 'Snow, dry', year: 2021 },
    ];
    expect((await call(app.url, 'POST', col, { token: su, body })).status).toBe(201);
    const csv = await call(app.url, 'GET', `${col}.csv?query=${q({ sort: { year: -1 } })}`, { token: su });
    expect(csv.text).toBe('_id,title,year,when\r\nsnow,"Snow, dry",2021,\r\nrain,Rain,2020,2020-01-01T00:00:00.000Z\r\n');
    const ndjson = await call(app.url, 'GET', `${col}?format=ndjson&fields=title`, { token: su });
    expect(ndjson.status).toBe(400);
    const nd = await call(app.url, 'GET', `${col}?format=ndjson&query=${q({ filter: { year: 2020 } })}`, { token: su });
    expect(nd.text).toBe('{"_id":"rain","title":"Rain","year":2020,"when":"2020-01-01T00:00:00.000Z"}\n');
  });
});

describe('a large export', () => {
  const TOTAL = 20_000;
  const PADDING = 'x'.repeat(1000);

  beforeAll(async () => {
    const big = `/api/data_store/data/${db}/big/`;
    for (let start = 0; start < TOTAL; start += 2000) {
      const batch = Array.from({ length: 2000 }, (_, i) => ({ n: start + i, padding: PADDING }));
      expect((await call(app.url, 'POST', big, { token: su, body: batch })).status).toBe(201);
    }
  }, 240_000);

  it('is streamed: while the client does not read, the server holds a bounded part and has not finished', async () => {
    const url = new URL(`/api/data_store/data/${db}/big/?format=csv&query=${q({ sort: { n: 1 } })}&fields=n,padding`, app.url);
    const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
      http.get(url, { headers: { authorization: `Token ${su}` } }, resolve).on('error', reject);
    });
    expect(res.statusCode).toBe(200);
    // Stop reading after the first bytes, as a slow client would.
    res.pause();
    await sleep(1500);
    const server = bigResponse as ExpressResponse;
    expect(server.writableEnded).toBe(false); // about 20 MB in all: far more than socket buffers hold
    expect(server.writableLength).toBeLessThan(1024 * 1024);

    res.setEncoding('utf8');
    let text = '';
    res.on('data', (chunk: string) => {
      text += chunk;
    });
    res.resume();
    await once(res, 'end');
    const rows = lines(text, '\r\n');
    expect(rows).toHaveLength(TOTAL + 1);
    expect(rows[0]).toBe('n,padding');
    expect(rows[TOTAL]).toBe(`${TOTAL - 1},${PADDING}`);
    expect(server.writableEnded).toBe(true);
  }, 120_000);
});

describe('signed links', () => {
  async function makeLink(token: string, path: string, expiresIn?: number) {
    return call(app.url, 'POST', '/api/links/', { token, body: { path, ...(expiresIn === undefined ? {} : { expires_in: expiresIn }) } });
  }
  const csvPath = () => `${base}?format=csv&query=${q({ filter: { elev: 194 } })}&fields=name`;

  it('lets a client without credentials make exactly that GET', async () => {
    const made = await makeLink(reader, csvPath(), 600);
    expect(made.status).toBe(201);
    const { url, expires } = made.json as { url: string; expires: string };
    expect(url.startsWith(`${app.url}${base}?format=csv`)).toBe(true);
    expect(Date.parse(expires) - Date.now()).toBeGreaterThan(590_000);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('name\r\nTulsa\r\n');
    // Clients that re-encode the URL (Python's requests, httpx) still match the link.
    const reencoded = url.replace(/%7B/g, '{').replace(/%7D/g, '}');
    expect(reencoded).not.toBe(url);
    expect((await call(reencoded, 'GET', '')).text).toBe('name\r\nTulsa\r\n');
  });

  it('refuses a tampered link, another path or query, and methods other than GET', async () => {
    const { url } = (await makeLink(reader, csvPath())).json as { url: string };
    const tampered = url.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    const bad = await call(tampered, 'GET', '');
    expect(bad.status).toBe(401);
    expect(bad.json.error.code).toBe('link_not_valid');

    const token = new URL(url).searchParams.get('link') as string;
    const otherQuery = await call(app.url, 'GET', `${base}?format=csv&link=${encodeURIComponent(token)}`);
    expect(otherQuery.status).toBe(403);
    expect(otherQuery.json.error.code).toBe('link_not_allowed');
    const otherPath = await call(
      app.url,
      'GET',
      `/api/data_store/data/${db}/big/?format=csv&query=${q({ filter: { elev: 194 } })}&fields=name&link=${encodeURIComponent(token)}`,
    );
    expect(otherPath.status).toBe(403);
    const post = await call(url, 'POST', '', { body: { name: 'x' } });
    expect(post.status).toBe(403);
    expect(post.json.error.code).toBe('link_not_allowed');
  });

  it('refuses an expired link', async () => {
    const { url } = (await makeLink(reader, csvPath(), 1)).json as { url: string };
    await sleep(2100);
    const res = await call(url, 'GET', '');
    expect(res.status).toBe(401);
    expect(res.json.error.message).toBe('The link has expired.');
  });

  it('checks the permissions again when used: a revoked permission refuses the link', async () => {
    await app.users.createUser({ username: 'temp', password: 'pw-temporary-1', permissions: [`data_store.${db}.stations.safe`] });
    const temp = await app.users.tokenFor('temp');
    const { url } = (await makeLink(temp, csvPath())).json as { url: string };
    expect((await call(url, 'GET', '')).status).toBe(200);
    await app.ctx.auth.models.User.updateOne({ username: 'temp' }, { $set: { permissions: [] } }).exec();
    await sleep(2500); // accounts are cached for 2 s
    const res = await call(url, 'GET', '');
    expect(res.status).toBe(403);
    expect(res.json.error.code).toBe('permission_denied');
  });

  it('refuses to make links without credentials, beyond a day, outside record reads, or from a link', async () => {
    expect((await call(app.url, 'POST', '/api/links/', { body: { path: csvPath() } })).status).toBe(401);
    for (const body of [
      { path: csvPath(), expires_in: 86_401 },
      { path: 'https://example.org/api/' },
      { path: '/admin/' },
      { path: '/api/links/' },
      { path: `${base}?link=x` },
      {},
    ]) {
      const res = await call(app.url, 'POST', '/api/links/', { token: reader, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const { url } = (await makeLink(reader, csvPath())).json as { url: string };
    // A link is for a GET of its own path: it never reaches the links endpoint, so it cannot mint another.
    const token = new URL(url).searchParams.get('link') as string;
    const minted = await call(app.url, 'POST', `/api/links/?link=${encodeURIComponent(token)}`, { body: { path: csvPath() } });
    expect(minted.status).toBe(403);
  });
});
