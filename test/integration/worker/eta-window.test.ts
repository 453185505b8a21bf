/**
 * Tasks held for their ETA and the prefetch window, on the real broker: a held task's message is
 * unacknowledged until it runs, but like Celery the worker makes room for it beside the window,
 * so tasks due later never stop the tasks due now from being delivered.
 */
import type { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMongo } from '../../../src/db/mongo-client.js';
import { BrokerSession } from '../../../src/queue/connection/broker-session.js';
import { TaskPublisher } from '../../../src/queue/publishing/task-publisher.js';
import { ResultStore } from '../../../src/queue/results/result-store.js';
import type { Worker } from '../../../src/worker/worker.js';
import { brokerSettings, deleteQueues, dropResultsAndClose, mongoSettings, unique } from './support.js';
import { testWorker } from './fixtures.js';

const queue = unique('eta-window');
const collection = unique('tombstone');
const database = 'cybercom_test';

let mongo: MongoClient;
let session: BrokerSession;
let publisher: TaskPublisher;
let results: ResultStore;
let worker: Worker;

beforeAll(async () => {
  mongo = await connectMongo(mongoSettings());
  results = new ResultStore(mongo, { database, collection });
  session = new BrokerSession({ settings: brokerSettings() });
  await session.waitUntilConnected(20_000);
  publisher = new TaskPublisher({ session });
  // A window of two messages: two tasks held for later would fill it.
  worker = await testWorker({
    nodeName: `${unique('eta')}@test`,
    queues: [queue],
    resultDatabase: database,
    resultCollection: collection,
    concurrency: 1,
    prefetchMultiplier: 2,
  });
  await worker.run();
});

afterAll(async () => {
  await worker?.close(1_000);
  await publisher?.close();
  await deleteQueues(brokerSettings(), [queue]).catch(() => undefined);
  await session?.close();
  await dropResultsAndClose(mongo, database, collection);
});

describe('tasks held for their ETA', () => {
  it('take room beside the prefetch window, so tasks due now still run', async () => {
    const later = new Date(Date.now() + 3_600_000);
    const held = [];
    for (let i = 0; i < 3; i++) held.push((await publisher.publish({ taskName: 'tasks.add', args: [i, i], queue, eta: later })).taskId);
    const now = [];
    for (let i = 0; i < 3; i++) now.push((await publisher.publish({ taskName: 'tasks.add', args: [i, 10], queue })).taskId);

    for (const [i, taskId] of now.entries())
      expect(await results.waitForReady(taskId, { timeoutMs: 15_000 })).toMatchObject({ status: 'SUCCESS', result: i + 10 });
    for (const taskId of held) expect((await results.get(taskId)).status).toBe('PENDING');
  });
});
