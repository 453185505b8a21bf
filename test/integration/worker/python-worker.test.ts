/**
 * `cybercom worker` (clients/python, cybercom.worker) running a lab's own Python tasks against the
 * real service: the task module of the manual's page on Python tasks (docs/python-tasks.md; one
 * of its tasks imports numpy), configured from the environment with the service's variable names.
 * Its tasks appear in the catalog with their signatures; the page's curl and Python-client
 * submissions run on it; a failure keeps its traceback; a task revoked through the API, and one
 * queued by a user who is then deactivated, are not run by a worker that was stopped meanwhile;
 * a queued task revoked through the Python client is dropped and a running one revoked with
 * terminate is ended; a queued task marked REVOKED in the result store with no broadcast is
 * dropped by the running worker; and the page's updated module is what runs after a restart.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskCodename } from '../../../src/auth/permissions.js';
import { call, startTestApp, uniqueName, type TestApp } from '../../support/app.js';
import { clientPython, labBlocks, startLabWorker, type LabWorker } from '../../support/lab-worker.js';
import { testServices } from '../../support/services.js';
import { until } from '../../support/until.js';
import { adminApiPost, adminBrowser, ensureRoot, ROOT, userId } from '../admin/support.js';
import { brokerSettings, deleteQueues, repoRoot, unique } from './support.js';

const run = promisify(execFile);

interface ListedTask {
  name: string;
  docstring: string | null;
  signature: { text: string } | null;
  queues: string[];
}

const [moduleBlock] = labBlocks('task-module');
const [updatedModuleBlock] = labBlocks('task-module-update');
const shellSubmission = labBlocks('task-submit').find((block) => block.lang === 'sh');
const pythonSubmission = labBlocks('task-submit').find((block) => block.lang === 'python');

let app: TestApp;
let token: string;
let labDir: string;
let workerEnv: Record<string, string>;
let worker: LabWorker | undefined;
const queue = unique('lab');
const node = `${unique('lab')}@test`;

beforeAll(async () => {
  await run('bash', [join(repoRoot, 'test/support/python-client.sh')], { cwd: repoRoot, timeout: 600_000 });
  // No cache: every list request asks the workers, so a restarted worker's signatures show at once.
  app = await startTestApp({ TASK_LIST_CACHE_S: '0', TASK_LIST_REPLY_TIMEOUT_MS: '2000', LOGIN_MAX_FAILURES: '1000' });
  await ensureRoot(app);
  token = await app.users.tokenFor(ROOT.username);
  labDir = await mkdtemp(join(tmpdir(), 'lab-code-'));
  await writeFile(join(labDir, 'labtasks.py'), moduleBlock!.code);
  // The service's own variables (BROKER_*, MONGO_* with a client certificate), as a bundle's worker.env holds them.
  workerEnv = {
    ...testServices().env,
    RESULT_DATABASE: app.ctx.settings.serviceDatabase,
    WORKER_QUEUES: queue,
    WORKER_NODE_NAME: node,
    WORKER_CONCURRENCY: '1',
    LOG_LEVEL: 'info',
  };
}, 660_000);

afterAll(async () => {
  await worker?.stop(5_000);
  await deleteQueues(brokerSettings(), [queue]).catch(() => undefined);
  await app?.close();
  if (labDir) await rm(labDir, { recursive: true, force: true });
});

function startWorker(): LabWorker {
  worker = startLabWorker(['-A', 'labtasks', '--without-mingle', '--without-gossip'], labDir, workerEnv);
  return worker;
}

/** The catalog's tasks on the lab's queue, once all three are there with `signature` (a text the summarize signature contains). */
async function catalog(lab: LabWorker, signature: string): Promise<Map<string, ListedTask>> {
  return until(
    async () => {
      if (lab.child.exitCode !== null) throw new Error(`cybercom worker exited (${lab.child.exitCode}):\n${lab.log()}`);
      const res = await call(app.url, 'GET', '/api/queue/?page_size=0', { token });
      expect(res.status, res.text).toBe(200);
      const tasks = (res.json.results as ListedTask[]).filter((t) => t.queues.includes(queue));
      const summarize = tasks.find((t) => t.name === 'labtasks.summarize');
      return tasks.length === 3 && summarize?.signature?.text.includes(signature) ? new Map(tasks.map((t) => [t.name, t])) : undefined;
    },
    60_000,
    () => `the lab's tasks in the catalog\n${lab.log()}`,
  );
}

