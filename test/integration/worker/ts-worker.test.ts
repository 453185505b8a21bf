/**
 * TS publisher → TS worker against the real TLS RabbitMQ and MongoDB-wire server: results,
 * failures, time limits, revocation, the authenticated user, the data store and remote control.
 */
import type { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMongo } from '../../../src/db/mongo-client.js';
import { BrokerSession } from '../../../src/queue/connection/broker-session.js';
import { ControlClient } from '../../../src/queue/remote-control/control-client.js';
import { TaskPublisher } from '../../../src/queue/publishing/task-publisher.js';
import { ResultStore } from '../../../src/queue/results/result-store.js';
import { declareEventReceiverQueue } from '../../../src/queue/protocol/entities.js';
import type { Worker } from '../../../src/worker/worker.js';
import { collectionCodename, databaseCodename } from '../../../src/auth/permissions.js';
import { encodeSubmitterAccess, submitterAccessOf } from '../../../src/queue/protocol/submitter-access.js';
import type { HeaderValue } from '../../../src/queue/protocol/task-message.js';
import type { JsonValue } from '../../../src/queue/protocol/json.js';
import { brokerSettings, deleteQueues, dropResultsAndClose, mongoSettings, unique } from './support.js';
import { testWorker } from './fixtures.js';
import { until } from '../../support/until.js';

const queue = unique('ts-worker');
const collection = unique('tombstone');
const database = 'cybercom_test';
const nodeName = `${unique('ts')}@test`;

let mongo: MongoClient;
let session: BrokerSession;
let publisher: TaskPublisher;
let control: ControlClient;
let results: ResultStore;
let worker: Worker;
/** Events this test's worker sent, as a monitor bound to `celeryev` with `#` receives them. */
const events: Record<string, unknown>[] = [];

beforeAll(async () => {
  mongo = await connectMongo(mongoSettings());
  results = new ResultStore(mongo, { database, collection });
  session = new BrokerSession({ settings: brokerSettings() });
  await session.waitUntilConnected(20_000);
  publisher = new TaskPublisher({ session });
  control = new ControlClient({ session });
  const eventChannel = await session.require().createChannel();
  const eventQueue = await declareEventReceiverQueue(eventChannel, crypto.randomUUID());
  await eventChannel.consume(
    eventQueue,
    (message) => {
      if (message === null) return;
      const body = JSON.parse(message.content.toString()) as Record<string, unknown> | Record<string, unknown>[];
      for (const event of Array.isArray(body) ? body : [body]) if (event.hostname === nodeName) events.push(event);
    },
    { noAck: true },
  );
  worker = await testWorker({
    nodeName,
    queues: [queue],
    resultDatabase: database,
    resultCollection: collection,
    concurrency: 3,
    trackStarted: true,
  });
  await worker.run();
});

afterAll(async () => {
  await worker?.close(1_000);
  await publisher?.close();
  await control?.close();
  await deleteQueues(brokerSettings(), [queue]).catch(() => undefined);
  await session?.close();
  await dropResultsAndClose(mongo, database, collection);
});

async function submit(
  taskName: string,
  args: unknown[] = [],
  extra: Parameters<TaskPublisher['publish']>[0] extends infer P ? Partial<P> : never = {},
) {
  const { taskId } = await publisher.publish({ taskName, args: args as never, queue, ...extra });
  return taskId;
}

