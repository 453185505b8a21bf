/**
 * The installer end to end, non-interactive, in the local runtime on this machine: a fresh
 * directory becomes a TLS-secured service (certificates, database, broker, API, worker), the
 * administrator logs in, a task runs on the local worker and writes a record that is read back
 * through the API, and the API serves the manual the installer built. A second run keeps secrets and certificates byte for byte and the data.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminLogin, call, install, prepareInstall, REPO, runTool, type TestInstall } from './support.js';

let target: TestInstall;
let firstRun: string;

async function fingerprints(root: string, dirs: string[]): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const dir of dirs) {
    for (const entry of await readdir(join(root, dir), { withFileTypes: true, recursive: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      result[relative(root, path)] = createHash('sha256')
        .update(await readFile(path))
        .digest('hex');
    }
  }
  return result;
}

/**
 * A task that tries every road from the worker's process to what only the API or an engine may
 * reach, and reports for each what happened: `refused (<code>)`, or `OPEN` with what it got.
 */
const PROBE_MODULE = `
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { userInfo } from 'node:os';
import { defineTask } from ${JSON.stringify(join(REPO, 'dist', 'src', 'worker', 'task-definition.js'))};

const outcome = (promise) =>
  promise.then(
    (value) => 'OPEN: ' + String(value).slice(0, 80),
    (err) => 'refused (' + (err.code ?? err.message.split('\\n')[0]) + ')',
  );
const psql = (socketDir, port, role) =>
  new Promise((resolve, reject) =>
    execFile('/usr/lib/postgresql/15/bin/psql', ['-X', '-w', '-h', socketDir, '-p', String(port), '-U', role, '-d', 'postgres', '-Atc', 'SELECT current_user'],
      { timeout: 20000 }, (err, stdout, stderr) => (err ? reject(Object.assign(new Error(stderr.trim() || err.message), { code: 'psql exit ' + err.code })) : resolve(stdout))));
const socket = (path) =>
  new Promise((resolve, reject) => {
    const s = connect(path, () => { s.destroy(); resolve('connected'); });
    s.once('error', reject);
  });

export const roads = defineTask({
  name: 'probe.roads',
  doc: 'Tries the roads out of the worker.',
  parameters: [],
  run: async (ctx) => {
    const k = ctx.kwargs;
    const results = { user: userInfo().username, ownEnvFile: await outcome(readFile(k.workerEnv, 'utf8')) };
    for (const [name, cluster] of Object.entries(k.clusters)) {
      for (const role of ['postgres', 'cybercom_engine']) results['sql ' + name + ' as ' + role] = await outcome(psql(cluster.socketDir, cluster.port, role));
    }
    results['private store data'] = await outcome(readdir(k.privateData));
    results['private store socket'] = await outcome(socket(k.privateSocket));
    results['secrets.env'] = await outcome(readFile(k.secrets, 'utf8'));
    results['service.env'] = await outcome(readFile(k.serviceEnv, 'utf8'));
    results['API key'] = await outcome(readFile(k.apiKey, 'utf8'));
    results['API environ'] = await outcome(readFile('/proc/' + k.apiPid + '/environ', 'utf8'));
    return results;
  },
});
`;

interface SupervisorStatusFile {
  services: Record<string, { pid?: number; state: string }>;
}

async function supervisorStatus(): Promise<SupervisorStatusFile> {
  return JSON.parse(await readFile(join(target.dir, 'run', 'supervisor.json'), 'utf8')) as SupervisorStatusFile;
}

/** Ends the local worker; the supervisor starts it again, reading worker.env afresh. Waits until it runs. */
async function restartWorker(): Promise<void> {
  const before = (await supervisorStatus()).services.worker?.pid;
  if (before !== undefined) process.kill(before, 'SIGTERM');
  for (let i = 0; i < 240; i += 1) {
    await sleep(250);
    const worker = (await supervisorStatus()).services.worker;
    if (worker?.state === 'running' && worker.pid !== undefined && worker.pid !== before) return;
  }
  throw new Error('the local worker did not come back');
}

/** The port of a local PostgreSQL cluster, from the settings the runtime writes into its data directory. */
async function clusterPort(clusterDir: string): Promise<number> {
  const conf = await readFile(join(clusterDir, 'data', 'cybercom.conf'), 'utf8');
  return Number(/^port = (\d+)$/m.exec(conf)?.[1]);
}

beforeAll(async () => {
  target = await prepareInstall('e2e');
  firstRun = (await install(target)).output;
}, 300_000);

afterAll(async () => {
  await target?.cleanup();
}, 120_000);

