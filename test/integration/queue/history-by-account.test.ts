/**
 * A task's history entry, its arguments, result and traceback belong to the account that
 * submitted it, not to a name: an account renamed away and another renamed onto the freed name
 * (what a staff member could do to reach someone's task results) gets none of them, and the
 * renamed account keeps its own. Entries written before the history was kept by account are
 * given the account their name has when the log is first opened.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskCodename } from '../../../src/auth/permissions.js';
import { TaskLog } from '../../../src/queue/api/task-log.js';
import type { Worker } from '../../../src/worker/worker.js';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';
import { adminApiPost, adminBrowser, ensureRoot, ROOT, userId } from '../admin/support.js';
import type { Browser } from '../auth/helpers.js';
import { startWorker } from './support.js';

let app: TestApp;
let root: Browser;
let worker: Worker;
let queue: string;

beforeAll(async () => {
  app = await startTestApp({ LOGIN_MAX_FAILURES: '1000' });
  await ensureRoot(app);
  root = await adminBrowser(app, ROOT.username, ROOT.password);
  ({ worker, queue } = await startWorker(app.ctx.settings.serviceDatabase));
});

afterAll(async () => {
  await worker?.close(1_000).catch(() => undefined);
  await app?.close();
});

async function account(username: string): Promise<string> {
  await app.users.createUser({ username, password: 'account-pass-1234', permissions: [taskCodename('tasks.add')] });
  return app.users.tokenFor(username);
}

async function rename(from: string, to: string): Promise<void> {
  const edit = await adminApiPost(root, `/resources/User/records/${await userId(app, from)}/edit`, { username: to });
  expect(edit.status, edit.text.slice(0, 300)).toBe(200);
  expect(edit.json.notice.type, edit.text.slice(0, 300)).toBe('success');
}

const history = async (token: string) => {
  const res = await call(app.url, 'GET', '/api/queue/usertasks/', { token });
  expect(res.status, res.text).toBe(200);
  return (res.json.results as { task_id: string }[]).map((row) => row.task_id);
};

describe('the task history of a renamed account', () => {
  it('stays with the account; whoever takes the freed name sees none of it', async () => {
    const victimName = uniqueName('victim');
    const victimToken = await account(victimName);
    const run = await call(app.url, 'POST', '/api/queue/run/tasks.add/?wait=30', {
      token: victimToken,
      body: { function: 'tasks.add', queue, args: [20, 22], kwargs: { secret: 'lab notebook' } },
    });
    expect(run.status, run.text).toBe(200);
    const taskId = run.json.task_id as string;

    // The victim is renamed away; an account the attacker controls is renamed onto the name.
    await rename(victimName, `${victimName}-old`);
    const attackerName = uniqueName('attacker');
    const attackerToken = await account(attackerName);
    await rename(attackerName, victimName);

    expect(await history(attackerToken)).toEqual([]);
    const result = await call(app.url, 'GET', `/api/queue/task/${taskId}/`, { token: attackerToken });
    expect(result.status, result.text).toBe(404);
    expect(result.text).not.toMatch(/lab notebook/);

    expect(await history(victimToken)).toEqual([taskId]);
    const own = await call(app.url, 'GET', `/api/queue/task/${taskId}/`, { token: victimToken });
    expect(own.status, own.text).toBe(200);
    expect(own.json.result).toBe(42);
  });
});

describe('entries written before the history was kept by account', () => {
  it('are given the account their name has now; a name no account has belongs to nobody', async () => {
    const ownerName = uniqueName('legacy');
    const ownerToken = await account(ownerName);
    const log = app.ctx.serviceDb.collection('task_log');
    const legacy = (id: string, user: string) => ({
      _id: id,
      task_id: id,
      user,
      task_name: 'tasks.add',
      args: [1, 2],
      kwargs: {},
      queue: 'celery',
      tags: [],
      timestamp: new Date(),
      state: 'PENDING',
    });
    const [mine, orphan] = [uniqueName('old-'), uniqueName('old-')];
    await log.insertMany([legacy(mine, ownerName), legacy(orphan, uniqueName('gone'))] as never[]);

    // What the next start of the API does: open the log with the accounts' names at hand.
    await new TaskLog(app.ctx.serviceDb, undefined, (names) => app.users.idsByUsername(names)).migrateToAccountIds();
    expect((await log.findOne({ _id: mine as never }))?.user_id).toBe(await userId(app, ownerName));
    expect((await log.findOne({ _id: orphan as never }))?.user_id).toBeNull();
    expect(await history(ownerToken)).toEqual([mine]);
  });
});
