/** A TypeScript worker in this process, consuming a queue of its own, writing results where the test app reads them. */
import { Worker } from '../../../src/worker/worker.js';
import type { WorkerOptions } from '../../../src/worker/worker-options.js';
import { workerServices } from '../../../src/worker/worker-services.js';
import * as exampleTasks from '../../../worker-image/tasks/index.js';
import { brokerEnvSchema, mongoEnvSchema, toBrokerSettings, toMongoSettings } from '../../../src/config/connections.js';
import { isTaskDefinition } from '../../../src/worker/task-definition.js';
import { testServices } from '../../support/services.js';
import { uniqueName } from '../../support/app.js';
import { createLogger } from '../../../src/log/logger.js';

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
