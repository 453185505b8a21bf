/**
 * What the cluster tests share: the services of ./global-setup.ts, API instances (the real `serve`
 * command, one or several API processes) and TypeScript worker processes pointed at the cluster
 * with the nodes in an order the test chooses (the first address is the node each connects to
 * first).
 */
import { inject } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import { createLogger } from '../../src/log/logger.js';
import type { LocalServices } from '../../src/local-services/services.js';
import { createServiceContext } from '../../src/app/service-context.js';
import { spawnWorker, TASK_MODULE, type WorkerProcess } from '../integration/worker/support.js';
import { spawnServe, type ServeLogLine } from '../support/serve-process.js';
import { until } from '../support/until.js';

export type { ServeLogLine };

export interface ClusterNode {
  name: string;
  url: string;
  port: number;
  /** Process group of the node (its Erlang VM included). */
  pid: number;
  logFile: string;
}

export interface ClusterServices {
  stateDir: string;
  /** MONGO_*, BROKER_URL (every node), TASK_QUEUE_TYPE=quorum, BROKER_TLS_*. */
  env: Record<string, string>;
  mongo: LocalServices['mongo'];
  nodes: ClusterNode[];
}

declare module 'vitest' {
  export interface ProvidedContext {
    cluster: ClusterServices;
  }
}

export function clusterServices(): ClusterServices {
  const cluster = inject('cluster');
  if (!cluster) throw new Error('cluster services missing: run this file in the `cluster` vitest project (npm run test:cluster)');
  return cluster;
}

/** BROKER_URL listing every node, starting with node `first` (0-based). */
export function brokerUrlFrom(first: number): string {
  const { nodes } = clusterServices();
  return nodes.map((_, i) => (nodes[(first + i) % nodes.length] as ClusterNode).url).join(';');
}

/** SIGKILL to the node's process group: the node dies without closing anything. */
export function killNode(node: ClusterNode): void {
  process.kill(-node.pid, 'SIGKILL');
}

export const SECRET_KEY = 'cluster-test-secret-key-0123456789abcdefghijklmnopqrstuvwxyz';

export const BROKER_CONNECTED = 'broker connected';
export const BROKER_LOST = 'broker connection lost; reconnecting';

export interface ClusterApi {
  url: string;
  /** The processes that answer requests: each API process, or the one process with API_PROCESSES=1. */
  pids: number[];
  /** Every log line so far. */
  lines(): ServeLogLine[];
  output(): string;
  /** Kills the whole process group (primary, API processes, tsx). */
  stop(): Promise<void>;
}

/**
 * `serve` with API_PROCESSES=`processes` on a free port; resolves once it listens and every one of
 * its API processes is connected to the broker.
 */
export async function startClusterApi(o: { serviceDatabase: string; firstNode: number; processes: number }): Promise<ClusterApi> {
  const serve = await spawnServe(
    {
      BROKER_URL: brokerUrlFrom(o.firstNode),
      SECRET_KEY,
      SERVICE_DATABASE: o.serviceDatabase,
      API_PROCESSES: String(o.processes),
      LOG_LEVEL: 'info',
    },
    clusterServices().env,
  );
  try {
    const url = await serve.listening();
    const lines = serve.lines;
    const listening = lines().find((l) => l.msg === 'API server listening') as ServeLogLine;
    const pids =
      o.processes > 1
        ? lines().flatMap((l) => (l.msg === 'API process ready' && l.workerPid !== undefined ? [l.workerPid] : []))
        : [listening.pid as number];
    await until(
      async () => pids.every((pid) => lines().some((l) => l.pid === pid && l.msg === BROKER_CONNECTED)),
      60_000,
      `every API process to reach the broker; output:\n${serve.output()}`,
    );
    return { url, pids, lines, output: serve.output, stop: serve.kill };
  } catch (err) {
    await serve.kill();
    throw err;
  }
}

/**
 * A user allowed to submit tasks, and their token: made through a short-lived service context
 * against the APIs' service database, as `createsuperuser` does it beside a running service.
 */
export async function createSubmitter(serviceDatabase: string, username: string): Promise<string> {
  const settings = loadSettings({
    ...clusterServices().env,
    SECRET_KEY,
    SERVICE_DATABASE: serviceDatabase,
    METRICS_ENABLED: 'false',
    LOG_LEVEL: 'silent',
  });
  const ctx = await createServiceContext(settings, createLogger(settings.logLevel));
  try {
    await ctx.auth.users.createUser({ username, password: `pw-${username}-123`, permissions: ['cybercom_queue.task.tasks.add'] });
    return await ctx.auth.users.tokenFor(username);
  } finally {
    await ctx.close();
  }
}

/** A TypeScript worker process (`src/worker/main.ts`) with the example tasks, first connecting to `firstNode`. */
export async function spawnClusterWorker(o: {
  nodeName: string;
  queue: string;
  resultDatabase: string;
  firstNode: number;
  concurrency: number;
}): Promise<ClusterWorker> {
  const worker = spawnWorker({
    ...clusterServices().env,
    BROKER_URL: brokerUrlFrom(o.firstNode),
    WORKER_NODE_NAME: o.nodeName,
    WORKER_QUEUES: o.queue,
    WORKER_TASK_MODULES: TASK_MODULE,
    WORKER_CONCURRENCY: String(o.concurrency),
    RESULT_DATABASE: o.resultDatabase,
    WORKER_SHUTDOWN_GRACE_S: '2',
    LOG_LEVEL: 'info',
  });
  const readyLines = (): Array<{ broker?: string }> =>
    worker
      .output()
      .split('\n')
      .filter((line) => line.includes('"worker ready"'))
      .map((line) => JSON.parse(line) as { broker?: string });
  await worker.waitForLog(/"worker ready"/, 120_000);
  return {
    process: worker,
    brokerAddress: () => readyLines().at(-1)?.broker ?? null,
    readyCount: () => readyLines().length,
  };
}

export interface ClusterWorker {
  process: WorkerProcess;
  /** The node the worker said it consumes from when it last became ready. */
  brokerAddress(): string | null;
  /** How often it became ready (1 + reconnects). */
  readyCount(): number;
}
