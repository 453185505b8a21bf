/**
 * ops/worker-bundle --host <remote host>: one archive with everything a remote machine needs to
 * run a worker for this installation: the worker image (`docker save` format, exported with
 * dockerode) and/or the worker as two Node.js modules, the CA certificate, the worker client
 * certificate and key, an env file pointing at this server's public broker and database, a run
 * script, a README and SHA256SUMS. Secret files are mode 0600 inside the archive, and so is the
 * archive. Hosts are recorded so rotate-certs can rebuild their bundles.
 */
import { createWriteStream } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseEnv } from 'node:util';
import { createGzip } from 'node:zlib';
import { checksumLines } from '../../installation/checksums.js';
import { DEFAULT_QUEUE } from '../../installation/env-files.js';
import type { Installation } from '../../installation/health.js';
import { repositoryRoot } from '../../installation/layout.js';
import { hasPrivateStore } from '../../installation/private-store.js';
import type { InstallConfig } from '../../installation/install-config.js';
import { buildWorkerProgram } from '../../installation/worker-program.js';
import { checkedServerAddress, packBundle, readRecords, remoteWorkerEnv, writeCredentials, writeRecord } from './bundle-parts.js';
import { CommandError, DIR_HELP, EXIT, loadInstallation, parseCommandArgs, type Command } from './common.js';
import { buildPythonWorkerBundle, PYTHON_BUNDLE_HELP } from './python-bundle.js';

export const DEFAULT_WORKER_IMAGE = 'cybercom/worker:local';

/**
 * What the operator is told a bundle's worker login reaches, when the engine cannot hold it to
 * less: the local runtime's FerretDB has logins but no authorization, so the login reaches all of
 * that engine, which holds the data store, the catalog and the task results; the service's own
 * data is in the private store, where no worker login exists. Nothing to say where MongoDB
 * enforces the workers' role.
 */
export function workerCredentialsNote(config: Pick<InstallConfig, 'runtime' | 'dbEngine'>): string | undefined {
  if (!hasPrivateStore(config)) return undefined;
  return (
    "Note: this installation's database (FerretDB) cannot restrict what a login may do there: the worker credentials in the\n" +
    'bundle can read and change every data-store and catalog database and the task results. They cannot reach the\n' +
    "service's users, groups, API tokens, sessions, login counts or task history, which are in the private store, where no\n" +
    'worker login exists. Give bundles only to machines you trust with the data store, and rotate the certificates\n' +
    "(ops/rotate-certs) if one is lost. The compose runtime's MongoDB holds workers to the data-store databases.\n"
  );
}

export const WORKER_BUNDLE_HELP = `Usage: ops/worker-bundle --host NAME [--python] [--dir DIR] [--server-address ADDR] [--queues LIST] [--image|--no-image] [--output FILE]

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
  --python             a Python worker's bundle instead (see below)
Exit codes: 0 written, 1 failed, 2 usage error, 3 no installation.

${PYTHON_BUNDLE_HELP}`;

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
  const serverAddress = await checkedServerAddress(inst, opts.host, opts.serverAddress);
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
    await mkdir(join(dir, 'app'), { recursive: true });
    await writeCredentials(
      inst,
      dir,
      remoteWorkerEnv(inst, opts.host, serverAddress, opts.queues ?? DEFAULT_QUEUE),
      `Worker for ${opts.host}: settings for the cybercom installation at ${serverAddress}.`,
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

    const output = await packBundle(staging, name, opts.output ?? join(inst.layout.bundlesDir, `${name}.tar.gz`));
    await writeRecord(inst, opts.host, {
      serverAddress,
      queues: opts.queues ?? DEFAULT_QUEUE,
      image: withImage,
      output,
      createdAt: new Date().toISOString(),
    });
    return output;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Rebuilds every bundle recorded in bundles/hosts.json (after a certificate rotation). */
export async function rebuildRecordedBundles(inst: Installation, say: (line: string) => void): Promise<string[]> {
  const rebuilt: string[] = [];
  for (const [key, record] of Object.entries(await readRecords(inst))) {
    const host = record.host ?? key;
    const options = { host, serverAddress: record.serverAddress, queues: record.queues, output: record.output };
    const output = record.python
      ? await buildPythonWorkerBundle(inst, options, say)
      : await buildWorkerBundle(inst, { ...options, image: record.image }, say);
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
    python: { type: 'boolean' },
  });
  if (values.help) {
    process.stdout.write(WORKER_BUNDLE_HELP);
    return EXIT.ok;
  }
  if (!values.host) throw new CommandError("--host is required (the remote machine's name)", EXIT.usage);
  const inst = await loadInstallation(values.dir);
  const image = values['no-image'] ? false : values.image ? true : undefined;
  if (values.python && image !== undefined) throw new CommandError('--image and --no-image do not apply to --python bundles', EXIT.usage);
  const say = (line: string): void => void process.stdout.write(`${line}\n`);
  const common = { host: values.host, serverAddress: values['server-address'], queues: values.queues, output: values.output };
  const output = values.python
    ? await buildPythonWorkerBundle(inst, common, say)
    : await buildWorkerBundle(inst, { ...common, image }, say);
  const folder = values.python ? `cybercom-python-worker-${values.host}` : `cybercom-worker-${values.host}`;
  process.stdout.write(
    `Wrote ${output} (mode 0600: it holds the worker's key and credentials).\nOn ${values.host}: tar xzf ${output.split('/').pop()} && cd ${folder} && ./run-worker.sh\n`,
  );
  const note = workerCredentialsNote(inst.config);
  if (note !== undefined) process.stdout.write(note);
  return EXIT.ok;
};
