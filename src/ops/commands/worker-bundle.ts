/**
 * ops/worker-bundle --host <remote host>: one archive with everything a remote machine needs to
 * run a worker for this installation: the worker image (`docker save` format, exported with
 * dockerode) and/or the worker as two Node.js modules, the CA certificate, the worker client
 * certificate and key, an env file pointing at this server's public broker and database, a run
 * script, a README and SHA256SUMS. Secret files are mode 0600 inside the archive, and so is the
 * archive. Hosts are recorded so rotate-certs can rebuild their bundles.
 */
import { createWriteStream } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseEnv } from 'node:util';
import { createGzip } from 'node:zlib';
import { create as createTar } from 'tar';
import { certificatePaths, inspectCertificates } from '../../installation/certificates.js';
import { checksumLines } from '../../installation/checksums.js';
import { DEFAULT_QUEUE, renderEnvFile, SERVICE_DATABASE, CONTAINER_TLS_DIR } from '../../installation/env-files.js';
import type { Installation } from '../../installation/health.js';
import { topologyOf } from '../../installation/install-config.js';
import { findExecutable } from '../../local-services/processes.js';
import { repositoryRoot } from '../../installation/layout.js';
import { publishedMemberUri } from '../../installation/replica-set.js';
import { CLUSTER_QUEUE_TYPE } from '../../installation/broker-cluster.js';
import { ACCOUNTS } from '../../installation/secrets.js';
import { buildWorkerProgram } from '../../installation/worker-program.js';
import { writeIfChanged } from '../../installation/write-if-changed.js';
import { validateHostName } from '../../installation/host-names.js';
import { CommandError, DIR_HELP, EXIT, loadInstallation, parseCommandArgs, type Command } from './common.js';

export const DEFAULT_WORKER_IMAGE = 'cybercom/worker:local';

export const WORKER_BUNDLE_HELP = `Usage: ops/worker-bundle --host NAME [--dir DIR] [--server-address ADDR] [--queues LIST] [--image|--no-image] [--output FILE]

Builds one archive for a remote worker machine: the worker image (docker save format) and/or the
worker as Node.js modules, the CA certificate, the worker's client certificate and key, an env
file pointing at this server's broker and database, run-worker.sh, a README and SHA256SUMS.
On the remote machine: tar xzf <archive> && cd cybercom-worker-<host> && ./run-worker.sh

  --host NAME          the remote machine's name (its worker's node name is worker@NAME)
${DIR_HELP}
  --server-address A   address the remote worker dials (default: the installation's public
                       host); must be a name in the server certificates
  --queues LIST        comma-separated queues the remote worker consumes (default: celery)
  --image / --no-image include the worker image (default: when a container engine has it)
  --output FILE        where to write the archive (default bundles/cybercom-worker-NAME.tar.gz)
Exit codes: 0 written, 1 failed, 2 usage error, 3 no installation.
`;

interface BundleRecord {
  serverAddress: string;
  queues?: string;
  image: boolean;
  output: string;
  createdAt: string;
}

function hostsFile(inst: Installation): string {
  return join(inst.layout.bundlesDir, 'hosts.json');
}

async function readRecords(inst: Installation): Promise<Record<string, BundleRecord>> {
  try {
    return JSON.parse(await readFile(hostsFile(inst), 'utf8')) as Record<string, BundleRecord>;
  } catch {
    return {};
  }
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

export function remoteWorkerEnv(
  inst: Installation,
  host: string,
  serverAddress: string,
  queues: string = DEFAULT_QUEUE,
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
    WORKER_NODE_NAME: `worker@${host}`,
    WORKER_QUEUES: queues,
    RESULT_DATABASE: SERVICE_DATABASE,
    LOG_LEVEL: 'info',
  };
}