describe('TS worker', () => {
  it('runs a task and stores a Celery SUCCESS document', async () => {
    const taskId = await submit('tasks.add', [2, 3], { authenticatedUser: 'alice' });
    const result = await results.waitForReady(taskId, { timeoutMs: 15_000 });
    expect(result).toMatchObject({ status: 'SUCCESS', result: 5, name: 'tasks.add', args: [2, 3], worker: nodeName, queue });
    const raw = await mongo
      .db(database)
      .collection(collection)
      .findOne({ _id: taskId as never });
    expect(raw).toMatchObject({ status: 'SUCCESS', result: '5', traceback: null, children: [] });
    expect(typeof raw?.date_done).toBe('string');
  });

  it('stores a failure with exception info and a traceback', async () => {
    const taskId = await submit('tasks.fail', ['no luck']);
    const result = await results.waitForReady(taskId, { timeoutMs: 15_000 });
    expect(result.status).toBe('FAILURE');
    expect(result.exception).toEqual({ exc_type: 'Exception', exc_message: ['no luck'], exc_module: 'builtins' });
    expect(result.traceback).toMatch(/^Traceback \(most recent call last\):[\s\S]*Exception: no luck/);
  });

  it('passes the authenticated user to the task', async () => {
    const taskId = await submit('tasks.whoami', [], { authenticatedUser: 'carol' });
    expect((await results.waitForReady(taskId, { timeoutMs: 15_000 })).result).toBe('carol');
  });

  it('writes a record to the data store with the permissions the message carries for its submitter', async () => {
    const dataDatabase = `${database}_data`;
    const dataCollection = unique('records');
    // No user exists in the service's database: the worker never looks there.
    const access = (username: string, permissions: string[], isSuperuser = false) =>
      encodeSubmitterAccess(submitterAccessOf({ username, isSuperuser, permissions }));
    const write = (authenticatedUser: string | null, headers?: Record<string, HeaderValue>) =>
      submit('tasks.write_record', [], {
        authenticatedUser,
        headers,
        kwargs: { database: dataDatabase, collection: dataCollection, record: { sample: 'soil', by: authenticatedUser } },
      });

    const writer = access('writer', [databaseCodename(dataDatabase, 'add'), 'cybercom_queue.task_admin']);
    const allowed = await results.waitForReady(await write('writer', writer), { timeoutMs: 15_000 });
    expect(allowed.status, JSON.stringify(allowed.result)).toBe('SUCCESS');
    const { ObjectId } = await import('mongodb');
    const stored = await mongo
      .db(dataDatabase)
      .collection(dataCollection)
      .findOne({ _id: new ObjectId(String(allowed.result)) });
    expect(stored).toMatchObject({ sample: 'soil', by: 'writer' });

    const refusals: [string, string | null, Record<string, HeaderValue> | undefined][] = [
      ['read permission only', 'reader', access('reader', [collectionCodename('data_store', dataDatabase, dataCollection, 'safe')])],
      ['no permissions in the message (a stock Celery client)', 'root', undefined],
      ["another user's permissions", 'mallory', writer],
      ['no submitting user', null, writer],
    ];
    for (const [name, user, headers] of refusals) {
      const refused = await results.waitForReady(await write(user, headers), { timeoutMs: 15_000 });
      expect(refused.status, name).toBe('FAILURE');
      expect(JSON.stringify(refused.result), name).toContain('PermissionError');
    }
    expect(await mongo.db(dataDatabase).collection(dataCollection).countDocuments()).toBe(1);
    await mongo.db(dataDatabase).dropDatabase();
  });

  it('writes a record by the REST API\'s rules: "__proto__" refused, Extended JSON revived', async () => {
    const dataDatabase = unique('data');
    const dataCollection = unique('records');
    const headers = encodeSubmitterAccess(
      submitterAccessOf({ username: 'writer', isSuperuser: false, permissions: [databaseCodename(dataDatabase, 'add')] }),
    );
    const write = (record: JsonValue) =>
      submit('tasks.write_record', [], {
        authenticatedUser: 'writer',
        headers,
        kwargs: { database: dataDatabase, collection: dataCollection, record },
      });
    const stored = mongo.db(dataDatabase).collection(dataCollection);

    // JSON.parse makes "__proto__" an own key, as it arrives in a task message; the REST API answers 400.
    for (const record of [
      JSON.parse('{"__proto__": {"isAdmin": true}}') as JsonValue,
      JSON.parse('{"a": {"__proto__": {"x": 1}}, "b": 2}') as JsonValue,
    ]) {
      const refused = await results.waitForReady(await write(record), { timeoutMs: 15_000 });
      expect(refused.status, JSON.stringify(record)).toBe('FAILURE');
      expect(refused.exception).toMatchObject({ exc_type: 'ValueError' });
      expect(JSON.stringify(refused.exception)).toContain('__proto__');
    }
    const badWrapper = await results.waitForReady(await write({ s: { $symbol: 5 } }), { timeoutMs: 15_000 });
    expect(badWrapper.exception).toMatchObject({ exc_type: 'ValueError' });
    expect(await stored.countDocuments()).toBe(0);

    const id = '65a1b2c3d4e5f60718293a4b';
    const written = await results.waitForReady(
      await write({ _id: { $oid: id }, at: { $date: '2024-05-06T07:08:09Z' }, big: { $numberLong: '9007199254740993' }, n: 1 }),
      { timeoutMs: 15_000 },
    );
    expect(written.status, JSON.stringify(written.result)).toBe('SUCCESS');
    expect(written.result).toBe(id);
    const { ObjectId, Long } = await import('mongodb');
    const record = await stored.findOne({}, { promoteLongs: false });
    expect(record?._id).toEqual(new ObjectId(id));
    expect(record?.at).toEqual(new Date('2024-05-06T07:08:09Z'));
    expect(record?.big).toEqual(Long.fromString('9007199254740993'));
    expect(await stored.countDocuments()).toBe(1);
    await mongo.db(dataDatabase).dropDatabase();
  });

  it("never writes into the service's database (results, users, tokens) or the server's own", async () => {
    for (const target of [database, database.toUpperCase(), 'admin', 'Config']) {
      const taskId = await submit('tasks.write_record', [], {
        authenticatedUser: 'root',
        headers: encodeSubmitterAccess(submitterAccessOf({ username: 'root', isSuperuser: true, permissions: [] })),
        kwargs: { database: target, collection: 'auth_user', record: { username: 'intruder', is_superuser: true } },
      });
      const result = await results.waitForReady(taskId, { timeoutMs: 15_000 });
      expect(result.status, target).toBe('FAILURE');
      expect(JSON.stringify(result.result), target).toContain('reserved');
    }
    expect(await mongo.db(database).collection('auth_user').countDocuments({ username: 'intruder' })).toBe(0);
  });

  it('holds a task with an eta until it is due', async () => {
    const eta = new Date(Date.now() + 1_000);
    const taskId = await submit('tasks.add', [4, 4], { eta });
    const result = await results.waitForReady(taskId, { timeoutMs: 15_000 });
    expect(result).toMatchObject({ status: 'SUCCESS', result: 8 });
    expect(result.dateDone!.getTime()).toBeGreaterThanOrEqual(eta.getTime() - 50);
  });

  it('records STARTED while a task runs', async () => {
    const taskId = await submit('tasks.sleep', [1.5]);
    const started = await until(
      async () => {
        const r = await results.get(taskId);
        return r.status === 'STARTED' ? r : null;
      },
      10_000,
      'STARTED',
    );
    expect(started.result).toEqual({ pid: process.pid, hostname: nodeName });
    expect((await results.waitForReady(taskId, { timeoutMs: 15_000 })).status).toBe('SUCCESS');
  });

  it('fails a task that exceeds its time limit with TimeLimitExceeded', async () => {
    const taskId = await submit('tasks.sleep', [30], { timeLimit: 0.5 });
    const result = await results.waitForReady(taskId, { timeoutMs: 15_000 });
    expect(result.status).toBe('FAILURE');
    expect(result.exception).toEqual({ exc_type: 'TimeLimitExceeded', exc_message: [0.5], exc_module: 'billiard.exceptions' });
  });

  it('discards a task revoked before it arrives (REVOKED, message acknowledged)', async () => {
    const taskId = crypto.randomUUID();
    await control.revoke(taskId);
    // The broadcast is fire-and-forget; give the worker a moment to receive it.
    await until(
      async () => {
        const replies = await control.broadcast('revoked', {}, { destination: [nodeName], timeoutMs: 2_000 });
        return (replies[nodeName] as string[] | undefined)?.includes(taskId);
      },
      10_000,
      'revoked id known to the worker',
    );
    await submit('tasks.add', [1, 1], { taskId });
    const result = await results.waitForReady(taskId, { timeoutMs: 15_000 });
    expect(result.status).toBe('REVOKED');
    expect(result.exception).toEqual({ exc_type: 'TaskRevokedError', exc_message: ['revoked'], exc_module: 'celery.exceptions' });
  });

  it('terminates a running task on revoke(terminate=true)', async () => {
    const taskId = await submit('tasks.sleep', [30]);
    await until(async () => (await results.get(taskId)).status === 'STARTED', 10_000, 'task started');
    const replies = await control.revoke(taskId, { terminate: true, reply: true, destination: [nodeName], timeoutMs: 5_000 });
    expect(replies[nodeName]).toEqual({ ok: `terminate: ${taskId}` });
    const result = await results.waitForReady(taskId, { timeoutMs: 10_000 });
    expect(result.status).toBe('REVOKED');
    expect(result.exception?.exc_message).toEqual(['terminated']);
  });

  it('rejects an unknown task and stores FAILURE(NotRegistered)', async () => {
    const taskId = await submit('tasks.does_not_exist');
    const result = await results.waitForReady(taskId, { timeoutMs: 15_000 });
    expect(result.status).toBe('FAILURE');
    expect(result.exception).toEqual({ exc_type: 'NotRegistered', exc_message: ['tasks.does_not_exist'], exc_module: 'celery.exceptions' });
  });
});

