/**
 * Generated hostile requests against every API route and method (fast-check, fixed seed so a
 * failure reproduces): hostile path segments, query parameters, Host and other headers, bodies in
 * every content type and encoding (valid and corrupt gzip/deflate), JSONP callbacks and Extended
 * JSON oddities, anonymous and as a user who may only read one collection. Asserts: no answer
 * of 500 or more, an error body on every 4xx (the JSON one when JSON was the answer), nothing
 * written anywhere, and the same server still healthy at the end. Failures shrink to a minimal
 * request.
 *
 * Extended JSON wrappers ($oid, $date, $numberLong, ..., $symbol, $code, $dbPointer) holding a
 * value of the wrong type, or the wrong type in a part of them, in every place a user can put a
 * value: record writes, filters, projections, sorts and pipeline stages.
 *
 * Beyond the API's own routes: paths from the whole space (any byte percent-encoded or raw,
 * double slashes, dot segments, outside /api too), every aggregation stage a MongoDB-compatible
 * engine knows in every place a stage can stand, raw request lines over a TCP socket (malformed
 * request lines, odd methods and versions, huge headers, bad Content-Length, chunked garbage),
 * and the admin site's forms with prototype-pollution keys.
 *
 * "Nothing written anywhere" is checked over every database of the server, so the service runs
 * on a database engine of this file's own: on the suite's shared engine, test files running side
 * by side write their own databases meanwhile.
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { gzipSync, deflateSync } from 'node:zlib';
import fc from 'fast-check';
import type { MongoClient } from 'mongodb';
import { CACHE_LEASES_COLLECTION } from '../../../src/db/cache-leases.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';
import { startPrivateMongo, type PrivateMongo } from '../../support/private-mongo.js';
import { testServices } from '../../support/services.js';
import { DOCUMENTED_STAGES, INTERNAL_STAGES, VALID_STAGE_EXAMPLES } from '../../support/aggregation-stages.js';
import { adminApiGet, adminApiPost, adminBrowser, ensureRoot, ROOT } from '../admin/support.js';

/**
 * `npm test` sends a fixed sample: the first requests of the same seeded sequence, about a fifth
 * of the full size, which `npm run test:fuzz` (FUZZ_FULL=1) sends. Each FUZZ_*_RUNS overrides.
 */
const FULL = process.env.FUZZ_FULL === '1';
const runs = (name: string, full: number, sample: number): number => Number(process.env[name] ?? (FULL ? full : sample));
const RUNS = runs('FUZZ_RUNS', 5000, 1000);
/** The other properties send fewer requests each: their space is smaller, or each request costs more. */
const PATH_RUNS = runs('FUZZ_PATH_RUNS', 1500, 300);
const RAW_RUNS = runs('FUZZ_RAW_RUNS', 400, 100);
const ADMIN_RUNS = runs('FUZZ_ADMIN_RUNS', 150, 40);
const EJSON_RUNS = runs('FUZZ_EJSON_RUNS', 1000, 200);
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);

let engine: PrivateMongo | undefined;
let app: TestApp;
let readerToken: string;
let ownerToken: string;
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
      { host: target.hostname, port: target.port, method: req.method, path: req.path, headers: req.headers, setHost: false, agent: false },
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
  fc
    .tuple(fc.constantFrom('data_store', 'catalog'), fc.array(segment, { maxLength: 4 }))
    .map(([area, rest]) => ['api', 'explore', area, ...rest]),
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

// --- the whole space of paths ------------------------------------------------------------

