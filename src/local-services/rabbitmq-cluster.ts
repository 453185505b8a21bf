/**
 * An N-node RabbitMQ cluster on one host, from Debian's rabbitmq-server package: each node is a
 * private node as in ./rabbitmq.ts (own name `rabbit-<i>-<id>@localhost`, AMQPS port, Erlang
 * distribution port, data), all sharing one Erlang cookie and listing each other for
 * classic-config peer discovery. For tests and for operators who want a cluster without
 * containers; the compose stack's cluster profile does the same with the official image.
 *
 * On a first start the first node boots alone and forms the cluster; the others boot after it
 * and join it (a blank node joins the first listed peer that answers). Booting blank nodes all at
 * once could let two of them each form a cluster of their own. On a restart they boot together:
 * a member waits for the peers it last saw running, which may be any of them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startRabbitMq, type RabbitMqHandle, type RabbitMqOptions } from './rabbitmq.js';

export interface RabbitMqClusterOptions extends Omit<RabbitMqOptions, 'dir' | 'port' | 'nodeName' | 'erlangCookie' | 'clusterNodes'> {
  /** Working directory; node i lives in <dir>/node-<i>. */
  dir: string;
  /** Number of nodes (default 3). */
  nodes?: number;
  /** Node i (from 0) listens for AMQPS on basePort + i; default: free ports. */
  basePort?: number;
}

export interface RabbitMqCluster {
  nodes: RabbitMqHandle[];
  /** Every node's amqps:// address, `;`-separated: a BROKER_URL for the API and the workers. */
  brokerUrl: string;
  /** Names of the nodes the cluster reports running, asked through node `via`. */
  runningNodes(via?: number): Promise<string[]>;
  stop(): Promise<void>;
}

export function clusterNodeNames(dir: string, count: number): string[] {
  const id = createHash('sha256').update(resolve(dir)).digest('hex').slice(0, 8);
  return Array.from({ length: count }, (_, i) => `rabbit-${i + 1}-${id}@localhost`);
}

/** The `running_nodes` of `rabbitmqctl cluster_status --formatter json`. */
async function runningNodesOf(node: RabbitMqHandle): Promise<string[]> {
  const status = JSON.parse(await node.ctl(['cluster_status', '--formatter', 'json'])) as { running_nodes?: string[] };
  return status.running_nodes ?? [];
}

export async function startRabbitMqCluster(opts: RabbitMqClusterOptions): Promise<RabbitMqCluster> {
  const count = opts.nodes ?? 3;
  if (!Number.isInteger(count) || count < 1) throw new Error(`a cluster needs at least one node (got ${count})`);
  const dir = resolve(opts.dir);
  const names = clusterNodeNames(dir, count);
  const erlangCookie = randomBytes(24).toString('hex');
  const { nodes: _count, basePort, ...nodeOptions } = opts;
  const start = (i: number): Promise<RabbitMqHandle> =>
    startRabbitMq({
      ...nodeOptions,
      dir: join(dir, `node-${i + 1}`),
      port: basePort === undefined ? undefined : basePort + i,
      nodeName: names[i],
      erlangCookie,
      clusterNodes: names,
    });

  const nodes: RabbitMqHandle[] = [];
  const stopAll = (): Promise<void> => Promise.all(nodes.map((n) => n.stop().catch(() => undefined))).then(() => undefined);
  try {
    const firstStart = !existsSync(join(dir, 'node-1', 'data', names[0] as string));
    if (firstStart) {
      nodes.push(await start(0));
      for (let i = 1; i < count; i++) nodes.push(await start(i));
    } else {
      const started = await Promise.allSettled(names.map((_, i) => start(i)));
      for (const result of started) if (result.status === 'fulfilled') nodes.push(result.value);
      const failed = started.find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
    }
    // A node that found no peer would have booted as a cluster of its own: check they are one.
    const deadline = Date.now() + (opts.startTimeoutMs ?? 90_000);
    for (;;) {
      const running = await runningNodesOf(nodes[0] as RabbitMqHandle);
      if (names.every((name) => running.includes(name))) break;
      if (Date.now() > deadline) throw new Error(`the nodes did not form one cluster: node 1 sees ${running.join(', ')}`);
      await sleep(500);
    }
  } catch (err) {
    await stopAll();
    throw err;
  }

  let stopping: Promise<void> | undefined;
  return {
    nodes,
    brokerUrl: nodes.map((n) => n.url).join(';'),
    runningNodes: (via = 0) => runningNodesOf(nodes[via] as RabbitMqHandle),
    stop: () => (stopping ??= stopAll()),
  };
}
