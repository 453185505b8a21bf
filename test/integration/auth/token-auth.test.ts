/** API token authentication: `Authorization: Token <key>`, rotation, inactive users, CSRF exemption. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { closeAndDrop, expectError } from './helpers.js';

let app: TestApp;
let token: string;

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000' });
  await app.users.createUser({ username: 'tina', password: 'tina-pass-123', email: 'tina@example.org' });
  token = await app.users.tokenFor('tina');
});

afterAll(async () => {
  await closeAndDrop(app);
});

describe('Token authentication', () => {
  it('authenticates with a valid key', async () => {
    const res = await call(app.url, 'GET', '/api/user/', { token });
    expect(res.status, res.text).toBe(200);
    expect(res.json.username).toBe('tina');
    // The key is shown only when it is made: here the profile shows its prefix.
    expect(res.json.authentication['auth-token']).toBeNull();
    expect(res.json.authentication['auth-token-prefix']).toBe(token.slice(0, 8));
  });

  it('gives each user one 40-hex key; issuing a new one ends the old one', async () => {
    expect(token).toMatch(/^[0-9a-f]{40}$/);
    await app.users.createUser({ username: 'twice', password: 'twice-pass-123' });
    const first = await app.users.tokenFor('twice');
    const second = await app.users.tokenFor('twice');
    expect(second).not.toBe(first);
    expectError(await call(app.url, 'GET', '/api/user/', { token: first }), 401, 'invalid_token');
    expect((await call(app.url, 'GET', '/api/user/', { token: second })).status).toBe(200);
    expect(
      await app.ctx.serviceDb
        .collection('authtoken_token')
        .countDocuments({ user: (await app.ctx.serviceDb.collection('auth_user').findOne({ username: 'twice' }))?._id }),
    ).toBe(1);
  });

  it('accepts the scheme in any case', async () => {
    const res = await call(app.url, 'GET', '/api/user/', { headers: { authorization: `token ${token}` } });
    expect(res.status).toBe(200);
  });

  it('refuses an unknown key with 401 invalid_token', async () => {
    const res = await call(app.url, 'GET', '/api/user/', { token: 'f'.repeat(40) });
    expectError(res, 401, 'invalid_token');
    expect(res.headers.get('www-authenticate')).toBe('Token');
  });

  it('refuses an unknown key even where anonymous access would be fine', async () => {
    expectError(await call(app.url, 'GET', '/api/auth/login/', { token: 'nope' }), 401, 'invalid_token');
  });

  it.each([
    ['no key', 'Token'],
    ['two parts', `Token ${'a'.repeat(40)} extra`],
    ['an overlong key', `Token ${'a'.repeat(300)}`],
  ])('refuses a malformed header (%s)', async (_name, header) => {
    expectError(await call(app.url, 'GET', '/api/user/', { headers: { authorization: header } }), 401, 'invalid_token');
  });

  it('ignores other schemes (the request is anonymous)', async () => {
    const res = await call(app.url, 'GET', '/api/user/', { headers: { authorization: 'Basic dGluYTp0aW5hLXBhc3MtMTIz' } });
    expectError(res, 401, 'not_authenticated');
  });

  it('answers 401 to anonymous profile requests', async () => {
    const res = await call(app.url, 'GET', '/api/user/');
    expectError(res, 401, 'not_authenticated');
    expect(res.headers.get('www-authenticate')).toBe('Token');
  });

  it('exempts token requests from CSRF', async () => {
    const res = await call(app.url, 'POST', '/api/user/', { token, body: { first_name: 'Tina' } });
    expect(res.status, res.text).toBe(200);
    expect(res.json.first_name).toBe('Tina');
  });

  it('refuses inactive users', async () => {
    await app.users.createUser({ username: 'sleepy', password: 'sleepy-pass-123', isActive: false });
    const sleepyToken = await app.users.tokenFor('sleepy');
    const res = await call(app.url, 'GET', '/api/user/', { token: sleepyToken });
    expectError(res, 401, 'user_inactive');
  });

  it('rotates the token: the old key is refused, the new one accepted', async () => {
    await app.users.createUser({ username: 'rota', password: 'rota-pass-123' });
    const oldKey = await app.users.tokenFor('rota');
    expect((await call(app.url, 'GET', '/api/user/', { token: oldKey })).status).toBe(200); // now cached
    const rotated = await call(app.url, 'POST', '/api/user/', { token: oldKey, body: { 'auth-token': 'update' } });
    expect(rotated.status, rotated.text).toBe(200);
    const newKey = rotated.json.authentication['auth-token'] as string;
    expect(newKey).toMatch(/^[0-9a-f]{40}$/);
    expect(newKey).not.toBe(oldKey);
    expectError(await call(app.url, 'GET', '/api/user/', { token: oldKey }), 401, 'invalid_token');
    const again = await call(app.url, 'GET', '/api/user/', { token: newKey });
    expect(again.status).toBe(200);
    expect(again.json.authentication['auth-token']).toBeNull();
    expect(again.json.authentication['auth-token-prefix']).toBe(newKey.slice(0, 8));
  });

  it('sees permission grants at once (cache dropped on change)', async () => {
    await app.users.createUser({ username: 'granted', password: 'granted-pass-1' });
    const key = await app.users.tokenFor('granted');
    expect((await call(app.url, 'GET', '/api/user/', { token: key })).status).toBe(200);
    await app.users.grantPermissions('granted', ['data_store.gdb.safe']);
    const principal = await app.users.principalFor('granted');
    expect([...principal.permissions]).toEqual(['data_store.gdb.safe']);
  });
});
