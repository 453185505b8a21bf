/**
 * The container path end to end, as a user runs it: the installer in compose mode brings up the
 * real compose stack (images built from docker/ and worker-image/ on the stand-in bases), then
 * everything is checked from outside the containers:
 *
 *   1. through the proxy (HTTPS, the site certificate of the public host): health, login as the
 *      administrator (API and admin site), a record written and read with the API token, a task
 *      submitted and its result; the client wheel and the manual the API image carries; the compose profile
 *      python-worker built and started on a lab's module, whose task is given `3.0` as a float;
 *   2. the published broker and database ports accept only TLS sessions with a client
 *      certificate of the installation's client CA (not one of its server CA, nor a stranger's);
 *   3. a remote host (own network namespace and container engine, reaching only those two ports)
 *      loads a worker bundle from ops/worker-bundle with its own run script; a task on a queue
 *      only that worker consumes runs there;
 *   4. ops/rotate-certs (default: same server CA, new client CA): the remote worker's old
 *      certificate is refused, the rebuilt bundle works again. (--new-ca is covered by
 *      test/integration/ops/certificates.test.ts on the local runtime.)
 * Containers, networks, volumes, the remote host and the install directory are removed at the end,
 * also after a failure. Prints each phase's duration and `N passed, N failed`.
 *
 * Run by test/containers/run.sh (which prepares Podman and the images); on its own:
 *   DOCKER_HOST=unix:///run/podman/podman.sock npx tsx test/containers/stack.e2e.ts
 * CYBERCOM_E2E_KEEP=1 keeps everything for a look after a failure; `stack.e2e.ts --clean` (or the
 * next run) removes it.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { ACCOUNTS } from '../../src/installation/secrets.js';
import { COMPOSE_PROJECT } from '../../src/installation/runner/compose-runtime.js';
import { createCertificateAuthority, issueClientCertificate, issueServerCertificate } from '../../src/pki/certificates.js';
import { DockerComposeEnvironment, ImageName, Wait, getContainerRuntimeClient, type StartedDockerComposeEnvironment } from 'testcontainers';
import { dockerHost, run } from './support/engine.js';
import { Site } from './support/http-client.js';
import { Report, assert } from './support/phases.js';
import { removeLeftovers, WORK_PREFIX } from './support/leftovers.js';
import { RemoteHost } from './support/remote-host.js';
import { LOCAL_IMAGES } from './support/testcontainers.js';
import {
  AMQP_HEADER,
  amqpSession,
  expectRefused,
  isPlaintextAnswer,
  mongoHelloMessage,
  mongoSession,
  plaintextExchange,
  type ClientTls,
  type Endpoint,
} from './support/tls-probes.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..', '..');
/** The installation's public host: a reserved test domain, resolved by hand on both sides. */
const PUBLIC_HOST = 'cybercom-e2e.test';
const PROJECT = COMPOSE_PROJECT;
const REMOTE = { name: 'cybercom-e2e', worker: 'remote-e2e', queue: 'remote-e2e', subnetBase: '10.213.7.0' };
const ADMIN = { username: 'e2e-admin', password: `E2e-${randomBytes(12).toString('hex')}` };

/** Images the stand-in build made (test/containers/build-standins.sh). */
const STAND_INS = {
  MONGO_IMAGE: 'localhost/cybercom-test/ferretdb:latest',
  RABBITMQ_IMAGE: 'localhost/cybercom-test/rabbitmq:latest',
  PROXY_IMAGE: 'localhost/cybercom-test/caddy:latest',
  NODE_IMAGE: 'localhost/cybercom-test/node:latest',
  PYTHON_IMAGE: 'localhost/cybercom-test/python:latest',
};
/** A lab's module for the compose stack's python-worker service: it says what a task is given. */
const LAB_MODULE = [
  '"""Tasks of the end-to-end lab."""',
  'from celery import shared_task',
  '',
  '',
  '@shared_task(name="lab.kinds")',
  'def kinds(x: float, n: int) -> dict:',
  '    """The Python types of the arguments, and their sum."""',
  '    return {"x": type(x).__name__, "n": type(n).__name__, "sum": x + n}',
  '',
].join('\n');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '0.0.0.0', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function readEnvFile(path: string): Record<string, string> {
  return parseEnv(readFileSync(path, 'utf8')) as Record<string, string>;
}

