/** One place that turns BrokerSettings into an amqplib connection (AMQPS with a client certificate). */
import { readFileSync } from 'node:fs';
import amqp from 'amqplib';
import type { BrokerSettings } from '../../config/connections.js';

export function brokerUrlWithCredentials(settings: BrokerSettings): string {
  const url = new URL(settings.url);
  if (settings.username !== undefined) url.username = encodeURIComponent(settings.username);
  if (settings.password !== undefined) url.password = encodeURIComponent(settings.password);
  if (settings.heartbeatSeconds > 0 && !url.searchParams.has('heartbeat')) {
    url.searchParams.set('heartbeat', String(settings.heartbeatSeconds));
  }
  return url.toString();
}

/** Every address of the broker: BROKER_URL's first node, then the others of the cluster. */
export function brokerAddresses(settings: BrokerSettings): string[] {
  return [settings.url, ...(settings.alternateUrls ?? [])];
}

/** How long one node may take to accept the TCP connection before the next one is tried. */
const CONNECT_TIMEOUT_MS = 10_000;

export function brokerSocketOptions(settings: BrokerSettings): Record<string, unknown> {
  // A node that died without closing its sockets (power loss, partition) would otherwise hold
  // the attempt for the kernel's TCP timeout, minutes, before another node is tried.
  const options: Record<string, unknown> = { timeout: CONNECT_TIMEOUT_MS };
  if (settings.tlsCaFile !== undefined) options.ca = [readFileSync(settings.tlsCaFile)];
  if (settings.tlsCertFile !== undefined) options.cert = readFileSync(settings.tlsCertFile);
  if (settings.tlsKeyFile !== undefined) options.key = readFileSync(settings.tlsKeyFile);
  // Node refuses SNI for IP literals; amqplib fills servername from the host name otherwise.
  return options;
}

/** Connects to `settings.url` (one node; BrokerSession walks the alternates). */
export async function connectBroker(settings: BrokerSettings): Promise<amqp.ChannelModel> {
  return amqp.connect(brokerUrlWithCredentials(settings), brokerSocketOptions(settings));
}
