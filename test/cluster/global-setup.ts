/**
 * vitest globalSetup of the `cluster` project (`npm run test:cluster`): a database and a
 * three-node RabbitMQ cluster (Debian's package, TLS to clients and between nodes), started
 * once in a state directory of their own. Test files get the connection details through
 * `inject('cluster')`; the node process ids let them kill a node the way a crash does.
 * TEST_KEEP_STATE=1 keeps the directory (logs, data) after the run.
 */
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { startLocalServices } from '../../src/local-services/services.js';
import type { ClusterServices } from './support.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const stateDir = join(repoRoot, '.state', `cluster-${process.pid}`);
  const keep = process.env.TEST_KEEP_STATE === '1';
  const started = Date.now();
  const services = await startLocalServices({ stateDir, brokerNodes: 3 }).catch(async (err: unknown) => {
    if (!keep) await rm(stateDir, { recursive: true, force: true });
    throw err;
  });
  console.log(
    `[cluster-setup] ${services.mongo.kind} and ${services.brokerNodes.length} RabbitMQ nodes ready in ${((Date.now() - started) / 1000).toFixed(1)} s (${stateDir})`,
  );
  const info: ClusterServices = {
    stateDir,
    env: services.env(),
    mongo: services.mongo,
    nodes: services.brokerNodes.map((node) => ({
      name: node.nodeName,
      url: node.url,
      port: node.port,
      pid: node.pid,
      logFile: node.logFile,
    })),
  };
  project.provide('cluster', info);
  return async () => {
    await services.stop();
    if (!keep) await rm(stateDir, { recursive: true, force: true });
  };
}