describe('remote control round trip', () => {
  it('ping', async () => {
    expect(await control.ping({ destination: [nodeName], timeoutMs: 5_000 })).toEqual({ [nodeName]: { ok: 'pong' } });
  });

  it('registered with __doc__', async () => {
    const replies = await control.registered(['__doc__'], { destination: [nodeName], timeoutMs: 5_000 });
    expect(replies[nodeName]).toContainEqual({ name: 'tasks.add', attributes: { __doc__: 'Add two numbers.' } });
    expect(replies[nodeName]?.map((t) => t.name)).toEqual([
      'tasks.add',
      'tasks.fail',
      'tasks.noop',
      'tasks.sleep',
      'tasks.whoami',
      'tasks.write_record',
    ]);
  });

  it('active_queues', async () => {
    const replies = await control.activeQueues({ destination: [nodeName], timeoutMs: 5_000 });
    expect(replies[nodeName]).toEqual([expect.objectContaining({ name: queue, routing_key: queue, durable: true, exclusive: false })]);
  });

  it('gathers nothing from a node that does not exist', async () => {
    expect(await control.ping({ destination: ['nobody@nowhere'], timeoutMs: 500 })).toEqual({});
  });
});

describe('events', () => {
  const ofType = (type: string) => events.filter((e) => e.type === type);

  it('announces the worker and sends heartbeats every 2 s', async () => {
    expect(ofType('worker-online')).toHaveLength(1);
    expect(ofType('worker-online')[0]).toMatchObject({ hostname: nodeName, freq: 2, sw_ident: 'cybercom-ts', pid: process.pid });
    await until(() => ofType('worker-heartbeat').length >= 1, 5_000, 'a heartbeat');
  });

  it('sends task events after enable_events, and stops after disable_events', async () => {
    expect(await control.broadcast('enable_events', {}, { destination: [nodeName], timeoutMs: 5_000 })).toEqual({
      [nodeName]: { ok: 'task events enabled' },
    });
    const taskId = await submit('tasks.add', [20, 22]);
    await results.waitForReady(taskId, { timeoutMs: 15_000 });
    await until(() => events.some((e) => e.type === 'task-succeeded' && e.uuid === taskId), 5_000, 'task-succeeded');
    const mine = events.filter((e) => e.uuid === taskId);
    expect(mine.map((e) => e.type)).toEqual(['task-received', 'task-started', 'task-succeeded']);
    expect(mine[0]).toMatchObject({ name: 'tasks.add', args: '[20, 22]', kwargs: '{}' });
    expect(mine[2]).toMatchObject({ result: '42', runtime: expect.any(Number) as number });

    await control.broadcast('disable_events', {}, { destination: [nodeName], timeoutMs: 5_000 });
    const quiet = await submit('tasks.noop');
    await results.waitForReady(quiet, { timeoutMs: 15_000 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(events.filter((e) => e.uuid === quiet)).toEqual([]);
  });

  it('says goodbye with worker-offline when closed', async () => {
    await worker.close(1_000);
    await until(() => ofType('worker-offline').length === 1, 5_000, 'worker-offline');
  });
});
