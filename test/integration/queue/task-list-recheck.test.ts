/**
 * A submission is refused for "no live worker" only on the word of a fresh task list. With
 * several API processes (or replicas), each keeps its own list: a worker that came up after this
 * process last asked, and that the caller has just seen listed through another process, must not
 * be refused here until this process's list happens to expire. Through the real HTTP server, with
 * a list lifetime far longer than the test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';
import type { Worker } from '../../../src/worker/worker.js';
import { defineTask } from '../../../src/worker/task-definition.js';
import { createLogger } from '../../../src/log/logger.js';
import { startWorker, workerOnTestServices } from './support.js';

const lateTask = `tasks.late_${uniqueName('')}`;
const lateQueue = uniqueName('late-q-');

let app: TestApp;
let steady: Worker;
let late: Worker | undefined;
let queue: string;
let token: string;

function startLateWorker(queues: string[], tasks: string[]): Promise<void> {
  late = workerOnTestServices({
    nodeName: `${uniqueName('late-')}@localhost`,
    queues,
    tasks: tasks.map((name) => defineTask({ name, run: () => 'late' })),
    resultDatabase: app.ctx.settings.serviceDatabase,
    resultCollection: 'tombstone',
    concurrency: 1,
    logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', 'worker'),
  });
  return late.run();
}

beforeAll(async () => {
  app = await startTestApp({ TASK_LIST_CACHE_S: '3600', TASK_LIST_REPLY_TIMEOUT_MS: '1500' });
  ({ worker: steady, queue } = await startWorker(app.ctx.settings.serviceDatabase));
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  token = await app.users.tokenFor('root');
  // The process learns its list now, before the late worker exists.
  const res = await call(app.url, 'GET', '/api/queue/?refresh=true&page_size=0', { token });
  expect(res.status, res.text).toBe(200);
  expect((res.json.results as { name: string }[]).map((t) => t.name)).toContain('tasks.add');
}, 120_000);

afterAll(async () => {
  await late?.close();
  await steady?.close();
  await app?.close();
});

describe('refusals checked against a fresh task list', () => {
  it('accepts a task on a queue that a worker started consuming after the list was learnt', async () => {
    await startLateWorker([queue, lateQueue], ['tasks.add', lateTask]);
    // A known task on the new queue, and a task no worker offered when the list was learnt.
    const onNewQueue = await call(app.url, 'POST', '/api/queue/run/tasks.add/', {
      token,
      body: { function: 'tasks.add', queue: lateQueue, args: [1, 2] },
    });
    expect(onNewQueue.status, onNewQueue.text).toBe(202);
    const newTask = await call(app.url, 'POST', `/api/queue/run/${lateTask}/`, { token, body: { function: lateTask, queue: lateQueue } });
    expect(newTask.status, newTask.text).toBe(202);
  });

  it('still refuses what no live worker offers, after asking', async () => {
    const nobody = `tasks.nobody_${uniqueName('')}`;
    const unknown = await call(app.url, 'POST', `/api/queue/run/${nobody}/`, { token, body: { function: nobody } });
    expect(unknown.status, unknown.text).toBe(404);
    expect(unknown.json.error.code).toBe('no_such_task');
    const wrongQueue = await call(app.url, 'POST', '/api/queue/run/tasks.add/', {
      token,
      body: { function: 'tasks.add', queue: 'no-worker-here', args: [1, 2] },
    });
    expect(wrongQueue.status, wrongQueue.text).toBe(400);
    expect(wrongQueue.json.error.code).toBe('invalid_queue');
  });
});
