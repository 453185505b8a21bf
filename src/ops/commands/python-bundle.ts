/**
 * ops/worker-bundle --python --host <remote host>: the archive for a machine that runs a lab's own
 * Python tasks with `cybercom worker`: the CA certificate, the worker's client certificate and
 * key, an env file pointing at this server's broker and database (the worker's node name
 * python-worker@<host>, its queue `python` unless told otherwise), the client wheel the API
 * serves at /api/client/python/, a requirements.txt and a tasks/ folder for the lab to fill,
 * run-worker.sh, a README and SHA256SUMS. The lab's two slots are left out of the checksums:
 * they are meant to be changed.
 */
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { checksumLines } from '../../installation/checksums.js';
import type { Installation } from '../../installation/health.js';
import { repositoryRoot } from '../../installation/layout.js';
import { checkedServerAddress, packBundle, remoteWorkerEnv, writeCredentials, writeRecord } from './bundle-parts.js';
import { CommandError } from './common.js';

const run = promisify(execFile);

/** The queue a Python worker consumes by default: not one a TypeScript worker takes, which would fail its tasks as unknown. */
const PYTHON_QUEUE = 'python';

/** Files the lab changes after unpacking, so not in SHA256SUMS. */
const LAB_SLOTS = ['requirements.txt', 'tasks/README.md'];

export const PYTHON_BUNDLE_HELP = `With --python: a bundle for a Python worker (cybercom worker) running the lab's own tasks:
certificates, worker.env (node python-worker@NAME, queue ${PYTHON_QUEUE} unless --queues), the client
wheel, requirements.txt and tasks/ for the lab, run-worker.sh (a virtualenv with the wheel's
[celery] extra and requirements.txt, then cybercom worker --bundle .), a README and SHA256SUMS.
Written to bundles/cybercom-python-worker-NAME.tar.gz; --image does not apply.
`;

interface PythonBundleOptions {
  host: string;
  queues?: string;
  serverAddress?: string;
  output?: string;
}

/**
 * Where the bundle's client wheel is built: for the local runtime the folder its API serves (the
 * repository's .cache/client, CLIENT_DOWNLOADS_DIR's default), for compose a folder of the
 * install directory (the API image carries a wheel of its own, built from the same sources).
 */
function clientDownloadsDir(inst: Installation): string {
  return inst.config.runtime === 'compose' ? inst.layout.composeClientDir : join(repositoryRoot(), '.cache', 'client');
}

/** The current client wheel, built first when it is missing or older than the client's sources. */
async function currentWheel(inst: Installation): Promise<string> {
  const downloads = clientDownloadsDir(inst);
  await run('bash', [join(repositoryRoot(), 'ops', 'build-client-wheel.sh')], {
    env: { ...process.env, CLIENT_DOWNLOADS_DIR: downloads },
    timeout: 300_000,
  });
  const wheels = (await readdir(join(downloads, 'python')).catch(() => [])).filter((f) => /^cybercom-.+\.whl$/.test(f));
  if (wheels.length !== 1) {
    throw new CommandError(
      `no client wheel in ${join(downloads, 'python')} (found ${wheels.length}): ops/build-client-wheel.sh needs python3 with venv on this host`,
    );
  }
  return join(downloads, 'python', wheels[0] as string);
}

