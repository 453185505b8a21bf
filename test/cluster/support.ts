/**
 * What the cluster tests share: the services of ./global-setup.ts, API instances and
 * TypeScript worker processes pointed at the cluster with the nodes in an order the test chooses (the
 * first address is the node each connects to first).
 */
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inject } from 'vitest';
import { loadSettings } from '../../src/config/settings.js';
import { createApp } from '../../src/http/app.js';
import { createLogger } from '../../src/log/logger.js';
import type { LocalServices } from '../../src/runtime/local/services.js';
import { createServiceContext, type ServiceContext } from '../../src/service.js';
import { spawnWorker, TASK_MODULE, type WorkerProcess } from '../integration/worker/support.js';

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

export interface ApiInstance {
  url: string;
  ctx: ServiceContext;
  close(): Promise<void>;
}

/** The API (createApp over a full service context) on a free port, as one API process runs it. */
export async function startApi(serviceDatabase: string, firstNode: number): Promise<ApiInstance> {
  const settings = loadSettings({
    ...clusterServices().env,
    BROKER_URL: brokerUrlFrom(firstNode),
    SECRET_KEY,
    SERVICE_DATABASE: serviceDatabase,
    ALLOWED_HOSTS: 'localhost,127.0.0.1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
  });
  const ctx = await createServiceContext(settings, createLogger(settings.logLevel));
  const server: Server = createApp(ctx).listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    ctx,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await ctx.close();
    },
  };
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

export async function until<T>(probe: () => Promise<T | undefined | false>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
