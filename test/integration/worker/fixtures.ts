/**
 * The workers of the worker and queue tests: a TypeScript worker in this process, configured the
 * way the tests share, and a stock Python Celery worker as a child process (interop_app.py or
 * canvas_tasks.py from test/support/celery), plus the wait for either to answer a ping.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { pino } from 'pino';
import type { ControlClient } from '../../../src/queue/remote-control/control-client.js';
import { loadTaskModules } from '../../../src/worker/task-modules.js';
import { Worker, type WorkerOptions } from '../../../src/worker/worker.js';
import { celeryDir, stopProcess } from '../../support/celery-env.js';
import { until } from '../../support/until.js';
import { brokerSettings, mongoSettings, repoRoot, TASK_MODULE } from './support.js';

const run = promisify(execFile);

export type TestWorkerOptions = Pick<WorkerOptions, 'nodeName' | 'queues' | 'resultDatabase' | 'resultCollection'> & Partial<WorkerOptions>;

/**
 * A TypeScript worker on the suite's broker and database, not yet running: the example tasks
 * (worker-image/tasks) unless `tasks` is given, no mingle (other tests' workers are not its
 * business), silent unless TEST_LOG_LEVEL says otherwise. Any option can be overridden.
 */
export async function testWorker(options: TestWorkerOptions): Promise<Worker> {
  return new Worker({
    tasks: options.tasks ?? (await loadTaskModules([TASK_MODULE], repoRoot)),
    broker: brokerSettings(),
    mongo: mongoSettings(),
    mingle: false,
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    ...options,
  });
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
