/**
 * Bad input on every document endpoint: each case must get the documented 4xx with the JSON
 * error body, the server must keep serving, and the databases must be unchanged afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type CallOptions, type TestApp } from '../../support/app.js';

let app: TestApp;
let token: string;
let db: string;
const BASE = '/api/data_store/data';
const col = 'things';
let recordId: string;
const q = (v: unknown) => encodeURIComponent(JSON.stringify(v));

/** Everything a bad request could have changed: database names and the full contents of `db`. */
async function snapshot(): Promise<string> {
  const dbs = (await call(app.url, 'GET', `${BASE}/?page_size=0`, { token })).json.results.map((r: { database: string }) => r.database);
  const cols = (await call(app.url, 'GET', `${BASE}/${db}/?page_size=0`, { token })).json.results.map(
    (r: { collection: string }) => r.collection,
  );
  const records = (await call(app.url, 'GET', `${BASE}/${db}/${col}/?page_size=0`, { token })).json.results;
  return JSON.stringify({ dbs: dbs.filter((d: string) => d.startsWith(app.prefix)).sort(), cols: cols.sort(), records });
}

beforeAll(async () => {
  app = await startTestApp({ MAX_BODY_BYTES: '4096', MAX_QUERY_BYTES: '2048' });
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  token = await app.users.tokenFor('root');
  db = `${app.prefix}bad`;
  expect((await call(app.url, 'POST', `${BASE}/`, { token, body: { database: db } })).status).toBe(201);
  expect((await call(app.url, 'POST', `${BASE}/${db}/`, { token, body: { collection: col } })).status).toBe(201);
  const rec = await call(app.url, 'POST', `${BASE}/${db}/${col}/`, { token, body: { name: 'keep me', n: 1 } });
  recordId = rec.json._id;
});

afterAll(async () => {
  await app?.close();
});

interface Case {
  name: string;
  method: string;
  path: () => string;
  options?: CallOptions | (() => CallOptions);
  status: number;
  code?: string;
}

const big = 'x'.repeat(5000);

