/**
 * Quorum task queues with the newest stock Celery (.venv-celery-latest): a queue the TypeScript
 * side declares with TASK_QUEUE_TYPE=quorum is consumed by a Python Celery worker configured with
 * `task_default_queue_type = "quorum"`, which runs a task the TypeScript publisher sent; a Celery
 * worker left at its default (classic) is refused by RabbitMQ with PRECONDITION_FAILED, which is
 * why the manual (docs/scaling-out.md, "The broker cluster") tells Python workers what to set.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declareTaskQueue } from '../../../src/queue/protocol/entities.js';
import { celeryEnv } from '../../support/celery-env.js';
import { repoRoot, unique } from './support.js';
import { until } from '../../support/until.js';
import { QueueRig, startCeleryWorker, type CeleryWorker } from './fixtures.js';

const venv = join(repoRoot, '.venv-celery-latest');
const queue = unique('py-quorum');
const collection = unique('tombstone');
const database = 'cybercom_test';

let rig: QueueRig;
const workers: CeleryWorker[] = [];

function startQuorumWorker(node: string, queueType: string | undefined): CeleryWorker {
  const env = {
    ...celeryEnv({ venv, queue, resultDatabase: database, resultCollection: collection }),
    ...(queueType ? { INTEROP_QUEUE_TYPE: queueType } : {}),
  };
  const worker = startCeleryWorker({ venv, queue, node, env });
  workers.push(worker);
  return worker;
}

beforeAll(async () => {
  // Like the API, the rig.publisher only checks that the queue exists.
  rig = await QueueRig.open({ queues: [queue], database, collection }, { declareQueues: 'passive' });
  // What the TypeScript worker does with TASK_QUEUE_TYPE=quorum.
  const channel = await rig.session.require().createChannel();
  await declareTaskQueue(channel, queue, false, 'quorum');
  await channel.close();
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await rig?.close();
});

describe('quorum task queues and the newest Celery', () => {
  it('a Celery worker with task_default_queue_type = "quorum" consumes the quorum queue', async () => {
    const worker = startQuorumWorker(`${unique('py-quorum')}@test`, 'quorum');
    const { taskId } = await rig.publisher.publish({ taskName: 'interop.add', args: [20, 22], queue });
    const result = await until(
      async () => {
        if (worker.child.exitCode !== null) throw new Error(`Celery worker exited (${worker.child.exitCode}):\n${worker.log()}`);
        const r = await rig.results.get(taskId);
        return r.status === 'SUCCESS' ? r : undefined;
      },
      90_000,
      `the Celery worker to run the task:\n${worker.log()}`,
    );
    expect(result.result).toBe(42);
    expect(worker.log()).not.toContain('PRECONDITION_FAILED');
    // The queue is still the quorum queue the TypeScript side declared.
    const channel = await rig.session.require().createChannel();
    channel.on('error', () => undefined);
    await expect(declareTaskQueue(channel, queue, false, 'quorum')).resolves.toBeUndefined();
    await channel.close();
  });

  it('a Celery worker at its default (classic) is refused with PRECONDITION_FAILED', async () => {
    const worker = startQuorumWorker(`${unique('py-classic')}@test`, undefined);
    await until(() => /PRECONDITION_FAILED/.test(worker.log()) || undefined, 90_000, 'the classic declaration to be refused');
    expect(worker.log()).toMatch(/inequivalent arg 'x-queue-type'/);
  });
});