/** The lab's worker, started when none runs (so each test also runs alone, with -t), once its tasks are in the catalog. */
async function liveWorker(): Promise<LabWorker> {
  const lab = worker !== undefined && worker.child.exitCode === null && worker.child.signalCode === null ? worker : startWorker();
  await catalog(lab, 'ddof');
  return lab;
}

async function submit(task: string, body: Record<string, unknown>, as = token, wait?: number): Promise<Record<string, any>> {
  const res = await call(app.url, 'POST', `/api/queue/run/${task}/${wait ? `?wait=${wait}` : ''}`, {
    token: as,
    body: { function: task, ...body },
  });
  expect(res.status, res.text).toBe(wait ? 200 : 202);
  return res.json as Record<string, any>;
}

describe("cybercom worker with the manual's lab module", () => {
  it('starts from the environment, says what it connected to, and its tasks show in the catalog with their signatures', async () => {
    const lab = startWorker();
    const tasks = await catalog(lab, 'ddof');
    const broker = new URL(testServices().env.BROKER_URL!);
    expect(lab.log()).toContain(`cybercom worker ${node}`);
    expect(lab.log()).toMatch(new RegExp(`broker: +amqps://${broker.hostname}:${broker.port}/\\S* \\(TLS, client certificate `));
    expect(lab.log()).toMatch(new RegExp(`queues: +${queue}\\n`));
    expect(lab.log()).toMatch(
      new RegExp(`result backend: +mongodb://\\S+ database ${app.ctx.settings.serviceDatabase}, collection tombstone \\(TLS`),
    );
    expect(lab.log()).toContain('tasks (3):      labtasks.calibrate, labtasks.pause, labtasks.summarize');
    expect(lab.log()).not.toContain(testServices().env.BROKER_PASSWORD!);
    expect(tasks.get('labtasks.summarize')).toMatchObject({
      docstring:
        'Count, mean and standard deviation of the values.\n\nddof is the delta degrees of freedom of the standard deviation (1 for a sample).',
      signature: { text: '(values: list[float], *, ddof: int = 0) -> dict' },
    });
    expect(tasks.get('labtasks.calibrate')?.signature?.text).toBe('(reading: float, offset: float = 0.0, gain: float = 1.0) -> float');
    // The browser's run form: one field per parameter.
    const form = await until(
      async () => {
        const res = await call(app.url, 'GET', '/api/queue/run/labtasks.summarize/', { token, accept: 'text/html' });
        return res.status === 200 && res.text.includes('data-signature') ? res : undefined;
      },
      30_000,
      'the run form with the signature',
    );
    expect(form.text.match(/data-param-name="[^"]*"/g)).toEqual(['data-param-name="values"', 'data-param-name="ddof"']);
    // The Python worker image's healthcheck, with the same environment: the worker answers its ping.
    const health = await run(clientPython, [join(repoRoot, 'worker-image/python/healthcheck.py')], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...workerEnv },
      timeout: 30_000,
    });
    expect(health.stderr).toBe('');
  }, 90_000);

  it("runs the page's curl submission", async () => {
    await liveWorker();
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', shellSubmission!.code], {
      env: { ...process.env, API: app.url, TOKEN: token },
      timeout: 60_000,
    });
    const answer = JSON.parse(stdout) as Record<string, any>;
    expect(answer).toMatchObject({ status: 'SUCCESS', result: { n: 4, mean: 3.75 } });
    expect(answer.result.std).toBeCloseTo(Math.sqrt(4.75 / 3), 12);
  }, 60_000);

  it("runs the page's Python-client submission, a failure among them", async () => {
    await liveWorker();
    const { stdout } = await run(clientPython, ['-c', pythonSubmission!.code], {
      env: { ...process.env, CYBERCOM_URL: app.url, CYBERCOM_TOKEN: token },
      timeout: 90_000,
    });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe('(values: list[float], *, ddof: int = 0) -> dict');
    expect(lines[1]).toMatch(/^\{'n': 4, 'mean': 3\.75, 'std': 1\.258\d+\}$/);
    expect(lines[2]).toMatch(/^ValueError: negative reading: -1\.5 \(task [0-9a-f-]{36}\)$/);
  }, 90_000);

  it("records a failure with its traceback, shown on the run's page", async () => {
    await liveWorker();
    const failed = await submit('labtasks.calibrate', { args: [-2.5] }, token, 30);
    expect(failed.status).toBe('FAILURE');
    const page = await call(app.url, 'GET', `/api/queue/task/${failed.task_id as string}/`, { token });
    expect(page.json).toMatchObject({
      status: 'FAILURE',
      error: { type: 'ValueError', message: ['negative reading: -2.5'] },
      worker: node,
    });
    expect(page.json.traceback).toMatch(
      /Traceback \(most recent call last\):[\s\S]*labtasks\.py", line \d+, in calibrate[\s\S]*ValueError: negative reading: -2\.5/,
    );
  }, 60_000);

  it('does not run a queued task revoked through the Python client while it runs, and ends a running one revoked with terminate', async () => {
    const lab = await liveWorker();
    // Long enough for the client's Python to start and revoke on a loaded machine (4 s was not).
    const busy = await submit('labtasks.pause', { args: [15] });
    const queued = await submit('labtasks.summarize', { args: [[5, 6]] });
    const revoke = `from cybercom import Client\nprint(Client().tasks.get(${JSON.stringify(queued.task_id)}).revoke())`;
    const { stdout } = await run(clientPython, ['-c', revoke], {
      env: { ...process.env, CYBERCOM_URL: app.url, CYBERCOM_TOKEN: token },
      timeout: 60_000,
    });
    expect(stdout.trim()).toBe('REVOKED');
    expect((await app.ctx.queue!.results.waitForReady(busy.task_id as string, { timeoutMs: 45_000 })).status).toBe('SUCCESS');
    await until(
      () => new RegExp(`Discarding revoked task: labtasks\\.summarize\\[${queued.task_id as string}\\]`).test(lab.log()),
      30_000,
      () => `the worker to drop the revoked task\n${lab.log()}`,
    );
    expect((await app.ctx.queue!.results.get(queued.task_id as string)).status).toBe('REVOKED');
    expect(lab.log()).not.toContain(`labtasks.summarize[${queued.task_id as string}] succeeded`);

    // A running task revoked with terminate: its worker process is ended (the prefork pool's), the worker goes on.
    const long = await submit('labtasks.pause', { args: [60] });
    await until(
      () => lab.log().includes(`labtasks.pause[${long.task_id as string}] received`),
      30_000,
      () => `the long task to start\n${lab.log()}`,
    );
    const terminated = await call(app.url, 'POST', `/api/queue/task/${long.task_id as string}/revoke/`, {
      token,
      body: { terminate: true },
    });
    expect(terminated.json).toMatchObject({ status: 'REVOKED' });
    await until(
      () => lab.log().includes(`Terminating ${long.task_id as string}`),
      30_000,
      () => `the worker to end the task\n${lab.log()}`,
    );
    const after = await submit('labtasks.calibrate', { args: [3], kwargs: { gain: 2 } }, token, 30);
    expect(after).toMatchObject({ status: 'SUCCESS', result: 6 });
    expect((await app.ctx.queue!.results.get(long.task_id as string)).status).toBe('REVOKED');
  }, 120_000);

  it('does not run a queued task whose REVOKED mark was stored while it ran, with no broadcast to tell it', async () => {
    const lab = await liveWorker();
    const busy = await submit('labtasks.pause', { args: [6] });
    const queued = await submit('labtasks.summarize', { args: [[7, 8]] });
    await until(
      () => lab.log().includes(`labtasks.pause[${busy.task_id as string}] received`),
      30_000,
      () => `the busy task to start\n${lab.log()}`,
    );
    // The mark alone, as the service stores it before its broadcast (which may be lost): the
    // worker reads the marks stored since its last read every few seconds.
    const marked = await app.ctx.queue!.results.markRevokedIfQueued(queued.task_id as string, {
      name: 'labtasks.summarize',
      args: [[7, 8]],
      kwargs: {},
      worker: null,
      retries: 0,
      queue,
    });
    expect(marked).toBe(true);
    expect((await app.ctx.queue!.results.waitForReady(busy.task_id as string, { timeoutMs: 45_000 })).status).toBe('SUCCESS');
    await until(
      () => new RegExp(`Discarding revoked task: labtasks\\.summarize\\[${queued.task_id as string}\\]`).test(lab.log()),
      30_000,
      () => `the worker to drop the task marked REVOKED\n${lab.log()}`,
    );
    expect((await app.ctx.queue!.results.get(queued.task_id as string)).status).toBe('REVOKED');
    expect(lab.log()).not.toContain(`labtasks.summarize[${queued.task_id as string}] succeeded`);
  }, 90_000);

  it('does not run tasks revoked while it was stopped (through the API, or by deactivating their submitter), and runs the updated module after a restart', async () => {
    await liveWorker();
    const root = await adminBrowser(app, ROOT.username, ROOT.password);
    const username = uniqueName('lab');
    await app.users.createUser({ username, password: 'lab-user-pass-1234', permissions: [taskCodename('labtasks.summarize')] });
    const userToken = await app.users.tokenFor(username);

    // The worker's one process is busy (long enough for the submissions and the stop on a loaded
    // machine), so the next two wait in the queue.
    const busy = await submit('labtasks.pause', { args: [8] });
    const revoked = await submit('labtasks.summarize', { args: [[1, 2]] });
    const ofDeactivated = await submit('labtasks.summarize', { args: [[3, 4]] }, userToken);
    // A warm shutdown: the running task finishes, the waiting ones stay queued, and no worker is
    // left to hear a broadcast revoke.
    expect(await worker!.stop()).toBe(0);
    const before = worker!.log();

    const revokeAnswer = await call(app.url, 'POST', `/api/queue/task/${revoked.task_id as string}/revoke/`, { token, body: {} });
    expect(revokeAnswer.status, revokeAnswer.text).toBe(200);
    const edit = await adminApiPost(root, `/resources/User/records/${await userId(app, username)}/edit`, { username, is_active: 'false' });
    expect(edit.status, edit.text.slice(0, 300)).toBe(200);
    await until(
      async () => (await app.ctx.queue!.results.get(ofDeactivated.task_id as string)).status === 'REVOKED',
      10_000,
      "the deactivated user's queued task marked REVOKED",
    );

    await writeFile(join(labDir, 'labtasks.py'), updatedModuleBlock!.code);
    const lab = startWorker();
    const tasks = await catalog(lab, 'median');
    expect(tasks.get('labtasks.summarize')?.signature?.text).toBe('(values: list[float], *, ddof: int = 0, median: bool = False) -> dict');
    const updated = await submit('labtasks.summarize', { args: [[1, 2, 10]], kwargs: { median: true } }, token, 30);
    expect(updated).toMatchObject({ status: 'SUCCESS', result: { n: 3, median: 2 } });

    // Behind the new task in the queue, so handled by now: dropped, never run.
    for (const id of [revoked.task_id as string, ofDeactivated.task_id as string]) {
      expect((await app.ctx.queue!.results.get(id)).status, `${before}\n----\n${lab.log()}`).toBe('REVOKED');
      expect(lab.log()).toMatch(new RegExp(`Discarding revoked task: labtasks\\.summarize\\[${id}\\]`));
    }
    expect((await app.ctx.queue!.results.get(busy.task_id as string)).status).toBe('SUCCESS');
    expect(before).not.toMatch(
      new RegExp(`labtasks\\.summarize\\[(${revoked.task_id as string}|${ofDeactivated.task_id as string})\\] succeeded`),
    );
    expect(before).toContain('Warm shutdown');
    expect(lab.log()).not.toMatch(/labtasks\.summarize\[[0-9a-f-]+\] succeeded in [\d.]+s: \{'n': 2,/);
  }, 120_000);

  it("--check connects once and exits; a missing setting is a usage error naming it; the image's healthcheck fails with no worker", async () => {
    await worker?.stop();
    // No worker answers the healthcheck's ping now.
    const health = await run(clientPython, [join(repoRoot, 'worker-image/python/healthcheck.py')], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...workerEnv },
      timeout: 30_000,
    }).then(
      () => 0,
      (error: { code?: number }) => error.code,
    );
    expect(health).toBe(1);

    const check = startLabWorker(['-A', 'labtasks', '--check'], labDir, workerEnv);
    expect(await check.exited, check.log()).toBe(0);
    expect(check.log()).toMatch(/broker: +reachable\n +result backend: +reachable/);

    const { BROKER_URL: _omitted, ...withoutBroker } = workerEnv;
    const missing = startLabWorker(['-A', 'labtasks', '--check'], labDir, withoutBroker);
    expect(await missing.exited).toBe(2);
    expect(missing.log()).toContain('BROKER_URL is not set');

    const broken = startLabWorker(['-A', 'no_such_lab_module', '--check'], labDir, workerEnv);
    expect(await broken.exited).toBe(2);
    expect(broken.log()).toContain("could not import no_such_lab_module: ModuleNotFoundError: No module named 'no_such_lab_module'");
  }, 60_000);
});