const cases: Case[] = [
  // Malformed bodies and content types
  {
    name: 'malformed JSON body (create database)',
    method: 'POST',
    path: () => `${BASE}/`,
    options: { rawBody: '{"database": ' },
    status: 400,
    code: 'malformed_json',
  },
  {
    name: 'malformed JSON body (insert)',
    method: 'POST',
    path: () => `${BASE}/${db}/${col}/`,
    options: { rawBody: '{name: "x"}' },
    status: 400,
    code: 'malformed_json',
  },
  {
    name: 'malformed JSON body (PUT)',
    method: 'PUT',
    path: () => `${BASE}/${db}/${col}/${recordId}/`,
    options: { rawBody: '[1,' },
    status: 400,
    code: 'malformed_json',
  },
  {
    name: 'wrong content type',
    method: 'POST',
    path: () => `${BASE}/${db}/${col}/`,
    options: { rawBody: 'name=x', contentType: 'application/x-www-form-urlencoded' },
    status: 415,
  },
  {
    name: 'text/plain body',
    method: 'POST',
    path: () => `${BASE}/`,
    options: { rawBody: '{"database":"zz"}', contentType: 'text/plain' },
    status: 415,
  },
  { name: 'oversize body', method: 'POST', path: () => `${BASE}/${db}/${col}/`, options: { body: { big } }, status: 413 },
  { name: 'missing body (create database)', method: 'POST', path: () => `${BASE}/`, status: 400, code: 'missing_body' },
  { name: 'missing body (insert)', method: 'POST', path: () => `${BASE}/${db}/${col}/`, status: 400 },
  // Wrong types and unknown keys
  {
    name: 'database name not a string',
    method: 'POST',
    path: () => `${BASE}/`,
    options: { body: { database: 42 } },
    status: 400,
    code: 'invalid_name',
  },
  { name: 'body is an array (create database)', method: 'POST', path: () => `${BASE}/`, options: { body: ['x'] }, status: 400 },
  {
    name: 'unknown key (create database)',
    method: 'POST',
    path: () => `${BASE}/`,
    options: { body: { database: 'zzunknownkey', owner: 'me' } },
    status: 400,
    code: 'unknown_field',
  },
  {
    name: 'unknown key (create collection)',
    method: 'POST',
    path: () => `${BASE}/${db}/`,
    options: { body: { collection: 'c2', capped: true } },
    status: 400,
    code: 'unknown_field',
  },
  {
    name: 'unknown action',
    method: 'POST',
    path: () => `${BASE}/${db}/`,
    options: { body: { collection: col, action: 'drop' } },
    status: 400,
    code: 'invalid_action',
  },
  {
    name: 'missing collection field',
    method: 'POST',
    path: () => `${BASE}/${db}/`,
    options: { body: { action: 'delete' } },
    status: 400,
    code: 'missing_field',
  },
  { name: 'insert a number', method: 'POST', path: () => `${BASE}/${db}/${col}/`, options: { body: 5 }, status: 400 },
  {
    name: 'insert an array with a non-object',
    method: 'POST',
    path: () => `${BASE}/${db}/${col}/`,
    options: { body: [{ a: 1 }, 'two'] },
    status: 400,
  },
  { name: 'insert an empty array', method: 'POST', path: () => `${BASE}/${db}/${col}/`, options: { body: [] }, status: 400 },
  {
    name: 'insert a $-prefixed field',
    method: 'POST',
    path: () => `${BASE}/${db}/${col}/`,
    options: { body: { $set: { a: 1 } } },
    status: 400,
  },
  {
    name: 'insert with __proto__',
    method: 'POST',
    path: () => `${BASE}/${db}/${col}/`,
    options: { rawBody: '{"__proto__": {"polluted": true}}' },
    status: 400,
  },
  {
    name: 'PATCH with a forbidden operator',
    method: 'PATCH',
    path: () => `${BASE}/${db}/${col}/${recordId}/`,
    options: { body: { $where: 'x' } },
    status: 400,
    code: 'forbidden_operator',
  },
  {
    name: 'PATCH mixing operators and fields',
    method: 'PATCH',
    path: () => `${BASE}/${db}/${col}/${recordId}/`,
    options: { body: { $set: { a: 1 }, b: 2 } },
    status: 400,
  },
  {
    name: 'PATCH changing _id',
    method: 'PATCH',
    path: () => `${BASE}/${db}/${col}/${recordId}/`,
    options: { body: { _id: 'other' } },
    status: 400,
  },
  {
    name: 'PUT with a different _id',
    method: 'PUT',
    path: () => `${BASE}/${db}/${col}/${recordId}/`,
    options: { body: { _id: 'other', a: 1 } },
    status: 400,
  },
  { name: 'PUT with an array', method: 'PUT', path: () => `${BASE}/${db}/${col}/${recordId}/`, options: { body: [1] }, status: 400 },
  // Query parameters
  {
    name: 'malformed JSON in query',
    method: 'GET',
    path: () => `${BASE}/${db}/${col}/?query={filter:`,
    status: 400,
    code: 'malformed_json',
  },
  {
    name: 'malformed JSON in aggregate',
    method: 'GET',
    path: () => `${BASE}/${db}/${col}/?aggregate=[{`,
    status: 400,
    code: 'malformed_json',
  },
  { name: 'query not an object', method: 'GET', path: () => `${BASE}/${db}/${col}/?query=${q([1])}`, status: 400 },
  { name: 'unknown key in query', method: 'GET', path: () => `${BASE}/${db}/${col}/?query=${q({ filter: {}, limit: 5 })}`, status: 400 },
  {
    name: 'projection with a bad value',
    method: 'GET',
    path: () => `${BASE}/${db}/${col}/?query=${q({ projection: { a: 'yes' } })}`,
    status: 400,
  },
  { name: 'sort with a bad value', method: 'GET', path: () => `${BASE}/${db}/${col}/?query=${q({ sort: { a: 2 } })}`, status: 400 },
  {
    name: '$where in query',
    method: 'GET',
    path: () => `${BASE}/${db}/${col}/?query=${q({ filter: { $where: '1' } })}`,
    status: 400,
    code: 'forbidden_operator',
  },
  {
    name: '$out in aggregate',
    method: 'GET',
    path: () => `${BASE}/${db}/${col}/?aggregate=${q([{ $out: 'x' }])}`,
    status: 400,
    code: 'forbidden_operator',
  },
  { name: 'aggregate not an array', method: 'GET', path: () => `${BASE}/${db}/${col}/?aggregate=${q({ $match: {} })}`, status: 400 },
  {
    name: 'oversize query parameter',
    method: 'GET',
    path: () => `${BASE}/${db}/${col}/?query=${q({ filter: { a: 'y'.repeat(3000) } })}`,
    status: 414,
  },
  { name: 'page not an integer', method: 'GET', path: () => `${BASE}/${db}/${col}/?page=abc`, status: 400, code: 'invalid_page' },
  { name: 'negative page_size', method: 'GET', path: () => `${BASE}/${db}/${col}/?page_size=-1`, status: 400, code: 'invalid_page_size' },
  {
    name: 'fractional page_size',
    method: 'GET',
    path: () => `${BASE}/${db}/${col}/?page_size=1.5`,
    status: 400,
    code: 'invalid_page_size',
  },
  { name: 'repeated parameter', method: 'GET', path: () => `${BASE}/${db}/${col}/?page=1&page=2`, status: 400 },
  { name: 'unknown parameter', method: 'GET', path: () => `${BASE}/${db}/${col}/?pagesize=5`, status: 400, code: 'unknown_parameter' },
  { name: 'distinct with a $ field', method: 'GET', path: () => `${BASE}/${db}/${col}/?distinct=$name`, status: 400 },
  {
    name: 'distinct and aggregate together',
    method: 'GET',
    path: () => `${BASE}/${db}/${col}/?distinct=a&aggregate=${q([])}`,
    status: 400,
  },
  {
    name: 'invalid operator the server refuses',
    method: 'GET',
    path: () => `${BASE}/${db}/${col}/?query=${q({ filter: { a: { $nosuchop: 1 } } })}`,
    status: 400,
  },
  // Once a 500: bson built a Symbol of a number, which failed only when written to the engine.
  ...[
    { where: 'insert', method: 'POST', path: () => `${BASE}/${db}/${col}/`, options: { body: { s: { $symbol: 5 } } } },
    { where: 'filter', method: 'GET', path: () => `${BASE}/${db}/${col}/?query=${q({ filter: { s: { $symbol: 5 } } })}` },
    { where: 'pipeline', method: 'GET', path: () => `${BASE}/${db}/${col}/?aggregate=${q([{ $match: { s: { $symbol: {} } } }])}` },
  ].map(({ where, ...request }) => ({ name: `a $symbol of a non-string in ${where}`, ...request, status: 400, code: 'malformed_json' })),
  // Queries the engine refuses: each was once a 503 database_unavailable (a $text under a field,
  // the local engine's InternalError, which clients retry in vain) or a 500.
  ...[
    { name: '$text under a field in a filter', query: { filter: { name: { $text: { $search: 'x' } } } } },
    { name: '$text under a field in a $match', aggregate: [{ $match: { $and: [{ name: { $text: { $search: 'x' } } }] } }] },
    { name: '$text search without a text index', query: { filter: { $text: { $search: 'x' } } } },
    { name: 'a conversion that fails in $expr', query: { filter: { $expr: { $toInt: '$name' } } } },
  ].map(({ name, query, aggregate }) => ({
    name,
    method: 'GET',
    path: () => `${BASE}/${db}/${col}/?${query === undefined ? `aggregate=${q(aggregate)}` : `query=${q(query)}`}`,
    status: 400,
    code: 'invalid_query',
  })),
  ...[
    { name: 'PATCH with two operators on one field', body: { $set: { n: 1 }, $inc: { n: 1 } } },
    { name: 'PATCH $set of an empty path', body: { $set: { '': 1 } } },
  ].map(({ name, body }) => ({
    name,
    method: 'PATCH',
    path: () => `${BASE}/${db}/${col}/${recordId}/`,
    options: { body },
    status: 400,
    code: 'invalid_query',
  })),
  // Names and ids
  {
    name: 'database name with a slash-like char',
    method: 'POST',
    path: () => `${BASE}/`,
    options: { body: { database: 'a.b' } },
    status: 400,
    code: 'invalid_name',
  },
  {
    name: 'database name with a space',
    method: 'POST',
    path: () => `${BASE}/`,
    options: { body: { database: 'a b' } },
    status: 400,
    code: 'invalid_name',
  },
  {
    name: 'database name too long',
    method: 'POST',
    path: () => `${BASE}/`,
    options: { body: { database: 'd'.repeat(64) } },
    status: 400,
    code: 'invalid_name',
  },
  { name: 'empty database name', method: 'POST', path: () => `${BASE}/`, options: { body: { database: '' } }, status: 400 },
  { name: 'create admin', method: 'POST', path: () => `${BASE}/`, options: { body: { database: 'admin' } }, status: 400 },
  { name: 'create config', method: 'POST', path: () => `${BASE}/`, options: { body: { database: 'config' } }, status: 400 },
  { name: 'delete local', method: 'POST', path: () => `${BASE}/`, options: { body: { database: 'local', action: 'delete' } }, status: 400 },
  {
    name: 'delete the service database',
    method: 'POST',
    path: () => `${BASE}/`,
    options: () => ({ body: { database: app.ctx.settings.serviceDatabase, action: 'delete' } }),
    status: 400,
  },
  // A catalog database in another case is the same database to MongoDB: not the data store's.
  {
    name: 'create the catalog database in another case',
    method: 'POST',
    path: () => `${BASE}/`,
    options: { body: { database: 'Catalog' } },
    status: 400,
  },
  {
    name: 'create the service database in another case',
    method: 'POST',
    path: () => `${BASE}/`,
    options: () => ({ body: { database: app.ctx.settings.serviceDatabase.toUpperCase() } }),
    status: 400,
  },
  { name: 'read admin', method: 'GET', path: () => `${BASE}/admin/`, status: 404 },
  { name: 'read admin.system.users', method: 'GET', path: () => `${BASE}/admin/system.users/`, status: 400 },
  {
    name: 'collection name with $',
    method: 'POST',
    path: () => `${BASE}/${db}/`,
    options: { body: { collection: 'a$b' } },
    status: 400,
    code: 'invalid_name',
  },
  {
    name: 'system. collection',
    method: 'POST',
    path: () => `${BASE}/${db}/`,
    options: { body: { collection: 'system.js' } },
    status: 400,
    code: 'invalid_name',
  },
  {
    name: 'collection name with a control character',
    method: 'POST',
    path: () => `${BASE}/${db}/`,
    options: { body: { collection: 'a\u0001b' } },
    status: 400,
    code: 'invalid_name',
  },
  // Field names with control characters: invisible, not representable in XML, not typeable
  {
    name: 'field name with a control character',
    method: 'POST',
    path: () => `${BASE}/${db}/${col}/`,
    options: { body: { 'k\u0001': 2 } },
    status: 400,
    code: 'invalid_field_name',
  },
  {
    name: 'nested field name with a line feed',
    method: 'POST',
    path: () => `${BASE}/${db}/${col}/`,
    options: { body: { a: [{ b: { 'c\n': 1 } }] } },
    status: 400,
    code: 'invalid_field_name',
  },
  {
    name: 'field with a tab in one record of an array',
    method: 'POST',
    path: () => `${BASE}/${db}/${col}/`,
    options: { body: [{ ok: 1 }, { 'bad\t': 1 }] },
    status: 400,
    code: 'invalid_field_name',
  },
  {
    name: 'PUT with a control-character field',
    method: 'PUT',
    path: () => `${BASE}/${db}/${col}/${recordId}/`,
    options: { body: { name: 'x', 'q\u0002': 1 } },
    status: 400,
    code: 'invalid_field_name',
  },
  {
    name: 'PATCH merging a control-character field',
    method: 'PATCH',
    path: () => `${BASE}/${db}/${col}/${recordId}/`,
    options: { body: { 'q\u007f': 1 } },
    status: 400,
    code: 'invalid_field_name',
  },
  {
    name: 'PATCH $set of a control-character path',
    method: 'PATCH',
    path: () => `${BASE}/${db}/${col}/${recordId}/`,
    options: { body: { $set: { 'a.b\u0001': 1 } } },
    status: 400,
    code: 'invalid_field_name',
  },
  {
    name: 'PATCH $push of a value with a control-character field',
    method: 'PATCH',
    path: () => `${BASE}/${db}/${col}/${recordId}/`,
    options: { body: { $push: { list: { 'k\r': 1 } } } },
    status: 400,
    code: 'invalid_field_name',
  },
  {
    name: 'PATCH $rename to a control-character name',
    method: 'PATCH',
    path: () => `${BASE}/${db}/${col}/${recordId}/`,
    options: { body: { $rename: { name: 'na\nme' } } },
    status: 400,
    code: 'invalid_field_name',
  },
  { name: 'invalid database name in path', method: 'GET', path: () => `${BASE}/a%20b/${col}/`, status: 400, code: 'invalid_name' },
  { name: 'missing collection', method: 'GET', path: () => `${BASE}/${db}/nope/`, status: 404, code: 'no_such_collection' },
  { name: 'insert into a missing collection', method: 'POST', path: () => `${BASE}/${db}/nope/`, options: { body: { a: 1 } }, status: 404 },
  { name: 'missing database', method: 'GET', path: () => `${BASE}/${db}zz/${col}/`, status: 404, code: 'no_such_database' },
  // Reads check existence only when they find nothing: every empty read of a missing container is still a 404.
  {
    name: 'query on a missing collection',
    method: 'GET',
    path: () => `${BASE}/${db}/nope/?query=${encodeURIComponent('{"filter":{"a":1}}')}`,
    status: 404,
    code: 'no_such_collection',
  },
  {
    name: 'distinct on a missing collection',
    method: 'GET',
    path: () => `${BASE}/${db}/nope/?distinct=a`,
    status: 404,
    code: 'no_such_collection',
  },
  {
    name: 'distinct of two fields on a missing collection',
    method: 'GET',
    path: () => `${BASE}/${db}/nope/?distinct=a,b`,
    status: 404,
    code: 'no_such_collection',
  },
  {
    name: 'aggregate on a missing collection',
    method: 'GET',
    path: () => `${BASE}/${db}/nope/?aggregate=${encodeURIComponent('[{"$match":{}}]')}`,
    status: 404,
    code: 'no_such_collection',
  },
  {
    name: 'page_size=0 on a missing collection',
    method: 'GET',
    path: () => `${BASE}/${db}/nope/?page_size=0`,
    status: 404,
    code: 'no_such_collection',
  },
  {
    name: 'record in a missing collection',
    method: 'GET',
    path: () => `${BASE}/${db}/nope/cccccccccccccccccccccccc/`,
    status: 404,
    code: 'no_such_collection',
  },
  {
    name: 'record in a missing database',
    method: 'GET',
    path: () => `${BASE}/${db}zz/${col}/cccccccccccccccccccccccc/`,
    status: 404,
    code: 'no_such_database',
  },
  {
    name: 'PUT a record in a missing collection',
    method: 'PUT',
    path: () => `${BASE}/${db}/nope/cccccccccccccccccccccccc/`,
    options: { body: { a: 1 } },
    status: 404,
    code: 'no_such_collection',
  },
  {
    name: 'PATCH a record in a missing collection',
    method: 'PATCH',
    path: () => `${BASE}/${db}/nope/cccccccccccccccccccccccc/`,
    options: { body: { a: 1 } },
    status: 404,
    code: 'no_such_collection',
  },
  {
    name: 'DELETE a record in a missing collection',
    method: 'DELETE',
    path: () => `${BASE}/${db}/nope/cccccccccccccccccccccccc/`,
    status: 404,
    code: 'no_such_collection',
  },
  {
    name: 'DELETE a record in a missing database',
    method: 'DELETE',
    path: () => `${BASE}/${db}zz/${col}/cccccccccccccccccccccccc/`,
    status: 404,
    code: 'no_such_database',
  },
  {
    name: 'missing record',
    method: 'GET',
    path: () => `${BASE}/${db}/${col}/cccccccccccccccccccccccc/`,
    status: 404,
    code: 'no_such_record',
  },
  { name: 'id too long', method: 'GET', path: () => `${BASE}/${db}/${col}/${'i'.repeat(1100)}/`, status: 400, code: 'invalid_id' },
  { name: 'PUT a missing record', method: 'PUT', path: () => `${BASE}/${db}/${col}/nothere/`, options: { body: { a: 1 } }, status: 404 },
  // Methods and auth
  {
    name: 'DELETE on a collection without a filter',
    method: 'DELETE',
    path: () => `${BASE}/${db}/${col}/`,
    status: 400,
    code: 'missing_filter',
  },
  { name: 'PUT on a collection', method: 'PUT', path: () => `${BASE}/${db}/${col}/`, options: { body: { a: 1 } }, status: 405 },
  {
    name: 'no credentials',
    method: 'POST',
    path: () => `${BASE}/${db}/${col}/`,
    options: { token: undefined, body: { a: 1 } },
    status: 401,
  },
  {
    name: 'unknown token',
    method: 'POST',
    path: () => `${BASE}/${db}/${col}/`,
    options: { token: 'f'.repeat(40), body: { a: 1 } },
    status: 401,
  },
  { name: 'unknown endpoint', method: 'GET', path: () => '/api/nothing/here/', status: 404 },
];

describe('bad input on the data store', () => {
  it.each(cases)('$name → $status', async (c) => {
    const before = await snapshot();
    const options: CallOptions = { token, ...(typeof c.options === 'function' ? c.options() : c.options) };
    const res = await call(app.url, c.method, c.path(), options);
    expect(res.status, res.text.slice(0, 300)).toBe(c.status);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.json?.error?.status).toBe(c.status);
    expect(typeof res.json?.error?.message).toBe('string');
    if (c.code !== undefined) expect(res.json.error.code).toBe(c.code);
    expect(await snapshot()).toBe(before);
  });

  it('rejects a Host header outside ALLOWED_HOSTS before anything else', async () => {
    const { request } = await import('node:http');
    const url = new URL(app.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        { host: url.hostname, port: url.port, path: `${BASE}/`, headers: { host: 'evil.example', authorization: `Token ${token}` } },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(400);
  });

  it('keeps serving after all of the above', async () => {
    const res = await call(app.url, 'GET', `${BASE}/${db}/${col}/${recordId}/`, { token });
    expect(res.status).toBe(200);
    expect(res.json.name).toBe('keep me');
  });
});
