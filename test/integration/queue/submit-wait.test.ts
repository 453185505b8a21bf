/**
 * `POST /api/queue/run/<task>/?wait=<s>` on a task that outlasts the wait answers 202 with the
 * pending state, through the real HTTP server with a slow task on the TypeScript worker: while
 * the task is queued, while it is STARTED, and while its result document holds a state of the
 * task's own (what Celery's `update_state(state='PROGRESS', meta=...)` writes during a run).
 * `GET /api/queue/task/<id>/?wait=<s>` holds the run's page the same way (a long poll).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import type { Worker } from '../../../src/worker/worker.js';
import type { QueueService } from '../../../src/queue/api/queue-service.js';
import { until } from '../../support/until.js';
import { startWorker } from './support.js';

let app: TestApp;
let worker: Worker;
let queue: string;
let token: string;

const submitSleep = (seconds: number, wait: number) =>
  call(app.url, 'POST', `/api/queue/run/tasks.sleep/?wait=${wait}`, { token, body: { function: 'tasks.sleep', queue, args: [seconds] } });

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

beforeAll(async () => {
  app = await startTestApp({ TASK_WAIT_MAX_S: '30' });
  ({ worker, queue } = await startWorker(app.ctx.settings.serviceDatabase));
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  token = await app.users.tokenFor('root');
  await until(
    async () => (await call(app.url, 'GET', '/api/queue/?refresh=true&page_size=0', { token })).json?.queues?.includes(queue) === true,
    20_000,
    'the worker to be listed',
  );
});

afterAll(async () => {
  await worker?.close();
  await app?.close();
});

describe('?wait= shorter than the task', () => {
  it('answers 202 PENDING after the wait while the task runs (STARTED is stored)', async () => {
    const { value: res, ms } = await timed(() => submitSleep(3.1, 1));
    expect(res.status, res.text).toBe(202);
    expect(res.json).toMatchObject({ status: 'PENDING', result_url: `${app.url}/api/queue/task/${res.json.task_id}/` });
    expect(ms).toBeGreaterThanOrEqual(950);
    expect(ms).toBeLessThan(2_500);
    // It was running meanwhile, and finishes normally.
    const run = await call(app.url, 'GET', `/api/queue/task/${res.json.task_id}/`, { token });
    expect(run.json.status).toBe('STARTED');
    await until(
      async () => (await call(app.url, 'GET', `/api/queue/task/${res.json.task_id}/`, { token })).json?.status === 'SUCCESS',
      20_000,
      'the task to finish',
    );
  });

  it('answers 202 PENDING while the running task reports progress in a state of its own', async () => {
    const results = (app.ctx.queue as QueueService).results.collection;
    const seconds = 4.25;
    const submitted = submitSleep(seconds, 2);
    // As soon as the task runs, its document says what a Celery task's update_state writes.
    const progressed = until(
      async () => {
        const started = await results.findOne({ status: 'STARTED', name: 'tasks.sleep', args: [seconds] });
        if (started === null) return undefined;
        await results.replaceOne(
          { _id: started._id },
          { ...started, status: 'PROGRESS' as never, result: JSON.stringify({ current: 1, total: 4 }) },
        );
        return started._id;
      },
      10_000,
      'the task to start',
    );
    const [res, taskId] = await Promise.all([submitted, progressed]);
    expect(res.status, res.text).toBe(202);
    expect(res.json).toMatchObject({ task_id: taskId, status: 'PENDING' });
    // The run's own page shows the state as the task set it, with its meta.
    const run = await call(app.url, 'GET', `/api/queue/task/${String(taskId)}/`, { token });
    expect(run.status, run.text).toBe(200);
    expect(run.json).toMatchObject({ status: 'PROGRESS', result: { current: 1, total: 4 } });
    // The final state replaces the custom one, and a wait long enough gets it.
    await until(async () => (await results.findOne({ _id: taskId }))?.status === 'SUCCESS', 20_000, 'the task to finish');
    const again = await submitSleep(0.1, 10);
    expect(again.status, again.text).toBe(200);
    expect(again.json).toMatchObject({ status: 'SUCCESS', result: 0.1 });
  });
});

describe('GET /api/queue/task/<id>/?wait=', () => {
  const runPage = (id: string, wait?: string) =>
    call(app.url, 'GET', `/api/queue/task/${id}/${wait === undefined ? '' : `?wait=${wait}`}`, { token });

  it('answers as soon as the run finished, with the whole run page', async () => {
    const submitted = await submitSleep(1.5, 0);
    expect(submitted.status, submitted.text).toBe(202);
    const id = submitted.json.task_id as string;
    const { value: res, ms } = await timed(() => runPage(id, '20'));
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ task_id: id, task_name: 'tasks.sleep', status: 'SUCCESS', result: 1.5, user: 'root' });
    expect(ms).toBeGreaterThanOrEqual(1_000);
    expect(ms).toBeLessThan(10_000);
  });

  it('answers the current state when the wait runs out first', async () => {
    const submitted = await submitSleep(3, 0);
    const id = submitted.json.task_id as string;
    const { value: res, ms } = await timed(() => runPage(id, '0.5'));
    expect(res.status, res.text).toBe(200);
    expect(['PENDING', 'STARTED']).toContain(res.json.status);
    expect(ms).toBeGreaterThanOrEqual(450);
    expect(ms).toBeLessThan(2_500);
  });

  it('refuses a wait that is not a number or is above TASK_WAIT_MAX_S', async () => {
    const submitted = await submitSleep(0.1, 0);
    const id = submitted.json.task_id as string;
    for (const wait of ['soon', '31']) {
      const res = await runPage(id, wait);
      expect(res.status, res.text).toBe(400);
      expect(res.json.error.code).toBe('invalid_wait');
    }
  });
});
