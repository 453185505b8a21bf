/**
 * A message that keeps being delivered without finishing (here: its worker is stopped mid-task,
 * again and again) is run at most maxDeliveries times, then parked in cybercom.dead_letter with
 * a FAILURE result; task admins see and purge parked messages through the API.
 */
import type { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMongo } from '../../../src/db/mongo-client.js';
import { BrokerSession } from '../../../src/queue/connection/broker-session.js';
import { TaskPublisher } from '../../../src/queue/publishing/task-publisher.js';
import { ResultStore } from '../../../src/queue/results/result-store.js';
import { defineTask } from '../../../src/worker/task-definition.js';
import type { TaskReport } from '../../../src/worker/request/request-outcomes.js';
import type { Worker } from '../../../src/worker/worker.js';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { brokerSettings, deleteQueues, dropResultsAndClose, mongoSettings, unique } from './support.js';
import { testWorker } from './fixtures.js';
import { until } from '../../support/until.js';

const database = 'cybercom_test';
const collection = unique('tombstone');
const queue = unique('ts-dead-letter');

let app: TestApp;
let mongo: MongoClient;
let results: ResultStore;
let session: BrokerSession;
let publisher: TaskPublisher;
const tokens: Record<string, string> = {};

/** Starts of the task body, by task id (the workers run in this process). */
const runs = new Map<string, number>();

/** Never finishes by itself: only a shutdown ends it, which leaves the message unacknowledged. */
const hang = defineTask({
  name: 'test.hang',
  run: (ctx): Promise<never> => {
    runs.set(ctx.taskId, (runs.get(ctx.taskId) ?? 0) + 1);
    return new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true }));
  },
});

/**
 * A worker for the next delivery of `taskId`, which must be parked after two starts, not run a
 * third time. The caller closes the worker (it may check the parked message first).
 */
async function startWorkerThatParks(taskId: string): Promise<Worker> {
  const worker = await newWorker();
  const reports: TaskReport[] = [];
  worker.on('task-finished', (report) => reports.push(report));
  await worker.run();
  try {
    await until(() => reports.find((r) => r.taskId === taskId), 20_000, 'the message to be parked');
    expect(reports.map((r) => r.state)).toEqual(['DEAD_LETTERED']);
    expect(runs.get(taskId)).toBe(2);
  } catch (error) {
    await worker.close(500);
    throw error;
  }
  return worker;
}

function newWorker(): Promise<Worker> {
  return testWorker({
    nodeName: `${unique('dead-letter')}@test`,
    queues: [queue],
    tasks: [hang],
    resultDatabase: database,
    resultCollection: collection,
    maxDeliveries: 2,
  });
}

beforeAll(async () => {
  app = await startTestApp();
  await app.users.createUser({ username: 'taskadmin', password: 'pw-tadmin-123', permissions: ['cybercom_queue.task_admin'] });
  await app.users.createUser({ username: 'nobody', password: 'pw-nobody-123' });
  for (const u of ['taskadmin', 'nobody']) tokens[u] = await app.users.tokenFor(u);
  mongo = await connectMongo(mongoSettings());
  results = new ResultStore(mongo, { database, collection });
  session = new BrokerSession({ settings: brokerSettings() });
  await session.waitUntilConnected(20_000);
  publisher = new TaskPublisher({ session });
  await until(
    async () => (await call(app.url, 'DELETE', '/api/queue/dead-letters/', { token: tokens.taskadmin })).status === 200,
    20_000,
    'the API to reach the broker',
  );
});

afterAll(async () => {
  await publisher?.close();
  await deleteQueues(brokerSettings(), [queue]).catch(() => undefined);
  await session?.close();
  await dropResultsAndClose(mongo, database, collection);
  await app?.close();
});

