/**
 * The researchers' Python client (clients/python) against the real service: runs its pytest suite
 * (unit tests, and integration tests for every client method and CLI command, the documented
 * walk-through and the wheel the API serves) with the API on a real HTTP server, a TypeScript
 * worker and a stock Python Celery worker on the suite's TLS broker and database.
 * Prepared by test/support/python-client.sh (.venv-client and the wheel in .cache/client/python).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestApp, testSettings, uniqueName, type TestApp } from '../../support/app.js';
import { startHttpServer, type RunningServer } from '../../../src/app/server.js';
import { createLogger } from '../../../src/log/logger.js';
import { createCertificateAuthority, issueServerCertificate } from '../../../src/pki/certificates.js';
import { freePort } from '../../../src/local-services/ports.js';
import { createServiceContext } from '../../../src/app/service-context.js';
import { celeryDir, celeryEnv, stopProcess } from '../../support/celery-env.js';
import type { Worker } from '../../../src/worker/worker.js';
import { until } from '../../support/until.js';
import { runClientPytest } from '../../support/client-pytest.js';
import { startWorker } from '../queue/support.js';
import { repoRoot } from '../worker/support.js';

const run = promisify(execFile);
const SUPERUSER = { username: 'pyresearcher', password: 'py-client-password-1' };
const CLI_USER = { username: 'pycliuser', password: 'py-client-password-2' };

let app: TestApp;
let tsWorker: Worker;
let tsQueue: string;
let pyWorker: ChildProcess | undefined;
let pyWorkerLog = '';
const pyQueue = uniqueName('pyq-');
const catalogDb = uniqueName('pycat');
let tlsDir: string;
let tlsServer: RunningServer | undefined;
let tlsUrl: string;

/**
 * The same service over HTTPS with a certificate from a private CA, as the installer sets it up,
 * so the client's TLS verification and `ca_bundle=` are tested against a real TLS server.
 */
async function startTlsServer(serviceDatabase: string): Promise<void> {
  tlsDir = await mkdtemp(join(tmpdir(), 'py-client-tls-'));
  const ca = await createCertificateAuthority({ commonName: 'py-client test CA' });
  const cert = await issueServerCertificate(ca, {
    commonName: 'localhost',
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1'],
    validityDays: 2,
  });
  await writeFile(join(tlsDir, 'ca.pem'), ca.certPem);
  await writeFile(join(tlsDir, 'cert.pem'), cert.certPem);
  await writeFile(join(tlsDir, 'key.pem'), cert.keyPem, { mode: 0o600 });
  const port = await freePort();
  const settings = testSettings({
    SERVICE_DATABASE: serviceDatabase,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(port),
    HTTPS_CERT_FILE: join(tlsDir, 'cert.pem'),
    HTTPS_KEY_FILE: join(tlsDir, 'key.pem'),
  });
  tlsServer = await startHttpServer(await createServiceContext(settings, createLogger('silent')));
  tlsUrl = `https://127.0.0.1:${port}`;
}

beforeAll(async () => {
  await run('bash', [join(repoRoot, 'test/support/python-client.sh')], { cwd: repoRoot, timeout: 600_000 });
  await run('bash', [join(repoRoot, 'test/support/python-celery.sh')], { cwd: repoRoot, timeout: 110_000 });
  app = await startTestApp({
    // Short-lived access tokens, so the client's renewal runs in the tests.
    JWT_ACCESS_TTL_S: '2',
    CATALOG_DATABASES: catalogDb,
    CLIENT_DOWNLOADS_DIR: join(repoRoot, '.cache/client'),
  });
  await app.users.createUser({ ...SUPERUSER, isSuperuser: true });
  await app.users.createUser({ username: 'pyplain', password: 'py-client-password-3' });
  await app.users.createUser(CLI_USER);
  await startTlsServer(app.ctx.settings.serviceDatabase);

  const started = await startWorker(app.ctx.settings.serviceDatabase);
  tsWorker = started.worker;
  tsQueue = started.queue;
  pyWorker = spawn(
    join(repoRoot, '.venv/bin/celery'),
    ['-A', 'interop_app', 'worker', '-P', 'solo', '-Q', pyQueue, '-n', `${pyQueue}@test`, '--without-mingle', '--without-gossip'],
    {
      cwd: celeryDir,
      // With the cybercom.celery extension, as a researcher's app enables it: its tasks' signatures reach the catalog.
      env: celeryEnv({
        venv: join(repoRoot, '.venv'),
        queue: pyQueue,
        resultDatabase: app.ctx.settings.serviceDatabase,
        cybercomExtension: true,
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  pyWorker.stdout?.on('data', (chunk: Buffer) => (pyWorkerLog += chunk.toString()));
  pyWorker.stderr?.on('data', (chunk: Buffer) => (pyWorkerLog += chunk.toString()));
  const token = await app.users.tokenFor(SUPERUSER.username);
  await until(
    async () => {
      if (pyWorker?.exitCode !== null) throw new Error(`Python worker exited:\n${pyWorkerLog}`);
      const queues: unknown = (await call(app.url, 'GET', '/api/queue/?refresh=true', { token })).json?.queues;
      return Array.isArray(queues) && queues.includes(tsQueue) && queues.includes(pyQueue);
    },
    60_000,
    'both workers in the task list',
  );
});

afterAll(async () => {
  if (pyWorker) await stopProcess(pyWorker, 10_000);
  await tsWorker?.close();
  await tlsServer?.close();
  await app?.close();
  if (tlsDir) await rm(tlsDir, { recursive: true, force: true });
});

describe('Python client', () => {
  it('passes its pytest suite against the real service', async () => {
    const env = {
      ...process.env,
      CYBERCOM_URL: app.url,
      CYBERCOM_TOKEN: await app.users.tokenFor(SUPERUSER.username),
      CYBERCOM_USERNAME: SUPERUSER.username,
      CYBERCOM_PASSWORD: SUPERUSER.password,
      CYBERCOM_TEST_PREFIX: app.prefix,
      CYBERCOM_TEST_TS_QUEUE: tsQueue,
      CYBERCOM_TEST_PY_QUEUE: pyQueue,
      CYBERCOM_TEST_OTHER_TOKEN: await app.users.tokenFor('pyplain'),
      CYBERCOM_TEST_CLI_USER: CLI_USER.username,
      CYBERCOM_TEST_CLI_PASSWORD: CLI_USER.password,
      CYBERCOM_TEST_CATALOG_DB: catalogDb,
      CYBERCOM_TEST_HTTPS_URL: tlsUrl,
      CYBERCOM_TEST_CA_FILE: join(tlsDir, 'ca.pem'),
      CYBERCOM_CONFIG: join(repoRoot, '.cache/client/unused-config.json'),
    };
    const pytest = await runClientPytest(['tests'], env);
    const { summary } = pytest;
    console.log(`pytest (clients/python):\n${summary}`);
    expect(pytest.code, pytest.output).toBe(0);
    expect(summary).toMatch(/\d+ passed/);
    // Nothing is skipped: every part of the client is tested against this server.
    expect([...pytest.output.matchAll(/^SKIPPED \[\d+\] (.*)$/gm)].map((m) => m[1])).toEqual([]);
  }, 900_000);
});
