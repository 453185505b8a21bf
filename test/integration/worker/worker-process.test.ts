/**
 * The worker as operators run it (`tsx src/worker/main.ts`, configured by environment): late
 * acknowledgement survives a SIGKILL mid-task, and SIGTERM finishes the running task before a
 * clean exit.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ControlClient } from '../../../src/queue/remote-control/control-client.js';
import { serviceEnv, spawnWorker, TASK_MODULE, type WorkerProcess, unique } from './support.js';
import { QueueRig, waitForPing } from './fixtures.js';
import { until } from '../../support/until.js';

const queue = unique('ts-proc');
const collection = unique('tombstone');
const database = 'cybercom_test';

let rig: QueueRig;
let control: ControlClient;
const workers: WorkerProcess[] = [];

function startWorker(nodeName: string, extra: Record<string, string> = {}): WorkerProcess {
  const worker = spawnWorker({
    ...serviceEnv(),
    WORKER_NODE_NAME: nodeName,
    WORKER_QUEUES: queue,
    WORKER_CONCURRENCY: '1',
    WORKER_PREFETCH_MULTIPLIER: '1',
    WORKER_TASK_MODULES: TASK_MODULE,
    WORKER_TRACK_STARTED: 'true',
    RESULT_DATABASE: database,
    RESULT_COLLECTION: collection,
    ...extra,
  });
  workers.push(worker);
  return worker;
}

async function waitUntilOnline(nodeName: string): Promise<void> {
  await waitForPing(control, nodeName, 30_000);
}

beforeAll(async () => {
  rig = await QueueRig.open({ queues: [queue], database, collection });
  control = new ControlClient({ session: rig.session });
});

afterEach(async () => {
  for (const worker of workers.splice(0)) {
    worker.kill();
    await worker.exited;
  }
});

afterAll(async () => {
  await control?.close();
  await rig?.close();
});

async function queueDepth(): Promise<number> {
  const channel = await rig.session.require().createChannel();
  try {
    return (await channel.checkQueue(queue)).messageCount;
  } finally {
    await channel.close();
  }
}

describe('worker process', () => {
  it('leaves a task to another worker when killed mid-task (late ack)', async () => {
    const firstNode = `${unique('first')}@test`;
    const first = startWorker(firstNode);
    await waitUntilOnline(firstNode);

    const { taskId } = await rig.publisher.publish({ taskName: 'tasks.sleep', args: [2], queue });
    const started = await until(
      async () => {
        const r = await rig.results.get(taskId);
        return r.status === 'STARTED' ? r : null;
      },
      15_000,
      'task started on the first worker',
    );
    expect(started.result).toMatchObject({ hostname: firstNode });

    first.kill();
    expect(await first.exited).toBe('SIGKILL');

    const secondNode = `${unique('second')}@test`;
    startWorker(secondNode);
    const result = await rig.results.waitForReady(taskId, { timeoutMs: 30_000 });
    expect(result).toMatchObject({ status: 'SUCCESS', result: 2, worker: secondNode });
  });

  it('on SIGTERM stops taking tasks, finishes the running one and exits 0', async () => {
    const nodeName = `${unique('graceful')}@test`;
    const worker = startWorker(nodeName, { WORKER_SHUTDOWN_GRACE_S: '20' });
    await waitUntilOnline(nodeName);

    const running = await rig.publisher.publish({ taskName: 'tasks.sleep', args: [2], queue });
    await until(async () => (await rig.results.get(running.taskId)).status === 'STARTED', 15_000, 'task started');
    // Concurrency 1 and prefetch 1: this one waits in the broker.
    const queued = await rig.publisher.publish({ taskName: 'tasks.add', args: [1, 2], queue });

    worker.terminate();
    expect(await worker.exited).toBe(0);
    expect(worker.output()).toMatch(/worker stopped/);
    expect(await rig.results.get(running.taskId)).toMatchObject({ status: 'SUCCESS', result: 2, worker: nodeName });
    expect((await rig.results.get(queued.taskId)).status).toBe('PENDING');
    expect(await queueDepth()).toBe(1);

    // Someone else picks the queued task up.
    startWorker(`${unique('after')}@test`);
    expect(await rig.results.waitForReady(queued.taskId, { timeoutMs: 30_000 })).toMatchObject({ status: 'SUCCESS', result: 3 });
  });

  it('after the grace period hands an unfinished task back to the broker and still exits 0', async () => {
    const nodeName = `${unique('impatient')}@test`;
    const worker = startWorker(nodeName, { WORKER_SHUTDOWN_GRACE_S: '1' });
    await waitUntilOnline(nodeName);

    const { taskId } = await rig.publisher.publish({ taskName: 'tasks.sleep', args: [60], queue });
    await until(async () => (await rig.results.get(taskId)).status === 'STARTED', 15_000, 'task started');
    const stopAt = Date.now();
    worker.terminate();
    expect(await worker.exited).toBe(0);
    expect(Date.now() - stopAt).toBeLessThan(10_000);
    // Not recorded as finished, and back in the queue for another worker.
    expect((await rig.results.get(taskId)).status).toBe('STARTED');
    await until(async () => (await queueDepth()) === 1, 5_000, 'message back in the queue');
    await control.revoke(taskId); // nobody should run the 60 s sleep after this test
  });
});
