/**
 * The workers of the worker and queue tests: a TypeScript worker in this process, configured the
 * way the tests share, and a stock Python Celery worker as a child process (interop_app.py or
 * canvas_tasks.py from test/support/celery), plus the wait for either to answer a ping; and the
 * queue rig most of them set up beside their workers.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { MongoClient } from 'mongodb';
import { pino } from 'pino';
import { connectMongo } from '../../../src/db/mongo-client.js';
import { BrokerSession } from '../../../src/queue/connection/broker-session.js';
import { TaskPublisher, type TaskPublisherOptions } from '../../../src/queue/publishing/task-publisher.js';
import { ResultStore } from '../../../src/queue/results/result-store.js';
import type { ControlClient } from '../../../src/queue/remote-control/control-client.js';
import { loadTaskModules } from '../../../src/worker/task-modules.js';
import { Worker } from '../../../src/worker/worker.js';
import type { WorkerOptions } from '../../../src/worker/worker-options.js';
import { workerServices } from '../../../src/worker/worker-services.js';
import type { MongoSettings } from '../../../src/config/connections.js';
import { celeryDir, stopProcess } from '../../support/celery-env.js';
import { until } from '../../support/until.js';
import { brokerSettings, deleteQueues, dropResultsAndClose, mongoSettings, repoRoot, TASK_MODULE } from './support.js';

const run = promisify(execFile);

export type TestWorkerOptions = Pick<WorkerOptions, 'nodeName' | 'queues' | 'resultDatabase' | 'resultCollection'> &
  Partial<WorkerOptions> & { mongo?: MongoSettings };

/**
 * A TypeScript worker on the suite's broker and database, not yet running: the example tasks
 * (worker-image/tasks) unless `tasks` is given, no mingle (other tests' workers are not its
 * business), silent unless TEST_LOG_LEVEL says otherwise. Any option can be overridden.
 */
export async function testWorker(options: TestWorkerOptions): Promise<Worker> {
  const { mongo = mongoSettings(), ...workerOptions } = options;
  const broker = workerOptions.broker ?? brokerSettings();
  return new Worker(
    {
      tasks: options.tasks ?? (await loadTaskModules([TASK_MODULE], repoRoot)),
      broker,
      mingle: false,
      logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
      ...workerOptions,
    },
    workerServices(broker, mongo),
  );
}

/** Where a test file's tasks go and where their results land: its own queues and result collection. */
interface QueueRigPlaces {
  queues: string[];
  database: string;
  collection: string;
}

/**
 * What a worker test sets up beside its workers: a client of the test engine with the result
 * store of the file's collection, a broker session and a task publisher on it (`publisher`
 * options besides the session, e.g. `declareQueues`). `close` takes them down and removes the
 * file's queues and results; the workers are the test's to stop first.
 */
export class QueueRig {
  private constructor(
    readonly mongo: MongoClient,
    readonly results: ResultStore,
    readonly session: BrokerSession,
    readonly publisher: TaskPublisher,
    private readonly places: QueueRigPlaces,
  ) {}

  static async open(places: QueueRigPlaces, publisher: Omit<TaskPublisherOptions, 'session'> = {}): Promise<QueueRig> {
    const mongo = await connectMongo(mongoSettings());
    const session = new BrokerSession({ settings: brokerSettings() });
    try {
      await session.waitUntilConnected(20_000);
    } catch (err) {
      await session.close();
      await mongo.close();
      throw err;
    }
    const results = new ResultStore(mongo, { database: places.database, collection: places.collection });
    return new QueueRig(mongo, results, session, new TaskPublisher({ session, ...publisher }), places);
  }

  async close(): Promise<void> {
    await this.publisher.close();
    await deleteQueues(brokerSettings(), this.places.queues).catch(() => undefined);
    await this.session.close();
    await dropResultsAndClose(this.mongo, this.places.database, this.places.collection);
  }
}

/** Creates the Celery virtualenvs when missing (test/support/python-celery.sh; quick when present). */
export async function prepareCelery(timeoutMs: number): Promise<void> {
  await run('bash', [join(repoRoot, 'test/support/python-celery.sh')], { cwd: repoRoot, timeout: timeoutMs });
}

export interface CeleryWorkerOptions {
  /** The virtualenv whose `celery` runs. */
  venv: string;
  /** The Celery app module in test/support/celery. */
  app?: string;
  queue: string;
  node: string;
  /** Its environment, usually celeryEnv(...). */
  env: NodeJS.ProcessEnv;
  /** Mingle and gossip on (off by default, so that a start does not wait on other workers). */
  mingle?: boolean;
}

export interface CeleryWorker {
  child: ChildProcess;
  node: string;
  /** Everything it printed so far. */
  log(): string;
  /** SIGTERM (a warm shutdown), SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<number | string | null>;
}

/** `celery -A <app> worker -P solo` consuming one queue, its output kept for failure messages. */
export function startCeleryWorker(o: CeleryWorkerOptions): CeleryWorker {
  const quiet = o.mingle ? [] : ['--without-mingle', '--without-gossip'];
  const child = spawn(
    join(o.venv, 'bin', 'celery'),
    ['-A', o.app ?? 'interop_app', 'worker', '-P', 'solo', '-Q', o.queue, '-n', o.node, ...quiet, '-l', 'INFO'],
    { cwd: celeryDir, env: o.env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  return { child, node: o.node, log: () => log, stop: (graceMs = 10_000) => stopProcess(child, graceMs) };
}

type Pong = NonNullable<Awaited<ReturnType<ControlClient['ping']>>[string]>;

/**
 * Waits until `node` answers a ping and returns its answer. With `celery`, its process ending
 * first fails at once, with its output, rather than after the timeout.
 */
export async function waitForPing(control: ControlClient, node: string, timeoutMs: number, celery?: CeleryWorker): Promise<Pong> {
  return until(
    async () => {
      if (celery && celery.child.exitCode !== null) throw new Error(`Celery worker exited (${celery.child.exitCode}):\n${celery.log()}`);
      return (await control.ping({ destination: [node], timeoutMs: 1_000 }))[node];
    },
    timeoutMs,
    `${node} to answer ping`,
  );
}
