/**
 * The local runtime's OS users for its Node services. Run by root (the supervisor always is, on
 * an installed host), the API and the worker each run as an unprivileged system user of their own,
 * and each engine as its cluster's user (local-services/mongo-wire.ts): code in one service then
 * cannot read another's files, its secrets, its process environment or its database sockets.
 *
 * Each service gets read access to exactly what it needs, granted again at every start (the
 * installer and a certificate rotation rewrite these files as root): its env file and its client
 * certificate and key; config/ and certs/ become 0711, so a service can reach a file it owns by
 * name without listing or reading anything else there. secrets.env, install.json, the CA's and
 * the servers' keys stay root's.
 *
 * Not root (a developer's checkout), everything runs as that user, as before.
 */
import { chmod, chown, copyFile } from 'node:fs/promises';
import { ensureSystemUser, handOver, runAsServiceUser, type RunAs } from '../local-services/service-user.js';
import { certificatePaths } from './certificates.js';
import { apiListenPort, apiServesHttps } from './env-files.js';
import type { InstallConfig } from './install-config.js';
import type { InstallLayout } from './layout.js';

export const SERVICE_USERS = { api: 'cybercom-api', worker: 'cybercom-worker' } as const;
export type NodeService = keyof typeof SERVICE_USERS;

/** Ports below this need CAP_NET_BIND_SERVICE (Linux's default net.ipv4.ip_unprivileged_port_start). */
const FIRST_UNPRIVILEGED_PORT = 1024;

export interface ServiceAccount {
  runAs: RunAs;
  /** Variables the service's process gets on top of its env file (which they override). */
  env: Record<string, string>;
}

export type ServiceAccounts = Record<NodeService, ServiceAccount>;

/**
 * The API's run-as: its user, and the capability to bind the configured port when that port is
 * privileged (80 and 443 by default), kept across the change of user as an ambient capability.
 */
async function apiRunAs(config: InstallConfig): Promise<RunAs> {
  const runAs = await runAsServiceUser(SERVICE_USERS.api, 'the installer');
  if (!runAs.owner || apiListenPort(config) >= FIRST_UNPRIVILEGED_PORT) return runAs;
  const [setpriv, ...rest] = runAs.prefix;
  const capabilities = ['--inh-caps=+net_bind_service', '--ambient-caps=+net_bind_service'];
  return { ...runAs, prefix: [setpriv as string, ...capabilities, ...rest] };
}

/** Gives `paths` to the account's user, readable by it alone. */
async function grant(runAs: RunAs, paths: string[]): Promise<void> {
  await Promise.all(paths.map((path) => chmod(path, 0o600)));
  await handOver(runAs, paths);
}

/**
 * The operator's HTTPS certificate and key, read where they lie by root only: the API reads copies
 * it owns, made again at every start (so a renewal in place still takes effect on restart).
 */
async function httpsCopies(layout: InstallLayout, config: InstallConfig, runAs: RunAs): Promise<Record<string, string>> {
  if (!apiServesHttps(config) || !runAs.owner) return {};
  const copies = certificatePaths(layout.certsDir, 'api-https');
  await copyFile(config.tlsCertFile, copies.certFile);
  await copyFile(config.tlsKeyFile, copies.keyFile);
  await grant(runAs, [copies.certFile, copies.keyFile]);
  return { HTTPS_CERT_FILE: copies.certFile, HTTPS_KEY_FILE: copies.keyFile };
}

/** Creates the services' users when missing and hands each its files. */
export async function prepareServiceAccounts(layout: InstallLayout, config: InstallConfig): Promise<ServiceAccounts> {
  if (process.getuid?.() !== 0) {
    const self: ServiceAccount = { runAs: { prefix: [], env: {} }, env: {} };
    return { api: self, worker: self };
  }
  await Promise.all(Object.values(SERVICE_USERS).map((name) => ensureSystemUser(name)));
  const api = await apiRunAs(config);
  const worker = await runAsServiceUser(SERVICE_USERS.worker, 'the installer');
  await Promise.all([chmod(layout.configDir, 0o711), chmod(layout.certsDir, 0o711)]);
  // The CA certificate is public: both services verify the servers with it.
  const ca = certificatePaths(layout.certsDir, 'ca').certFile;
  await chmod(ca, 0o644);
  await chown(ca, 0, 0);
  const clientFiles = (name: NodeService): string[] => Object.values(certificatePaths(layout.certsDir, name));
  await grant(api, [layout.serviceEnvFile, ...clientFiles('api')]);
  await grant(worker, [layout.workerEnvFile, ...clientFiles('worker')]);
  return {
    api: { runAs: api, env: await httpsCopies(layout, config, api) },
    worker: { runAs: worker, env: {} },
  };
}