describe('./installer --yes (local runtime)', () => {
  it('runs every step with progress and timing, and logs the run', async () => {
    for (const title of [
      'Runtime prerequisites',
      'Free ports',
      'Disk and memory',
      'Write access',
      'Manual',
      'Configuration files',
      'Certificates',
      'Start services',
      'Wait until healthy',
      'Administrator account',
      'Health through the public URL',
    ]) {
      expect(firstRun).toMatch(new RegExp(`\\[\\s*\\d+/\\d+\\] ${title}: .+\\(\\d+\\.\\d s\\)`));
    }
    const log = await readFile(join(target.dir, 'logs', 'install.log'), 'utf8');
    expect(log).toContain('Certificates: issued 6');
    expect(log).not.toContain(await readFile(target.passwordFile, 'utf8').then((t) => t.trim()));
  });

  it('writes configuration and keys with private modes', async () => {
    const mode = async (p: string): Promise<number> => (await stat(join(target.dir, p))).mode & 0o777;
    // Enterable, not listable: each service reaches the files it owns by name (see below).
    expect(await mode('config')).toBe(0o711);
    expect(await mode('certs')).toBe(0o711);
    for (const file of [
      'config/secrets.env',
      'config/service.env',
      'config/worker.env',
      'config/install.json',
      'certs/ca.key',
      'certs/worker.key',
      'certs/api-combined.pem',
    ]) {
      expect(await mode(file), file).toBe(0o600);
    }
    const serviceEnv = await readFile(join(target.dir, 'config', 'service.env'), 'utf8');
    const workerEnv = await readFile(join(target.dir, 'config', 'worker.env'), 'utf8');
    // Separate identities: the API and the worker log in as different users with different keys.
    expect(serviceEnv).toMatch(/^MONGO_USERNAME=cybercom-api$/m);
    expect(workerEnv).toMatch(/^MONGO_USERNAME=cybercom-worker$/m);
    expect(workerEnv).toMatch(/^BROKER_USERNAME=cybercom-worker$/m);
    expect(workerEnv).toContain('worker-combined.pem');
    expect(serviceEnv).toMatch(/^BROKER_URL=amqps:/m);
  });

  it('is healthy: ops/status checks database, broker, API and worker', async () => {
    const result = await runTool('ops/status', ['--dir', target.dir, '--json']);
    expect(result.code, result.output).toBe(0);
    const report = JSON.parse(result.stdout) as {
      healthy: boolean;
      checks: Array<{ name: string; ok: boolean }>;
      workers: Array<{ node: string; online: boolean }>;
      queues: Array<{ name: string; consumers: number }>;
    };
    expect(report.healthy).toBe(true);
    expect(report.checks.map((c) => c.name).sort()).toEqual(['api', 'broker', 'database', 'worker']);
    expect(report.workers.some((w) => w.online)).toBe(true);
    expect(report.queues.find((q) => q.name === 'celery')?.consumers).toBeGreaterThanOrEqual(1);
  });

  it('lets the administrator log in, runs a task on the local worker, and reads its record back', async () => {
    const token = await adminLogin(target.api);
    expect((await call(target.api, '/api/data_store/data/', { method: 'POST', bearer: token, body: { database: 'e2e' } })).status).toBe(
      201,
    );
    expect(
      (await call(target.api, '/api/data_store/data/e2e/', { method: 'POST', bearer: token, body: { collection: 'records' } })).status,
    ).toBe(201);
    const submitted = await call(target.api, '/api/queue/run/tasks.write_record/?wait=60', {
      method: 'POST',
      bearer: token,
      body: {
        function: 'tasks.write_record',
        queue: 'celery',
        args: [],
        kwargs: { database: 'e2e', collection: 'records', record: { station: 'Norman', elev: 357 } },
        tags: ['e2e'],
      },
    });
    expect(submitted.status, submitted.text).toBe(200);
    expect(submitted.json.status).toBe('SUCCESS');
    const id = submitted.json.result as string;
    const record = await call(target.api, `/api/data_store/data/e2e/records/${id}/`, { bearer: token });
    expect(record.status, record.text).toBe(200);
    expect(record.json).toMatchObject({ station: 'Norman', elev: 357 });
  });

  it('serves its own manual, built by the installer, at /api/manual/', async () => {
    const index = await fetch(`${target.api}/api/manual/`, { headers: { Host: 'localhost', Accept: 'text/html' } });
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    expect(index.headers.get('content-security-policy')).toMatch(/script-src 'self' 'sha256-/);
    expect(await index.text()).toContain('src="/api/manual/assets/app.');
    const page = await fetch(`${target.api}/api/manual/installing.html`, { headers: { Host: 'localhost', Accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('The manual on the server');
  });

  it('shows service logs with ops/logs', async () => {
    const result = await runTool('ops/logs', ['--dir', target.dir, '--service', 'worker', '--lines', '50']);
    expect(result.code, result.output).toBe(0);
    expect(result.stdout).toContain('worker ready');
  });

  it("runs the worker as its own OS user, which reaches no other service's data, secrets or SQL", async () => {
    const workerEnvFile = join(target.dir, 'config', 'worker.env');
    const original = await readFile(workerEnvFile, 'utf8');
    const moduleDir = await mkdtemp(join(tmpdir(), 'cybercom-probe-'));
    await chmod(moduleDir, 0o755);
    const modulePath = join(moduleDir, 'probe.mjs');
    await writeFile(modulePath, PROBE_MODULE, { mode: 0o644 });
    try {
      await writeFile(workerEnvFile, original.replace(/^WORKER_TASK_MODULES=(.*)$/m, `WORKER_TASK_MODULES=$1,${modulePath}`));
      await restartWorker();
      const data = join(target.dir, 'data');
      const kwargs = {
        workerEnv: workerEnvFile,
        clusters: {
          main: { socketDir: join(data, 'database', 'postgres', 'socket'), port: await clusterPort(join(data, 'database', 'postgres')) },
          private: {
            socketDir: join(data, 'private-database', 'postgres', 'socket'),
            port: await clusterPort(join(data, 'private-database', 'postgres')),
          },
        },
        privateData: join(data, 'private-database', 'postgres', 'data'),
        privateSocket: join(data, 'private-database', 'socket', 'ferretdb.sock'),
        secrets: join(target.dir, 'config', 'secrets.env'),
        serviceEnv: join(target.dir, 'config', 'service.env'),
        apiKey: join(target.dir, 'certs', 'api.key'),
        apiPid: (await supervisorStatus()).services.api?.pid,
      };
      const probeBody = { function: 'probe.roads', queue: 'celery', args: [], kwargs };
      const token = await adminLogin(target.api);
      let answer = await call(target.api, '/api/queue/run/probe.roads/?wait=60', { method: 'POST', bearer: token, body: probeBody });
      // The API learns of the restarted worker's tasks from its announcement.
      for (let i = 0; i < 40 && answer.status === 404; i += 1) {
        await sleep(500);
        answer = await call(target.api, '/api/queue/run/probe.roads/?wait=60', { method: 'POST', bearer: token, body: probeBody });
      }
      expect(answer.status, answer.text).toBe(200);
      expect(answer.json.status, answer.text).toBe('SUCCESS');
      const results = answer.json.result as Record<string, string>;
      expect(results.user).toBe('cybercom-worker');
      // The probe can read what is the worker's own: its refusals are the permissions', not the probe's.
      expect(results.ownEnvFile).toMatch(/^OPEN/);
      const roads = Object.entries(results).filter(([name]) => name !== 'user' && name !== 'ownEnvFile');
      expect(roads.length).toBe(10);
      for (const [road, result] of roads) expect(result, road).toMatch(/^refused /);
    } finally {
      await writeFile(workerEnvFile, original);
      await restartWorker();
      await rm(moduleDir, { recursive: true, force: true });
    }
  }, 180_000);

  it('re-runs as an upgrade: secrets and certificates byte-identical, data kept, services restarted', async () => {
    const before = await fingerprints(target.dir, ['config', 'certs']);
    const rerun = await install(target);
    expect(rerun.output).toContain('Existing installation');
    expect(rerun.output).toMatch(/Configuration files: unchanged/);
    expect(rerun.output).toMatch(/Certificates: kept \(all valid\)/);
    expect(rerun.output).toMatch(/Start services: restarted/);
    expect(rerun.output).toMatch(/Administrator account: updated/);
    expect(await fingerprints(target.dir, ['config', 'certs'])).toEqual(before);
    const list = await call(target.api, '/api/data_store/data/e2e/records/', { bearer: await adminLogin(target.api) });
    expect(list.status).toBe(200);
    expect(list.json.count).toBe(1);
  }, 300_000); // a whole install again (services restarted): the time `install` gives the installer
});

describe('./installer failures', () => {
  let server: Server;
  afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it('stops in preflight on a busy port, names the step, and creates nothing', async () => {
    const other = await prepareInstall('busy');
    server = createServer();
    await new Promise<void>((resolve) => server.listen(other.ports.http, '0.0.0.0', resolve));
    const result = await runTool('installer', ['--yes', ...other.args()]);
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/Free ports: FAILED/);
    expect(result.output).toContain(`HTTP port ${other.ports.http}: in use`);
    expect(result.output).toContain('Installation failed at step "Free ports"');
    expect(existsSync(other.dir)).toBe(false);
    await other.cleanup();
  });

  it('fails fast listing missing settings, and refuses invalid ones', async () => {
    const other = await prepareInstall('missing');
    // Three runs that each stop before touching anything: side by side, as each is mostly the
    // installer's own start-up.
    const [missing, invalid, noTerminal] = await Promise.all([
      runTool('installer', ['--yes', ...other.args('--runtime', 'compose', '--public-host', 'data.example.org', '--https', 'files')]),
      runTool('installer', ['--yes', ...other.args('--cert-days', 'many', '--runtime', 'podman')]),
      runTool('installer', other.args()),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--tls-cert-file');
    expect(missing.stderr).toContain('--tls-key-file');
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('--cert-days: "many" is not a whole number');
    expect(invalid.stderr).toContain('--runtime: "podman" is not one of compose, local');
    expect(noTerminal.code).toBe(2);
    expect(noTerminal.stderr).toContain('pass --yes');
    expect(existsSync(other.dir)).toBe(false);
    await other.cleanup();
  }, 120_000); // three installer start-ups at once: seconds on a quiet machine, far more on a loaded one
});
