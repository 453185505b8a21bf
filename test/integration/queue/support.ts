/** A TypeScript worker in this process, consuming a queue of its own, writing results where the test app reads them. */
import { Worker } from '../../../src/worker/worker.js';
import type { WorkerOptions } from '../../../src/worker/worker-options.js';
import { workerServices } from '../../../src/worker/worker-services.js';
import * as exampleTasks from '../../../worker-image/tasks/index.js';
import { brokerEnvSchema, mongoEnvSchema, toBrokerSettings, toMongoSettings } from '../../../src/config/connections.js';
import { isTaskDefinition } from '../../../src/worker/task-definition.js';
import { testServices } from '../../support/services.js';
import type { ChannelModel } from 'amqplib';
import type { Collection } from 'mongodb';
import type { RunDoc } from '../../../src/queue/schedules/schedule-store.js';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';
import { connectBroker } from '../../../src/queue/connection/broker-connection.js';
import { brokerSettings } from '../worker/support.js';
import { createLogger } from '../../../src/log/logger.js';
import { until } from '../../support/until.js';
import { expect } from 'vitest';

export async function startWorker(
  resultDatabase: string,
  queue = uniqueName('q-'),
  options: { concurrency?: number } = {},
): Promise<{ worker: Worker; queue: string; nodeName: string }> {
  const nodeName = `${uniqueName('test-worker-')}@localhost`;
  const worker = workerOnTestServices({
    nodeName,
    queues: [queue],
    tasks: Object.values(exampleTasks).filter(isTaskDefinition),
    resultDatabase,
    resultCollection: 'tombstone',
    concurrency: options.concurrency ?? 2,
    // The revoke tests wait for STARTED.
    trackStarted: true,
    shutdownGraceMs: 2_000,
    logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent', 'worker'),
  });
  await worker.run();
  return { worker, queue, nodeName };
}

/** A worker (not yet running) on the test services' broker and engine. */
export function workerOnTestServices(options: Omit<WorkerOptions, 'broker'>): Worker {
  const env = testServices().env;
  const broker = toBrokerSettings(brokerEnvSchema.parse(env));
  return new Worker({ ...options, broker }, workerServices(broker, toMongoSettings(mongoEnvSchema.parse(env))));
}

/**
 * A test app whose API offers `tasks.add` on a queue that nothing consumes any more: a worker
 * consumed it long enough for one submission to complete (the task list is kept for the whole
 * file), then stopped. What the API publishes from then on stays on the queue, to be counted or
 * read with the returned broker connection.
 */
export async function appWithIdleQueue(username: string): Promise<{ app: TestApp; queue: string; token: string; broker: ChannelModel }> {
  const app = await startTestApp({ TASK_LIST_CACHE_S: '3600' });
  const { worker, queue } = await startWorker(app.ctx.settings.serviceDatabase);
  try {
    await app.users.createUser({ username, password: `pw-${username}-123`, permissions: ['cybercom_queue.task.tasks.add'] });
    const token = await app.users.tokenFor(username);
    const first = await call(app.url, 'POST', '/api/queue/run/tasks.add/?wait=10', {
      token,
      body: { function: 'tasks.add', queue, args: [1, 2] },
    });
    if (first.status !== 200) throw new Error(`the first submission answered ${first.status}: ${first.text}`);
    return { app, queue, token, broker: await connectBroker(brokerSettings()) };
  } finally {
    await worker.close();
  }
}

/** A one-off (clocked) schedule of `tasks.add` made through the API at `url`: its id (the 201 checked). */
export async function createClocked(
  url: string,
  token: string,
  schedule: { prefix: string; args: number[]; queue: string; at: Date },
): Promise<string> {
  const made = await call(url, 'POST', '/api/queue/schedules/', {
    token,
    body: {
      name: uniqueName(schedule.prefix),
      task: 'tasks.add',
      args: schedule.args,
      queue: schedule.queue,
      clocked: schedule.at.toISOString(),
    },
  });
  expect(made.status, made.text).toBe(201);
  return made.json.id as string;
}

/** The run of a schedule once it is published, waited for up to `timeoutMs`. */
export function publishedRun(runs: Collection<RunDoc>, scheduleId: string, timeoutMs: number): Promise<RunDoc> {
  return until(async () => (await runs.findOne({ schedule_id: scheduleId, state: 'published' })) ?? undefined, timeoutMs, 'the fire');
}
