/**
 * Connections from the host to the installation's services, for operator commands (status,
 * users, backup, restore): the database and the broker are published on the host's ports in both
 * runtimes, so the same code works for compose and for local processes. TLS with the API's client
 * certificate, always.
 */
import amqp from 'amqplib';
import { readFile } from 'node:fs/promises';
import { MongoClient } from 'mongodb';
import { certificatePaths } from './certificates.js';
import type { InstallConfig } from './install-config.js';
import type { InstallLayout } from './layout.js';
import { ACCOUNTS, type Secrets } from './secrets.js';

export type DatabaseIdentity = 'admin' | 'api' | 'worker';

export function databaseCredentials(secrets: Secrets, who: DatabaseIdentity): { username: string; password: string } {
  const password = who === 'admin' ? secrets.DB_ADMIN_PASSWORD : who === 'api' ? secrets.DB_API_PASSWORD : secrets.DB_WORKER_PASSWORD;
  return { username: ACCOUNTS.database[who], password };
}

export function brokerCredentials(secrets: Secrets, who: DatabaseIdentity): { username: string; password: string } {
  const password =
    who === 'admin' ? secrets.BROKER_ADMIN_PASSWORD : who === 'api' ? secrets.BROKER_API_PASSWORD : secrets.BROKER_WORKER_PASSWORD;
  return { username: ACCOUNTS.broker[who], password };
}

export interface HostClientOptions {
  who?: DatabaseIdentity;
  /** Client certificate name in certs/ (default: api). */
  certificate?: string;
  timeoutMs?: number;
}

export function hostMongoClient(layout: InstallLayout, config: InstallConfig, secrets: Secrets, opts: HostClientOptions = {}): MongoClient {
  const timeout = opts.timeoutMs ?? 5000;
  return new MongoClient(`mongodb://localhost:${config.ports.database}/`, {
    tls: true,
    tlsCAFile: certificatePaths(layout.certsDir, 'ca').certFile,
    tlsCertificateKeyFile: certificatePaths(layout.certsDir, opts.certificate ?? 'api').combinedFile,
    directConnection: true,
    auth: databaseCredentials(secrets, opts.who ?? 'api'),
    authSource: ACCOUNTS.authSource,
    serverSelectionTimeoutMS: timeout,
    connectTimeoutMS: timeout,
  });
}

export async function hostBrokerConnection(
  layout: InstallLayout,
  config: InstallConfig,
  secrets: Secrets,
  opts: HostClientOptions = {},
): Promise<amqp.ChannelModel> {
  const cert = certificatePaths(layout.certsDir, opts.certificate ?? 'api');
  const [ca, certPem, key] = await Promise.all([
    readFile(certificatePaths(layout.certsDir, 'ca').certFile),
    readFile(cert.certFile),
    readFile(cert.keyFile),
  ]);
  const { username, password } = brokerCredentials(secrets, opts.who ?? 'api');
  return amqp.connect(
    { protocol: 'amqps', hostname: 'localhost', port: config.ports.broker, username, password, vhost: ACCOUNTS.vhost, heartbeat: 0 },
    { ca: [ca], cert: certPem, key, servername: 'localhost', timeout: opts.timeoutMs ?? 5000 },
  );
}
