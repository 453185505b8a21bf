/** A TypeScript worker in this process, consuming a queue of its own, writing results where the test app reads them. */
import { Worker } from '../../../src/worker/worker.js';
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
  const env = testServices().env;
  const nodeName = `${uniqueName('test-worker-')}@localhost`;
  const worker = new Worker({
    nodeName,
    queues: [queue],
    tasks: Object.values(exampleTasks).filter(isTaskDefinition),
    broker: toBrokerSettings(brokerEnvSchema.parse(env)),
    mongo: toMongoSettings(mongoEnvSchema.parse(env)),
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
