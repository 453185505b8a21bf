/**
 * Secrets stay secret: no password hash in any response, and no password (nor token or session
 * id) in the logs, with the service logging at debug level.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type CallResult } from '../../support/app.js';
import { Browser, expectError, startAppWithCapturedLogs, type LoggedApp } from './helpers.js';

const PASSWORD = 'Very-Secret-Pa55word';
const NEW_PASSWORD = 'Even-More-Secret-2024';
const WRONG_PASSWORD = 'Wrong-Guess-Pa55word';

let app: LoggedApp;
const responses: CallResult[] = [];
const record = (res: CallResult): CallResult => {
  responses.push(res);
  return res;
};

beforeAll(async () => {
  app = await startAppWithCapturedLogs({ LOGIN_MAX_FAILURES: '1000' });
  await app.users.createUser({ username: 'logan', password: PASSWORD, email: 'logan@example.org' });
});

afterAll(async () => {
  await app?.close();
});

describe('secrets', () => {
  let apiToken: string;
  let sessionId: string;
  let access: string;

  beforeAll(async () => {
    // Every way in, and the profile in every format.
    const b = new Browser(app.url);
    const page = record(await b.get('/api/auth/login/', { accept: 'text/html' }));
    const csrf = /name="csrfmiddlewaretoken" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
    record(await b.postForm('/api/auth/login/', { username: 'logan', password: WRONG_PASSWORD, csrfmiddlewaretoken: csrf }));
    record(await b.postForm('/api/auth/login/', { username: 'logan', password: PASSWORD, csrfmiddlewaretoken: csrf }));
    // The cookie is `s:<id>.<signature>`, URL-encoded: the id itself is the secret.
    sessionId =
      decodeURIComponent(b.cookies.get('sessionid') ?? '')
        .replace(/^s:/, '')
        .split('.')[0] ?? '';
    record(await new Browser(app.url).postJson('/api/auth/login/', { username: 'logan', password: WRONG_PASSWORD }));
    record(await new Browser(app.url).postJson('/api/auth/login/', { username: 'logan', password: PASSWORD }));
    const jwt = record(await call(app.url, 'POST', '/api/token/', { body: { username: 'logan', password: PASSWORD } }));
    access = jwt.json.access;
    record(await call(app.url, 'POST', '/api/token/refresh/', { body: { refresh: jwt.json.refresh } }));
    for (const format of ['json', 'xml', 'api', 'jsonp']) record(await b.get(`/api/user/?format=${format}`));
    record(await call(app.url, 'GET', '/api/user/', { bearer: access }));
    // Keys are shown only when made: rotate to have one in hand (and exercise the rotation answer).
    apiToken = record(await b.postWithCsrf('/api/user/', { 'auth-token': 'update' })).json.authentication['auth-token'];
    record(
      await call(app.url, 'POST', '/api/user/', { token: apiToken, body: { current_password: WRONG_PASSWORD, password: NEW_PASSWORD } }),
    );
    record(await call(app.url, 'POST', '/api/user/', { token: apiToken, body: { current_password: PASSWORD, password: 'short' } }));
    const changed = record(
      await call(app.url, 'POST', '/api/user/', { token: apiToken, body: { current_password: PASSWORD, password: NEW_PASSWORD } }),
    );
    expect(changed.status, changed.text).toBe(200);
    record(await call(app.url, 'POST', '/api/user/', { token: apiToken, body: { password: NEW_PASSWORD, unknown: 1 } }));
  });

  it('exercised the endpoints (sanity)', () => {
    expect(responses.length).toBeGreaterThan(15);
    expect(responses.some((r) => r.status === 200)).toBe(true);
    expect(responses.some((r) => r.status === 400)).toBe(true);
    expectError(responses.find((r) => r.status === 401) as CallResult, 401, 'invalid_credentials');
  });

  it('never returns a password hash or a password', async () => {
    const stored = (await app.ctx.serviceDb.collection('auth_user').findOne({ username: 'logan' }))?.password as string;
    const [, , , , salt, key] = stored.split('$');
    for (const res of responses) {
      for (const secret of ['scrypt$', salt as string, key as string, PASSWORD, NEW_PASSWORD, WRONG_PASSWORD]) {
        expect(res.text).not.toContain(secret);
      }
    }
  });

  it('never logs passwords, hashes, tokens or session ids (debug level)', () => {
    const logs = app.logLines();
    // The capture works: logins and requests were logged, with the username.
    expect(logs).toContain('"msg":"login succeeded"');
    expect(logs).toContain('"msg":"login failed"');
    expect(logs).toContain('"username":"logan"');
    expect(logs).toMatch(/"msg":"request"/);
    for (const secret of [PASSWORD, NEW_PASSWORD, WRONG_PASSWORD, 'scrypt$', apiToken, access, sessionId]) {
      expect(secret.length).toBeGreaterThan(5);
      expect(logs).not.toContain(secret);
    }
  });
});
