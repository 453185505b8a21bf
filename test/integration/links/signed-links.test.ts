/**
 * Signed links through the real server and engine (docs/api-behaviour.md, "Signed links"): they
 * reach record reads only — never /api/user/, which would hand the link's holder a new API token —
 * and they die with the credentials they were made under: a password change, an administrator's
 * reset (admin site or CLI), a token rotation or revocation, a deactivation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsStamp } from '../../../src/auth/credentials-stamp.js';
import { LinkSigner } from '../../../src/links/link-token.js';
import { call, startTestApp, TEST_SECRET_KEY, uniqueName, type TestApp } from '../../support/app.js';
import { closeAndDrop, expectError, sleep } from '../auth/helpers.js';
import { adminApiPost, adminApiPostJson, adminBrowser, ensureRoot, ROOT, userId, type Browser } from '../admin/support.js';

let app: TestApp;
let su: string;
let root: Browser;
let db: string;
let catalogDb: string;

const q = (value: unknown) => encodeURIComponent(JSON.stringify(value));
const stations = () => `/api/data_store/data/${db}/stations/`;
const csvPath = () => `${stations()}?format=csv&query=${q({ filter: { elev: 194 } })}&fields=name`;

async function makeLink(token: string, path: string): Promise<string> {
  const made = await call(app.url, 'POST', '/api/links/', { token, body: { path, expires_in: 600 } });
  expect(made.status, made.text).toBe(201);
  return (made.json as { url: string }).url;
}

/** A user allowed to read the stations, with a fresh API token; `password` is theirs. */
async function reader(password = 'reader-pass-123'): Promise<{ username: string; token: string; password: string }> {
  const username = uniqueName('reader');
  await app.users.createUser({ username, password, permissions: [`data_store.${db}.stations.safe`, `catalog.${catalogDb}.datasets.safe`] });
  return { username, token: await app.users.tokenFor(username), password };
}

async function storedUser(username: string) {
  const user = await app.ctx.serviceDb.collection('auth_user').findOne({ username });
  if (user === null) throw new Error(`no user ${username}`);
  return user;
}

async function tokenCount(username: string): Promise<number> {
  return app.ctx.serviceDb.collection('authtoken_token').countDocuments({ user: (await storedUser(username))._id });
}

/** The user's credentials stamp as the server computes it, from the stored user. */
async function stampOf(username: string): Promise<string> {
  const user = await storedUser(username);
  return credentialsStamp(TEST_SECRET_KEY, user.password as string, user.credentials_generation as string | undefined);
}

/** Accounts changed on the admin site's forms are seen once this process's account cache lapses. */
const ACCOUNT_CACHE_LAPSE_MS = 2_500;

beforeAll(async () => {
  db = uniqueName('links');
  catalogDb = uniqueName('catalog');
  app = await startTestApp({ CATALOG_DATABASES: catalogDb, LOGIN_MAX_FAILURES: '1000' });
  await ensureRoot(app);
  su = await app.users.tokenFor(ROOT.username);
  root = await adminBrowser(app, ROOT.username, ROOT.password);
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token: su, body: { database: db } })).status).toBe(201);
  expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token: su, body: { collection: 'stations' } })).status).toBe(201);
  const rows = [
    { name: 'Norman', elev: 357 },
    { name: 'Tulsa', elev: 194 },
  ];
  expect((await call(app.url, 'POST', stations(), { token: su, body: rows })).status).toBe(201);
  expect((await call(app.url, 'POST', `/api/catalog/data/${catalogDb}/`, { token: su, body: { collection: 'datasets' } })).status).toBe(
    201,
  );
  const dataset = await call(app.url, 'POST', `/api/catalog/data/${catalogDb}/datasets/`, { token: su, body: { title: 'Mesonet' } });
  expect(dataset.status, dataset.text).toBe(201);
});

afterAll(async () => {
  await closeAndDrop(app);
});

