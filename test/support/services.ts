/**
 * What test files get from test/support/global-setup.ts: connection details of the real TLS
 * services started once per vitest process, seen through the test worker that runs the file.
 *
 * Test files run side by side in several vitest workers on the same broker and engine. Each
 * worker works in a broker vhost of its own (created by the global set-up), so one file's queues,
 * remote-control broadcasts (`enable_events`, `rate_limit`, ...), task events and worker replies
 * never reach a file running beside it; and each worker's service and test databases start with
 * a prefix of its own. `testServices()` hands out exactly that per-worker view, with `env` (what
 * the service and the workers read) pointing at the worker's vhost.
 */
import { inject } from 'vitest';
import type { LocalServices } from '../../src/local-services/services.js';

/** What the global set-up provides: plain JSON, because vitest serialises provided values. */
export interface SharedTestServices {
  stateDir: string;
  /** ca.pem, server.*, api.*, worker.* (see src/local-services/certificate-set.ts). */
  certDir: string;
  mongo: LocalServices['mongo'];
  broker: LocalServices['broker'];
  /** The service's configuration variables (MONGO_*, BROKER_*), client certificate `api`. */
  env: Record<string, string>;
  /** The vhost of test worker i + 1 (VITEST_POOL_ID counts from 1). */
  workerVhosts: string[];
}

export interface TestServices extends Omit<SharedTestServices, 'workerVhosts'> {
  /** The vitest worker running this file (1, 2, ...): VITEST_POOL_ID. */
  worker: number;
  /** Every database this worker's tests create starts with it (e.g. `w1_`). */
  databasePrefix: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    services: SharedTestServices;
  }
}

/** The test worker's number: VITEST_POOL_ID, which vitest keeps between 1 and its worker count. */
export function testWorker(): number {
  const id = Number(process.env.VITEST_POOL_ID ?? '1');
  if (!Number.isInteger(id) || id < 1) throw new Error(`unexpected VITEST_POOL_ID ${process.env.VITEST_POOL_ID ?? ''}`);
  return id;
}

/** `url` (one broker address, or several `;`-separated) with `vhost` as its path. */
export function withVhost(urls: string, vhost: string): string {
  return urls
    .split(';')
    .map((address) => {
      const url = new URL(address);
      url.pathname = `/${encodeURIComponent(vhost)}`;
      return url.toString();
    })
    .join(';');
}

export function testServices(): TestServices {
  const shared = inject('services');
  if (!shared) throw new Error('test services missing: run this file in the `integration` vitest project');
  const worker = testWorker();
  const vhost = shared.workerVhosts[worker - 1];
  if (vhost === undefined) {
    throw new Error(`test worker ${worker} has no broker vhost: the global set-up made ${shared.workerVhosts.length} (maxWorkers)`);
  }
  const { workerVhosts: _vhosts, ...rest } = shared;
  const urls = withVhost(shared.broker.urls, vhost);
  return {
    ...rest,
    worker,
    databasePrefix: `w${worker}_`,
    broker: { ...shared.broker, vhost, url: withVhost(shared.broker.url, vhost), urls },
    env: { ...shared.env, BROKER_URL: urls },
  };
}