function readme(host: string, serverAddress: string, inst: Installation, queues: string): string {
  return `# cybercom Python worker for ${host}

Made by \`ops/worker-bundle --python\` on ${new Date().toISOString()} for the installation at
${inst.layout.root}. The worker runs the lab's own Python tasks and connects to
**${serverAddress}**: AMQPS port ${inst.config.ports.broker} (RabbitMQ) and TLS port
${inst.config.ports.database} (MongoDB), with the client certificate in \`certs/\` and the worker
credentials in \`worker.env\`. Both ports must be reachable from this machine, and
\`${serverAddress}\` must resolve to the server. It needs Python >= 3.9 with venv, and pip must
reach a package index for Celery, pymongo and the lab's requirements.

## Start

    cp ~/lab-code/*.py tasks/         # the lab's task modules (@shared_task functions)
    echo numpy >>requirements.txt     # what they import
    ./run-worker.sh                   # --check: connect once and exit

\`run-worker.sh\` checks SHA256SUMS, creates \`.venv\` here with the client wheel's \`[celery]\`
extra and \`requirements.txt\` (again whenever either changed), and runs
\`cybercom worker --bundle .\`, which loads every module in \`tasks/\` (or those named with
\`-A MODULE\`). For restarts put it under systemd: a unit with
\`ExecStart=${'$'}PWD/run-worker.sh\` and \`Restart=always\`. After changing the lab's code, restart it.

The worker's node name is \`python-worker@${host}\`; it consumes \`${queues}\`. Give it queues no
TypeScript worker consumes: a worker handed a task it does not have fails it.

## Files

| file | what |
|---|---|
| worker.env (0600) | broker and database addresses and the worker's credentials |
| certs/ca.pem | the installation's server CA: verifies the broker and the database |
| certs/client.pem, certs/client.key (0600), certs/client-combined.pem (0600) | the worker's client certificate |
| wheel/ | the cybercom client (with \`cybercom worker\`), as the server serves it at /api/client/python/ |
| requirements.txt, tasks/ | the lab's: its requirements and task modules (not in SHA256SUMS) |
| run-worker.sh | installs and starts the worker |
| SHA256SUMS | checksums of the bundle's own files |

## When the server's certificates are rotated

\`ops/rotate-certs\` on the server rebuilds this bundle, and from then on the broker and the
database refuse this one's certificate: unpack the new bundle, copy \`tasks/\` and
\`requirements.txt\` over, and run \`./run-worker.sh\` again.
`;
}

export async function buildPythonWorkerBundle(inst: Installation, opts: PythonBundleOptions, say: (line: string) => void): Promise<string> {
  const serverAddress = await checkedServerAddress(inst, opts.host, opts.serverAddress);
  const queues = opts.queues ?? PYTHON_QUEUE;
  say('building the client wheel (a no-op when it is current) ...');
  const wheel = await currentWheel(inst);

  await mkdir(inst.layout.bundlesDir, { recursive: true, mode: 0o700 });
  const staging = await mkdtemp(join(inst.layout.bundlesDir, '.staging-'));
  const name = `cybercom-python-worker-${opts.host}`;
  const dir = join(staging, name);
  try {
    await mkdir(join(dir, 'wheel'), { recursive: true });
    await mkdir(join(dir, 'tasks'), { recursive: true });
    await writeCredentials(
      inst,
      dir,
      remoteWorkerEnv(inst, opts.host, serverAddress, queues, `python-worker@${opts.host}`),
      `Python worker for ${opts.host}: settings for the cybercom installation at ${serverAddress}.`,
    );
    await copyFile(wheel, join(dir, 'wheel', wheel.split('/').pop() as string));
    await writeFile(join(dir, 'requirements.txt'), "# The lab's Python requirements (pip's format), installed beside the client.\n");
    await writeFile(
      join(dir, 'tasks', 'README.md'),
      "The lab's task modules go here: every `*.py` file is loaded by `cybercom worker --bundle`.\n",
    );
    await copyFile(join(repositoryRoot(), 'worker-image', 'python', 'run-worker.sh'), join(dir, 'run-worker.sh'));
    await chmod(join(dir, 'run-worker.sh'), 0o755);
    await writeFile(join(dir, 'README.md'), readme(opts.host, serverAddress, inst, queues));
    await writeFile(join(dir, 'SHA256SUMS'), await checksumLines(dir, ['SHA256SUMS', ...LAB_SLOTS]));

    const output = await packBundle(staging, name, opts.output ?? join(inst.layout.bundlesDir, `${name}.tar.gz`));
    await writeRecord(inst, `python:${opts.host}`, {
      host: opts.host,
      python: true,
      serverAddress,
      queues,
      image: false,
      output,
      createdAt: new Date().toISOString(),
    });
    return output;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