describe('what a link may be made for', () => {
  it('refuses links to the profile, tokens, links, the admin site, the queue and index management', async () => {
    for (const path of [
      '/api/user/',
      '/api/user/?format=json',
      '/api/token/',
      '/api/links/',
      '/api/admin/',
      '/api/queue/',
      '/api/auth/login/',
      `/api/data_store/indexes/${db}/stations/`,
      '/api/',
      `/api/data_store/data/../../user/`,
      `/api/data_store/data/%2e%2e/%2e%2e/user/`,
      `/API/DATA_STORE/DATA/${db}/stations/`,
    ]) {
      const res = await call(app.url, 'POST', '/api/links/', { token: su, body: { path } });
      expectError(res, 400, 'invalid_path');
    }
  });

  it('refuses (403) a link to a collection, or its records, the caller may not read, and mints none', async () => {
    const outsider = uniqueName('outsider');
    await app.users.createUser({ username: outsider, password: 'outsider-pass-1', permissions: [`catalog.${catalogDb}.datasets.safe`] });
    const token = await app.users.tokenFor(outsider);
    for (const path of [
      stations(),
      csvPath(),
      `${stations()}?format=ndjson`,
      `/api/data_store/data/${db}/stations/some-id/`,
      `/api/data_store/data/${encodeURIComponent(db)}/${encodeURIComponent('stations')}/`,
    ]) {
      const res = await call(app.url, 'POST', '/api/links/', { token, body: { path } });
      expectError(res, 403, 'permission_denied');
      expect(res.text).not.toContain('link=');
    }
    // What the caller may read still gets its link.
    expect((await call(app.url, 'POST', '/api/links/', { token, body: { path: `/api/catalog/data/${catalogDb}/datasets/` } })).status).toBe(
      201,
    );
  });

  it('refuses a link to /api/user/ made before links were limited, and mints no token', async () => {
    // An account that has never fetched its token: the profile would create one and show its key.
    const username = uniqueName('tokenless');
    await app.users.createUser({ username, password: 'tokenless-pass-1' });
    expect(await tokenCount(username)).toBe(0);
    const { token } = new LinkSigner(TEST_SECRET_KEY).sign(
      { userId: await userId(app, username), path: '/api/user/', credentials: await stampOf(username) },
      600,
    );
    const res = await call(app.url, 'GET', `/api/user/?link=${encodeURIComponent(token)}`);
    expectError(res, 403, 'link_not_allowed');
    expect(res.text).not.toMatch(/[0-9a-f]{40}/);
    expect(await tokenCount(username)).toBe(0);
  });

  it('still serves record reads: an export, distinct values, an aggregation, a record and the catalog', async () => {
    const { token } = await reader();
    const read = async (path: string) => {
      const res = await call(await makeLink(token, path), 'GET', '');
      expect(res.status, `${path}: ${res.text}`).toBe(200);
      return res;
    };
    expect((await read(csvPath())).text).toBe('name\r\nTulsa\r\n');
    expect((await read(`${stations()}?format=ndjson&query=${q({ filter: { elev: 357 } })}`)).text).toContain('"Norman"');
    expect((await read(`${stations()}?distinct=name`)).json.results).toEqual(expect.arrayContaining(['Norman', 'Tulsa']));
    const pipeline = q([{ $match: { elev: { $gt: 300 } } }, { $project: { _id: 0, name: 1 } }]);
    expect((await read(`${stations()}?aggregate=${pipeline}`)).json.results).toEqual([{ name: 'Norman' }]);
    const listed = await call(app.url, 'GET', stations(), { token });
    const id = (listed.json.results as { _id: string; name: string }[]).find((r) => r.name === 'Tulsa')?._id;
    expect((await read(`${stations()}${id}/`)).json.name).toBe('Tulsa');
    const catalog = await read(`/api/catalog/data/${catalogDb}/datasets/`);
    expect(catalog.json.results.map((r: { title: string }) => r.title)).toEqual(['Mesonet']);
    // HEAD as well as GET; nothing else.
    const url = await makeLink(token, csvPath());
    expect((await call(url, 'HEAD', '')).status).toBe(200);
    expectError(await call(url, 'POST', '', { body: { name: 'x' } }), 403, 'link_not_allowed');
  });
});

