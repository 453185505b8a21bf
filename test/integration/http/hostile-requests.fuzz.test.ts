/**
 * Generated hostile requests against every API route and method (fast-check, fixed seed so a
 * failure reproduces): hostile path segments, query parameters, Host and other headers, bodies in
 * every content type and encoding (valid and corrupt gzip/deflate), JSONP callbacks and Extended
 * JSON oddities, anonymous and as a user who may only read one collection. Asserts: no answer
 * of 500 or more, an error body on every 4xx (the JSON one when JSON was the answer), nothing
 * written anywhere, and the same server still healthy at the end. Failures shrink to a minimal
 * request. The admin site (AdminJS, its own application) is covered by its own tests.
 */
import { request as httpRequest } from 'node:http';
import { gzipSync, deflateSync } from 'node:zlib';
import fc from 'fast-check';
import type { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 5000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);

let app: TestApp;
let readerToken: string;
let db: string;

interface HostileRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

interface Answer {
  status: number;
  contentType: string;
  body: string;
}

function send(req: HostileRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const target = new URL(app.url);
    const outgoing = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.path, headers: req.headers, setHost: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.setTimeout(30_000, () => outgoing.destroy(new Error(`no answer within 30 s: ${req.method} ${req.path}`)));
    outgoing.end(req.body);
  });
}

// --- the pieces requests are made of -------------------------------------------------------

const hostileText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(
    '..',
    '.',
    '%',
    '%FF',
    '%ED%A0%80',
    '%00',
    '$where',
    '$cmd',
    'system.users',
    'admin',
    'Admin',
    'CATALOG',
    'a"b',
    "a'b",
    '<script>',
    'a/b',
    '\\',
    ' ',
    '💥',
    'x'.repeat(300),
  ),
);

/** A path segment, percent-encoded or raw (raw may be invalid on purpose). */
const segment = fc.oneof(
  hostileText.map((t) => encodeURIComponent(t)),
  fc.constantFrom('%FF', '%ED%A0%80', '%2e%2e', '..', '%2F', 'a%00b', '%'),
  fc.constantFrom('x', 'samples', 'readable', '000000000000000000000000', '65f0c0ffee0000000000002a'),
);

const ejsonOddity = fc.constantFrom<unknown>(
  { $oid: 'zz' },
  { $date: 'yesterday' },
  { $date: { $numberLong: 'x' } },
  { $numberDecimal: 'NaN' },
  { $numberDecimal: '1e9999' },
  { $numberLong: '99999999999999999999' },
  { $numberInt: '1.5' },
  { $regularExpression: { pattern: '(', options: 'q' } },
  { $binary: { base64: '!!', subType: 'zz' } },
  { $code: 'while(1){}' },
  { $symbol: 's' },
  { $minKey: 1 },
  { $maxKey: 1 },
  { $timestamp: { t: -1, i: 'x' } },
  { $undefined: true },
  { $where: 'sleep(1000)' },
  { $function: { body: 'x', args: [], lang: 'js' } },
  { $accumulator: {} },
  { a: { $gt: { $oid: 'zz' } } },
  { $expr: { $function: {} } },
  { '': 1 },
  { 'a.b': 1 },
  { $x: 1 },
);

const jsonish = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  ejsonOddity,
  fc.array(ejsonOddity, { maxLength: 3 }),
  fc.dictionary(hostileText, ejsonOddity, { maxKeys: 3 }),
);

const queryValue = fc.oneof(
  hostileText,
  jsonish.map((v) => JSON.stringify(v)),
  fc.integer().map(String),
  fc.constantFrom('0', '-1', '1e9', 'NaN', '99999999999999999999', 'true', '', '[]', '{}', '{"filter":', '{"filter":{"$where":"1"}}'),
);

const queryParams = fc.array(
  fc.tuple(
    fc.oneof(
      fc.constantFrom(
        'format',
        'callback',
        'page',
        'page_size',
        'query',
        'distinct',
        'aggregate',
        'wait',
        'refresh',
        'next',
        'taskname',
        'tag',
        'status',
      ),
      hostileText,
    ),
    fc.oneof(
      queryValue,
      fc.constantFrom('json', 'jsonp', 'xml', 'api', 'html', 'yaml', 'document.write', 'x.constructor.constructor', 'a-b'),
    ),
  ),
  { maxLength: 4 },
);

