/**
 * Files the compose stack mounts from the install directory: config/compose.env (variables for
 * compose.yaml: paths, ports, site address, image overrides; no secrets) and, under compose/, one
 * directory per service with the keys and secrets that service needs, owned by the user its
 * image runs as (the official mongo and rabbitmq images run as uid 999, our Node images as 1000)
 * because bind mounts keep host ownership and a 0600 root-owned key is unreadable to them.
 */
import { chmod, chown, copyFile, mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../pki/files.js';
import { renderBrokerDefinitions } from './broker-definitions.js';
import { certificatePaths } from './certificates.js';
import { apiProcessesOf, topologyOf, type InstallConfig } from './install-config.js';
import type { InstallLayout } from './layout.js';
import { ensureKeyFile } from './replica-set.js';
import { ensureErlangCookie, erlangCookieFile } from './broker-cluster.js';
import type { Secrets } from './secrets.js';

export const IMAGE_VARIABLES = [
  'MONGO_IMAGE',
  'RABBITMQ_IMAGE',
  'PROXY_IMAGE',
  'NODE_IMAGE',
  'PYTHON_IMAGE',
  'API_IMAGE',
  'WORKER_IMAGE',
  'PYTHON_WORKER_IMAGE',
] as const;
/**
 * Extra compose files layered over compose.yaml (colon-separated paths), e.g. a site's own
 * overrides or the container test's stand-in command lines. Kept like the image overrides, so
 * every later command (ops/*, upgrades) runs the same stack.
 */
export const COMPOSE_OVERRIDES_VARIABLE = 'CYBERCOM_COMPOSE_OVERRIDES';
const KEPT_VARIABLES = [...IMAGE_VARIABLES, COMPOSE_OVERRIDES_VARIABLE] as const;
/**
 * `cluster` in compose.env makes every compose command layer compose.cluster.yaml over
 * compose.yaml (installation/runner/compose-runtime.ts). Absent for a single node, whose compose.env is
 * unchanged by the option.
 */
export const TOPOLOGY_VARIABLE = 'CYBERCOM_TOPOLOGY';

const SERVICE_UID = { mongo: 999, rabbitmq: 999, api: 1000, worker: 1000, proxy: 0 } as const;
type ComposeService = keyof typeof SERVICE_UID;

export function composeEnv(
  layout: InstallLayout,
  config: InstallConfig,
  environment: NodeJS.ProcessEnv,
  previous: Record<string, string> = {},
): Record<string, string> {
  const domain = config.publicHost !== '' && config.https !== 'none';
  const env: Record<string, string> = {
    CYBERCOM_DIR: layout.root,
    HTTP_PORT: String(config.ports.http),
    HTTPS_PORT: String(config.ports.https),
    BROKER_PORT: String(config.ports.broker),
    DB_PORT: String(config.ports.database),
    SITE_ADDRESS: domain ? config.publicHost : ':80',
    TLS_MODE: domain ? config.https : 'none',
    ACME_EMAIL: config.https === 'acme' ? config.acmeEmail : '',
    API_REPLICAS: String(apiProcessesOf(config)),
  };
  if (topologyOf(config) === 'cluster') env[TOPOLOGY_VARIABLE] = 'cluster';
  // Image overrides given at install time are kept for later runs (upgrades use the same images).
  for (const name of KEPT_VARIABLES) {
    const value = environment[name] ?? previous[name];
    if (value) env[name] = value;
  }
  return env;
}

async function writeOwned(path: string, data: string | Buffer, uid: number, mode = 0o600): Promise<void> {
  await writeFileAtomic(path, typeof data === 'string' ? data : data.toString('utf8'), mode);
  if (process.getuid?.() === 0) await chown(path, uid, uid);
}

async function serviceDir(layout: InstallLayout, service: ComposeService): Promise<string> {
  const dir = join(layout.composeFilesDir, service);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  if (process.getuid?.() === 0) await chown(dir, SERVICE_UID[service], SERVICE_UID[service]);
  return dir;
}

/** Writes every service's copy; identical content is rewritten identically (idempotent). */
export async function writeComposeServiceFiles(layout: InstallLayout, config: InstallConfig, secrets: Secrets): Promise<void> {
  await mkdir(layout.composeFilesDir, { recursive: true, mode: 0o755 });
  const certs = layout.certsDir;
  const read = (name: string, part: 'certFile' | 'keyFile' | 'combinedFile'): Promise<string> =>
    readFile(certificatePaths(certs, name)[part], 'utf8');
  // The server CA verifies the servers (clients, healthchecks); the client CA is what the servers
  // accept client certificates from (replaced at every rotation, see appliance/certificates.ts).
  const ca = await read('ca', 'certFile');
  const clientCa = await read('client-ca', 'certFile');

  const mongo = await serviceDir(layout, 'mongo');
  await writeOwned(join(mongo, 'ca.pem'), ca, SERVICE_UID.mongo);
  await writeOwned(join(mongo, 'client-ca.pem'), clientCa, SERVICE_UID.mongo);
  await writeOwned(join(mongo, 'server-combined.pem'), await read('mongodb', 'combinedFile'), SERVICE_UID.mongo);
  // The healthcheck's client identity: mongod demands a client certificate even for `ping`.
  await writeOwned(join(mongo, 'health-client.pem'), await read('api', 'combinedFile'), SERVICE_UID.mongo);
  await writeOwned(join(mongo, 'admin-password'), secrets.DB_ADMIN_PASSWORD, SERVICE_UID.mongo);
  await writeOwned(join(mongo, 'api-password'), secrets.DB_API_PASSWORD, SERVICE_UID.mongo);
  await writeOwned(join(mongo, 'worker-password'), secrets.DB_WORKER_PASSWORD, SERVICE_UID.mongo);
  await writeReplicaSetFiles(layout, config, mongo, read);

  const rabbitmq = await serviceDir(layout, 'rabbitmq');
  await writeOwned(join(rabbitmq, 'client-ca.pem'), clientCa, SERVICE_UID.rabbitmq);
  await writeOwned(join(rabbitmq, 'server.pem'), await read('rabbitmq', 'certFile'), SERVICE_UID.rabbitmq);
  await writeOwned(join(rabbitmq, 'server.key'), await read('rabbitmq', 'keyFile'), SERVICE_UID.rabbitmq);
  await writeOwned(join(rabbitmq, 'definitions.json'), renderBrokerDefinitions(secrets), SERVICE_UID.rabbitmq);
  // From before the client CA: RabbitMQ verified clients against a copy of the server CA.
  await rm(join(rabbitmq, 'ca.pem'), { force: true });
  await writeBrokerClusterFiles(layout, config, rabbitmq, ca, read);

  for (const client of ['api', 'worker'] as const) {
    const dir = await serviceDir(layout, client);
    await writeOwned(join(dir, 'ca.pem'), ca, SERVICE_UID[client]);
    await writeOwned(join(dir, 'client.pem'), await read(client, 'certFile'), SERVICE_UID[client]);
    await writeOwned(join(dir, 'client.key'), await read(client, 'keyFile'), SERVICE_UID[client]);
    await writeOwned(join(dir, 'client-combined.pem'), await read(client, 'combinedFile'), SERVICE_UID[client]);
  }

  const proxy = await serviceDir(layout, 'proxy');
  if (config.https === 'files' && config.publicHost !== '') {
    await copyFile(config.tlsCertFile, join(proxy, 'cert.pem'));
    await copyFile(config.tlsKeyFile, join(proxy, 'key.pem'));
    await chmod(join(proxy, 'key.pem'), 0o600);
  }
}

/**
 * Cluster topology, broker side: the Erlang cookie the nodes share (mounted as the image's
 * /var/lib/rabbitmq/.erlang.cookie, which must be private to its owner), and for Erlang
 * distribution over TLS the server CA (a node verifies the node it dials) and the certificate a
 * node presents when it dials another. The accepting node verifies it against the client CA, so
 * it is a client certificate (the API's, as for the database members). A single node has none.
 */
async function writeBrokerClusterFiles(
  layout: InstallLayout,
  config: InstallConfig,
  rabbitmqDir: string,
  serverCa: string,
  read: (name: string, part: 'certFile' | 'keyFile' | 'combinedFile') => Promise<string>,
): Promise<void> {
  const files = ['erlang-cookie', 'server-ca.pem', 'node-client.pem', 'node-client.key'].map((name) => join(rabbitmqDir, name));
  const [cookiePath, serverCaPath, clientCertPath, clientKeyPath] = files as [string, string, string, string];
  if (topologyOf(config) !== 'cluster') {
    await Promise.all(files.map((file) => rm(file, { force: true })));
    return;
  }
  const { cookie } = await ensureErlangCookie(erlangCookieFile(layout));
  await writeOwned(cookiePath, cookie, SERVICE_UID.rabbitmq, 0o400);
  await writeOwned(serverCaPath, serverCa, SERVICE_UID.rabbitmq);
  await writeOwned(clientCertPath, await read('api', 'certFile'), SERVICE_UID.rabbitmq);
  await writeOwned(clientKeyPath, await read('api', 'keyFile'), SERVICE_UID.rabbitmq);
}

/**
 * Cluster topology: the keyFile (mongod refuses one that group or others may read, hence 0400)
 * and the certificate a member presents when it connects to another. Members verify incoming
 * certificates against the client CA like every other client, so this is a client certificate
 * (the API's, as for the healthcheck); the members authenticate each other with the keyFile, not
 * with it. A single node has neither file.
 */
async function writeReplicaSetFiles(
  layout: InstallLayout,
  config: InstallConfig,
  mongoDir: string,
  read: (name: string, part: 'certFile' | 'keyFile' | 'combinedFile') => Promise<string>,
): Promise<void> {
  const keyFilePath = join(mongoDir, 'keyfile');
  const memberCertificatePath = join(mongoDir, 'member-client.pem');
  if (topologyOf(config) !== 'cluster') {
    await rm(keyFilePath, { force: true });
    await rm(memberCertificatePath, { force: true });
    return;
  }
  const { keyFile } = await ensureKeyFile(layout.mongoKeyFile);
  await writeOwned(keyFilePath, keyFile, SERVICE_UID.mongo, 0o400);
  await writeOwned(memberCertificatePath, await read('api', 'combinedFile'), SERVICE_UID.mongo);
}