function readme(inst: Installation, host: string, serverAddress: string, image: string | undefined): string {
  return `# cybercom worker for ${host}

Made by \`ops/worker-bundle\` on ${new Date().toISOString()} for the installation at
${inst.layout.root}. The worker connects to **${serverAddress}**: AMQPS port ${inst.config.ports.broker}
(RabbitMQ) and TLS port ${inst.config.ports.database} (MongoDB), with the client certificate in
\`certs/\` and the worker credentials in \`worker.env\`. Both ports must be reachable from this
machine, and \`${serverAddress}\` must resolve to the server.

## Start

    sha256sum -c SHA256SUMS       # run-worker.sh checks this too
    ./run-worker.sh               # docker when available${image ? '' : ' (this bundle has no image: local mode)'}, else Node.js

- \`./run-worker.sh docker\`: \`docker load -i worker-image.tar.gz\`${image ? ` (image ${image})` : ''} and
  \`docker run --restart unless-stopped\`; logs with \`docker logs -f cybercom-worker\`.
- \`./run-worker.sh local\`: runs \`app/worker.mjs\` with Node.js >= 20.19 in the foreground. For
  restarts put it under systemd, e.g. a unit with \`ExecStart=${'$'}PWD/run-worker.sh local\` and
  \`Restart=always\`.

The worker's node name is \`worker@${host}\`; it consumes the \`${DEFAULT_QUEUE}\` queue.

## Files

| file | what |
|---|---|
| worker.env (0600) | broker and database addresses and the worker's credentials |
| certs/ca.pem | the installation's server CA: verifies the broker and the database |
| certs/client.pem, certs/client.key (0600), certs/client-combined.pem (0600) | the worker's client certificate (signed by the installation's client CA) |
| app/worker.mjs, app/tasks.mjs | the worker and its tasks for the local mode |
${image ? '| worker-image.tar.gz, image-name | the worker image (docker save format) and its name |\n' : ''}| run-worker.sh | starts the worker |
| SHA256SUMS | checksums of everything above |

## When the server's certificates are rotated

\`ops/rotate-certs\` on the server rebuilds this bundle. From that moment the broker and the
database refuse this bundle's certificate (every rotation replaces the CA that vouches for
clients): copy the new bundle here and run \`./run-worker.sh\` again.
`;
}

async function exportImage(image: string, file: string): Promise<void> {
  const { default: Docker } = await import('dockerode');
  const docker = new Docker();
  const stream = await docker.getImage(image).get();
  await pipeline(stream, createGzip(), createWriteStream(file, { mode: 0o644 }));
}

async function imageAvailable(image: string): Promise<boolean> {
  try {
    const { default: Docker } = await import('dockerode');
    await new Docker().getImage(image).inspect();
    return true;
  } catch {
    return false;
  }
}

export interface BundleOptions {
  host: string;
  queues?: string;
  serverAddress?: string;
  image?: boolean;
  output?: string;
}

