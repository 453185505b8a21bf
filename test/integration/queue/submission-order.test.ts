/**
 * A submission is either accepted and tracked, or refused and never published. Two faults are
 * forced on the real services: the task log refuses the entry (a unique index the test adds
 * collides with it), and the broker refuses the message (the queue is deleted after the API
 * last saw a worker consume it). In the first case nothing may reach the queue; in the second
 * the history must not keep an entry for a task that was never published.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChannelModel } from 'amqplib';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';
import { TcpProxy, withPort } from '../../support/tcp-proxy.js';
import { testServices } from '../../support/services.js';
import { appWithIdleQueue, startWorker } from './support.js';

let app: TestApp;
let queue: string;
let token: string;
let broker: ChannelModel;

const submit = (kwargs: Record<string, unknown>) =>
  call(app.url, 'POST', '/api/queue/run/tasks.add/', { token, body: { function: 'tasks.add', queue, args: [1, 2], kwargs } });

async function messagesOn(name: string): Promise<number> {
  const channel = await broker.createChannel();
  try {
    return (await channel.checkQueue(name)).messageCount;
  } finally {
    await channel.close().catch(() => undefined);
  }
}

async function loggedWith(marker: string): Promise<number> {
  return app.ctx.serviceDb.collection('task_log').countDocuments({ 'kwargs.marker': marker });
}

beforeAll(async () => {
  ({ app, queue, token, broker } = await appWithIdleQueue('runner'));
});

afterAll(async () => {
  await broker?.close().catch(() => undefined);
  await app?.close();
});

describe('the order of logging and publishing', () => {
  it('publishes nothing when the task log refuses the entry', async () => {
    const marker = uniqueName('poison');
    const log = app.ctx.serviceDb.collection('task_log');
    await log.createIndex({ 'kwargs.marker': 1 }, { unique: true, sparse: true, name: 'test_marker_unique' });
    await log.insertOne({ _id: uniqueName('taken') as never, user: 'someone', kwargs: { marker } });
    try {
      const before = await messagesOn(queue);
      const res = await submit({ marker });
      expect(res.status, JSON.stringify(res.json)).toBeGreaterThanOrEqual(400);
      expect(res.json.error).toBeDefined();
      expect(await messagesOn(queue)).toBe(before);
      expect(await loggedWith(marker)).toBe(1); // only the entry the test put there
    } finally {
      await log.dropIndex('test_marker_unique');
    }
  });

  it('keeps no history entry when the broker refuses the message', async () => {
    const marker = uniqueName('unpublished');
    const channel = await broker.createChannel();
    await channel.deleteQueue(queue);
    await channel.close();
    const res = await submit({ marker });
    expect(res.status, JSON.stringify(res.json)).toBeGreaterThanOrEqual(400);
    expect(res.json.error).toBeDefined();
    expect(await loggedWith(marker)).toBe(0);
    const history = await call(app.url, 'GET', '/api/queue/usertasks/?page_size=0', { token });
    expect(history.status).toBe(200);
    expect(JSON.stringify(history.json)).not.toContain(marker);
  });

  it('logs before the message can run: an accepted submission is in the history at once', async () => {
    const marker = uniqueName('accepted');
    const channel = await broker.createChannel();
    await channel.assertQueue(queue, { durable: true });
    await channel.close();
    const before = await messagesOn(queue);
    const res = await submit({ marker });
    expect(res.status, JSON.stringify(res.json)).toBe(202);
    expect(await loggedWith(marker)).toBe(1);
    expect(await messagesOn(queue)).toBe(before + 1);
  });
});

describe('submissions in flight together', () => {
  it('a broker nack fails exactly the refused submissions with 503, kept in the history as unconfirmed', async () => {
    // The queue now holds at most 2 messages and refuses (nacks) the rest.
    const channel = await broker.createChannel();
    await channel.deleteQueue(queue);
    await channel.assertQueue(queue, {
      durable: true,
      autoDelete: false,
      arguments: { 'x-max-length': 2, 'x-overflow': 'reject-publish' },
    });
    try {
      const marker = uniqueName('nacked');
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => submit({ marker, i })));
      const accepted = answers.filter((a) => a.status === 202);
      const refused = answers.filter((a) => a.status !== 202);
      expect(accepted).toHaveLength(2);
      expect(refused).toHaveLength(6);
      for (const answer of refused) {
        expect(answer.status, JSON.stringify(answer.json)).toBe(503);
        expect(typeof answer.json.error.detail.task_id).toBe('string');
      }
      expect(await messagesOn(queue)).toBe(2);
      const log = app.ctx.serviceDb.collection('task_log');
      // Every submission is in the history; exactly the refused ones are marked.
      expect(await loggedWith(marker)).toBe(8);
      const unconfirmed = await log.find({ 'kwargs.marker': marker, publish_unconfirmed: true }).toArray();
      expect(unconfirmed.map((e) => e._id).sort()).toEqual(refused.map((a) => a.json.error.detail.task_id as string).sort());
      const acceptedIds = accepted.map((a) => a.json.task_id as string);
      expect(await log.countDocuments({ _id: { $in: acceptedIds as never[] }, publish_unconfirmed: { $exists: false } })).toBe(2);
    } finally {
      await channel.deleteQueue(queue);
      await channel.assertQueue(queue, { durable: true });
      await channel.close();
    }
  });
});

describe('a publish whose confirm is lost', () => {
  it('keeps the history entry, marked unconfirmed, and says the task may still run', async () => {
    const proxy = await new TcpProxy(testServices().broker.port).start();
    const viaProxy = await startTestApp({
      BROKER_URL: withPort(testServices().env.BROKER_URL as string, proxy.port),
      TASK_LIST_CACHE_S: '3600',
    });
    const { worker: proxied, queue: proxiedQueue } = await startWorker(viaProxy.ctx.settings.serviceDatabase);
    try {
      await viaProxy.users.createUser({ username: 'runner', password: 'pw-runner-123', permissions: ['cybercom_queue.task.tasks.add'] });
      const key = await viaProxy.users.tokenFor('runner');
      const body = (kwargs: Record<string, unknown>) => ({ function: 'tasks.add', queue: proxiedQueue, args: [1, 2], kwargs });
      expect((await call(viaProxy.url, 'POST', '/api/queue/run/tasks.add/?wait=10', { token: key, body: body({}) })).status).toBe(200);
      await proxied.close();
      const marker = uniqueName('unconfirmed');
      // ≈ 600 kB of kwargs: the connection is cut when the broker first answers after the message went through.
      proxy.dropOnce('reply', 512 * 1024);
      const res = await call(viaProxy.url, 'POST', '/api/queue/run/tasks.add/', {
        token: key,
        body: body({ marker, pad: 'x'.repeat(600 * 1024) }),
      });
      expect(res.status, JSON.stringify(res.json).slice(0, 300)).toBe(503);
      const taskId = res.json.error.detail.task_id as string;
      const entry = await viaProxy.ctx.serviceDb.collection('task_log').findOne({ _id: taskId as never });
      expect(entry?.kwargs.marker).toBe(marker);
      expect(entry?.publish_unconfirmed).toBe(true);
      // The broker did queue it: the task is findable, as the answer said.
      expect(await messagesOn(proxiedQueue)).toBe(1);
    } finally {
      await proxied.close();
      await viaProxy.close();
      await proxy.close();
    }
  }, 60_000);
});
