/**
 * ops/worker-bundle: the archive for a remote machine is complete and private, and, unpacked
 * elsewhere, its configuration and certificates start a worker (local mode of run-worker.sh, no
 * container engine here) that runs a task submitted through the installation's API; and the
 * same for a Python worker's bundle (--python) with a lab's module and requirements, whose
 * run-worker.sh installs the bundled client wheel into a virtualenv and starts cybercom worker.
 * The same installation then serves ops/clear-login-failures.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { extract } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labBlocks } from '../../support/lab-worker.js';
import { adminLogin, call, install, prepareInstall, runTool, type TestInstall } from '../installer/support.js';

let target: TestInstall;
let unpacked: string;
let remote: ChildProcess | undefined;
let remoteLog = '';
let pythonRemote: ChildProcess | undefined;
let pythonLog = '';

beforeAll(async () => {
  target = await prepareInstall('bundle');
  await install(target);
  unpacked = await mkdtemp(join(tmpdir(), 'cybercom-remote-'));
}, 300_000);

afterAll(async () => {
  for (const child of [remote, pythonRemote]) {
    if (child?.pid === undefined || child.exitCode !== null || child.signalCode !== null) continue;
    process.kill(-child.pid, 'SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  if (unpacked) await rm(unpacked, { recursive: true, force: true });
  await target?.cleanup();
}, 120_000);

describe('ops/worker-bundle', () => {
  it('refuses a server address the server certificates do not name', async () => {
    const result = await runTool('ops/worker-bundle', [
      '--dir',
      target.dir,
      '--host',
      'lab-pc',
      '--server-address',
      'elsewhere.example.org',
      '--no-image',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('does not name "elsewhere.example.org"');
    expect((await runTool('ops/worker-bundle', ['--dir', target.dir])).code).toBe(2);
  });

  it('writes one private archive with certificates, env file, run script, README and checksums', async () => {
    const result = await runTool('ops/worker-bundle', [
      '--dir',
      target.dir,
      '--host',
      'lab-pc',
      '--server-address',
      'localhost',
      '--no-image',
    ]);
    expect(result.code, result.output).toBe(0);
    // The local engine cannot enforce roles: the operator is told what the bundle's login can do,
    // which is not the service's users and tokens (they are in the private store).
    expect(result.stdout).toContain('cannot restrict what a login may do');
    expect(result.stdout).toContain('every data-store and catalog database and the task results');
    expect(result.stdout).not.toContain('users and tokens included');
    const archive = join(target.dir, 'bundles', 'cybercom-worker-lab-pc.tar.gz');
    expect((await stat(archive)).mode & 0o777).toBe(0o600);
    await extract({ file: archive, cwd: unpacked });
    const dir = join(unpacked, 'cybercom-worker-lab-pc');
    const mode = async (p: string): Promise<number> => (await stat(join(dir, p))).mode & 0o777;
    expect(await mode('worker.env')).toBe(0o600);
    expect(await mode('certs/client.key')).toBe(0o600);
    expect(await mode('certs/client-combined.pem')).toBe(0o600);
    expect(await mode('run-worker.sh')).toBe(0o755);
    expect(await readFile(join(dir, 'certs', 'ca.pem'), 'utf8')).toBe(await readFile(join(target.dir, 'certs', 'ca.pem'), 'utf8'));
    expect(await readFile(join(dir, 'certs', 'client.pem'), 'utf8')).toBe(await readFile(join(target.dir, 'certs', 'worker.pem'), 'utf8'));
    const env = await readFile(join(dir, 'worker.env'), 'utf8');
    expect(env).toContain(`BROKER_URL=amqps://localhost:${target.ports.broker}/cybercom`);
    expect(env).toContain(`MONGO_URI=mongodb://localhost:${target.ports.db}/`);
    expect(env).toContain('BROKER_USERNAME=cybercom-worker');
    expect(env).toContain('WORKER_NODE_NAME=worker@lab-pc');
    expect(await readFile(join(dir, 'README.md'), 'utf8')).toContain('./run-worker.sh');
    const sums = await readFile(join(dir, 'SHA256SUMS'), 'utf8');
    for (const file of ['worker.env', 'certs/client.key', 'app/worker.mjs', 'app/tasks.mjs', 'run-worker.sh', 'README.md'])
      expect(sums).toContain(`  ${file}\n`);
    const hosts = JSON.parse(await readFile(join(target.dir, 'bundles', 'hosts.json'), 'utf8')) as Record<string, unknown>;
    expect(Object.keys(hosts)).toEqual(['lab-pc']);
  });

  it('starts a worker from the unpacked bundle that runs a task submitted through the API', async () => {
    const dir = join(unpacked, 'cybercom-worker-lab-pc');
    // The operator gives this machine a queue of its own, so the task can only run here.
    const envFile = join(dir, 'worker.env');
    await writeFile(envFile, (await readFile(envFile, 'utf8')).replace('WORKER_QUEUES=celery', 'WORKER_QUEUES=lab'));
    const sums = join(dir, 'SHA256SUMS');
    const { checksumLines } = await import('../../../src/installation/checksums.js');
    await writeFile(sums, await checksumLines(dir));
    remote = spawn(join(dir, 'run-worker.sh'), ['local'], {
      cwd: dir,
      detached: true,
      env: { PATH: process.env.PATH ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    remote.stdout?.on('data', (c: Buffer) => (remoteLog += c.toString()));
    remote.stderr?.on('data', (c: Buffer) => (remoteLog += c.toString()));
    for (let i = 0; i < 60 && !remoteLog.includes('worker ready'); i++) await sleep(500);
    expect(remoteLog).toContain('worker ready');

    const token = await adminLogin(target.api);
    let submitted;
    // The API's task list is cached for a few seconds: retry until it sees the new queue.
    for (let attempt = 0; attempt < 20; attempt++) {
      submitted = await call(target.api, '/api/queue/run/tasks.add/?wait=30', {
        method: 'POST',
        bearer: token,
        body: { function: 'tasks.add', queue: 'lab', args: [20, 22], kwargs: {}, tags: [] },
      });
      if (submitted.status !== 400) break;
      await sleep(1000);
    }
    expect(submitted?.status, submitted?.text).toBe(200);
    expect(submitted?.json).toMatchObject({ status: 'SUCCESS', result: 42 });
    expect(remoteLog).toMatch(/tasks\.add/);
  });

  it("writes a Python worker bundle: certificates, env file, the client wheel, the lab's slots, run script and checksums", async () => {
    const result = await runTool('ops/worker-bundle', [
      '--dir',
      target.dir,
      '--host',
      'lab-py',
      '--python',
      '--server-address',
      'localhost',
    ]);
    expect(result.code, result.output).toBe(0);
    expect(result.stdout).toContain('cd cybercom-python-worker-lab-py && ./run-worker.sh');
    expect(result.stdout).toContain('every data-store and catalog database and the task results');
    const archive = join(target.dir, 'bundles', 'cybercom-python-worker-lab-py.tar.gz');
    expect((await stat(archive)).mode & 0o777).toBe(0o600);
    await extract({ file: archive, cwd: unpacked });
    const dir = join(unpacked, 'cybercom-python-worker-lab-py');
    const mode = async (p: string): Promise<number> => (await stat(join(dir, p))).mode & 0o777;
    expect(await mode('worker.env')).toBe(0o600);
    expect(await mode('certs/client.key')).toBe(0o600);
    expect(await mode('run-worker.sh')).toBe(0o755);
    const env = await readFile(join(dir, 'worker.env'), 'utf8');
    expect(env).toContain(`BROKER_URL=amqps://localhost:${target.ports.broker}/cybercom`);
    expect(env).toContain('WORKER_NODE_NAME=python-worker@lab-py');
    expect(env).toContain('WORKER_QUEUES=python');
    const wheels = (await readdir(join(dir, 'wheel'))).filter((f) => f.endsWith('.whl'));
    expect(wheels).toHaveLength(1);
    const sums = await readFile(join(dir, 'SHA256SUMS'), 'utf8');
    for (const file of ['worker.env', 'certs/client.key', `wheel/${wheels[0]}`, 'run-worker.sh', 'README.md'])
      expect(sums).toContain(`  ${file}\n`);
    // The lab's slots are meant to change: not checked.
    expect(sums).not.toContain('requirements.txt');
    expect(sums).not.toContain('tasks/');
    const hosts = JSON.parse(await readFile(join(target.dir, 'bundles', 'hosts.json'), 'utf8')) as Record<string, { python?: boolean }>;
    expect(Object.keys(hosts).sort()).toEqual(['lab-pc', 'python:lab-py']);
    expect(hosts['python:lab-py']?.python).toBe(true);
  });

  it("starts the Python worker from the unpacked bundle with the lab's module and requirements, and runs its task submitted through the API", async () => {
    const dir = join(unpacked, 'cybercom-python-worker-lab-py');
    const [labModule] = labBlocks('task-module');
    await writeFile(join(dir, 'tasks', 'labtasks.py'), labModule!.code);
    await writeFile(join(dir, 'requirements.txt'), 'numpy\n', { flag: 'a' });
    pythonRemote = spawn(join(dir, 'run-worker.sh'), ['-c', '1', '--without-mingle', '--without-gossip'], {
      cwd: dir,
      detached: true,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    pythonRemote.stdout?.on('data', (c: Buffer) => (pythonLog += c.toString()));
    pythonRemote.stderr?.on('data', (c: Buffer) => (pythonLog += c.toString()));
    // A first start installs Celery, pymongo and numpy from the package index.
    for (let i = 0; i < 360 && !/python-worker@lab-py ready/.test(pythonLog) && pythonRemote.exitCode === null; i++) await sleep(500);
    expect(pythonLog).toMatch(/python-worker@lab-py ready/);
    expect(pythonLog).toContain('tasks (3):      labtasks.calibrate, labtasks.pause, labtasks.summarize');
    expect(pythonLog).toMatch(/result backend: mongodb:\/\/localhost:\d+\/ database cybercom, collection tombstone \(TLS/);

    const token = await adminLogin(target.api);
    let submitted;
    // The API's task list is cached for a few seconds: retry until it sees the new worker.
    for (let attempt = 0; attempt < 30; attempt++) {
      submitted = await call(target.api, '/api/queue/run/labtasks.summarize/?wait=30', {
        method: 'POST',
        bearer: token,
        body: { function: 'labtasks.summarize', args: [[1, 2, 3, 4]], kwargs: {}, tags: [] },
      });
      if (submitted.status !== 404 && submitted.status !== 400) break;
      await sleep(1000);
    }
    expect(submitted?.status, submitted?.text).toBe(200);
    expect(submitted?.json).toMatchObject({ status: 'SUCCESS', result: { n: 4, mean: 2.5 } });
  }, 300_000);
});

// This file's installation also serves the operator command that clears a lockout, end to end:
// through the installation's API and the service database it keeps the login counts in.
describe('ops/clear-login-failures', () => {
  it("clears an account's failed logins on the installation", async () => {
    const login = (password: string) => call(target.api, '/api/token/', { method: 'POST', body: { username: 'admin', password } });
    for (let i = 0; i < 6; i++) await login(`wrong-${i}-pass`);
    expect((await login('wrong-again-pass')).status).toBe(429);
    const result = await runTool('ops/clear-login-failures', ['--dir', target.dir, '--user', 'admin']);
    expect(result.code, result.output).toBe(0);
    expect(result.stdout).toMatch(/Cleared \d+ failure count\(s\) of account "admin"/);
    expect((await login('wrong-after-clear')).status).toBe(401);
    // The right password was never refused, and is not now.
    expect(await adminLogin(target.api)).toEqual(expect.any(String));
  }, 120_000);
});
