/**
 * What every worker bundle shares, the TypeScript worker's and the Python worker's: the check
 * that remote workers can verify the server under the address they dial, the certificates and
 * the env file, the private archive, and the record of bundles made (bundles/hosts.json), which
 * rotate-certs reads to rebuild them.
 */
import { chmod, copyFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { create as createTar } from 'tar';
import { certificatePaths, inspectCertificates } from '../../installation/certificates.js';
import { CONTAINER_TLS_DIR, DEFAULT_QUEUE, renderEnvFile, SERVICE_DATABASE } from '../../installation/env-files.js';
import { topologyOf } from '../../installation/install-config.js';
import { publishedMemberUri } from '../../installation/replica-set.js';
import { CLUSTER_QUEUE_TYPE } from '../../installation/broker-cluster.js';
import { ACCOUNTS } from '../../installation/secrets.js';
import type { Installation } from '../../installation/health.js';
import { writeIfChanged } from '../../installation/write-if-changed.js';
import { validateHostName } from '../../installation/host-names.js';
import { CommandError, EXIT } from './common.js';

/**
 * The env file of a remote worker: this server's broker and database under `serverAddress`, the
 * worker's credentials, the certificate paths inside a container (a bundle's run script or
 * `cybercom worker --bundle` points them at the bundle's certs/), the node name and the queues.
 */
export function remoteWorkerEnv(
  inst: Installation,
  host: string,
  serverAddress: string,
  queues: string = DEFAULT_QUEUE,
  nodeName = `worker@${host}`,
): Record<string, string> {
  const tls = (file: string): string => `${CONTAINER_TLS_DIR}/${file}`;
  const address = serverAddress.includes(':') ? `[${serverAddress}]` : serverAddress;
  return {
    MONGO_URI:
      topologyOf(inst.config) === 'cluster'
        ? publishedMemberUri(address, inst.config.ports.database)
        : `mongodb://${address}:${inst.config.ports.database}/`,
    MONGO_USERNAME: ACCOUNTS.database.worker,
    MONGO_PASSWORD: inst.secrets.DB_WORKER_PASSWORD,
    MONGO_AUTH_SOURCE: ACCOUNTS.authSource,
    MONGO_TLS_CA_FILE: tls('ca.pem'),
    MONGO_TLS_CERT_KEY_FILE: tls('client-combined.pem'),
    BROKER_URL: `amqps://${address}:${inst.config.ports.broker}/${ACCOUNTS.vhost}`,
    BROKER_USERNAME: ACCOUNTS.broker.worker,
    BROKER_PASSWORD: inst.secrets.BROKER_WORKER_PASSWORD,
    BROKER_TLS_CA_FILE: tls('ca.pem'),
    BROKER_TLS_CERT_FILE: tls('client.pem'),
    BROKER_TLS_KEY_FILE: tls('client.key'),
    // Only the first broker node is published; the task queues are quorum queues on a cluster.
    ...(topologyOf(inst.config) === 'cluster' ? { TASK_QUEUE_TYPE: CLUSTER_QUEUE_TYPE } : {}),
    WORKER_NODE_NAME: nodeName,
    WORKER_QUEUES: queues,
    RESULT_DATABASE: SERVICE_DATABASE,
    LOG_LEVEL: 'info',
  };
}

/** One bundle made, as hosts.json keeps it. */
interface BundleRecord {
  /** The remote machine (absent in records written before Python bundles: the key is the host). */
  host?: string;
  /** A Python worker's bundle (ops/worker-bundle --python). */
  python?: boolean;
  serverAddress: string;
  queues?: string;
  image: boolean;
  output: string;
  createdAt: string;
}

function hostsFile(inst: Installation): string {
  return join(inst.layout.bundlesDir, 'hosts.json');
}

export async function readRecords(inst: Installation): Promise<Record<string, BundleRecord>> {
  try {
    return JSON.parse(await readFile(hostsFile(inst), 'utf8')) as Record<string, BundleRecord>;
  } catch {
    return {};
  }
}

/** Records a bundle under `key` (the host for a TypeScript worker's bundle, `python:<host>` for a Python worker's). */
export async function writeRecord(inst: Installation, key: string, record: BundleRecord): Promise<void> {
  const records = await readRecords(inst);
  records[key] = record;
  await writeIfChanged(hostsFile(inst), `${JSON.stringify(records, null, 2)}\n`, 0o600);
}

/** The server address remote workers dial: given, or the installation's public host; checked against the certificates. */
export async function checkedServerAddress(inst: Installation, host: string, given: string | undefined): Promise<string> {
  const problem = validateHostName(host);
  if (host === '' || problem) throw new CommandError(`--host: ${problem ?? 'a host name is required'}`, EXIT.usage);
  const serverAddress = given ?? inst.config.publicHost;
  if (serverAddress === '') {
    throw new CommandError(
      'the installation has no public host for remote workers to dial: re-run ./installer --public-host NAME, or pass --server-address',
      EXIT.usage,
    );
  }
  await assertAddressInCertificates(inst, serverAddress);
  return serverAddress;
}

/** The server address must be one of the names the broker and database certificates carry. */
async function assertAddressInCertificates(inst: Installation, address: string): Promise<void> {
  const reports = await inspectCertificates(inst.layout.certsDir);
  for (const name of ['rabbitmq', 'mongodb']) {
    const report = reports.find((r) => r.name === name);
    const names = [...(report?.dnsNames ?? []), ...(report?.ipAddresses ?? [])];
    if (!names.includes(address.toLowerCase())) {
      throw new CommandError(
        `the ${name} certificate does not name "${address}" (it names ${names.join(', ')}): remote workers could not verify the server. ` +
          `Re-run ./installer --public-host ${address} (it re-issues the server certificates), or pass --server-address with one of those names.`,
      );
    }
  }
}

/**
 * certs/ (the CA, the worker's client certificate and key; the key files 0600) and worker.env
 * (0600: it holds the worker's credentials) in the bundle directory `dir`.
 */
export async function writeCredentials(inst: Installation, dir: string, env: Record<string, string>, header: string): Promise<void> {
  await mkdir(join(dir, 'certs'), { recursive: true, mode: 0o700 });
  const worker = certificatePaths(inst.layout.certsDir, 'worker');
  await copyFile(certificatePaths(inst.layout.certsDir, 'ca').certFile, join(dir, 'certs', 'ca.pem'));
  await copyFile(worker.certFile, join(dir, 'certs', 'client.pem'));
  await copyFile(worker.keyFile, join(dir, 'certs', 'client.key'));
  await copyFile(worker.combinedFile, join(dir, 'certs', 'client-combined.pem'));
  await Promise.all(['ca.pem', 'client.pem'].map((f) => chmod(join(dir, 'certs', f), 0o644)));
  await Promise.all(['client.key', 'client-combined.pem'].map((f) => chmod(join(dir, 'certs', f), 0o600)));
  await writeFile(join(dir, 'worker.env'), renderEnvFile(env, header), { mode: 0o600 });
}

/** Packs `staging/<name>` into `output` (mode 0600: the archive holds the worker's key), written whole or not at all. */
export async function packBundle(staging: string, name: string, output: string): Promise<string> {
  const target = resolve(output);
  const partial = `${target}.partial`;
  await createTar({ gzip: true, file: partial, cwd: staging, portable: true }, [name]);
  await chmod(partial, 0o600);
  await rename(partial, target);
  return target;
}
