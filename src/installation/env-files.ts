/**
 * The env files the services read, rendered from the answers (install.json), the secrets and the
 * certificate paths. One configuration, two runtimes: the values are the same, only addresses
 * and file paths differ (host paths for local processes, in-container paths for compose). The
 * rendering is deterministic, so a re-run with the same inputs rewrites identical bytes.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { certificatePaths } from './certificates.js';
import { apiProcessesOf, topologyOf, type InstallConfig, type RuntimeKind } from './install-config.js';
import type { InstallLayout } from './layout.js';
import { repositoryRoot } from './layout.js';
import { publishedMemberUri, replicaSetUri } from './replica-set.js';
import { brokerClusterUrl, CLUSTER_QUEUE_TYPE } from './broker-cluster.js';
import { ACCOUNTS, type Secrets } from './secrets.js';
import { hasPrivateStore, privateStoreEnv } from './private-store.js';

/** Where the API and worker images find their TLS files (compose.yaml mounts them there). */
export const CONTAINER_TLS_DIR = '/run/cybercom/tls';
/** Port the API listens on inside its container; only the proxy talks to it. */
export const CONTAINER_API_PORT = 8080;
export const SERVICE_DATABASE = 'cybercom';
export const DEFAULT_QUEUE = 'celery';

export type EnvMap = Record<string, string>;

/** KEY=value lines; values quoted only when needed (Compose v1 keeps quotes literally). */
export function renderEnvFile(env: EnvMap, header: string): string {
  const lines = Object.entries(env).map(([key, value]) => {
    if (/[\r\n]/.test(value)) throw new Error(`${key}: env values cannot contain line breaks`);
    return /^[\w@%+=:,./[\]-]*$/.test(value) ? `${key}=${value}` : `${key}=${JSON.stringify(value)}`;
  });
  return `${header
    .split('\n')
    .map((l) => `# ${l}`)
    .join('\n')}\n${lines.join('\n')}\n`;
}

interface ClientFiles {
  ca: string;
  cert: string;
  key: string;
  combined: string;
}

function clientFiles(layout: InstallLayout, runtime: RuntimeKind, client: 'api' | 'worker'): ClientFiles {
  if (runtime === 'compose') {
    return {
      ca: `${CONTAINER_TLS_DIR}/ca.pem`,
      cert: `${CONTAINER_TLS_DIR}/client.pem`,
      key: `${CONTAINER_TLS_DIR}/client.key`,
      combined: `${CONTAINER_TLS_DIR}/client-combined.pem`,
    };
  }
  const paths = certificatePaths(layout.certsDir, client);
  return { ca: certificatePaths(layout.certsDir, 'ca').certFile, cert: paths.certFile, key: paths.keyFile, combined: paths.combinedFile };
}

/**
 * The database inside the stack (compose: one member, or the replica set of the cluster
 * topology), or on this host. A cluster seen from the host (the installer's administrator step
 * renders the local view of a compose installation) is its published member, dialled directly:
 * the other members' names resolve only inside the stack.
 */
function mongoUri(config: InstallConfig, runtime: RuntimeKind): string {
  const cluster = topologyOf(config) === 'cluster';
  if (runtime !== 'compose')
    return cluster ? publishedMemberUri('localhost', config.ports.database) : `mongodb://localhost:${config.ports.database}/`;
  return cluster ? replicaSetUri() : 'mongodb://mongo:27017/';
}

/** The broker inside the stack (one node, or every node of the cluster topology with quorum task queues), or on this host. */
function brokerEnv(config: InstallConfig, runtime: RuntimeKind): EnvMap {
  if (runtime !== 'compose') return { BROKER_URL: `amqps://localhost:${config.ports.broker}/${ACCOUNTS.vhost}` };
  if (topologyOf(config) === 'cluster') return { BROKER_URL: brokerClusterUrl(), TASK_QUEUE_TYPE: CLUSTER_QUEUE_TYPE };
  return { BROKER_URL: `amqps://rabbitmq:5671/${ACCOUNTS.vhost}` };
}

function connectionEnv(
  config: InstallConfig,
  runtime: RuntimeKind,
  files: ClientFiles,
  db: { user: string; password: string },
  broker: { user: string; password: string },
): EnvMap {
  return {
    MONGO_URI: mongoUri(config, runtime),
    MONGO_USERNAME: db.user,
    MONGO_PASSWORD: db.password,
    MONGO_AUTH_SOURCE: ACCOUNTS.authSource,
    MONGO_TLS_CA_FILE: files.ca,
    MONGO_TLS_CERT_KEY_FILE: files.combined,
    ...brokerEnv(config, runtime),
    BROKER_USERNAME: broker.user,
    BROKER_PASSWORD: broker.password,
    BROKER_TLS_CA_FILE: files.ca,
    BROKER_TLS_CERT_FILE: files.cert,
    BROKER_TLS_KEY_FILE: files.key,
  };
}

