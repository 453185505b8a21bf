/**
 * Tasks held for their ETA and the prefetch window, on the real broker: a held task's message is
 * unacknowledged until it runs, but like Celery the worker makes room for it beside the window,
 * so tasks due later never stop the tasks due now from being delivered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Worker } from '../../../src/worker/worker.js';
import { unique } from './support.js';
import { QueueRig, testWorker } from './fixtures.js';

const queue = unique('eta-window');
const collection = unique('tombstone');
const database = 'cybercom_test';

let rig: QueueRig;
let worker: Worker;

beforeAll(async () => {
  rig = await QueueRig.open({ queues: [queue], database, collection });
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
  await rig?.close();
});

describe('tasks held for their ETA', () => {
  it('take room beside the prefetch window, so tasks due now still run', async () => {
    const later = new Date(Date.now() + 3_600_000);
    const held = [];
    for (let i = 0; i < 3; i++) held.push((await rig.publisher.publish({ taskName: 'tasks.add', args: [i, i], queue, eta: later })).taskId);
    const now = [];
    for (let i = 0; i < 3; i++) now.push((await rig.publisher.publish({ taskName: 'tasks.add', args: [i, 10], queue })).taskId);

    for (const [i, taskId] of now.entries())
      expect(await rig.results.waitForReady(taskId, { timeoutMs: 15_000 })).toMatchObject({ status: 'SUCCESS', result: i + 10 });
    for (const taskId of held) expect((await rig.results.get(taskId)).status).toBe('PENDING');
  });
});
