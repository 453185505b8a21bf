/**
 * Requests held on `?wait=` poll the task's state until it ends; the polls of all of them share
 * their queries, so many long waits cost the engine a few queries per beat together, not a query
 * per wait per beat. Counted with the driver's command monitoring on the API's own client.
 */
import type { CommandStartedEvent } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, monitoredUri, startTestApp, type TestApp } from '../../support/app.js';
import { testServices } from '../../support/services.js';
import { until } from '../../support/until.js';
import type { Worker } from '../../../src/worker/worker.js';
import { startWorker } from './support.js';

const WAITS = 20;
const SLEEP_S = 2;

let app: TestApp;
let worker: Worker;
let queue: string;
let token: string;

beforeAll(async () => {
  app = await startTestApp({ MONGO_URI: monitoredUri(testServices().env.MONGO_URI ?? ''), TASK_WAIT_MAX_S: '30' });
  ({ worker, queue } = await startWorker(app.ctx.settings.serviceDatabase, undefined, { concurrency: WAITS }));
  await app.users.createUser({ username: 'waiter', password: 'pw-waiter-123', permissions: ['cybercom_queue.task.tasks.sleep'] });
  token = await app.users.tokenFor('waiter');
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  const root = await app.users.tokenFor('root');
  // Submissions are accepted once the worker answers remote control.
  await until(
    async () =>
      (await call(app.url, 'GET', '/api/queue/?refresh=true&page_size=0', { token: root })).json?.queues?.includes(queue) === true,
    20_000,
    'the worker to be listed',
  );
});

afterAll(async () => {
  await worker?.close();
  await app?.close();
});

describe('requests waiting for their tasks', () => {
  it(`share their polls: ${WAITS} waits of ${SLEEP_S} s cost far fewer state reads than one per wait per 50 ms`, async () => {
    const reads: CommandStartedEvent[] = [];
    const listener = (event: CommandStartedEvent) => {
      if (event.commandName === 'find' && event.command.find === 'tombstone') reads.push(event);
    };
    app.ctx.mongo.on('commandStarted', listener);
    let answers;
    try {
      answers = await Promise.all(
        Array.from({ length: WAITS }, () =>
          call(app.url, 'POST', `/api/queue/run/tasks.sleep/?wait=20`, {
            token,
            body: { function: 'tasks.sleep', queue, args: [SLEEP_S] },
          }),
        ),
      );
    } finally {
      app.ctx.mongo.off('commandStarted', listener);
    }
    // Every wait ends with its task's result, as before.
    for (const res of answers) {
      expect(res.status, res.text).toBe(200);
      expect(res.json?.status).toBe('SUCCESS');
    }
    // Alone, each wait reads its state every 50 ms once past its first polls: hundreds of reads
    // for these waits. Shared, the beats cost about SLEEP_S / 0.05 = 40 reads (a beat split over
    // two or three queries at most), and the first polls (0, 5, 15, 35 ms after each submission)
    // at most 4 per wait.
    const stateReads = reads.filter((event) => event.command.projection?.status === 1).length;
    expect(stateReads).toBeGreaterThan(0);
    expect(stateReads, `${stateReads} state reads`).toBeLessThan(WAITS * 4 + (SLEEP_S / 0.05) * 3);
    // One query reads the states of many waits.
    expect(reads.some((event) => (event.command.filter?._id?.$in?.length ?? 0) > 1)).toBe(true);
  }, 60_000);
});
