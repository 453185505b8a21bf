/**
 * vitest globalSetup of the `integration` project: starts the real services once per run, in a
 * state directory of their own (parallel runs don't collide), creates a broker vhost for each
 * vitest worker, and provides their connection details to every test file (see ./services.ts,
 * which hands each file its worker's view). Set TEST_KEEP_STATE=1 to keep the directory (logs,
 * data, certificates) after the run.
 */
import { readdir, rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { startLocalServices, type LocalServices } from '../../src/local-services/services.js';
import type { SharedTestServices } from './services.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** State directories of earlier runs that were killed before their teardown (their pid is gone). */
async function removeStaleStateDirs(): Promise<void> {
  const entries = await readdir(join(repoRoot, '.state')).catch(() => [] as string[]);
  const stale = entries.filter((name) => {
    const pid = /^test-(\d+)$/.exec(name)?.[1];
    return pid !== undefined && Number(pid) !== process.pid && !isAlive(Number(pid));
  });
  await Promise.all(stale.map((name) => rm(join(repoRoot, '.state', name), { recursive: true, force: true })));
}

interface SharedServices {
  info: SharedTestServices;
  stop: () => Promise<void>;
  users: number;
}

/**
 * The integration and e2e projects both name this file as their globalSetup; vitest runs it
 * once per project in the same process. They share one set of services (kept on globalThis,
 * since each project may load this module afresh), stopped when the last project tears down.
 */
const registry = globalThis as typeof globalThis & { __cybercomTestServices?: Promise<SharedServices> };

/** The broker vhost of vitest worker `worker` (1-based). */
export function workerVhost(worker: number): string {
  return `test-w${worker}`;
}

async function startShared(workers: number): Promise<SharedServices> {
  const stateDir = join(repoRoot, '.state', `test-${process.pid}`);
  await removeStaleStateDirs();
  const keep = process.env.TEST_KEEP_STATE === '1';
  const started = Date.now();
  let services: LocalServices;
  try {
    // Expired documents go within seconds instead of within a minute: the tests of TTL indexes
    // (and of the browser sessions that expire through one) wait for the engine to delete them.
    services = await startLocalServices({ stateDir, ttlIntervalSeconds: 2 });
  } catch (err) {
    if (!keep) await rm(stateDir, { recursive: true, force: true });
    throw err;
  }
  // One vhost per worker, each with the permissions the service's broker login has on its own.
  const workerVhosts = Array.from({ length: workers }, (_, i) => workerVhost(i + 1));
  try {
    await services.brokerNodes[0]?.addVhosts(workerVhosts, services.broker.username);
  } catch (err) {
    await services.stop().catch(() => undefined);
    if (!keep) await rm(stateDir, { recursive: true, force: true });
    throw err;
  }
  console.log(
    `[global-setup] ${services.mongo.kind} :${services.mongo.port} and rabbitmq :${services.broker.port} ready in ${((Date.now() - started) / 1000).toFixed(1)} s (${stateDir})`,
  );
  return {
    info: { stateDir, certDir: services.certDir, mongo: services.mongo, broker: services.broker, env: services.env(), workerVhosts },
    users: 0,
    stop: async () => {
      await services.stop();
      if (!keep) await rm(stateDir, { recursive: true, force: true });
    },
  };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // VITEST_POOL_ID stays within 1..maxWorkers (a worker that ends hands its number on).
  const workers = Math.max(1, Number(project.vitest.config.maxWorkers ?? availableParallelism()));
  registry.__cybercomTestServices ??= startShared(workers);
  const shared = await registry.__cybercomTestServices;
  shared.users += 1;
  project.provide('services', shared.info);
  return async () => {
    shared.users -= 1;
    if (shared.users === 0) {
      registry.__cybercomTestServices = undefined;
      await shared.stop();
    }
  };
}