/** Any bytes, percent-encoded (invalid UTF-8, NUL, "/", "\\" and "." among them). */
const encodedBytes = fc
  .uint8Array({ minLength: 1, maxLength: 6 })
  .map((bytes) => [...bytes].map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`).join(''));

/** Raw characters a request line can carry as they are (what Node's client lets through: U+0021–U+00FF). */
const rawPathText = fc.string({
  unit: fc.integer({ min: 0x21, max: 0xff }).map((code) => String.fromCharCode(code)),
  maxLength: 12,
});

const anySegment = fc.oneof(
  segment,
  encodedBytes,
  rawPathText.map((t) => t.replace(/[/?#]/g, '')),
  fc.constantFrom(
    '',
    '',
    '.',
    '..',
    '%2e',
    '%2E%2E',
    '.%2e',
    '%2e.',
    '...',
    '%2F',
    '%5C',
    '%00',
    '%',
    '%%',
    '%zz',
    ';',
    'api',
    'admin',
    '*',
  ),
);

const pathPrefix = fc.constantFrom(
  '',
  '/api',
  '/api/admin',
  '/api/admin/api/resources/User',
  '/api/data_store/data',
  '/api/catalog/data',
  '/api/explore/data_store',
  '/api/queue',
  '/api/metrics',
  '/api/auth',
  '/api/health',
  '/frontend',
  '/static',
);

/** A request target anywhere: any segments, joined by one or more slashes, with or without a query. */
const anyPath = fc
  .record({
    prefix: pathPrefix,
    leading: fc.constantFrom('/', '/', '/', '//', '///'),
    segments: fc.array(fc.tuple(anySegment, fc.constantFrom('/', '/', '/', '//')), { maxLength: 5 }),
    query: fc.option(
      fc.oneof(
        rawPathText,
        encodedBytes,
        queryParams.map((q) => new URLSearchParams(q).toString()),
      ),
      { nil: undefined },
    ),
  })
  .map(({ prefix, leading, segments, query }) => {
    const rest = segments.map(([seg, sep]) => `${seg}${sep}`).join('');
    const path = prefix === '' ? `${leading}${rest}` : `${prefix}${leading}${rest}`;
    return query === undefined ? path : `${path}?${query}`;
  });

const pathRequest = fc
  .record({
    method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'OPTIONS', 'DELETE', 'PROPFIND', 'PURGE', 'LINK'),
    path: fc.oneof(
      { weight: 20, arbitrary: anyPath },
      { weight: 1, arbitrary: fc.constantFrom('//', '///', '//a%2f', '*', '//api/', '/./api/../api//') },
    ),
    reader: fc.boolean(),
    accept: fc.constantFrom('application/json', '*/*', 'text/html'),
  })
  .map(({ method, path, reader, accept }): HostileRequest => ({
    method,
    path,
    headers: { host: 'localhost', accept, ...(reader ? { authorization: `Token ${readerToken}` } : {}) },
  }));

// --- every aggregation stage ---------------------------------------------------------------

const STAGE_NAMES = [...DOCUMENTED_STAGES, ...INTERNAL_STAGES];

/** Arguments for a stage: its valid example when it has one, and shapes no stage takes. */
function stageArguments(stage: string): unknown[] {
  const example = VALID_STAGE_EXAMPLES[stage];
  return [...(example === undefined ? [] : [example]), {}, 1, 'readable', [], { x: 1 }, null];
}

/** The places a stage can stand: first, after another, and inside each kind of sub-pipeline. */
const STAGE_PLACEMENTS: [string, (stage: Record<string, unknown>) => unknown[]][] = [
  ['first', (stage) => [stage]],
  ['after $match', (stage) => [{ $match: {} }, stage]],
  ['in $facet', (stage) => [{ $facet: { branch: [stage] } }]],
  ['in $lookup', (stage) => [{ $lookup: { from: 'readable', as: 'joined', pipeline: [stage] } }]],
  ['in $unionWith', (stage) => [{ $unionWith: { coll: 'readable', pipeline: [stage] } }]],
];

// --- raw requests over a TCP socket --------------------------------------------------------

const rawMethod = fc.constantFrom(
  'GET',
  'POST',
  'PUT',
  'DELETE',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'TRACE',
  'CONNECT',
  'PROPFIND',
  'M-SEARCH',
  'BREW',
  'get',
  'G\u0000T',
  '',
  'GET GET',
  'X'.repeat(100),
);

const rawTarget = fc.oneof(
  { weight: 6, arbitrary: anyPath },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '*',
      '//',
      '///',
      '//a%2f',
      'http://localhost/api/',
      'http://evil.example/api/',
      'localhost:80',
      '/api/ x',
      '/api/\u0000',
      '/api/\u00ff\u00fe',
      `/${'a'.repeat(20_000)}`,
      '',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
);

const rawVersion = fc.constantFrom('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 extra', 'HTTP/9.9', '', 'http/1.1', 'HTTP/1');
const lineEnd = fc.constantFrom('\r\n', '\r\n', '\r\n', '\n', '\r');

const rawHeaders = fc.array(
  fc.oneof(
    fc.constantFrom(
      'Content-Length: 5',
      'Content-Length: -1',
      'Content-Length: abc',
      'Content-Length: 99999999999999999999',
      'Content-Length: 1, 2',
      'Transfer-Encoding: chunked',
      'Transfer-Encoding: gzip, chunked',
      'Transfer-Encoding: chunked, identity',
      'Transfer-Encoding: xchunked',
      'Content-Type: application/json',
      'Content-Encoding: gzip',
      'Expect: 100-continue',
      'Connection: upgrade',
      'Upgrade: websocket',
      'No-Colon-Header',
      'Space-Before-Colon : x',
      ' folded continuation',
      'X-Latin1: \u00ff\u00fe',
      'X-Nul: a\u0000b',
      'Host: evil.example',
      'Host: localhost',
      'Authorization: Token x',
      `X-Huge: ${'h'.repeat(20_000)}`,
      `X-Huger: ${'h'.repeat(100_000)}`,
    ),
    fc.tuple(fc.string({ unit: 'binary', maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 20 })).map(([k, v]) => `${k}: ${v}`),
  ),
  { maxLength: 5 },
);

const rawBody = fc.oneof(
  fc.constant(''),
  fc.constantFrom('{"a":1}', '5\r\nhello\r\n0\r\n\r\n', 'zz\r\nhello\r\n0\r\n\r\n', 'ffffffffffffffff\r\nx\r\n', '5\r\nhel', '0\r\n\r\n'),
  fc.string({ unit: 'binary', maxLength: 64 }),
);

const rawRequest = fc
  .record({
    method: rawMethod,
    target: rawTarget,
    version: rawVersion,
    eol: lineEnd,
    host: fc.boolean(),
    headers: rawHeaders,
    body: rawBody,
  })
  .map(({ method, target, version, eol, host, headers, body }) => {
    const lines = [[method, target, version].filter((part) => part !== '').join(' '), ...(host ? ['Host: localhost'] : []), ...headers];
    return Buffer.from(`${lines.join(eol)}${eol}${eol}${body}`, 'latin1');
  });

interface RawAnswer {
  /** Status of the first response, when one came. */
  status: number | undefined;
  text: string;
}

/** Writes the bytes, half-closes, and reads what comes back until the server closes or 10 s pass. */
function sendRaw(bytes: Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const target = new URL(app.url);
    const socket = connect(Number(target.port), target.hostname);
    const chunks: Buffer[] = [];
    const done = () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1];
      resolve({ status: status === undefined ? undefined : Number(status), text });
    };
    socket.setTimeout(10_000, () => {
      socket.destroy();
      reject(new Error(`no end within 10 s: ${JSON.stringify(bytes.subarray(0, 200).toString('latin1'))}`));
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => done()); // reset by the server: no answer, which is fine
    socket.on('close', done);
    socket.write(bytes, () => socket.end());
  });
}

// --- the admin site's forms ------------------------------------------------------------------

const pollutingKey = fc.constantFrom(
  '__proto__.polluted',
  '__proto__',
  'constructor.prototype.polluted',
  'constructor',
  'permissions.__proto__.polluted',
  'groups.constructor.prototype.polluted',
  '__proto__[polluted]',
  'filters.__proto__.polluted',
  'prototype.polluted',
);

const adminForm = fc.record({
  resource: fc.constantFrom('User', 'Group', 'Permission', 'Token'),
  action: fc.constantFrom('new', 'list', 'search'),
  fields: fc.dictionary(
    fc.oneof(
      { weight: 3, arbitrary: pollutingKey },
      { weight: 1, arbitrary: fc.constantFrom('name', 'username', 'email', 'is_staff', 'permissions.0') },
    ),
    fc.constantFrom('polluted', 'true', '1', '', '{"polluted":1}'),
    { minKeys: 1, maxKeys: 4 },
  ),
});

/** Whether anything made `polluted` appear on every object. */
const prototypePolluted = (): boolean => 'polluted' in {} || Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted');

// --- Extended JSON wrappers holding the wrong type ---------------------------------------

/** Values of every JSON type, and wrappers, for the places a wrapper expects something else. */
const wrongOperand = fc.oneof(
  fc.constantFrom<unknown>(
    0,
    1,
    -1,
    1.5,
    2 ** 53 + 2,
    true,
    false,
    null,
    '',
    'x',
    'zz',
    '2024-01-01',
    '65a1b2c3d4e5f60718293a4b',
    [],
    [1, 'a'],
    {},
    { x: 1 },
    { $oid: 'zz' },
    { $numberLong: '1' },
    { $symbol: 5 },
  ),
  fc.jsonValue({ maxDepth: 2 }),
);

/**
 * Every Extended JSON wrapper, each with its operand (or a part of it, for the wrappers that
 * hold an object) taken from `operand`: `{"$symbol": 5}`, `{"$timestamp": {"t": "x", "i": 1}}`, ...
 */
const WRONG_WRAPPERS: [string, (operand: unknown) => unknown][] = [
  ...[
    '$oid',
    '$date',
    '$numberInt',
    '$numberLong',
    '$numberDouble',
    '$numberDecimal',
    '$binary',
    '$uuid',
    '$timestamp',
    '$regularExpression',
    '$regex',
    '$symbol',
    '$code',
    '$dbPointer',
    '$minKey',
    '$maxKey',
    '$undefined',
  ].map((key): [string, (operand: unknown) => unknown] => [key, (operand) => ({ [key]: operand })]),
  ['$date.$numberLong', (operand) => ({ $date: { $numberLong: operand } })],
  ['$binary.base64', (operand) => ({ $binary: { base64: operand, subType: '00' } })],
  ['$binary.subType', (operand) => ({ $binary: { base64: 'AQID', subType: operand } })],
  ['$binary+$type', (operand) => ({ $binary: 'AQID', $type: operand })],
  ['$timestamp.t', (operand) => ({ $timestamp: { t: operand, i: 1 } })],
  ['$timestamp.i', (operand) => ({ $timestamp: { t: 1, i: operand } })],
  ['$regularExpression.pattern', (operand) => ({ $regularExpression: { pattern: operand, options: '' } })],
  ['$regularExpression.options', (operand) => ({ $regularExpression: { pattern: 'a', options: operand } })],
  ['$regex+$options', (operand) => ({ $regex: 'a', $options: operand })],
  ['$code+$scope', (operand) => ({ $code: 'x', $scope: operand })],
  ['$dbPointer.$ref', (operand) => ({ $dbPointer: { $ref: operand, $id: { $oid: '65a1b2c3d4e5f60718293a4b' } } })],
  ['$dbPointer.$id', (operand) => ({ $dbPointer: { $ref: 'c', $id: operand } })],
];

/** A request that carries a value somewhere a user can put one. `writes`: it may store a record. */
interface Placement {
  method: string;
  /** Path and query under the collection's URL, and the body, for the value `w`. */
  build: (w: unknown) => { query?: string; body?: unknown; record?: boolean };
  writes: boolean;
}

const asQuery = (value: unknown) => `?query=${encodeURIComponent(JSON.stringify(value))}`;
const asPipeline = (value: unknown) => `?aggregate=${encodeURIComponent(JSON.stringify(value))}`;

const EJSON_PLACEMENTS: [string, Placement][] = [
  ['insert', { method: 'POST', build: (w) => ({ body: { v: w } }), writes: true }],
  ['insert as _id', { method: 'POST', build: (w) => ({ body: { _id: w } }), writes: true }],
  ['insert in an array of records', { method: 'POST', build: (w) => ({ body: [{ n: 1 }, { a: [{ b: w }] }] }), writes: true }],
  ['PUT', { method: 'PUT', build: (w) => ({ body: { v: w }, record: true }), writes: true }],
  ['PATCH $set', { method: 'PATCH', build: (w) => ({ body: { $set: { v: w } }, record: true }), writes: true }],
  ['PATCH $push', { method: 'PATCH', build: (w) => ({ body: { $push: { list: w } }, record: true }), writes: true }],
  ['filter', { method: 'GET', build: (w) => ({ query: asQuery({ filter: { v: w } }) }), writes: false }],
  ['filter on _id', { method: 'GET', build: (w) => ({ query: asQuery({ filter: { _id: w } }) }), writes: false }],
  ['filter $gt', { method: 'GET', build: (w) => ({ query: asQuery({ filter: { v: { $gt: w } } }) }), writes: false }],
  ['filter $in', { method: 'GET', build: (w) => ({ query: asQuery({ filter: { v: { $in: [w] } } }) }), writes: false }],
  ['filter $and', { method: 'GET', build: (w) => ({ query: asQuery({ filter: { $and: [{ v: w }] } }) }), writes: false }],
  ['filter $expr', { method: 'GET', build: (w) => ({ query: asQuery({ filter: { $expr: { $eq: ['$v', w] } } }) }), writes: false }],
  ['projection', { method: 'GET', build: (w) => ({ query: asQuery({ projection: { v: w } }) }), writes: false }],
  ['sort', { method: 'GET', build: (w) => ({ query: asQuery({ sort: { v: w } }) }), writes: false }],
  ['$match', { method: 'GET', build: (w) => ({ query: asPipeline([{ $match: { v: w } }]) }), writes: false }],
  ['$project', { method: 'GET', build: (w) => ({ query: asPipeline([{ $project: { x: w } }]) }), writes: false }],
  ['$literal', { method: 'GET', build: (w) => ({ query: asPipeline([{ $project: { x: { $literal: w } } }]) }), writes: false }],
  ['$addFields', { method: 'GET', build: (w) => ({ query: asPipeline([{ $addFields: { x: w } }]) }), writes: false }],
  ['$group _id', { method: 'GET', build: (w) => ({ query: asPipeline([{ $group: { _id: w } }]) }), writes: false }],
  ['$sort', { method: 'GET', build: (w) => ({ query: asPipeline([{ $sort: { v: w } }]) }), writes: false }],
  ['$limit', { method: 'GET', build: (w) => ({ query: asPipeline([{ $limit: w }]) }), writes: false }],
  ['$skip', { method: 'GET', build: (w) => ({ query: asPipeline([{ $skip: w }]) }), writes: false }],
  ['$unwind', { method: 'GET', build: (w) => ({ query: asPipeline([{ $unwind: w }]) }), writes: false }],
  [
    '$bucket',
    { method: 'GET', build: (w) => ({ query: asPipeline([{ $bucket: { groupBy: '$n', boundaries: [w, 10] } }]) }), writes: false },
  ],
  ['$facet $match', { method: 'GET', build: (w) => ({ query: asPipeline([{ $facet: { f: [{ $match: { v: w } }] } }]) }), writes: false }],
  [
    '$lookup pipeline',
    {
      method: 'GET',
      build: (w) => ({ query: asPipeline([{ $lookup: { from: 'readable', as: 'j', pipeline: [{ $match: { v: w } }] } }]) }),
      writes: false,
    },
  ],
];

// --- what must not change ----------------------------------------------------------------

/**
 * Every database, collection and document count the server holds (sessions aside), but for the
 * leases of its caches: any request that reaches an existing collection or an account records one.
 */
async function snapshot(client: MongoClient): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const { databases } = await client.db('admin').admin().listDatabases({ nameOnly: true });
  for (const { name } of databases) {
    if (['admin', 'local', 'config'].includes(name)) continue;
    for (const { name: col } of await client.db(name).listCollections({}, { nameOnly: true }).toArray()) {
      if (col === CACHE_LEASES_COLLECTION) continue;
      out[`${name}.${col}`] = await client.db(name).collection(col).countDocuments();
    }
  }
  return out;
}

beforeAll(async () => {
  const services = testServices();
  engine = await startPrivateMongo({
    dir: join(services.stateDir, uniqueName('fuzz-')),
    certDir: services.certDir,
    username: 'fuzz',
    password: `pw-${uniqueName('')}-${uniqueName('')}`,
  });
  app = await startTestApp(engine.env());
  await app.users.createUser({ username: 'owner', password: 'owner-pass-1234', isSuperuser: true });
  const owner = await app.users.tokenFor('owner');
  ownerToken = owner;
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
  await engine?.stop();
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

/** The contract every answer keeps: below 500, and an error body with every 4xx. */
function expectWellFormed(what: string, answer: Answer, method: string): void {
  expect(answer.status, what).toBeLessThan(500);
  if (answer.status >= 400 && method !== 'HEAD') {
    if (answer.contentType.includes('json') && !answer.contentType.includes('javascript')) {
      expect(JSON.parse(answer.body).error?.status, what).toBe(answer.status);
    } else {
      expect(answer.body.length, what).toBeGreaterThan(0);
    }
  }
}

describe('paths from the whole space', () => {
  it('answers the paths that once failed with a client error', async () => {
    for (const path of ['//', '///', '//a%2f']) {
      const answer = await send({ method: 'GET', path, headers: { host: 'localhost', accept: 'application/json' } });
      expectWellFormed(`GET ${path} → ${answer.status} ${answer.body.slice(0, 200)}`, answer, 'GET');
    }
  });

  it(`${PATH_RUNS} generated paths anywhere: no 5xx, an error body on every 4xx, nothing written`, async () => {
    const before = await snapshot(app.ctx.mongo);
    const statuses: Record<number, number> = {};
    await fc.assert(
      fc.asyncProperty(pathRequest, async (req) => {
        const answer = await send(req);
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        expectWellFormed(
          `${req.method} ${JSON.stringify(req.path)} ${JSON.stringify(req.headers)} → ${answer.status} ${answer.body.slice(0, 300)}`,
          answer,
          req.method,
        );
      }),
      { numRuns: PATH_RUNS, seed: SEED, endOnFailure: false },
    );
    console.log(`[fuzz paths] statuses ${JSON.stringify(statuses)}`);
    expect(await snapshot(app.ctx.mongo)).toEqual(before);
  }, 600_000);
});

describe('Extended JSON wrappers holding the wrong type', () => {
  const scratch = 'ejson';
  let recordPath: string;

  beforeAll(async () => {
    expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token: ownerToken, body: { collection: scratch } })).status).toBe(
      201,
    );
    const kept = await call(app.url, 'POST', `/api/data_store/data/${db}/${scratch}/`, { token: ownerToken, body: { _id: 'kept', v: 1 } });
    expect(kept.status).toBe(201);
    recordPath = `/api/data_store/data/${db}/${scratch}/kept/`;
  });

  /** Sends the value in that place; a refused write must have written nothing. */
  async function place(name: string, placement: Placement, wrapper: unknown): Promise<number> {
    const { query, body, record } = placement.build(wrapper);
    const path = record === true ? recordPath : `/api/data_store/data/${db}/${placement.writes ? scratch : 'readable'}/${query ?? ''}`;
    // Regular expressions as stored: a pattern JavaScript cannot compile is valid input.
    const records = app.ctx.mongo.db(db).collection(scratch, { bsonRegExp: true });
    const before = placement.writes ? JSON.stringify(await records.find().sort({ _id: 1 }).toArray()) : '';
    const answer = await send({
      method: placement.method,
      path,
      headers: {
        host: 'localhost',
        accept: 'application/json',
        authorization: `Token ${ownerToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: Buffer.from(JSON.stringify(body)) }),
    });
    const what = `${name}: ${JSON.stringify(wrapper)} → ${answer.status} ${answer.body.slice(0, 300)}`;
    expectWellFormed(what, answer, placement.method);
    if (placement.writes && answer.status >= 400) {
      expect(JSON.stringify(await records.find().sort({ _id: 1 }).toArray()), what).toBe(before);
    }
    return answer.status;
  }

  it(`every wrapper holding a number and an object, in every place: no 5xx, and a refused write writes nothing`, async () => {
    const statuses: Record<number, number> = {};
    for (const [placeName, placement] of EJSON_PLACEMENTS) {
      for (const [wrapperName, wrap] of WRONG_WRAPPERS) {
        for (const operand of [5, {}]) {
          const status = await place(`${wrapperName} in ${placeName}`, placement, wrap(operand));
          statuses[status] = (statuses[status] ?? 0) + 1;
        }
      }
    }
    console.log(`[fuzz ejson places] statuses ${JSON.stringify(statuses)}`);
    expect((await call(app.url, 'GET', '/api/health/')).status).toBe(200);
  }, 600_000);

  it(`${EJSON_RUNS} generated wrappers holding values of every type, in every place: no 5xx, and a refused write writes nothing`, async () => {
    const statuses: Record<number, number> = {};
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...EJSON_PLACEMENTS),
        fc.constantFrom(...WRONG_WRAPPERS),
        wrongOperand,
        async ([placeName, placement], [wrapperName, wrap], operand) => {
          const status = await place(`${wrapperName} in ${placeName}`, placement, wrap(operand));
          statuses[status] = (statuses[status] ?? 0) + 1;
        },
      ),
      { numRuns: EJSON_RUNS, seed: SEED, endOnFailure: false },
    );
    console.log(`[fuzz ejson] statuses ${JSON.stringify(statuses)}`);
    expect((await call(app.url, 'GET', '/api/health/')).status).toBe(200);
  }, 600_000);
});