const route = fc.oneof(
  fc.constant(['api']),
  fc.constant(['api', 'health']),
  fc.constant(['api', 'schema']),
  fc.constantFrom(
    ['api', 'auth', 'login'],
    ['api', 'auth', 'logout'],
    ['api', 'user'],
    ['api', 'token'],
    ['api', 'token', 'refresh'],
    ['api', 'token', 'verify'],
  ),
  fc
    .tuple(fc.constantFrom('data_store', 'catalog'), fc.array(segment, { maxLength: 4 }))
    .map(([area, rest]) => ['api', area, 'data', ...rest]),
  fc.constantFrom(['api', 'queue'], ['api', 'queue', 'usertasks']),
  fc
    .tuple(fc.constantFrom('run', 'task'), segment, fc.constantFrom([], ['revoke']))
    .map(([kind, id, tail]) => ['api', 'queue', kind, id, ...tail]),
  fc.array(segment, { minLength: 1, maxLength: 3 }).map((rest) => ['api', ...rest]),
);

const host = fc.oneof(
  { weight: 8, arbitrary: fc.constant('localhost') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '127.0.0.1',
      'evil.example',
      'localhost:abc',
      'localhost:99999',
      '',
      'a b',
      '[::1',
      'localhost:',
      'LOCALHOST.',
      '..',
    ),
  },
);

const auth = fc.oneof(
  { weight: 3, arbitrary: fc.constant<'reader' | 'anonymous' | 'bad'>('reader') },
  { weight: 3, arbitrary: fc.constant<'reader' | 'anonymous' | 'bad'>('anonymous') },
  { weight: 1, arbitrary: fc.constant<'reader' | 'anonymous' | 'bad'>('bad') },
);

const badAuthorization = fc.constantFrom(
  'Token ',
  'Token x',
  'Bearer ',
  'Bearer a.b.c',
  'Bearer eyJhbGciOiJub25lIn0.eyJ1c2VyX2lkIjoiMSJ9.',
  'Basic YTpi',
  'Token ' + 'f'.repeat(40),
  'Token\u0000x',
);

const body = fc.oneof(
  fc.constant<{ type?: string; data?: Buffer }>({}),
  jsonish.map((v) => ({ type: 'application/json', data: Buffer.from(JSON.stringify(v)) })),
  hostileText.map((t) => ({ type: 'application/json', data: Buffer.from(t) })),
  fc
    .dictionary(hostileText, hostileText, { maxKeys: 3 })
    .map((d) => ({ type: 'application/x-www-form-urlencoded', data: Buffer.from(new URLSearchParams(d).toString()) })),
  fc
    .tuple(
      fc.constantFrom(
        'text/plain',
        'multipart/form-data; boundary=x',
        'application/xml',
        'application/json; charset=utf-16',
        'application/merge-patch+json',
      ),
      hostileText,
    )
    .map(([type, t]) => ({ type, data: Buffer.from(t) })),
  fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ type: 'application/json', data: Buffer.from(bytes) })),
);

const encoding = fc.constantFrom<'identity' | 'gzip' | 'deflate' | 'gzip-corrupt' | 'br'>(
  'identity',
  'identity',
  'identity',
  'gzip',
  'deflate',
  'gzip-corrupt',
  'br',
);