describe('start counts', () => {
  it('a first delivery runs without writing its start; a redelivery counts the first one too', async () => {
    const worker0 = await newWorker();
    await worker0.run();
    const { taskId } = await publisher.publish({ taskName: 'test.hang', args: [], kwargs: {}, queue });
    const document = () => results.collection.findOne({ _id: taskId });
    let worker = worker0;
    try {
      // First delivery: nothing was written before the body started (no database round trip).
      await until(() => runs.get(taskId) === 1, 20_000, 'the first start');
      expect(await document()).toBeNull();
      await worker.close(100);

      // Redelivered: the start is counted before the body runs, the first one included.
      worker = await newWorker();
      await worker.run();
      await until(() => runs.get(taskId) === 2, 20_000, 'the second start');
      expect(await document()).toMatchObject({ status: 'PENDING', cybercom_deliveries: { r0: 1 } });
    } finally {
      await worker.close(100);
    }
    // maxDeliveries is 2: the next delivery would be the third start, so it is parked, not run.
    await (await startWorkerThatParks(taskId)).close(500);
    const purged = await call(app.url, 'DELETE', '/api/queue/dead-letters/', { token: tokens.taskadmin });
    expect(purged.json.purged).toBe(1);
  }, 120_000);
});

describe('dead-letter queue', () => {
  it('parks a message started more than maxDeliveries times, and task admins list and purge it', async () => {
    const worker0 = await newWorker();
    await worker0.run();
    // The queue exists once a worker declared it; publish only then.
    const { taskId } = await publisher.publish({ taskName: 'test.hang', args: [42], kwargs: { k: 'v' }, queue });

    // Two starts, each ended by a shutdown with a tiny grace: the message goes back every time.
    let worker = worker0;
    for (let start = 1; start <= 2; start++) {
      if (start > 1) {
        worker = await newWorker();
        await worker.run();
      }
      await until(() => runs.get(taskId) === start, 20_000, `start ${start}`);
      await worker.close(100);
    }

    // The third delivery is not run: it is parked.
    worker = await startWorkerThatParks(taskId);
    try {
      const result = await results.waitForReady(taskId, { timeoutMs: 10_000 });
      expect(result.status).toBe('FAILURE');
      expect(result.exception?.exc_type).toBe('WorkerLostError');
      expect(String(result.exception?.exc_message[0])).toMatch(/delivered 3 times without finishing; parked in cybercom\.dead_letter/);

      const channel = await session.connection!.createChannel();
      try {
        expect((await channel.checkQueue(queue)).messageCount).toBe(0);
      } finally {
        await channel.close();
      }
    } finally {
      await worker.close(500);
    }
    expect(runs.get(taskId)).toBe(2);

    // Seen by task admins only; looking does not remove anything.
    expect((await call(app.url, 'GET', '/api/queue/dead-letters/', { token: tokens.nobody })).status).toBe(403);
    expect((await call(app.url, 'GET', '/api/queue/dead-letters/')).status).toBe(401);
    for (let look = 0; look < 2; look++) {
      const listed = await call(app.url, 'GET', '/api/queue/dead-letters/', { token: tokens.taskadmin });
      expect(listed.status).toBe(200);
      expect(listed.json.count).toBe(1);
      expect(listed.json.results).toEqual([
        expect.objectContaining({
          task_id: taskId,
          task_name: 'test.hang',
          args: [42],
          kwargs: { k: 'v' },
          reason: 'delivered 3 times without finishing; parked in cybercom.dead_letter',
          original_queue: queue,
          delivery_count: 3,
          dead_lettered_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        }),
      ]);
    }
    expect((await call(app.url, 'GET', '/api/queue/dead-letters/?limit=0', { token: tokens.taskadmin })).status).toBe(400);

    expect((await call(app.url, 'DELETE', '/api/queue/dead-letters/', { token: tokens.nobody })).status).toBe(403);
    const purged = await call(app.url, 'DELETE', '/api/queue/dead-letters/', { token: tokens.taskadmin });
    expect(purged.status).toBe(200);
    expect(purged.json.purged).toBe(1);
    expect((await call(app.url, 'GET', '/api/queue/dead-letters/', { token: tokens.taskadmin })).json.count).toBe(0);
  }, 120_000);
});
