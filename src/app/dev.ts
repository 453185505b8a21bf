/**
 * `cybercom dev`: the whole service on this machine. Starts (or restarts) the local TLS services
 * under .state/dev, writes .state/dev/service.env so other commands (createsuperuser, worker)
 * can point at them with ENV_FILE, creates an `admin` superuser on first run (password shown
 * once and kept in .state/dev/admin-password, mode 0600), starts a TypeScript worker with the
 * example tasks (worker-image/tasks) as a child process, then runs the API in this process.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { writeFileAtomic } from '../pki/files.js';
import { loadSettings } from '../config/settings.js';
import { createLogger } from '../log/logger.js';
import { createServiceContext } from './service-context.js';
import { startLocalServices } from '../local-services/services.js';

const HELP = `Usage: cybercom dev [--state-dir DIR] [--port N] [--broker-nodes N]

Starts RabbitMQ (AMQPS, client certificates) and a MongoDB-wire server (TLS, client
certificates, SCRAM) as child processes, then the API on http://localhost:<port>/api/.
State, certificates and secrets live in the state directory (default .state/dev) and are
reused on the next run. Stop with Ctrl-C: the services stop with the API.
--broker-nodes 3 runs RabbitMQ as a cluster of three nodes (quorum task queues; BROKER_URL
lists every node).
`;

function envFileText(env: Record<string, string>): string {
  return `${Object.entries(env)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join('\n')}\n`;
}

async function readOrCreateSecret(path: string, make: () => string): Promise<{ value: string; created: boolean }> {
  if (existsSync(path)) return { value: readFileSync(path, 'utf8').trim(), created: false };
  const value = make();
  await writeFileAtomic(path, `${value}\n`, 0o600);
  return { value, created: true };
}

export async function runDev(argv: string[], serve: (env: Record<string, string | undefined>) => Promise<void>): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'state-dir': { type: 'string', default: '.state/dev' },
      port: { type: 'string' },
      'broker-nodes': { type: 'string', default: '1' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) {
    process.stdout.write(HELP);
    return;
  }
  const brokerNodes = Number(values['broker-nodes']);
  if (!Number.isInteger(brokerNodes) || brokerNodes < 1 || brokerNodes > 9)
    throw new Error('--broker-nodes must be a whole number from 1 to 9');
  const stateDir = resolve(values['state-dir'] as string);
  process.stdout.write(`Starting local services in ${stateDir} ...\n`);
  const services = await startLocalServices({ stateDir, reuseCertificates: true, brokerNodes });
  const secret = await readOrCreateSecret(join(stateDir, 'secret-key'), () => randomBytes(32).toString('hex'));
  const env: Record<string, string> = {
    ...services.env(),
    SECRET_KEY: secret.value,
    HTTP_PORT: values.port ?? process.env.HTTP_PORT ?? '8080',
    ALLOWED_HOSTS: process.env.ALLOWED_HOSTS ?? 'localhost,127.0.0.1,[::1]',
  };
  await writeFileAtomic(join(stateDir, 'service.env'), envFileText(env), 0o600);

  const settings = loadSettings({ ...process.env, ...env });
  const ctx = await createServiceContext(settings, createLogger('warn'));
  try {
    const password = await readOrCreateSecret(join(stateDir, 'admin-password'), () => randomBytes(12).toString('base64url'));
    await ctx.auth.users.ensureSuperuser({ username: 'admin', email: 'admin@localhost.localdomain', password: password.value });
    if (password.created) {
      process.stdout.write(`Created superuser "admin" with password ${password.value} (kept in ${join(stateDir, 'admin-password')})\n`);
    } else {
      process.stdout.write(`Superuser "admin": password in ${join(stateDir, 'admin-password')}\n`);
    }
  } finally {
    await ctx.close();
  }

  // The local worker uses its own client certificate, as a remote worker would.
  const certs = services.certDir;
  const worker = spawn(process.execPath, [...process.execArgv, process.argv[1] as string, 'worker'], {
    env: {
      ...process.env,
      ...env,
      BROKER_TLS_CERT_FILE: join(certs, 'worker.pem'),
      BROKER_TLS_KEY_FILE: join(certs, 'worker.key'),
      MONGO_TLS_CERT_KEY_FILE: join(certs, 'worker-combined.pem'),
      WORKER_TASK_MODULES: process.env.WORKER_TASK_MODULES ?? resolve('worker-image/tasks/index.ts'),
      WORKER_NODE_NAME: 'local-worker@localhost',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const stopServices = (): void => {
    worker.kill('SIGTERM');
    void services.stop();
  };
  process.once('exit', stopServices);
  process.stdout.write(
    `Services: MongoDB-wire (${services.mongo.kind}) on ${services.mongo.port}, RabbitMQ on ${services.broker.port}, worker pid ${worker.pid}\n` +
      `Settings for other commands: ENV_FILE=${join(stateDir, 'service.env')}\n` +
      `API: http://localhost:${env.HTTP_PORT}/api/\n`,
  );
  await serve({ ...process.env, ...env });
}
