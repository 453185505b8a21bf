/**
 * The workers and queues part of `ops/status`: read from a live TypeScript worker through the
 * broker (ping/stats/active/active_queues broadcasts, heartbeats, passive queue declares), and
 * printed as tables.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brokerEnvSchema, toBrokerSettings } from '../../../src/config/connections.js';
import { formatClusterStatus, readClusterStatus } from '../../../src/installation/cluster-status.js';
import { BrokerSession } from '../../../src/queue/connection/broker-session.js';
import { TaskPublisher } from '../../../src/queue/publishing/task-publisher.js';
import type { Worker } from '../../../src/worker/worker.js';
import { serviceDatabaseName, uniqueName } from '../../support/app.js';
import { testServices } from '../../support/services.js';
import { until } from '../../support/until.js';
import { startWorker } from '../queue/support.js';

let session: BrokerSession;
let worker: Worker;
let queue: string;
let nodeName: string;

beforeAll(async () => {
  session = new BrokerSession({ settings: toBrokerSettings(brokerEnvSchema.parse(testServices().env)) }).start();
  await session.waitUntilConnected(10_000);
  ({ worker, queue, nodeName } = await startWorker(serviceDatabaseName()));
});

afterAll(async () => {
  await worker?.close();
  await session?.close();
});

describe('ops/status workers and queues', () => {
  it('lists the worker with its counts and heartbeat, and its queue with depth and consumers', async () => {
    // One task running (sleep) and processed count of at least one (add) before reading.
    const publisher = new TaskPublisher({ session, declareQueues: 'passive' });
    try {
      await publisher.publish({ taskName: 'tasks.add', taskId: uniqueName('id-'), args: [1, 2], kwargs: {}, queue });
      await until(
        async () => ((await readClusterStatus(session, 300)).workers.find((w) => w.node === nodeName)?.processed ?? 0) >= 1,
        20_000,
        'the add to finish',
      );
      await publisher.publish({ taskName: 'tasks.sleep', taskId: uniqueName('id-'), args: [6], kwargs: {}, queue });
    } finally {
      await publisher.close();
    }
    await new Promise((r) => setTimeout(r, 500));
    const status = await readClusterStatus(session);
    const row = status.workers.find((w) => w.node === nodeName);
    expect(row).toMatchObject({ node: nodeName, online: true, active: 1 });
    expect(row?.processed).toBeGreaterThanOrEqual(1);
    expect(Date.now() - Date.parse(row?.lastHeartbeat ?? '')).toBeLessThan(5_000);
    expect(status.queues.find((q) => q.name === queue)).toEqual({ name: queue, messages: 0, consumers: 1 });

    const text = formatClusterStatus(status);
    expect(text).toMatch(new RegExp(`^  ${nodeName.replace(/[.@-]/g, '\\$&')} +online +1 +\\d+  \\d{4}-`, 'm'));
    expect(text).toMatch(new RegExp(`^  ${queue} +0 +1$`, 'm'));
  });
});
