/**
 * Messages that can never complete must not loop: a result the database refuses ends as a
 * stored FAILURE (the task ran once), and close() keeps its grace period even while a result
 * write is being retried against a database that is away.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTask, type TaskDefinition } from '../../../src/worker/task-definition.js';
import type { Worker } from '../../../src/worker/worker.js';
import { mongoSettings, unique } from './support.js';
import { QueueRig, testWorker, type TestWorkerOptions } from './fixtures.js';
import { TcpProxy, withPort } from '../../support/tcp-proxy.js';

const database = 'cybercom_test';
const collection = unique('tombstone');
const queues: string[] = [];
const workers: Worker[] = [];

let rig: QueueRig;

/** How often each test task body ran, by task id (the workers run in this process). */
const runs = new Map<string, number>();
const countRun = (taskId: string): void => void runs.set(taskId, (runs.get(taskId) ?? 0) + 1);

/** More than the 16 MiB a document may hold: the database refuses the result every time. */
const tooLarge = defineTask({
  name: 'test.too_large_result',
  run: (ctx): string => {
    countRun(ctx.taskId);
    return 'x'.repeat(17 * 1024 * 1024);
  },
});

/** Finishes when the test says so, so the test can cut the database first. */
let releaseGate: () => void = () => undefined;
let gateEntered: Promise<void> = Promise.resolve();
function armGate(): void {
  let entered: () => void = () => undefined;
  gateEntered = new Promise((resolve) => (entered = resolve));
  const released = new Promise<void>((resolve) => (releaseGate = resolve));
  gateHooks = { entered, released };
}
let gateHooks: { entered: () => void; released: Promise<void> } = { entered: () => undefined, released: Promise.resolve() };
const gated = defineTask({
  name: 'test.gated',
  run: async (ctx): Promise<string> => {
    countRun(ctx.taskId);
    gateHooks.entered();
    await gateHooks.released;
    return 'done';
  },
});

const testTasks: TaskDefinition[] = [tooLarge, gated];

async function startWorker(overrides: Partial<TestWorkerOptions> = {}): Promise<{ worker: Worker; queue: string }> {
  const queue = unique('ts-poison');
  queues.push(queue);
  const worker = await testWorker({
    nodeName: `${unique('poison')}@test`,
    queues: [queue],
    tasks: testTasks,
    resultDatabase: database,
    resultCollection: collection,
    ...overrides,
  });
  workers.push(worker);
  await worker.run();
  return { worker, queue };
}

beforeAll(async () => {
  rig = await QueueRig.open({ queues, database, collection });
});

afterAll(async () => {
  for (const worker of workers) await worker.close(500);
  await rig?.close();
});

describe('poison messages', () => {
  it('a result the database refuses ends as a stored FAILURE, acknowledged, after one run', async () => {
    // A short write deadline: were the refusal retried like an outage, the task would run again soon.
    const { worker, queue } = await startWorker({ resultWriteDeadlineMs: 1_000 });
    const finished: string[] = [];
    worker.on('task-finished', (report) => finished.push(report.state));
    const { taskId } = await rig.publisher.publish({ taskName: 'test.too_large_result', queue });

    const result = await rig.results.waitForReady(taskId, { timeoutMs: 30_000, intervalMs: 200 });
    expect(result.status).toBe('FAILURE');
    expect(result.exception).toMatchObject({ exc_type: 'EncodeError', exc_module: 'kombu.exceptions' });
    const message = String(result.exception?.exc_message[0]);
    expect(message).toMatch(/result could not be stored/);
    expect(message).toMatch(/'xxxx/); // a repr of what was refused, cut short
    expect(message.length).toBeLessThan(3_000);

    // Time for a redelivery, were there one.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    expect(runs.get(taskId)).toBe(1);
    expect(finished).toEqual(['FAILURE']);
    const channel = await rig.session.connection!.createChannel();
    try {
      expect((await channel.checkQueue(queue)).messageCount).toBe(0);
    } finally {
      await channel.close();
    }
  }, 60_000);

  it('close(1000) returns within about a second while a result write is being retried', async () => {
    const db = mongoSettings();
    const proxy = await new TcpProxy(Number(new URL(db.uri).port)).start();
    try {
      const { worker, queue } = await startWorker({ mongo: { ...db, uri: withPort(db.uri, proxy.port) } });
      armGate();
      await rig.publisher.publish({ taskName: 'test.gated', queue });
      await gateEntered;
      proxy.cut(60_000);
      releaseGate();
      // Let the first write fail so the worker is inside its retry loop.
      await new Promise((resolve) => setTimeout(resolve, 1_500));

      const started = Date.now();
      await Promise.race([worker.close(1_000), new Promise((resolve) => setTimeout(resolve, 20_000))]);
      const elapsed = Date.now() - started;
      expect(elapsed).toBeLessThan(2_500);
    } finally {
      await proxy.close();
    }
  }, 60_000);
});