/** Local runtime: listen on every interface only when the service has a public name. */
export function localListenAddress(config: InstallConfig): string {
  return config.publicHost === '' ? '127.0.0.1' : '0.0.0.0';
}

/** Whether the API itself serves HTTPS: the local runtime with a public host and `--https files`. */
export function apiServesHttps(config: InstallConfig): boolean {
  return config.runtime === 'local' && config.publicHost !== '' && config.https === 'files';
}

/** The port the API process listens on: in the container, or the public HTTP(S) port of a local install. */
export function apiListenPort(config: InstallConfig): number {
  if (config.runtime === 'compose') return CONTAINER_API_PORT;
  return apiServesHttps(config) ? config.ports.https : config.ports.http;
}

/** The operator's certificate, read where it lies (a renewal in place takes effect on restart). */
function apiHttpsEnv(config: InstallConfig): EnvMap {
  if (!apiServesHttps(config)) return {};
  return { HTTPS_CERT_FILE: config.tlsCertFile, HTTPS_KEY_FILE: config.tlsKeyFile, HTTP_REDIRECT_PORT: String(config.ports.http) };
}

export function serviceEnv(layout: InstallLayout, config: InstallConfig, secrets: Secrets): EnvMap {
  return renderServiceEnv(layout, config, secrets, hasPrivateStore(config));
}

/**
 * The API's settings as seen from this host (local paths, the published database port), for
 * operator steps that use the API's own modules on a compose installation too.
 */
export function hostServiceEnv(layout: InstallLayout, config: InstallConfig, secrets: Secrets): EnvMap {
  return renderServiceEnv(layout, { ...config, runtime: 'local' }, secrets, hasPrivateStore(config));
}

function renderServiceEnv(layout: InstallLayout, config: InstallConfig, secrets: Secrets, privateStore: boolean): EnvMap {
  const runtime = config.runtime;
  return {
    SECRET_KEY: secrets.SECRET_KEY,
    ALLOWED_HOSTS: config.allowedHosts.join(','),
    DEBUG: String(config.debug),
    HTTP_HOST: runtime === 'compose' ? '0.0.0.0' : localListenAddress(config),
    HTTP_PORT: String(apiListenPort(config)),
    // compose: one process per API container, the containers being the replicas (API_REPLICAS in
    // compose.env); local: the one API service runs that many processes on its port.
    API_PROCESSES: String(runtime === 'compose' ? 1 : apiProcessesOf(config)),
    ...apiHttpsEnv(config),
    // Behind the compose proxy the client's address and scheme arrive in X-Forwarded-*.
    TRUST_PROXY: String(runtime === 'compose'),
    SERVICE_DATABASE,
    DATA_STORE_ANONYMOUS: String(config.dataStoreAnonymous),
    CATALOG_ANONYMOUS: String(config.catalogAnonymous),
    ...connectionEnv(
      config,
      runtime,
      clientFiles(layout, runtime, 'api'),
      { user: ACCOUNTS.database.api, password: secrets.DB_API_PASSWORD },
      { user: ACCOUNTS.broker.api, password: secrets.BROKER_API_PASSWORD },
    ),
    // Users, tokens, sessions and history where the workers' login cannot reach them.
    ...(privateStore ? privateStoreEnv(layout, secrets) : {}),
    LOG_LEVEL: 'info',
  };
}

/** Task modules of the bundled example worker: compiled, in both runtimes (no loader in a service). */
export function workerTaskModules(runtime: RuntimeKind): string {
  return runtime === 'compose'
    ? '/app/dist/worker-image/tasks/index.js'
    : join(repositoryRoot(), 'dist', 'worker-image', 'tasks', 'index.js');
}

export function workerEnv(layout: InstallLayout, config: InstallConfig, secrets: Secrets): EnvMap {
  const runtime = config.runtime;
  return {
    ...connectionEnv(
      config,
      runtime,
      clientFiles(layout, runtime, 'worker'),
      { user: ACCOUNTS.database.worker, password: secrets.DB_WORKER_PASSWORD },
      { user: ACCOUNTS.broker.worker, password: secrets.BROKER_WORKER_PASSWORD },
    ),
    WORKER_NODE_NAME: `local-worker@${runtime === 'compose' ? 'compose' : hostname()}`,
    WORKER_QUEUES: DEFAULT_QUEUE,
    WORKER_TASK_MODULES: workerTaskModules(runtime),
    RESULT_DATABASE: SERVICE_DATABASE,
    LOG_LEVEL: 'info',
  };
}
