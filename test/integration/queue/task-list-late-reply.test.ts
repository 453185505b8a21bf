/**
 * A worker that misses one task-list broadcast (its process held up for a moment: busy, swapped
 * out, on a loaded machine) is not taken for gone: a submission of a task it offers is still
 * accepted while it has left one refresh unanswered, and refused only after a second unanswered
 * broadcast in a row. Through the real HTTP server and a real worker process (held with SIGSTOP),
 * with the list asked again on every request so that each submission is one broadcast.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';
import { until } from '../../support/until.js';
import { deleteQueues, brokerSettings, serviceEnv, spawnWorker, TASK_MODULE, type WorkerProcess } from '../worker/support.js';

const queue = uniqueName('late-reply-q-');

let app: TestApp;
let worker: WorkerProcess;
let token: string;

const submit = (wait = 0) =>
  call(app.url, 'POST', `/api/queue/run/tasks.add/${wait > 0 ? `?wait=${wait}` : ''}`, {
    token,
    body: { function: 'tasks.add', queue, args: [2, 3] },
  });

/** SIGSTOP or SIGCONT to the worker's whole process group (the launcher and the worker it runs). */
const signalWorker = (signal: 'SIGSTOP' | 'SIGCONT') => process.kill(-worker.child.pid!, signal);

beforeAll(async () => {
  // A running worker answers well within the reply timeout even on a loaded machine; a held one
  // never does.
  app = await startTestApp({ TASK_LIST_CACHE_S: '0', TASK_LIST_REPLY_TIMEOUT_MS: '3000' });
  worker = spawnWorker({
    ...serviceEnv(),
    WORKER_NODE_NAME: `${uniqueName('late-reply-')}@localhost`,
    WORKER_QUEUES: queue,
    WORKER_CONCURRENCY: '1',
    WORKER_TASK_MODULES: TASK_MODULE,
    RESULT_DATABASE: app.ctx.settings.serviceDatabase,
    RESULT_COLLECTION: 'tombstone',
  });
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  token = await app.users.tokenFor('root');
  await until(
    async () => (await submit()).status === 202,
    60_000,
    () => `the worker to offer tasks.add\n${worker.output()}`,
  );
}, 120_000);

afterAll(async () => {
  if (worker !== undefined) {
    worker.kill();
    await worker.exited;
  }
  await deleteQueues(brokerSettings(), [queue]).catch(() => undefined);
  await app?.close();
});

describe('a worker late to answer the task-list broadcast', () => {
  it('keeps its tasks for one unanswered refresh, refuses them after a second, and takes them back when it answers', async () => {
    const before = await submit(10);
    expect(before.status, before.text).toBe(200);
    expect(before.json).toMatchObject({ status: 'SUCCESS', result: 5 });

    signalWorker('SIGSTOP');
    let missedOnce;
    let missedTwice;
    try {
      missedOnce = await submit();
      missedTwice = await submit();
    } finally {
      signalWorker('SIGCONT');
    }
    expect(missedOnce.status, missedOnce.text).toBe(202);
    expect(missedTwice.status, missedTwice.text).toBe(404);
    expect(missedTwice.json.error.code).toBe('no_such_task');

    // The accepted one waited in the queue and runs once the worker goes on.
    const result = await app.ctx.queue!.results.waitForReady(missedOnce.json.task_id as string, { timeoutMs: 30_000 });
    expect(result.status).toBe('SUCCESS');
    const after = await until(
      async () => {
        const answer = await submit(10);
        return answer.status === 200 ? answer : undefined;
      },
      30_000,
      'a submission to be accepted again',
    );
    expect(after.json).toMatchObject({ status: 'SUCCESS', result: 5 });
  }, 90_000);
});
