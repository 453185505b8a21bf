/**
 * Bad input on every auth endpoint: the documented 4xx with the JSON error body, and nothing
 * changed in the database (users, groups, tokens, permissions and sessions are compared).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type CallOptions, type TestApp } from '../../support/app.js';
import { authSnapshot, closeAndDrop, expectError } from './helpers.js';

let app: TestApp;
let token: string;
/** The cases are listed before the user exists; this stands for its token until the request. */
const TOKEN = '<token of bea>';

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000' });
  await app.users.createUser({ username: 'bea', password: 'bea-pass-1234', email: 'bea@example.org' });
  token = await app.users.tokenFor('bea');
});

afterAll(async () => {
  await closeAndDrop(app);
});

async function snapshot(): Promise<string> {
  const sessions = await app.ctx.serviceDb.collection('sessions').countDocuments();
  return `${await authSnapshot(app)} sessions=${sessions}`;
}

interface Case {
  path: string;
  options: CallOptions;
  status: number;
  code: string;
}

const FORM = 'application/x-www-form-urlencoded';

function casesFor(
  path: string,
  auth: CallOptions,
  goodBody: Record<string, unknown>,
  wrongTypes: Record<string, unknown>[],
  extra: Case[] = [],
): [string, Case][] {
  const all: Case[] = [
    { path, options: { ...auth, rawBody: '{"username": "bea", ' }, status: 400, code: 'malformed_json' },
    { path, options: { ...auth, rawBody: "{'single': 'quotes'}" }, status: 400, code: 'malformed_json' },
    {
      path,
      options: { ...auth, rawBody: JSON.stringify(goodBody), contentType: 'text/plain' },
      status: 415,
      code: 'unsupported_media_type',
    },
    { path, options: { ...auth, rawBody: '<x/>', contentType: 'application/xml' }, status: 415, code: 'unsupported_media_type' },
    { path, options: { ...auth, body: { ...goodBody, extra: 1 } }, status: 400, code: 'unknown_field' },
    { path, options: { ...auth, body: { ...goodBody, is_superuser: true, $where: 'x' } }, status: 400, code: 'unknown_field' },
    { path, options: { ...auth, body: [goodBody] }, status: 400, code: 'invalid_body' },
    { path, options: { ...auth, body: null }, status: 400, code: 'invalid_body' },
    { path, options: { ...auth, body: 'a string' }, status: 400, code: 'invalid_body' },
    { path, options: { ...auth, body: 42 }, status: 400, code: 'invalid_body' },
    ...wrongTypes.map((body) => ({ path, options: { ...auth, body }, status: 400, code: 'invalid_field' })),
    ...extra,
  ];
  return all.map((c) => [
    `${c.path} ${c.options.contentType ?? ''} ${c.options.rawBody ?? JSON.stringify(c.options.body)}`.slice(0, 120),
    c,
  ]);
}

const cases: [string, Case][] = [
  ...casesFor(
    '/api/auth/login/',
    {},
    { username: 'bea', password: 'bea-pass-1234' },
    [
      { username: 'bea' },
      { password: 'bea-pass-1234' },
      { username: 1, password: 'bea-pass-1234' },
      { username: 'bea', password: ['bea-pass-1234'] },
      { username: { $ne: null }, password: { $ne: null } },
      { username: '', password: 'bea-pass-1234' },
      { username: 'x'.repeat(151), password: 'bea-pass-1234' },
    ],
    [{ path: '/api/auth/login/', options: {}, status: 400, code: 'invalid_body' }],
  ),
  ...casesFor(
    '/api/token/',
    {},
    { username: 'bea', password: 'bea-pass-1234' },
    [
      { username: 'bea', password: 12345678 },
      { username: ['bea'], password: 'bea-pass-1234' },
      { username: { $gt: '' }, password: 'bea-pass-1234' },
    ],
    [
      {
        path: '/api/token/',
        options: { rawBody: 'username=bea&password=bea-pass-1234', contentType: FORM },
        status: 415,
        code: 'unsupported_media_type',
      },
      { path: '/api/token/', options: {}, status: 400, code: 'invalid_body' },
    ],
  ),
  ...casesFor('/api/token/refresh/', {}, { refresh: 'x.y.z' }, [{ refresh: 1 }, { refresh: '' }, {}]),
  ...casesFor('/api/token/verify/', {}, { token: 'x.y.z' }, [{ token: false }, { token: { a: 1 } }, {}]),
  ...casesFor(
    '/api/user/',
    { token: TOKEN },
    { first_name: 'B' },
    [{ first_name: 7 }, { email: ['bea@example.org'] }, { 'auth-token': 'yes' }, { password: 1, current_password: 'bea-pass-1234' }],
    [
      {
        path: '/api/user/',
        options: { token: TOKEN, rawBody: 'first_name=B', contentType: FORM },
        status: 415,
        code: 'unsupported_media_type',
      },
      { path: '/api/user/', options: { token: TOKEN }, status: 400, code: 'invalid_body' },
    ],
  ),
  // Logout takes no fields at all (an empty object or no body).
  ...casesFor('/api/auth/logout/', {}, {}, []),
];

describe('bad input on auth endpoints', () => {
  it.each(cases)('%s', async (_name, c) => {
    const before = await snapshot();
    const options = c.options.token === TOKEN ? { ...c.options, token } : c.options;
    const res = await call(app.url, 'POST', c.path, options);
    expectError(res, c.status, c.code);
    expect(await snapshot()).toBe(before);
  });

  it('names the unknown field', async () => {
    const res = await call(app.url, 'POST', '/api/token/', { body: { username: 'bea', password: 'bea-pass-1234', otp: '123' } });
    expect(res.json.error.message).toContain('"otp"');
  });

  it('names the field with the wrong type', async () => {
    const res = await call(app.url, 'POST', '/api/token/refresh/', { body: { refresh: 5 } });
    expect(res.json.error.message).toContain('"refresh"');
    expect(res.json.error.detail.fields[0].field).toBe('refresh');
  });

  it.each([
    ['GET', '/api/token/'],
    ['PUT', '/api/token/refresh/'],
    ['DELETE', '/api/token/verify/'],
    ['PATCH', '/api/auth/login/'],
    ['PUT', '/api/auth/logout/'],
  ])('%s %s → 405', async (method, path) => {
    expectError(await call(app.url, method, path), 405, 'method_not_allowed');
  });

  it('still serves normally afterwards', async () => {
    expect((await call(app.url, 'POST', '/api/token/', { body: { username: 'bea', password: 'bea-pass-1234' } })).status).toBe(200);
  });
});