describe('every aggregation stage', () => {
  it(`${STAGE_NAMES.length} stage names, in every place a stage stands, with every kind of argument: run or refused with a 4xx`, async () => {
    const before = await snapshot(app.ctx.mongo);
    const outcomes: Record<string, Set<number>> = {};
    const failures: string[] = [];
    for (const stage of STAGE_NAMES) {
      for (const [place, build] of STAGE_PLACEMENTS) {
        for (const argument of stageArguments(stage)) {
          const pipeline = build({ [stage]: argument });
          const path = `/api/data_store/data/${db}/readable/?aggregate=${encodeURIComponent(JSON.stringify(pipeline))}`;
          for (const token of [ownerToken, readerToken]) {
            const answer = await send({
              method: 'GET',
              path,
              headers: { host: 'localhost', accept: 'application/json', authorization: `Token ${token}` },
            });
            (outcomes[stage] ??= new Set()).add(answer.status);
            // Every failure is listed at the end, not just the first.
            if (answer.status >= 500) failures.push(`${stage} ${place} ${JSON.stringify(pipeline)} → ${answer.status}`);
            else
              expectWellFormed(
                `${stage} ${place} ${JSON.stringify(pipeline)} → ${answer.status} ${answer.body.slice(0, 300)}`,
                answer,
                'GET',
              );
          }
        }
      }
    }
    console.log(`[fuzz stages] ${JSON.stringify(Object.fromEntries(Object.entries(outcomes).map(([k, v]) => [k, [...v]])))}`);
    expect(failures).toEqual([]);
    expect(await snapshot(app.ctx.mongo)).toEqual(before);
  }, 600_000);

  it('answers each allowed stage given a valid argument', async () => {
    for (const [stage, argument] of Object.entries(VALID_STAGE_EXAMPLES)) {
      const path = `/api/data_store/data/${db}/readable/?aggregate=${encodeURIComponent(JSON.stringify([{ [stage]: argument }]))}`;
      const answer = await send({
        method: 'GET',
        path,
        headers: { host: 'localhost', accept: 'application/json', authorization: `Token ${ownerToken}` },
      });
      // An engine that lacks a stage says so with a 400; it never fails on the server.
      expect([200, 400], `${stage} → ${answer.status} ${answer.body.slice(0, 300)}`).toContain(answer.status);
      if (answer.status === 400) expect(JSON.parse(answer.body).error.code, stage).toBe('invalid_query');
    }
  });
});

