/**
 * API tokens in the admin site: issued and rotated keys are shown once (lists and detail pages
 * show a prefix only), work with the API, and the old key stops working; deleting revokes;
 * staff cannot take over a superuser's token. Task history is read-only.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { closeAndDrop, expectError, sleep } from '../auth/helpers.js';
import { Browser, adminApiGet, adminApiPost, adminApiPostJson, adminBrowser, ensureRoot, ROOT } from './support.js';

let app: TestApp;
let root: Browser;

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000' });
  await ensureRoot(app);
  await app.users.createUser({ username: 'staffer', password: 'staff-pass-123', isStaff: true });
  await app.users.createUser({ username: 'scripter', password: 'script-pass-123' });
  root = await adminBrowser(app, ROOT.username, ROOT.password);
});

afterAll(async () => {
  await closeAndDrop(app);
});

const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');

const tokenDoc = async (username: string) => {
  const user = await app.ctx.serviceDb.collection('auth_user').findOne({ username });
  return app.ctx.serviceDb.collection('authtoken_token').findOne({ user: user?._id });
};

describe('tokens', () => {
  let firstKey: string;

  it('issues a token and shows its key once', async () => {
    const res = await adminApiPostJson(root, '/resources/Token/actions/issue', { username: 'scripter' });
    expect(res.status, res.text).toBe(200);
    firstKey = res.json.issued.key as string;
    expect(firstKey).toMatch(/^[0-9a-f]{40}$/);
    expect(res.json.issued.username).toBe('scripter');
    const stored = await tokenDoc('scripter');
    expect(stored?.key_hash).toBe(sha256(firstKey));
    expect(stored?.key).toBeUndefined();
    const profile = await call(app.url, 'GET', '/api/user/', { token: firstKey });
    expect(profile.json.username).toBe('scripter');
  });

  it('lists and shows tokens with a prefix of the key only', async () => {
    const list = await adminApiGet(root, '/resources/Token/actions/list');
    expect(list.status, list.text).toBe(200);
    expect(list.text).not.toContain(firstKey);
    const record = list.json.records[0];
    expect(record.params.key_prefix).toBe(`${firstKey.slice(0, 8)}…`);
    expect(record.params.key_hash).toBeUndefined();
    expect(list.text).not.toContain(sha256(firstKey));
    expect(record.populated.user.title).toBe('scripter');
    const show = await adminApiGet(root, `/resources/Token/records/${record.id}/show`);
    expect(show.text).not.toContain(firstKey);
  });

  let currentKey: string;

  it('rotates: the new key works and the old one stops', async () => {
    const doc = await tokenDoc('scripter');
    const res = await adminApiPostJson(root, `/resources/Token/records/${doc?._id.toString()}/rotate`, { confirm: 'yes' });
    expect(res.status, res.text).toBe(200);
    const newKey = res.json.issued.key as string;
    currentKey = newKey;
    expect(newKey).not.toBe(firstKey);
    expect((await tokenDoc('scripter'))?.key_hash).toBe(sha256(newKey));
    expect((await call(app.url, 'GET', '/api/user/', { token: newKey })).status).toBe(200);
    await sleep(2_100); // another process may have cached the old key for up to 2 s
    expectError(await call(app.url, 'GET', '/api/user/', { token: firstKey }), 401, 'invalid_token');
  });

  it('revokes by deleting', async () => {
    const doc = await tokenDoc('scripter');
    const key = currentKey;
    const res = await adminApiPost(root, `/resources/Token/records/${doc?._id.toString()}/delete`, {});
    expect(res.json.notice.type, res.text).toBe('success');
    await sleep(2_100);
    expectError(await call(app.url, 'GET', '/api/user/', { token: key }), 401, 'invalid_token');
  });

  it("does not let staff issue a superuser's token", async () => {
    const staff = await adminBrowser(app, 'staffer', 'staff-pass-123');
    const res = await adminApiPostJson(staff, '/resources/Token/actions/issue', { username: 'root' });
    expectError(res, 403, 'superuser_only');
    expect(await tokenDoc('root')).toBeNull();
  });

  it("does not let staff revoke a superuser's token, one by one or in bulk", async () => {
    await app.users.tokenFor('root');
    const doc = await tokenDoc('root');
    const id = doc?._id.toString() as string;
    const staff = await adminBrowser(app, 'staffer', 'staff-pass-123');
    const single = await adminApiPost(staff, `/resources/Token/records/${id}/delete`, {});
    expect(single.status === 403 || single.json?.notice?.type === 'error', single.text).toBe(true);
    const bulk = await adminApiPost(staff, `/resources/Token/bulk/bulkDelete?recordIds=${id}`, {});
    expect(bulk.status === 403 || bulk.status === 404 || bulk.json?.notice?.type === 'error', bulk.text).toBe(true);
    expect((await tokenDoc('root'))?.key_hash).toBe(doc?.key_hash);
  });

  it('cannot be created or edited as a form', async () => {
    const res = await adminApiPost(root, '/resources/Token/actions/new', { key: 'a'.repeat(40), user: 'x' });
    expect(res.json.notice.type).toBe('error');
    expect(await app.ctx.serviceDb.collection('authtoken_token').countDocuments({ key_hash: sha256('a'.repeat(40)) })).toBe(0);
    expect(await app.ctx.serviceDb.collection('authtoken_token').countDocuments({ key: 'a'.repeat(40) })).toBe(0);
  });
});

describe('task history', () => {
  it('lists the submission log read-only', async () => {
    await app.ctx.serviceDb.collection('task_log').insertOne({
      _id: 'c0ffee00-0000-4000-8000-000000000001' as never,
      task_id: 'c0ffee00-0000-4000-8000-000000000001',
      user: 'scripter',
      task_name: 'proj.tasks.add',
      args: [1, 2],
      kwargs: { note: '<b>x</b>' },
      queue: 'celery',
      tags: ['demo'],
      timestamp: new Date(),
    });
    const list = await adminApiGet(root, '/resources/TaskLog/actions/list');
    expect(list.status, list.text).toBe(200);
    const params = list.json.records[0].params;
    expect(params.task_name).toBe('proj.tasks.add');
    expect(params.args).toBe('[1,2]');
    const del = await adminApiPost(root, `/resources/TaskLog/records/${list.json.records[0].id}/delete`, {});
    expect(del.json.notice.type).toBe('error');
    expect(await app.ctx.serviceDb.collection('task_log').countDocuments()).toBe(1);
  });

  it('filters by part of a field in any case, by a time range, sorts, and shows one entry', async () => {
    const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 12, minute));
    const entry = (n: number, task_name: string, tags: string[]) => ({
      _id: `c0ffee00-0000-4000-8000-00000000010${n}` as never,
      task_id: `c0ffee00-0000-4000-8000-00000000010${n}`,
      user: 'filterer',
      task_name,
      args: [n],
      kwargs: {},
      queue: 'celery',
      tags,
      timestamp: at(n),
    });
    await app.ctx.serviceDb
      .collection('task_log')
      .insertMany([entry(1, 'lab.Convert.run', ['night']), entry(2, 'lab.convert.more', []), entry(3, 'lab.other', ['Nightly'])]);
    const names = async (query: string) =>
      ((await adminApiGet(root, `/resources/TaskLog/actions/list?${query}`)).json.records as { params: { task_name: string } }[]).map(
        (r) => r.params.task_name,
      );
    expect(await names('filters.task_name=CONVERT&sortBy=timestamp&direction=asc')).toEqual(['lab.Convert.run', 'lab.convert.more']);
    expect(await names('filters.tags=night&filters.user=filter&sortBy=task_name&direction=desc')).toEqual(['lab.other', 'lab.Convert.run']);
    const range = `filters.user=filterer&filters.timestamp~~from=${at(2).toISOString()}&filters.timestamp~~to=${at(3).toISOString()}`;
    expect(await names(`${range}&sortBy=timestamp&direction=desc`)).toEqual(['lab.other', 'lab.convert.more']);
    // A regular expression's special characters are matched as themselves.
    expect(await names('filters.task_name=lab.*')).toEqual([]);
    const show = await adminApiGet(root, '/resources/TaskLog/records/c0ffee00-0000-4000-8000-000000000103/show');
    expect(show.status, show.text).toBe(200);
    expect(show.json.record.params).toMatchObject({ task_name: 'lab.other', 'tags.0': 'Nightly', args: '[3]', kwargs: '{}' });
    const missing = await adminApiGet(root, '/resources/TaskLog/records/c0ffee00-0000-4000-8000-000000000199/show');
    expect(missing.status === 404 || missing.json?.notice?.type === 'error', missing.text).toBe(true);
  });
});
