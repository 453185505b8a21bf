/**
 * The broker side of the cluster topology: three RabbitMQ nodes (compose services rabbitmq,
 * rabbitmq-2, rabbitmq-3 from the official image, compose.cluster.yaml) forming one cluster by
 * classic-config peer discovery, Erlang distribution between them over TLS. This module holds
 * what the installer derives from it: the node names, the clients' BROKER_URL, the queue type,
 * and the Erlang cookie the nodes share.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../pki/files.js';
import type { TaskQueueType } from '../config/connections.js';
import type { InstallLayout } from './layout.js';
import { ACCOUNTS } from './secrets.js';

/** Compose service names of the nodes; the first is the one whose AMQPS port is published. */
export const BROKER_CLUSTER_NODES = ['rabbitmq', 'rabbitmq-2', 'rabbitmq-3'] as const;
const AMQPS_PORT = 5671;

/** Task queues are replicated across the nodes: quorum queues (Python workers must match). */
export const CLUSTER_QUEUE_TYPE: TaskQueueType = 'quorum';

/** The API's and the local worker's BROKER_URL inside the stack: every node, tried in turn. */
export function brokerClusterUrl(): string {
  return BROKER_CLUSTER_NODES.map((node) => `amqps://${node}:${AMQPS_PORT}/${ACCOUNTS.vhost}`).join(';');
}

/** Where the installation keeps the cookie (config/, 0600, backed up with the other secrets). */
export function erlangCookieFile(layout: InstallLayout): string {
  return join(layout.configDir, 'erlang-cookie');
}

/** What the Erlang runtime accepts as a cookie: printable characters, at most 255 of them. */
const COOKIE_PATTERN = /^[A-Za-z0-9]{20,255}$/;

/**
 * The nodes' shared Erlang cookie: kept when present and valid, generated otherwise. The nodes
 * of a running cluster all hold the same one, so it is never replaced behind their back.
 */
export async function ensureErlangCookie(file: string): Promise<{ cookie: string; generated: boolean }> {
  const existing = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (existing !== undefined && COOKIE_PATTERN.test(existing.trim())) return { cookie: existing.trim(), generated: false };
  const cookie = randomBytes(32).toString('hex');
  await writeFileAtomic(file, cookie, 0o600);
  return { cookie, generated: true };
}