describe('raw requests over a socket', () => {
  it(`${RAW_RUNS} generated request lines, headers and framings: no 5xx, and the server stays up`, async () => {
    const statuses: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(rawRequest, async (bytes) => {
        const answer = await sendRaw(bytes);
        const key = String(answer.status ?? 'none');
        statuses[key] = (statuses[key] ?? 0) + 1;
        const what = `${JSON.stringify(bytes.subarray(0, 300).toString('latin1'))} → ${answer.text.slice(0, 300)}`;
        if (answer.status !== undefined) expect(answer.status, what).toBeLessThan(500);
      }),
      { numRuns: RAW_RUNS, seed: SEED, endOnFailure: false },
    );
    console.log(`[fuzz raw] statuses ${JSON.stringify(statuses)}`);
    expect((await call(app.url, 'GET', '/api/health/')).status).toBe(200);
  }, 600_000);
});

describe("the admin site's forms with prototype-pollution keys", () => {
  it('answers __proto__.x and constructor.prototype.x below 500 and pollutes nothing', async () => {
    await ensureRoot(app);
    const browser = await adminBrowser(app, ROOT.username, ROOT.password);
    const forms: Record<string, string>[] = [
      { name: 'g-proto', '__proto__.polluted': 'yes' },
      { name: 'g-ctor', 'constructor.prototype.polluted': 'yes' },
    ];
    for (const fields of forms) {
      const res = await adminApiPost(browser, '/resources/Group/actions/new', fields);
      expect(res.status, `${JSON.stringify(fields)} → ${res.status} ${res.text.slice(0, 300)}`).toBeLessThan(500);
      expect(prototypePolluted()).toBe(false);
    }
    const list = await adminApiGet(
      browser,
      '/resources/User/actions/list?filters.__proto__.polluted=yes&filters.constructor.prototype.polluted=yes',
    );
    expect(list.status, list.text.slice(0, 300)).toBeLessThan(500);
    expect(prototypePolluted()).toBe(false);
  });

  it(`${ADMIN_RUNS} generated admin forms and list filters: no 5xx, no polluted prototype`, async () => {
    await ensureRoot(app);
    const browser = await adminBrowser(app, ROOT.username, ROOT.password);
    await fc.assert(
      fc.asyncProperty(adminForm, async ({ resource, action, fields }) => {
        const res =
          action === 'new'
            ? await adminApiPost(browser, `/resources/${resource}/actions/new`, fields)
            : await adminApiGet(
                browser,
                `/resources/${resource}/actions/${action}?${new URLSearchParams(Object.entries(fields).map(([k, v]) => [action === 'list' ? `filters.${k}` : k, v])).toString()}`,
              );
        expect(res.status, `${resource} ${action} ${JSON.stringify(fields)} → ${res.status} ${res.text.slice(0, 300)}`).toBeLessThan(500);
        expect(prototypePolluted()).toBe(false);
      }),
      { numRuns: ADMIN_RUNS, seed: SEED, endOnFailure: false },
    );
  }, 600_000);
});
