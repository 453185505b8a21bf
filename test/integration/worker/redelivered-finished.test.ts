/**
 * A redelivered task message whose task already has its final state: the worker that ran it
 * lost its broker connection (its node died) before the acknowledgement got through. The next
 * worker acknowledges it without running the task again; a redelivered task without a final
 * state still runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskReport } from '../../../src/worker/request/request-outcomes.js';
import type { Worker } from '../../../src/worker/worker.js';
import { unique } from './support.js';
import { QueueRig, testWorker } from './fixtures.js';
import { until } from '../../support/until.js';

const queue = unique('ts-redelivered');
const collection = unique('tombstone');
const database = 'cybercom_test';

let rig: QueueRig;
let worker: Worker | undefined;

beforeAll(async () => {
  rig = await QueueRig.open({ queues: [queue], database, collection });
});

afterAll(async () => {
  await worker?.close(1_000);
  await rig?.close();
});

/** Takes every message of the queue without acknowledging it, then closes the channel: all come back redelivered. */
async function makeRedelivered(expected: number): Promise<void> {
  const channel = await rig.session.require().createChannel();
  let taken = 0;
  while (taken < expected) {
    const message = await channel.get(queue, { noAck: false });
    if (message === false) await new Promise((r) => setTimeout(r, 50));
    else taken += 1;
  }
  await channel.close();
}

describe('redelivered messages', () => {
  it('acknowledges a redelivered task that already finished without running it, and runs one that did not', async () => {
    const finished = await rig.publisher.publish({ taskName: 'tasks.add', args: [1, 2], queue });
    const unfinished = await rig.publisher.publish({ taskName: 'tasks.add', args: [3, 4], queue });
    // The first one ran to the end elsewhere: its result is stored, its acknowledgement lost.
    await rig.results.markSuccess(finished.taskId, 'stored by the first worker', {
      name: 'tasks.add',
      args: [1, 2],
      kwargs: {},
      worker: 'gone@test',
      retries: 0,
      queue,
    });
    await makeRedelivered(2);

    const reports = new Map<string, TaskReport>();
    worker = await testWorker({
      nodeName: `${unique('redelivered')}@test`,
      queues: [queue],
      resultDatabase: database,
      resultCollection: collection,
    });
    worker.on('task-finished', (report) => reports.set(report.taskId, report));
    await worker.run();

    await until(() => reports.has(finished.taskId) && reports.has(unfinished.taskId), 20_000, 'both messages to be handled');
    expect(reports.get(finished.taskId)?.state).toBe('ALREADY_FINISHED');
    expect(reports.get(unfinished.taskId)?.state).toBe('SUCCESS');
    // Not run again: the stored result is the first worker's.
    expect((await rig.results.get(finished.taskId)).result).toBe('stored by the first worker');
    expect((await rig.results.get(unfinished.taskId)).result).toBe(7);
    // Both were acknowledged: nothing is left in the queue.
    const channel = await rig.session.require().createChannel();
    const { messageCount } = await channel.checkQueue(queue);
    await channel.close();
    expect(messageCount).toBe(0);
  });
});