describe('links die with the credentials they were made under', () => {
  /** A link made now for the user, and a check that it works before the change. */
  async function workingLink(token: string): Promise<string> {
    const url = await makeLink(token, csvPath());
    expect((await call(url, 'GET', '')).text).toBe('name\r\nTulsa\r\n');
    return url;
  }

  async function expectDead(url: string): Promise<void> {
    expectError(await call(url, 'GET', ''), 401, 'link_not_valid');
  }

  it('after the user changes their password', async () => {
    const user = await reader();
    const url = await workingLink(user.token);
    const changed = await call(app.url, 'POST', '/api/user/', {
      token: user.token,
      body: { current_password: user.password, password: 'another-pass-456' },
    });
    expect(changed.status, changed.text).toBe(200);
    await expectDead(url);
    // A link made under the new credentials works.
    await workingLink(changed.json.authentication['auth-token'] as string);
  });

  it("after an administrator's reset on the admin site, and through the CLI's path", async () => {
    const user = await reader();
    const url = await workingLink(user.token);
    const id = await userId(app, user.username);
    const reset = await adminApiPostJson(root, `/resources/User/records/${id}/setPassword`, {
      password: 'reset-by-admin-1',
      confirm: 'reset-by-admin-1',
    });
    expect(reset.json.notice.type, reset.text).toBe('success');
    await expectDead(url);

    const again = await reader();
    const second = await workingLink(again.token);
    await app.users.setPassword(again.username, 'reset-on-cli-2');
    await expectDead(second);
  });

  it("after a new password typed on the admin site's edit form", async () => {
    const user = await reader();
    const url = await workingLink(user.token);
    const id = await userId(app, user.username);
    const edit = await adminApiPost(root, `/resources/User/records/${id}/edit`, {
      username: user.username,
      newPassword: 'edited-pass-789',
    });
    expect(edit.json.notice.type, edit.text).toBe('success');
    await sleep(ACCOUNT_CACHE_LAPSE_MS);
    await expectDead(url);
  });

  it('after the API token is rotated by its user, or revoked or rotated on the admin site', async () => {
    const user = await reader();
    const url = await workingLink(user.token);
    const rotated = await call(app.url, 'POST', '/api/user/', { token: user.token, body: { 'auth-token': 'update' } });
    expect(rotated.status, rotated.text).toBe(200);
    await expectDead(url);

    const newKey = rotated.json.authentication['auth-token'] as string;
    const second = await workingLink(newKey);
    const tokenId = (await app.ctx.serviceDb.collection('authtoken_token').findOne({ user: (await storedUser(user.username))._id }))?._id;
    const revoked = await adminApiPost(root, `/resources/Token/records/${String(tokenId)}/delete`, {});
    expect(revoked.json.notice.type, revoked.text).toBe('success');
    await expectDead(second);

    const other = await reader();
    const third = await workingLink(other.token);
    const issued = await adminApiPostJson(root, '/resources/Token/actions/issue', { username: other.username });
    expect(issued.json.notice.type, issued.text).toBe('success');
    await expectDead(third);
  });

  it('after the account is deactivated, also once it is enabled again', async () => {
    const user = await reader();
    const url = await workingLink(user.token);
    const id = await userId(app, user.username);
    const off = await adminApiPost(root, `/resources/User/records/${id}/edit`, { username: user.username, is_active: 'false' });
    expect(off.json.notice.type, off.text).toBe('success');
    await sleep(ACCOUNT_CACHE_LAPSE_MS);
    await expectDead(url);
    const on = await adminApiPost(root, `/resources/User/records/${id}/edit`, { username: user.username, is_active: 'true' });
    expect(on.json.notice.type, on.text).toBe('success');
    await sleep(ACCOUNT_CACHE_LAPSE_MS);
    // The account and its token work again; the link made before stays dead.
    expect((await call(app.url, 'GET', stations(), { token: user.token })).status).toBe(200);
    await expectDead(url);
  });

  it('a link made before this version (without the credentials stamp) is not valid', async () => {
    const { username } = await reader();
    const id = await userId(app, username);
    // As the previous version signed them: the path, no credentials stamp.
    const legacy = new LinkSigner(TEST_SECRET_KEY).sign({ userId: id, path: csvPath() } as never, 600).token;
    expectError(await call(app.url, 'GET', `${csvPath()}&link=${encodeURIComponent(legacy)}`), 401, 'link_not_valid');
  });
});