export async function buildWorkerBundle(inst: Installation, opts: BundleOptions, say: (line: string) => void): Promise<string> {
  const problem = validateHostName(opts.host);
  if (opts.host === '' || problem) throw new CommandError(`--host: ${problem ?? 'a host name is required'}`, EXIT.usage);
  const serverAddress = opts.serverAddress ?? inst.config.publicHost;
  if (serverAddress === '') {
    throw new CommandError(
      'the installation has no public host for remote workers to dial: re-run ./installer --public-host NAME, or pass --server-address',
      EXIT.usage,
    );
  }
  await assertAddressInCertificates(inst, serverAddress);
  // The image compose built or was told to use (WORKER_IMAGE in compose.env overrides the default).
  const composeVariables = await readFile(inst.layout.composeEnvFile, 'utf8').then(
    (t) => parseEnv(t) as Record<string, string>,
    () => ({}) as Record<string, string>,
  );
  const imageName = process.env.WORKER_IMAGE ?? composeVariables.WORKER_IMAGE ?? DEFAULT_WORKER_IMAGE;
  const withImage = opts.image ?? (await imageAvailable(imageName));

  await mkdir(inst.layout.bundlesDir, { recursive: true, mode: 0o700 });
  const staging = await mkdtemp(join(inst.layout.bundlesDir, '.staging-'));
  const name = `cybercom-worker-${opts.host}`;
  const dir = join(staging, name);
  try {
    await mkdir(join(dir, 'certs'), { recursive: true, mode: 0o700 });
    await mkdir(join(dir, 'app'), { recursive: true });
    const worker = certificatePaths(inst.layout.certsDir, 'worker');
    await copyFile(certificatePaths(inst.layout.certsDir, 'ca').certFile, join(dir, 'certs', 'ca.pem'));
    await copyFile(worker.certFile, join(dir, 'certs', 'client.pem'));
    await copyFile(worker.keyFile, join(dir, 'certs', 'client.key'));
    await copyFile(worker.combinedFile, join(dir, 'certs', 'client-combined.pem'));
    await Promise.all(['ca.pem', 'client.pem'].map((f) => chmod(join(dir, 'certs', f), 0o644)));
    await Promise.all(['client.key', 'client-combined.pem'].map((f) => chmod(join(dir, 'certs', f), 0o600)));
    await writeFile(
      join(dir, 'worker.env'),
      renderEnvFile(
        remoteWorkerEnv(inst, opts.host, serverAddress, opts.queues ?? DEFAULT_QUEUE),
        `Worker for ${opts.host}: settings for the cybercom installation at ${serverAddress}.`,
      ),
      { mode: 0o600 },
    );
    say('building the worker program (app/worker.mjs, app/tasks.mjs) ...');
    await buildWorkerProgram(join(dir, 'app'));
    await writeFile(join(dir, 'app', 'package.json'), '{ "type": "module", "private": true }\n');
    if (withImage) {
      say(`exporting image ${imageName} (docker save format) ...`);
      await exportImage(imageName, join(dir, 'worker-image.tar.gz'));
      await writeFile(join(dir, 'image-name'), `${imageName}\n`);
    }
    await copyFile(join(repositoryRoot(), 'worker-image', 'run-worker.sh'), join(dir, 'run-worker.sh'));
    await chmod(join(dir, 'run-worker.sh'), 0o755);
    await writeFile(join(dir, 'README.md'), readme(inst, opts.host, serverAddress, withImage ? imageName : undefined));
    await writeFile(join(dir, 'SHA256SUMS'), await checksumLines(dir));

    const output = resolve(opts.output ?? join(inst.layout.bundlesDir, `${name}.tar.gz`));
    const partial = `${output}.partial`;
    await createTar({ gzip: true, file: partial, cwd: staging, portable: true }, [name]);
    await chmod(partial, 0o600);
    await rename(partial, output);

    const records = await readRecords(inst);
    records[opts.host] = {
      serverAddress,
      queues: opts.queues ?? DEFAULT_QUEUE,
      image: withImage,
      output,
      createdAt: new Date().toISOString(),
    };
    await writeIfChanged(hostsFile(inst), `${JSON.stringify(records, null, 2)}\n`, 0o600);
    return output;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Rebuilds every bundle recorded in bundles/hosts.json (after a certificate rotation). */
export async function rebuildRecordedBundles(inst: Installation, say: (line: string) => void): Promise<string[]> {
  const rebuilt: string[] = [];
  for (const [host, record] of Object.entries(await readRecords(inst))) {
    const output = await buildWorkerBundle(
      inst,
      { host, serverAddress: record.serverAddress, queues: record.queues, image: record.image, output: record.output },
      say,
    );
    rebuilt.push(output);
  }
  return rebuilt;
}

export const workerBundle: Command = async (argv) => {
  const { values } = parseCommandArgs(argv, {
    host: { type: 'string' },
    'server-address': { type: 'string' },
    queues: { type: 'string' },
    image: { type: 'boolean' },
    'no-image': { type: 'boolean' },
    output: { type: 'string' },
  });
  if (values.help) {
    process.stdout.write(WORKER_BUNDLE_HELP);
    return EXIT.ok;
  }
  if (!values.host) throw new CommandError("--host is required (the remote machine's name)", EXIT.usage);
  const inst = await loadInstallation(values.dir);
  const image = values['no-image'] ? false : values.image ? true : undefined;
  const output = await buildWorkerBundle(
    inst,
    { host: values.host, serverAddress: values['server-address'], queues: values.queues, image, output: values.output },
    (line) => process.stdout.write(`${line}\n`),
  );
  process.stdout.write(
    `Wrote ${output} (mode 0600: it holds the worker's key and credentials).\nOn ${values.host}: tar xzf ${output.split('/').pop()} && cd cybercom-worker-${values.host} && ./run-worker.sh\n`,
  );
  const ferretDb = inst.config.dbEngine === 'ferretdb' || (inst.config.dbEngine === 'auto' && findExecutable('mongod') === undefined);
  if (inst.config.runtime === 'local' && ferretDb) {
    // FerretDB has SCRAM users but no authorization: the worker's login is as strong as any.
    process.stdout.write(
      "Note: this installation's database (FerretDB) cannot restrict what a user may do: the worker credentials in the bundle\n" +
        "can read and change every database, the service's users and tokens included. Give bundles only to machines you trust,\n" +
        "and rotate the certificates (ops/rotate-certs) if one is lost. The compose runtime's MongoDB enforces roles.\n",
    );
  }
  return EXIT.ok;
};
