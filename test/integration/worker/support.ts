/**
 * Shared pieces of the worker integration tests: settings for the real TLS services started by
 * test/support/global-setup.ts, unique names so test files can run in parallel, a worker child
 * process, and polling helpers.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';
import type { MongoClient } from 'mongodb';
import {
  brokerEnvSchema,
  mongoEnvSchema,
  toBrokerSettings,
  toMongoSettings,
  type BrokerSettings,
  type MongoSettings,
} from '../../../src/config/connections.js';
import { connectBroker } from '../../../src/queue/connection/broker-connection.js';
import { testServices } from '../../support/services.js';
import { until } from '../../support/until.js';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const TASK_MODULE = './worker-image/tasks/index.ts';

export function serviceEnv(): Record<string, string> {
  return testServices().env;
}

export function brokerSettings(env = serviceEnv()): BrokerSettings {
  return toBrokerSettings(brokerEnvSchema.parse(env));
}

export function mongoSettings(env = serviceEnv()): MongoSettings {
  return toMongoSettings(mongoEnvSchema.parse(env));
}

/** A name no other test file uses (queues, collections, node names). */
export function unique(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** Drops a test's result collection (if it got that far) and closes its client. */
export async function dropResultsAndClose(mongo: MongoClient | undefined, database: string, collection: string): Promise<void> {
  await mongo
    ?.db(database)
    .collection(collection)
    .drop()
    .catch(() => undefined);
  await mongo?.close();
}

/** Removes test queues from the shared broker. */
export async function deleteQueues(settings: BrokerSettings, queues: string[]): Promise<void> {
  const connection = await connectBroker(settings);
  try {
    const channel = await connection.createChannel();
    for (const queue of queues) {
      await channel.deleteQueue(queue);
      await channel.deleteExchange(queue).catch(() => undefined);
    }
  } finally {
    await connection.close().catch(() => undefined);
  }
}

export interface WorkerProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** Everything the worker logged so far (pino JSON lines). */
  output(): string;
  /** Resolves with the exit code (or signal name) of the `tsx` launcher, which mirrors the worker's. */
  exited: Promise<number | string>;
  /** SIGTERM to the launcher (relayed to the worker, like `docker stop`). */
  terminate(): void;
  /** SIGKILL to the whole process group: the worker dies on the spot, like an OOM kill. */
  kill(): void;
  waitForLog(pattern: RegExp, timeoutMs: number): Promise<void>;
}

/** Runs `tsx src/worker/main.ts` the way an operator does, configured only by environment. */
export function spawnWorker(env: Record<string, string>): WorkerProcess {
  const child = spawn(
    process.execPath,
    [fileURLToPath(new URL('../../../node_modules/tsx/dist/cli.mjs', import.meta.url)), 'src/worker/main.ts'],
    {
      cwd: repoRoot,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so kill() reaches the node process tsx starts, not only tsx.
      detached: true,
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return {
    child,
    output: () => output,
    exited,
    terminate: () => child.kill('SIGTERM'),
    kill: () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    },
    waitForLog: (pattern, timeoutMs) => until(() => pattern.test(output), timeoutMs, `worker log ${pattern}`).then(() => undefined),
  };
}