const hostileRequest = fc
  .record({
    method: fc.constantFrom('GET', 'GET', 'POST', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
    route,
    trailingSlash: fc.boolean(),
    query: queryParams,
    host,
    auth,
    badAuthorization,
    accept: fc.constantFrom('application/json', 'application/json', '*/*', 'text/html', 'application/xml', 'application/javascript', ''),
    body,
    encoding,
    extraHeaders: fc.dictionary(
      fc.constantFrom('x-forwarded-for', 'x-forwarded-proto', 'x-csrftoken', 'origin', 'referer', 'cookie', 'x-xsrf-token'),
      fc.string({ maxLength: 40 }).filter((v) => !/[\r\n\u0000]/.test(v)),
      { maxKeys: 2 },
    ),
  })
  .map((r): HostileRequest => {
    const search = new URLSearchParams(r.query).toString();
    const path = `/${r.route.join('/')}${r.trailingSlash ? '/' : ''}${search ? `?${search}` : ''}`;
    const headers: Record<string, string> = { host: r.host, ...r.extraHeaders };
    if (r.accept !== '') headers.accept = r.accept;
    if (r.auth === 'reader') headers.authorization = `Token ${readerToken}`;
    if (r.auth === 'bad' && !/[\u0000]/.test(r.badAuthorization)) headers.authorization = r.badAuthorization;
    let data = r.body.data;
    if (data !== undefined && r.method !== 'GET' && r.method !== 'HEAD') {
      if (r.body.type) headers['content-type'] = r.body.type;
      if (r.encoding === 'gzip') data = gzipSync(data);
      if (r.encoding === 'deflate') data = deflateSync(data);
      if (r.encoding === 'gzip-corrupt') data = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08]), data]);
      if (r.encoding !== 'identity') headers['content-encoding'] = r.encoding === 'gzip-corrupt' ? 'gzip' : r.encoding;
      headers['content-length'] = String(data.length);
      return { method: r.method, path, headers, body: data };
    }
    return { method: r.method, path, headers };
  });

// --- what must not change ----------------------------------------------------------------

/** Every database, collection and document count the server holds (sessions aside). */
async function snapshot(client: MongoClient): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
  for (const { name } of databases) {
    if (['admin', 'local', 'config'].includes(name)) continue;
    for (const { name: col } of await client.db(name).listCollections({}, { nameOnly: true }).toArray()) {
      out[`${name}.${col}`] = await client.db(name).collection(col).countDocuments();
    }
  }
  return out;
}

beforeAll(async () => {
  app = await startTestApp();
  await app.users.createUser({ username: 'owner', password: 'owner-pass-1234', isSuperuser: true });
  const owner = await app.users.tokenFor('owner');
  db = `${app.prefix}fuzz`;
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token: owner, body: { database: db } })).status).toBe(201);
  for (const collection of ['readable', 'samples']) {
    expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token: owner, body: { collection } })).status).toBe(201);
    expect(
      (
        await call(app.url, 'POST', `/api/data_store/data/${db}/${collection}/`, {
          token: owner,
          body: [{ n: 1 }, { n: 2, nested: [[1, 2]] }],
        })
      ).status,
    ).toBe(201);
  }
  // May read one collection and nothing else: any write it manages is a finding.
  await app.users.createUser({ username: 'reader', password: 'reader-pass-123', permissions: [`data_store.${db}.readable.safe`] });
  readerToken = await app.users.tokenFor('reader');
});

afterAll(async () => {
  await app?.close();
});

describe('hostile requests', () => {
  it(`${RUNS} generated requests: no 5xx, an error body on every 4xx, nothing written, still healthy`, async () => {
    const mongo = app.ctx.mongo;
    const before = await snapshot(mongo);
    let sent = 0;
    const statuses: Record<number, number> = {};
    await fc.assert(
      fc.asyncProperty(hostileRequest, async (req) => {
        const answer = await send(req);
        sent++;
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        const what = `${req.method} ${req.path} ${JSON.stringify(req.headers)} → ${answer.status} ${answer.body.slice(0, 300)}`;
        expect(answer.status, what).toBeLessThan(500);
        if (answer.status >= 400 && req.method !== 'HEAD') {
          if (answer.contentType.includes('json') && !answer.contentType.includes('javascript')) {
            expect(JSON.parse(answer.body).error?.status, what).toBe(answer.status);
          } else {
            expect(answer.body.length, what).toBeGreaterThan(0);
          }
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: false },
    );
    console.log(`[fuzz] ${sent} requests, statuses ${JSON.stringify(statuses)}`);
    expect(sent).toBeGreaterThanOrEqual(RUNS);
    expect(await snapshot(mongo)).toEqual(before);
    expect((await call(app.url, 'GET', '/api/health/')).status).toBe(200);
  }, 600_000);
});
