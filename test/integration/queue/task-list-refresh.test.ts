/**
 * The task list behind submissions is refreshed in the background once it expires: through the
 * real HTTP server, with a short cache lifetime and a long broadcast timeout, a submission right
 * after expiry does not wait for the broadcast, and a task offered by a worker that stopped leaves
 * the list (and becomes a 404) once two refreshes have gone unanswered by it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';
import type { Worker } from '../../../src/worker/worker.js';
import { defineTask } from '../../../src/worker/task-definition.js';
import { createLogger } from '../../../src/log/logger.js';
import { until } from '../../support/until.js';
import { startWorker, workerOnTestServices } from './support.js';

const CACHE_S = 1;
const REPLY_TIMEOUT_MS = 3_000;
const ephemeralTask = `tasks.ephemeral_${uniqueName('')}`;

let app: TestApp;
let steady: Worker;
let leaving: Worker | undefined;
let queue: string;
let token: string;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

const listedTasks = async (): Promise<string[]> => {
  const res = await call(app.url, 'GET', '/api/queue/?page_size=0', { token });
  expect(res.status, res.text).toBe(200);
  return (res.json.results as { name: string }[]).map((t) => t.name);
};

const submit = (task: string, targetQueue = queue) =>
  call(app.url, 'POST', `/api/queue/run/${task}/`, { token, body: { function: task, queue: targetQueue, args: [1, 2] } });

beforeAll(async () => {
  app = await startTestApp({ TASK_LIST_CACHE_S: String(CACHE_S), TASK_LIST_REPLY_TIMEOUT_MS: String(REPLY_TIMEOUT_MS) });
  ({ worker: steady, queue } = await startWorker(app.ctx.settings.serviceDatabase));
  leaving = workerOnTestServices({
    nodeName: `${uniqueName('leaving-')}@localhost`,
    queues: [queue],
    tasks: [defineTask({ name: ephemeralTask, doc: 'Offered by one worker only.', run: () => 'here' })],
    resultDatabase: app.ctx.settings.serviceDatabase,
    resultCollection: 'tombstone',
    concurrency: 1,
    logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', 'worker'),
  });
  await leaving.run();
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  token = await app.users.tokenFor('root');
  await until(
    async () => {
      const res = await call(app.url, 'GET', '/api/queue/?refresh=true&page_size=0', { token });
      const names = (res.json?.results ?? []).map((t: { name: string }) => t.name);
      return names.includes('tasks.add') && names.includes(ephemeralTask);
    },
    30_000,
    'both workers to be listed',
  );
}, 120_000);

afterAll(async () => {
  await leaving?.close();
  await steady?.close();
  await app?.close();
});

describe('task list refresh', () => {
  it('answers a submission right after expiry without waiting for the broadcast', async () => {
    // An explicit refresh waits for the whole broadcast: the timeout really is this long.
    const refresh = await timed(() => call(app.url, 'GET', '/api/queue/?refresh=true&page_size=0', { token }));
    expect(refresh.ms).toBeGreaterThanOrEqual(REPLY_TIMEOUT_MS - 50);

    for (let round = 0; round < 3; round++) {
      await sleep(CACHE_S * 1000 + 200);
      const submitted = await timed(() => submit('tasks.add'));
      expect(submitted.value.status, submitted.value.text).toBe(202);
      expect(submitted.ms).toBeLessThan(REPLY_TIMEOUT_MS / 3);
    }
  });

  it('drops a task once two refreshes have gone unanswered by the only worker offering it', async () => {
    expect(await listedTasks()).toContain(ephemeralTask);
    await leaving?.close();
    leaving = undefined;
    const gone = await until(
      async () => {
        const listed = await timed(listedTasks);
        expect(listed.ms).toBeLessThan(REPLY_TIMEOUT_MS / 3);
        return listed.value.includes(ephemeralTask) ? undefined : listed.value;
      },
      // Two refreshes: a worker that misses one broadcast keeps its last answer for that refresh.
      2 * (CACHE_S * 1000 + REPLY_TIMEOUT_MS) + 2 * REPLY_TIMEOUT_MS,
      'the ephemeral task to leave the list',
    );
    expect(gone).toContain('tasks.add');
    const res = await submit(ephemeralTask);
    expect(res.status, res.text).toBe(404);
    expect(res.json.error.code).toBe('no_such_task');
  });
});
