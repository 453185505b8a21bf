/**
 * Losing the broker or the database: the worker and the publisher notice, report it, and recover
 * by themselves once the service is back. Connections go through a relay the test cuts.
 */
import type { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMongo } from '../../../src/db/mongo-client.js';
import { QueueUnavailableError } from '../../../src/queue/errors.js';
import { BrokerSession } from '../../../src/queue/connection/broker-session.js';
import { TaskPublisher } from '../../../src/queue/publishing/task-publisher.js';
import { ResultStore } from '../../../src/queue/results/result-store.js';
import type { Worker } from '../../../src/worker/worker.js';
import { brokerSettings, deleteQueues, dropResultsAndClose, mongoSettings, unique } from './support.js';
import { testWorker } from './fixtures.js';
import { until } from '../../support/until.js';
import { TcpProxy, withPort } from '../../support/tcp-proxy.js';

const queue = unique('ts-reconnect');
const collection = unique('tombstone');
const database = 'cybercom_test';

let brokerProxy: TcpProxy;
let mongoProxy: TcpProxy;
let mongo: MongoClient;
let results: ResultStore;
let directSession: BrokerSession;
let publisher: TaskPublisher;
let worker: Worker;
const readyCount = { value: 0 };

beforeAll(async () => {
  const broker = brokerSettings();
  const db = mongoSettings();
  brokerProxy = await new TcpProxy(Number(new URL(broker.url).port)).start();
  mongoProxy = await new TcpProxy(Number(new URL(db.uri).port)).start();

  mongo = await connectMongo(db);
  results = new ResultStore(mongo, { database, collection });
  directSession = new BrokerSession({ settings: broker });
  await directSession.waitUntilConnected(20_000);
  publisher = new TaskPublisher({ session: directSession });

  worker = await testWorker({
    nodeName: `${unique('reconnect')}@test`,
    queues: [queue],
    broker: { ...broker, url: withPort(broker.url, brokerProxy.port) },
    mongo: { ...db, uri: withPort(db.uri, mongoProxy.port) },
    resultDatabase: database,
    resultCollection: collection,
    trackStarted: true,
  });
  worker.on('ready', () => (readyCount.value += 1));
  await worker.run();
});

afterAll(async () => {
  await worker?.close(1_000);
  await publisher?.close();
  await deleteQueues(brokerSettings(), [queue]).catch(() => undefined);
  await directSession?.close();
  await dropResultsAndClose(mongo, database, collection);
  await brokerProxy?.close();
  await mongoProxy?.close();
});

describe('reconnection', () => {
  it('the worker resumes consuming after losing the broker', async () => {
    const before = await publisher.publish({ taskName: 'tasks.add', args: [1, 1], queue });
    expect((await results.waitForReady(before.taskId, { timeoutMs: 15_000 })).result).toBe(2);

    const disconnected = new Promise<void>((resolve) => worker.once('broker-disconnected', resolve));
    const readyBefore = readyCount.value;
    brokerProxy.cut(2_000);
    await disconnected;
    // Published while the worker is away: waits in the durable queue.
    const during = await publisher.publish({ taskName: 'tasks.add', args: [2, 2], queue });
    await until(() => readyCount.value > readyBefore, 30_000, 'worker ready again');
    expect((await results.waitForReady(during.taskId, { timeoutMs: 15_000 })).result).toBe(4);
  });

  it('the worker keeps a result it could not write while the database was away', async () => {
    const { taskId } = await publisher.publish({ taskName: 'tasks.sleep', args: [1], queue });
    await until(async () => (await results.get(taskId)).status === 'STARTED', 10_000, 'task started');
    // Longer than the driver's 5 s server selection: the worker's own retry has to carry it.
    mongoProxy.cut(7_000);
    const result = await results.waitForReady(taskId, { timeoutMs: 40_000, intervalMs: 250 });
    expect(result).toMatchObject({ status: 'SUCCESS', result: 1 });
  });

  it('a publisher reports the broker unavailable while it is down and publishes again after it is back', async () => {
    const session = new BrokerSession({
      settings: { ...brokerSettings(), url: withPort(brokerSettings().url, brokerProxy.port) },
      initialDelayMs: 200,
    });
    const viaProxy = new TaskPublisher({ session });
    try {
      await session.waitUntilConnected(20_000);
      brokerProxy.cut(2_000);
      await until(() => !session.connected, 5_000, 'session to notice');
      const error = await viaProxy.publish({ taskName: 'tasks.noop', queue }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(QueueUnavailableError);
      expect(error).toMatchObject({ code: 'broker_unavailable' });

      await session.waitUntilConnected(30_000);
      const { taskId } = await viaProxy.publish({ taskName: 'tasks.noop', queue });
      expect((await results.waitForReady(taskId, { timeoutMs: 15_000 })).status).toBe('SUCCESS');
    } finally {
      await viaProxy.close();
      await session.close();
    }
  });
});
