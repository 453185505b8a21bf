/**
 * Worker entry point: `npx tsx src/worker/main.ts` (configuration from the environment, see
 * `--help`). Exit codes: 0 after a graceful stop (SIGTERM/SIGINT), 2 for invalid configuration
 * or task modules, 1 for any other failure.
 */
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { WORKER_ENVIRONMENT, WorkerConfigError, loadWorkerConfig } from './config.js';
import { TaskModuleError, loadTaskModules } from './task-modules.js';
import { DuplicateTaskError } from './task-registry.js';
import { Worker } from './worker.js';
import { workerServices } from './worker-services.js';

export function workerHelp(): string {
  const width = Math.max(...Object.keys(WORKER_ENVIRONMENT).map((k) => k.length));
  return [
    'Usage: worker   (all settings come from the environment)',
    '',
    'Runs Celery protocol-2 tasks from RabbitMQ and stores results in MongoDB (Celery format).',
    'Also reads the shared MONGO_* and BROKER_* connection variables.',
    '',
    ...Object.entries(WORKER_ENVIRONMENT).map(([name, text]) => `  ${name.padEnd(width)}  ${text}`),
    '',
  ].join('\n');
}

/** Runs a worker until SIGTERM/SIGINT; resolves with the process exit code. */
export async function runWorkerProcess(argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(workerHelp());
    return 0;
  }
  let config;
  try {
    config = loadWorkerConfig(env);
  } catch (error) {
    if (error instanceof WorkerConfigError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  }
  const logger = pino({ level: config.logLevel, base: { node: config.nodeName } });

  let tasks;
  try {
    tasks = await loadTaskModules(config.taskModules);
  } catch (error) {
    if (error instanceof TaskModuleError) {
      logger.fatal(error.message);
      return 2;
    }
    throw error;
  }
  if (tasks.length === 0) logger.warn('no task modules configured (WORKER_TASK_MODULES); the worker will reject every task');

  let worker: Worker;
  try {
    worker = new Worker(
      {
        nodeName: config.nodeName,
        queues: config.queues,
        tasks,
        broker: config.broker,
        resultDatabase: config.resultDatabase,
        resultCollection: config.resultCollection,
        concurrency: config.concurrency,
        prefetchMultiplier: config.prefetchMultiplier,
        trackStarted: config.trackStarted,
        sendTaskEvents: config.sendTaskEvents,
        shutdownGraceMs: config.shutdownGraceMs,
        maxDeliveries: config.maxDeliveries,
        defaultTimeLimitSeconds: config.defaultTimeLimitSeconds,
        logger,
      },
      workerServices(config.broker, config.mongo),
    );
  } catch (error) {
    if (error instanceof DuplicateTaskError) {
      logger.fatal(error.message);
      return 2;
    }
    throw error;
  }

  const stopped = new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals): void => {
      // A launcher (tsx, an init) may deliver the same stop twice; the grace period bounds it anyway.
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'stop requested; finishing running tasks');
      void worker.close().then(resolve);
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  await worker.run();
  await stopped;
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runWorkerProcess().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`worker failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
