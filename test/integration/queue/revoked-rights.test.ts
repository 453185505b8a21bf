/**
 * Tasks do not outlive their submitter's rights: a write_record still queued when its submitter
 * is deactivated, or loses the grant it needs, never writes (the API revokes it through the
 * results, which workers read before starting a task, and by broadcast); and a record a task
 * writes passes the same rules as one sent to the REST API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseCodename, taskCodename } from '../../../src/auth/permissions.js';
import type { Worker } from '../../../src/worker/worker.js';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';
import { adminApiPost, adminBrowser, ensureRoot, ROOT, userId } from '../admin/support.js';
import type { Browser } from '../auth/helpers.js';
import { startWorker } from './support.js';

let app: TestApp;
let root: Browser;
let rootToken: string;
let db: string;
const workers: Worker[] = [];

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000' });
  await ensureRoot(app);
  root = await adminBrowser(app, ROOT.username, ROOT.password);
  rootToken = await app.users.tokenFor(ROOT.username);
  db = `${app.prefix}rights`;
  expect((await call(app.url, 'POST', '/api/data_store/data/', { token: rootToken, body: { database: db } })).status).toBe(201);
  expect((await call(app.url, 'POST', `/api/data_store/data/${db}/`, { token: rootToken, body: { collection: 'samples' } })).status).toBe(
    201,
  );
});

afterAll(async () => {
  for (const worker of workers) await worker.close(1_000).catch(() => undefined);
  await app?.close();
});

async function worker(queue?: string): Promise<string> {
  const started = await startWorker(app.ctx.settings.serviceDatabase, queue, { concurrency: 1 });
  workers.push(started.worker);
  return started.queue;
}

const WRITE_CODENAME = () => databaseCodename(db, 'add');

async function writer(): Promise<{ username: string; token: string }> {
  const username = uniqueName('w');
  await app.users.createUser({
    username,
    password: 'writer-pass-1234',
    permissions: [taskCodename('tasks.write_record'), taskCodename('tasks.sleep'), WRITE_CODENAME()],
  });
  return { username, token: await app.users.tokenFor(username) };
}

async function run(token: string, task: string, body: Record<string, unknown>): Promise<string> {
  const res = await call(app.url, 'POST', `/api/queue/run/${task}/`, { token, body: { function: task, ...body } });
  expect(res.status, res.text).toBe(202);
  return (res.json as { task_id: string }).task_id;
}

const written = (username: string) => app.ctx.mongo.db(db).collection('samples').countDocuments({ by: username });

describe('queued tasks of a user who lost rights', () => {
  it('never writes after the user is deactivated while the task waits behind another', async () => {
    const queue = await worker();
    const { username, token } = await writer();
    // The worker's one slot is busy, so write_record waits.
    await run(token, 'tasks.sleep', { queue, args: [2] });
    const write = await run(token, 'tasks.write_record', {
      queue,
      kwargs: { database: db, collection: 'samples', record: { by: username } },
    });
    const id = await userId(app, username);
    const edit = await adminApiPost(root, `/resources/User/records/${id}/edit`, { username, is_active: 'false' });
    expect(edit.status, edit.text.slice(0, 300)).toBe(200);
    const result = await app.ctx.queue!.results.waitForReady(write, { timeoutMs: 20_000 });
    expect(result.status).toBe('REVOKED');
    expect(await written(username)).toBe(0);
  });

  it('never writes after the grant it needs is removed while no worker is running', async () => {
    const queue = await worker();
    const { username, token } = await writer();
    await run(token, 'tasks.sleep', { queue, args: [1] });
    const write = await run(token, 'tasks.write_record', {
      queue,
      kwargs: { database: db, collection: 'samples', record: { by: username } },
    });
    // The only worker stops: write_record goes back to the queue, and no worker hears a broadcast.
    await workers.pop()!.close(10_000);
    const id = await userId(app, username);
    const edit = await adminApiPost(root, `/resources/User/records/${id}/edit`, {
      username,
      'permissions.0': taskCodename('tasks.write_record'),
      'permissions.1': taskCodename('tasks.sleep'),
    });
    expect(edit.status, edit.text.slice(0, 300)).toBe(200);
    const stored = await app.ctx.serviceDb.collection('auth_user').findOne({ username });
    expect(stored?.permissions).not.toContain(WRITE_CODENAME());
    // A worker started afterwards reads REVOKED from the results before it would run the task.
    await worker(queue);
    const result = await app.ctx.queue!.results.waitForReady(write, { timeoutMs: 20_000 });
    expect(result.status).toBe('REVOKED');
    expect(await written(username)).toBe(0);
  });

  it('leaves the queued tasks of a user who only gained rights alone', async () => {
    const queue = await worker();
    const { username, token } = await writer();
    await run(token, 'tasks.sleep', { queue, args: [1] });
    const write = await run(token, 'tasks.write_record', {
      queue,
      kwargs: { database: db, collection: 'samples', record: { by: username } },
    });
    const id = await userId(app, username);
    const edit = await adminApiPost(root, `/resources/User/records/${id}/edit`, { username, first_name: 'Renamed', is_staff: 'true' });
    expect(edit.status, edit.text.slice(0, 300)).toBe(200);
    const result = await app.ctx.queue!.results.waitForReady(write, { timeoutMs: 20_000 });
    expect(result.status).toBe('SUCCESS');
    expect(await written(username)).toBe(1);
  });
});

describe('records written by tasks', () => {
  it.each([
    ['a control character in a field name', { 'k\u0001': 1 }, 'control characters'],
    ['an operator as a field name', { $where: '1' }, 'may not start with'],
    ['an operator inside the record', { nested: { $function: { body: 'x', args: [], lang: 'js' } } }, 'not allowed'],
  ])('refuses %s with a clear error and writes nothing', async (_what, record, words) => {
    const queue = await worker();
    const { username, token } = await writer();
    const task = await run(token, 'tasks.write_record', {
      queue,
      kwargs: { database: db, collection: 'samples', record: { ...record, by: username } },
    });
    const result = await app.ctx.queue!.results.waitForReady(task, { timeoutMs: 20_000 });
    expect(result.status).toBe('FAILURE');
    expect(JSON.stringify(result.result)).toContain('ValueError');
    expect(JSON.stringify(result.result)).toContain(words);
    expect(await written(username)).toBe(0);
  });
});