/**
 * Waits for a condition of the application (a task offered, a worker's queue listed by the API),
 * not of a container: no testcontainers wait strategy reads the API's answers.
 */
async function poll<T>(what: string, timeoutMs: number, fn: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${timeoutMs / 1000} s${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await sleep(2000);
  }
}

const OVERRIDE_FILE = join(here, 'compose.ferretdb.yaml');
const COMPOSE_FILES = [join(repoRoot, 'compose.yaml'), OVERRIDE_FILE];
const newRemoteHost = (allowedPorts: number[]) =>
  new RemoteHost({ name: REMOTE.name, subnetBase: REMOTE.subnetBase, allowedPorts, hostNames: [PUBLIC_HOST] });

async function main(): Promise<number> {
  const report = new Report();
  const keep = process.env.CYBERCOM_E2E_KEEP === '1';
  try {
    // Before the work directory exists: leftovers include earlier work directories.
    await report.phase('preflight', async () => {
      await report.check('stand-in images present', async () => {
        const images = (await getContainerRuntimeClient()).image;
        for (const image of Object.values(STAND_INS)) assert(await images.exists(ImageName.fromString(image)), `no image ${image}`);
      });
      await report.check('nothing of an earlier run left (removed if there was)', () =>
        removeLeftovers(PROJECT, newRemoteHost([]), COMPOSE_FILES),
      );
    });
  } catch {
    console.log(`\n${report.summary()}\n\n${report.passed} passed, ${report.failed} failed`);
    return 1;
  }
  const work = mkdtempSync(join(tmpdir(), WORK_PREFIX));
  const installDir = join(work, 'install');
  const ports = { http: await freePort(), https: await freePort(), broker: await freePort(), db: await freePort() };
  // What a Podman user sets: the engine's socket, and Compose's classic builder (Podman's Docker
  // API has no BuildKit; Compose would otherwise start a BuildKit container from a registry).
  const env: Record<string, string> = {
    DOCKER_HOST: dockerHost(),
    COMPOSE_BAKE: 'false',
    DOCKER_BUILDKIT: '0',
    ...STAND_INS,
    CYBERCOM_COMPOSE_OVERRIDES: OVERRIDE_FILE,
  };
  const composeArgs = [
    'compose',
    ...COMPOSE_FILES.flatMap((f) => ['-f', f]),
    '--env-file',
    join(installDir, 'config', 'compose.env'),
    '-p',
    PROJECT,
  ];
  const compose = (...args: string[]) => run('docker', [...composeArgs, ...args], { env, timeoutMs: 300_000 });
  // The installer's compose project as testcontainers sees it: `up` without recreating anything
  // the installer started (nor pulling: every image is built here), then each container's own
  // healthcheck as the wait strategy; its handles answer for the containers, its `down` removes
  // the project.
  const stackEnvironment = new DockerComposeEnvironment(repoRoot, COMPOSE_FILES)
    .withNoRecreate()
    .withProjectName(PROJECT)
    .withEnvironmentFile(join(installDir, 'config', 'compose.env'))
    .withEnvironment(env)
    .withPullPolicy(LOCAL_IMAGES)
    .withDefaultWaitStrategy(Wait.forHealthCheck())
    .withStartupTimeout(300_000);
  let stack: StartedDockerComposeEnvironment | undefined;
  const remote = newRemoteHost([ports.broker, ports.db]);
  let stackStarted = false;
  let remoteStarted = false;

  try {
    // The site certificate an operator brings for the public host (--https files).
    const siteCa = await report.phase('site certificate for the public host', async () => {
      const ca = await createCertificateAuthority({ commonName: 'e2e site CA' });
      const cert = await issueServerCertificate(ca, { commonName: PUBLIC_HOST, dnsNames: [PUBLIC_HOST], ipAddresses: [] });
      mkdirSync(join(work, 'site'));
      writeFileSync(join(work, 'site', 'cert.pem'), cert.certPem);
      writeFileSync(join(work, 'site', 'key.pem'), cert.keyPem, { mode: 0o600 });
      writeFileSync(join(work, 'admin-password'), ADMIN.password, { mode: 0o600 });
      return ca.certPem;
    });
    // A browser (session cookies) and a script (API token only), both resolving the public host
    // to this machine.
    const site = new Site({ host: PUBLIC_HOST, port: ports.https, address: '127.0.0.1', ca: siteCa });
    const user = new Site({ host: PUBLIC_HOST, port: ports.https, address: '127.0.0.1', ca: siteCa });

    await report.phase('installer (compose): build images, start the stack', async () => {
      stackStarted = true;
      await report.check('./installer --runtime compose --yes exits 0', async () => {
        await run(
          join(repoRoot, 'installer'),
          [
            '--runtime',
            'compose',
            '--yes',
            '--dir',
            installDir,
            '--public-host',
            PUBLIC_HOST,
            '--https',
            'files',
            '--tls-cert-file',
            join(work, 'site', 'cert.pem'),
            '--tls-key-file',
            join(work, 'site', 'key.pem'),
            '--admin-username',
            ADMIN.username,
            '--admin-password-file',
            join(work, 'admin-password'),
            '--http-port',
            String(ports.http),
            '--https-port',
            String(ports.https),
            '--broker-port',
            String(ports.broker),
            '--db-port',
            String(ports.db),
          ],
          { env, timeoutMs: 1_200_000, echo: '    installer| ' },
        );
      });
      await report.check('every service running and healthy', async () => {
        stack = await stackEnvironment.up();
        for (const service of ['proxy', 'api', 'worker', 'rabbitmq', 'mongo']) stack.getContainer(`${service}-1`);
      });
    });

    const token = await report.phase('as a user, through the proxy (HTTPS)', async () => {
      await report.check('health answers ok', async () => {
        const body = await site.expect<{ status?: string }>(200, 'GET', '/api/health/');
        assert(JSON.stringify(body).includes('ok'), `health: ${JSON.stringify(body)}`);
      });
      await report.check('the Python client wheel is served for pip install', async () => {
        const about = await site.expect<{ wheel?: string }>(200, 'GET', '/api/client/python/');
        const path = new URL(about.wheel ?? '', site.origin).pathname;
        const wheel = await site.request('GET', path, { headers: { accept: '*/*' } });
        assert(wheel.status === 200 && /\.whl$/.test(path) && wheel.text.startsWith('PK'), `wheel ${path}: ${wheel.status}`);
      });
      await report.check('the manual the API image carries is served', async () => {
        const res = await site.request('GET', '/api/manual/', { headers: { accept: 'text/html' } });
        assert(
          res.status === 200 && /<html/i.test(res.text) && /cybercom/i.test(res.text),
          `manual: ${res.status} ${res.text.slice(0, 200)}`,
        );
      });
      await report.check('plain HTTP is redirected to HTTPS', async () => {
        const res = await fetch(`http://127.0.0.1:${ports.http}/api/health/`, { redirect: 'manual', headers: { host: PUBLIC_HOST } });
        assert(
          [301, 302, 307, 308].includes(res.status) && (res.headers.get('location') ?? '').startsWith('https://'),
          `HTTP answered ${res.status} ${res.headers.get('location')}`,
        );
      });
      await report.check('the admin site sends anonymous visitors to the login page', async () => {
        const res = await site.request('GET', '/api/admin/', { headers: { accept: 'text/html' } });
        assert(
          res.status === 302 && String(res.headers.location).includes('/api/auth/login/'),
          `anonymous /api/admin/: ${res.status} ${res.headers.location}`,
        );
      });
      await report.check('administrator logs in', async () => {
        const body = await site.expect<{ username: string }>(200, 'POST', '/api/auth/login/', { json: ADMIN });
        assert(body.username === ADMIN.username, `logged in as ${body.username}`);
      });
      await report.check('the admin site opens for the administrator', async () => {
        const res = await site.request('GET', '/api/admin/', { headers: { accept: 'text/html' } });
        assert(res.status === 200 && /<html/i.test(res.text), `admin site: ${res.status} ${res.text.slice(0, 200)}`);
      });
      let apiToken = '';
      await report.check('the profile shows an API token', async () => {
        const profile = await site.expect<{ authentication?: { 'auth-token'?: string } }>(200, 'GET', '/api/user/');
        apiToken = profile.authentication?.['auth-token'] ?? '';
        assert(apiToken.length >= 20, `profile: ${JSON.stringify(profile).slice(0, 300)}`);
      });
      const auth = { headers: { authorization: `Token ${apiToken}` } };
      await report.check('a record is written and read back with the token', async () => {
        await user.expect(201, 'POST', '/api/data_store/data/', { ...auth, json: { database: 'e2e' } });
        await user.expect(201, 'POST', '/api/data_store/data/e2e/', { ...auth, json: { collection: 'stations' } });
        await user.expect(201, 'POST', '/api/data_store/data/e2e/stations/', { ...auth, json: { name: 'Norman', elev: 357 } });
        const page = await user.expect<{ results?: Array<Record<string, unknown>> }>(
          200,
          'GET',
          '/api/data_store/data/e2e/stations/',
          auth,
        );
        assert(
          page.results?.some((r) => r.name === 'Norman' && r.elev === 357),
          `read back: ${JSON.stringify(page).slice(0, 300)}`,
        );
      });
      await report.check("a task submitted to the stack's worker returns its result", async () => {
        const done = await poll('tasks.add offered', 90_000, async () => {
          const res = await user.request('POST', '/api/queue/run/tasks.add/?wait=30', {
            ...auth,
            json: { function: 'tasks.add', queue: 'celery', args: [2, 3] },
          });
          if (res.status === 404) return undefined; // the worker's task list is not in yet
          return res;
        });
        const body = done.json<{ status: string; result: unknown }>();
        assert(done.status === 200 && body.status === 'SUCCESS' && body.result === 5, `task: ${done.status} ${done.text.slice(0, 300)}`);
      });
      await report.check("the lab's Python worker (compose profile python-worker) runs its module's task", async () => {
        const tasks = join(installDir, 'python-tasks');
        mkdirSync(tasks, { recursive: true, mode: 0o755 });
        writeFileSync(join(tasks, 'lab.py'), LAB_MODULE, { mode: 0o644 });
        await run('docker', [...composeArgs, '--profile', 'python-worker', 'up', '-d', '--build', 'python-worker'], {
          env,
          timeoutMs: 900_000,
          echo: '    python-worker| ',
        });
        const done = await poll('lab.kinds offered', 180_000, async () => {
          const res = await user.request('POST', '/api/queue/run/lab.kinds/?wait=30', {
            ...auth,
            // Written as a researcher writes it: 3.0 must reach Python as a float.
            jsonText: '{"function": "lab.kinds", "queue": "python", "args": [3.0, 2]}',
          });
          if (res.status === 404 || res.status === 400) return undefined; // the worker's task list is not in yet
          return res;
        });
        const body = done.json<{ status: string; result: { x?: string; n?: string; sum?: number } }>();
        assert(
          done.status === 200 && body.status === 'SUCCESS' && body.result.x === 'float' && body.result.n === 'int' && body.result.sum === 5,
          `lab.kinds: ${done.status} ${done.text.slice(0, 300)}`,
        );
        await run('docker', [...composeArgs, '--profile', 'python-worker', 'rm', '--stop', '--force', 'python-worker'], {
          env,
          timeoutMs: 120_000,
        });
      });
      return apiToken;
    });

    const certs = join(installDir, 'certs');
    const secrets = readEnvFile(join(installDir, 'config', 'secrets.env'));
    const pem = (name: string) => readFileSync(join(certs, name), 'utf8');
    await report.phase('broker and database ports from outside the containers', async () => {
      const broker: Endpoint = { host: '127.0.0.1', port: ports.broker, servername: 'localhost' };
      const db: Endpoint = { host: '127.0.0.1', port: ports.db, servername: 'localhost' };
      const worker: ClientTls = { ca: pem('ca.pem'), cert: pem('worker.pem'), key: pem('worker.key') };
      const other = await createCertificateAuthority({ commonName: 'stranger CA' });
      const stranger = await issueClientCertificate(other, { commonName: 'stranger' });
      // Signed by the installation's own server CA: the servers accept clients of the client CA only.
      const serverCaClient = await issueClientCertificate(
        { certPem: pem('ca.pem'), keyPem: pem('ca.key') },
        { commonName: 'cybercom-worker' },
      );
      const amqp = (tls: ClientTls) =>
        amqpSession(broker, ACCOUNTS.broker.worker, secrets.BROKER_WORKER_PASSWORD ?? '', ACCOUNTS.vhost, tls);
      const mongo = (tls: ClientTls, timeoutMs?: number) =>
        mongoSession(db, ACCOUNTS.database.worker, secrets.DB_WORKER_PASSWORD ?? '', tls, timeoutMs);
      await report.check('broker: AMQPS with the worker certificate and credentials', () => amqp(worker));
      await report.check('broker: refused without a client certificate', async () => {
        await expectRefused('broker without certificate', () => amqp({ ca: worker.ca }));
      });
      await report.check('broker: refused with a certificate of another CA', async () => {
        await expectRefused('broker with a stranger', () => amqp({ ca: worker.ca, cert: stranger.certPem, key: stranger.keyPem }));
      });
      await report.check('broker: refused with a client certificate of the server CA', async () => {
        await expectRefused('broker with a server-CA client', () =>
          amqp({ ca: worker.ca, cert: serverCaClient.certPem, key: serverCaClient.keyPem }),
        );
      });
      await report.check('broker: no plaintext AMQP', async () => {
        const answer = await plaintextExchange(broker, AMQP_HEADER);
        assert(!isPlaintextAnswer(answer), `plaintext answer ${answer.subarray(0, 16).toString('hex')}`);
      });
      await report.check('database: TLS with the worker certificate and credentials', () => mongo(worker));
      await report.check('database: refused without a client certificate', async () => {
        await expectRefused('database without certificate', () => mongo({ ca: worker.ca }, 3000));
      });
      await report.check('database: refused with a certificate of another CA', async () => {
        await expectRefused('database with a stranger', () => mongo({ ca: worker.ca, cert: stranger.certPem, key: stranger.keyPem }, 3000));
      });
      await report.check('database: refused with a client certificate of the server CA', async () => {
        await expectRefused('database with a server-CA client', () =>
          mongo({ ca: worker.ca, cert: serverCaClient.certPem, key: serverCaClient.keyPem }, 3000),
        );
      });
      await report.check('database: no plaintext MongoDB protocol', async () => {
        const answer = await plaintextExchange(db, mongoHelloMessage());
        assert(!isPlaintextAnswer(answer), `plaintext answer ${answer.subarray(0, 16).toString('hex')}`);
      });
    });

    const auth = { headers: { authorization: `Token ${token}` } };
    /** Waits until the API's task list shows a live worker consuming the remote queue. */
    const remoteQueueLive = (live: boolean) =>
      poll(`remote queue ${live ? 'listed' : 'gone'}`, 120_000, async () => {
        const listing = await user.expect<unknown>(200, 'GET', '/api/queue/?refresh=true', auth);
        const listed = JSON.stringify(listing).includes(`"${REMOTE.queue}"`);
        return listed === live ? true : undefined;
      });
    /** Submits tasks.add to the remote queue and returns the run's details. */
    const remoteTask = async (a: number, b: number) => {
      const submitted = await user.expect<{ task_id: string; status: string; result: unknown }>(
        200,
        'POST',
        '/api/queue/run/tasks.add/?wait=30',
        {
          ...auth,
          json: { function: 'tasks.add', queue: REMOTE.queue, args: [a, b] },
        },
      );
      const details = await user.expect<{ worker: string | null; queue: string }>(
        200,
        'GET',
        `/api/queue/task/${submitted.task_id}/`,
        auth,
      );
      return { ...submitted, ...details };
    };
    const bundlePath = join(installDir, 'bundles', `cybercom-worker-${REMOTE.worker}.tar.gz`);
    const installBundle = async (into: string): Promise<string> => {
      // "Copying the archive to the remote machine": a directory only the remote's commands use.
      mkdirSync(into, { recursive: true });
      copyFileSync(bundlePath, join(into, basename(bundlePath)));
      await run('tar', ['-xzf', basename(bundlePath)], { cwd: into });
      return join(into, `cybercom-worker-${REMOTE.worker}`);
    };
    const startRemoteWorker = async (bundleDir: string) => {
      await remote.exec(join(bundleDir, 'run-worker.sh'), ['docker'], {
        env: { DOCKER_HOST: remote.dockerHost },
        timeoutMs: 300_000,
        echo: '    remote| ',
      });
    };

    await report.phase('remote host: worker bundle over the published ports', async () => {
      remoteStarted = true;
      await remote.setUp();
      await report.check('the remote reaches the published broker and database ports', async () => {
        assert(await remote.canConnect(ports.broker), 'broker port not reachable');
        assert(await remote.canConnect(ports.db), 'database port not reachable');
      });
      await report.check('the remote reaches nothing else (HTTP, HTTPS, the API container)', async () => {
        assert(!(await remote.canConnect(ports.http)), 'HTTP port reachable');
        assert(!(await remote.canConnect(ports.https)), 'HTTPS port reachable');
        assert(stack, 'the stack was not started');
        const api = stack.getContainer('api-1');
        const apiAddress = api.getIpAddress(api.getNetworkNames()[0] ?? '');
        assert(apiAddress, 'no address for the api container');
        assert(!(await remote.canConnect(8080, apiAddress)), `api container ${apiAddress}:8080 reachable`);
      });
      await report.check('ops/worker-bundle builds the bundle (image included)', async () => {
        await run(
          join(repoRoot, 'ops', 'worker-bundle'),
          ['--dir', installDir, '--host', REMOTE.worker, '--queues', REMOTE.queue, '--image'],
          { env, timeoutMs: 600_000, echo: '    worker-bundle| ' },
        );
      });
      await report.check("the bundle's run script loads and starts the worker on the remote", async () => {
        await startRemoteWorker(await installBundle(join(work, 'remote', 'v1')));
        await remoteQueueLive(true);
      });
      await report.check('a task on the remote-only queue runs on the remote worker', async () => {
        const run1 = await remoteTask(20, 22);
        assert(run1.status === 'SUCCESS' && run1.result === 42, `task: ${JSON.stringify(run1).slice(0, 300)}`);
        assert(run1.worker === `worker@${REMOTE.worker}`, `ran on ${run1.worker}`);
      });
    });

    await report.phase('certificate rotation (new client CA)', async () => {
      const oldBundle = join(work, 'remote', 'v1', `cybercom-worker-${REMOTE.worker}`);
      const brokerUrl = `amqps://${ACCOUNTS.broker.worker}:${encodeURIComponent(secrets.BROKER_WORKER_PASSWORD ?? '')}@${PUBLIC_HOST}:${ports.broker}/${ACCOUNTS.vhost}`;
      const loginFromRemote = (bundle: string) =>
        remote.exec(
          'node',
          [
            join(here, 'support', 'amqp-login.mjs'),
            brokerUrl,
            join(bundle, 'certs', 'ca.pem'),
            join(bundle, 'certs', 'client.pem'),
            join(bundle, 'certs', 'client.key'),
          ],
          { allowFailure: true },
        );
      await report.check("before: the remote logs in with its bundle's certificate", async () => {
        const r = await loginFromRemote(oldBundle);
        assert(r.code === 0, r.stdout + r.stderr);
      });
      await report.check('ops/rotate-certs restarts a healthy stack and rebuilds the bundle', async () => {
        const out = await run(join(repoRoot, 'ops', 'rotate-certs'), ['--dir', installDir], {
          env,
          timeoutMs: 900_000,
          echo: '    rotate-certs| ',
        });
        assert(out.stdout.includes(bundlePath), `bundle ${bundlePath} not reported as rebuilt`);
      });
      await report.check('the old certificate is refused (the server CA it trusts is unchanged)', async () => {
        const r = await loginFromRemote(oldBundle);
        assert(r.code !== 0 && r.stdout.startsWith('refused'), `old certificate: ${r.stdout}${r.stderr}`);
      });
      await report.check('the remote worker with the old bundle is gone from the queue', async () => {
        await remoteQueueLive(false);
        const res = await user.request('POST', '/api/queue/run/tasks.add/', {
          ...auth,
          json: { function: 'tasks.add', queue: REMOTE.queue, args: [1, 1] },
        });
        assert(res.status === 400 || res.status === 404, `submission to the remote queue: ${res.status} ${res.text.slice(0, 200)}`);
      });
      await report.check('the new bundle works again', async () => {
        const fresh = await installBundle(join(work, 'remote', 'v2'));
        const r = await loginFromRemote(fresh);
        assert(r.code === 0, `new certificate: ${r.stdout}${r.stderr}`);
        await startRemoteWorker(fresh);
        await remoteQueueLive(true);
        const run2 = await remoteTask(40, 2);
        assert(
          run2.status === 'SUCCESS' && run2.result === 42 && run2.worker === `worker@${REMOTE.worker}`,
          `task: ${JSON.stringify(run2).slice(0, 300)}`,
        );
      });
      await report.check('the stack still serves users after the rotation', async () => {
        const page = await user.expect<{ results?: unknown[] }>(200, 'GET', '/api/data_store/data/e2e/stations/', auth);
        assert((page.results?.length ?? 0) === 1, `records after rotation: ${JSON.stringify(page).slice(0, 200)}`);
      });
    });
  } catch (err) {
    if (report.failed === 0) {
      report.failed += 1;
      console.log(`  FAIL ${(err as Error).message}`);
    }
    if (stackStarted) {
      const logs = await compose('logs', '--no-color', '--tail', '40').catch((e: Error) => ({ stdout: e.message, stderr: '' }));
      console.log(`\n-- last lines of the stack's logs --\n${logs.stdout}${logs.stderr}`);
    }
  } finally {
    if (keep) {
      console.log(`\nCYBERCOM_E2E_KEEP=1: kept ${work}, the compose project "${PROJECT}" and the remote host "${REMOTE.name}".`);
    } else {
      await report.phase('clean-up', async () => {
        if (remoteStarted) await remote.tearDown();
        // Through testcontainers once it took the stack over; otherwise (the installer or that
        // `up` failed, which takes the project down already) with the compose CLI, to be sure.
        const down = stack
          ? stack.down({ removeVolumes: true, timeout: 20_000 })
          : stackStarted
            ? compose('down', '--volumes', '--remove-orphans', '--timeout', '20')
            : undefined;
        await down?.catch((err: Error) => console.log(`  compose down: ${err.message}`));
        rmSync(work, { recursive: true, force: true });
      });
    }
    console.log(`\n${report.summary()}`);
  }
  console.log(`\n${report.passed} passed, ${report.failed} failed`);
  return report.failed === 0 && report.passed > 0 ? 0 : 1;
}

if (process.argv.includes('--clean')) {
  await removeLeftovers(PROJECT, newRemoteHost([]), COMPOSE_FILES);
  console.log('removed what earlier runs left');
} else {
  process.exitCode = await main();
}
