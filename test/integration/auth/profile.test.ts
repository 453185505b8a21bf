/** /api/user/: the profile's shape and every change a user may make to it. */
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { Browser, authSnapshot, closeAndDrop, expectError } from './helpers.js';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000' });
  await app.users.createGroup('scientists', ['data_store.lab.safe']);
  await app.users.createGroup('admins', ['cybercom_queue.task_admin']);
  await app.users.createUser({
    username: 'ada',
    password: 'ada-pass-1234',
    email: 'ada@example.org',
    firstName: 'Ada',
    lastName: 'Lovelace',
    groups: ['scientists', 'admins'],
  });
});

afterAll(async () => {
  await closeAndDrop(app);
});

describe('GET /api/user/', () => {
  it('has the documented shape with absolute JWT URLs and the token created on first use', async () => {
    expect(await app.ctx.serviceDb.collection('authtoken_token').countDocuments()).toBe(0);
    const b = new Browser(app.url);
    await b.loginJson('ada', 'ada-pass-1234');
    const res = await b.get('/api/user/');
    expect(res.status).toBe(200);
    // The first read creates the token, and its answer is the one place the key appears.
    const token = res.json.authentication['auth-token'] as string;
    expect(token).toMatch(/^[0-9a-f]{40}$/);
    const stored = await app.ctx.serviceDb.collection('authtoken_token').findOne({});
    expect(stored?.key_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(res.json).toEqual({
      username: 'ada',
      email: 'ada@example.org',
      first_name: 'Ada',
      last_name: 'Lovelace',
      name: 'Ada Lovelace',
      groups: ['admins', 'scientists'],
      authentication: {
        'auth-token': token,
        'auth-token-prefix': token.slice(0, 8),
        'auth-token-note': expect.stringContaining('{"auth-token": "update"}'),
        'jwt-auth': {
          'obtain-token': `${app.url}/api/token/`,
          'refresh-token': `${app.url}/api/token/refresh/`,
          'verify-token': `${app.url}/api/token/verify/`,
        },
      },
    });
    const again = (await b.get('/api/user/')).json.authentication;
    expect(again['auth-token']).toBeNull();
    expect(again['auth-token-prefix']).toBe(token.slice(0, 8));
  });

  it('uses the Host the client sent for the links', async () => {
    const token = await app.users.tokenFor('ada');
    const port = new URL(app.url).port;
    // fetch() does not let a caller set Host, so this one goes through node:http.
    const body = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          path: '/api/user/',
          headers: { host: `localhost:${port}`, authorization: `Token ${token}`, accept: 'application/json' },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(JSON.parse(body).authentication['jwt-auth']['obtain-token']).toBe(`http://localhost:${port}/api/token/`);
  });

  it('renders as the browsable page for browsers', async () => {
    const token = await app.users.tokenFor('ada');
    const res = await call(app.url, 'GET', '/api/user/', { token, accept: 'text/html' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.text).toContain('ada@example.org');
  });

  it('answers 405 with Allow for other methods', async () => {
    const token = await app.users.tokenFor('ada');
    const res = await call(app.url, 'DELETE', '/api/user/', { token });
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toContain('POST');
  });
});

describe('POST /api/user/', () => {
  let token: string;
  beforeAll(async () => {
    await app.users.createUser({ username: 'grace', password: 'grace-pass-123', email: 'grace@example.org' });
    token = await app.users.tokenFor('grace');
  });

  it('updates first_name, last_name and email', async () => {
    const res = await call(app.url, 'POST', '/api/user/', {
      token,
      body: { first_name: 'Grace', last_name: 'Hopper', email: 'g.hopper@example.org' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ first_name: 'Grace', last_name: 'Hopper', name: 'Grace Hopper', email: 'g.hopper@example.org' });
    const doc = await app.ctx.serviceDb.collection('auth_user').findOne({ username: 'grace' });
    expect(doc).toMatchObject({ first_name: 'Grace', last_name: 'Hopper', email: 'g.hopper@example.org' });
  });

  it.each([
    [{ email: 'not an address' }, 'invalid_email'],
    [{ email: 'a@b' }, 'invalid_email'],
    [{ first_name: 'x'.repeat(151) }, 'invalid_field'],
    [{ first_name: 42 }, 'invalid_field'],
    [{ email: null }, 'invalid_field'],
    [{ 'auth-token': 'rotate' }, 'invalid_field'],
    [{ 'auth-token': true }, 'invalid_field'],
    [{ username: 'root' }, 'unknown_field'],
    [{ is_superuser: true }, 'unknown_field'],
    [{ first_name: 'Ok', groups: ['admins'] }, 'unknown_field'],
    [{ password: 'NewPass-2024' }, 'invalid_field'],
    [{ current_password: 'grace-pass-123' }, 'invalid_field'],
    [{}, 'invalid_body'],
    [[], 'invalid_body'],
    ['text', 'invalid_body'],
  ])('refuses %j with 400 %s and changes nothing', async (body, code) => {
    const before = await authSnapshot(app);
    const res = await call(app.url, 'POST', '/api/user/', { token, body });
    expectError(res, 400, code);
    expect(await authSnapshot(app)).toBe(before);
  });

  it('names the unknown key', async () => {
    const res = await call(app.url, 'POST', '/api/user/', { token, body: { is_staff: true } });
    expect(res.json.error.message).toContain('"is_staff"');
    expect(res.json.error.detail).toEqual({ fields: ['is_staff'] });
  });

  it('applies nothing when one part of a combined change is invalid', async () => {
    const before = await authSnapshot(app);
    const res = await call(app.url, 'POST', '/api/user/', {
      token,
      body: { first_name: 'Changed', 'auth-token': 'update', current_password: 'grace-pass-123', password: 'short' },
    });
    expectError(res, 400, 'weak_password');
    expect(await authSnapshot(app)).toBe(before);
  });
});

describe('password change', () => {
  it('needs the right current password and a strong new one', async () => {
    await app.users.createUser({ username: 'linus', password: 'linus-pass-123' });
    const token = await app.users.tokenFor('linus');
    const before = await authSnapshot(app);
    expectError(
      await call(app.url, 'POST', '/api/user/', { token, body: { current_password: 'nope-nope-1', password: 'Better-pass-2024' } }),
      400,
      'wrong_password',
    );
    const weak = await call(app.url, 'POST', '/api/user/', { token, body: { current_password: 'linus-pass-123', password: 'linus' } });
    expectError(weak, 400, 'weak_password');
    expect(weak.json.error.detail.reasons.map((r: { code: string }) => r.code)).toEqual(['too_short', 'same_as_username']);
    expectError(
      await call(app.url, 'POST', '/api/user/', { token, body: { current_password: 'linus-pass-123', password: 'password123' } }),
      400,
      'weak_password',
    );
    expect(await authSnapshot(app)).toBe(before);
  });

  it('changes the password: old refused, new accepted, the API token replaced (new key in the answer)', async () => {
    await app.users.createUser({ username: 'ken', password: 'ken-pass-1234' });
    const token = await app.users.tokenFor('ken');
    const res = await call(app.url, 'POST', '/api/user/', {
      token,
      body: { current_password: 'ken-pass-1234', password: 'Unix-since-1969' },
    });
    expect(res.status, res.text).toBe(200);
    expectError(
      await call(app.url, 'POST', '/api/token/', { body: { username: 'ken', password: 'ken-pass-1234' } }),
      401,
      'invalid_credentials',
    );
    expectError(
      await new Browser(app.url).postJson('/api/auth/login/', { username: 'ken', password: 'ken-pass-1234' }),
      401,
      'invalid_credentials',
    );
    expect((await call(app.url, 'POST', '/api/token/', { body: { username: 'ken', password: 'Unix-since-1969' } })).status).toBe(200);
    const newKey = res.json.authentication['auth-token'] as string;
    expect(newKey).toMatch(/^[0-9a-f]{40}$/);
    expect(newKey).not.toBe(token);
    expect((await call(app.url, 'GET', '/api/user/', { token: newKey })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2_100)); // a process may have cached the old key for 2 s
    expectError(await call(app.url, 'GET', '/api/user/', { token }), 401, 'invalid_token');
    const doc = await app.ctx.serviceDb.collection('auth_user').findOne({ username: 'ken' });
    expect(doc?.password).toMatch(/^scrypt\$32768\$8\$1\$/);
  });

  it('keeps the session that changed it and ends every other session', async () => {
    await app.users.createUser({ username: 'dennis', password: 'dennis-pass-1' });
    const here = new Browser(app.url);
    const elsewhere = new Browser(app.url);
    await here.loginJson('dennis', 'dennis-pass-1');
    await elsewhere.loginJson('dennis', 'dennis-pass-1');
    const res = await here.postWithCsrf('/api/user/', { current_password: 'dennis-pass-1', password: 'C-language-1972' });
    expect(res.status, res.text).toBe(200);
    expect((await here.get('/api/user/')).status).toBe(200);
    expectError(await elsewhere.get('/api/user/'), 401, 'not_authenticated');
  });
});

describe('token rotation through the profile', () => {
  it('rotates with {"auth-token": "update"} from a session', async () => {
    await app.users.createUser({ username: 'rot', password: 'rot-pass-1234' });
    const oldKey = await app.users.tokenFor('rot');
    const b = new Browser(app.url);
    await b.loginJson('rot', 'rot-pass-1234');
    const res = await b.postWithCsrf('/api/user/', { 'auth-token': 'update' });
    expect(res.status, res.text).toBe(200);
    const newKey = res.json.authentication['auth-token'];
    expect(newKey).not.toBe(oldKey);
    expectError(await call(app.url, 'GET', '/api/user/', { token: oldKey }), 401, 'invalid_token');
    expect((await call(app.url, 'GET', '/api/user/', { token: newKey })).status).toBe(200);
  });
});
