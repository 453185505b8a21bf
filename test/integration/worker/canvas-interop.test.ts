/**
 * Celery's canvas and retries across stock Python Celery and the TypeScript worker, over the same
 * TLS RabbitMQ and MongoDB-wire server: a Python client builds chains, chords, groups, errbacks,
 * ETA tasks and retried tasks (test/support/celery/canvas_tasks.py) whose steps run on a Python
 * worker and on the TS worker, and reads every result with AsyncResult / GroupResult. The TS
 * results are also read through the API. Runs once per installed Celery (newest and baseline).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlClient } from '../../../src/queue/remote-control/control-client.js';
import { BrokerSession } from '../../../src/queue/connection/broker-session.js';
import { ResultStore } from '../../../src/queue/results/result-store.js';
import { defineTask } from '../../../src/worker/task-definition.js';
import type { Worker } from '../../../src/worker/worker.js';
import { call, startTestApp, type TestApp } from '../../support/app.js';
import { celeryDir, celeryEnv, stopProcess } from '../../support/celery-env.js';
import { brokerSettings, deleteQueues, repoRoot, unique } from './support.js';
import { prepareCelery, startCeleryWorker, testWorker, waitForPing, type CeleryWorker } from './fixtures.js';
import { until } from '../../support/until.js';

const tsQueue = unique('canvas-ts');
const tsNode = `${unique('canvas-ts')}@test`;

const canvasTasks = [
  defineTask({ name: 'canvas.ts_mul', run: (_ctx, x: number, y: number) => x * y }),
  defineTask({ name: 'canvas.ts_sum', run: (_ctx, values: number[]) => values.reduce((a, b) => a + b, 0) }),
  defineTask({
    name: 'canvas.ts_fail',
    run: (_ctx, message: unknown = 'ts boom'): never => {
      throw new Error(String(message));
    },
  }),
  defineTask({
    name: 'canvas.ts_flaky',
    doc: 'Asks for a retry until it has been retried `times` times.',
    run: (ctx, times: number, countdown = 1) => {
      if (ctx.retries < times) ctx.retry({ countdown, exc: new Error(`not yet (${ctx.retries})`) });
      return { retries: ctx.retries };
    },
  }),
  defineTask({ name: 'canvas.ts_always_retry', maxRetries: 1, run: (ctx): never => ctx.retry({ countdown: 0.5 }) }),
  defineTask({
    name: 'canvas.ts_sleep',
    run: (ctx, seconds: number) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve(seconds), seconds * 1000);
        ctx.signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            reject(ctx.signal.reason);
          },
          { once: true },
        );
      }),
  }),
];

/**
 * The Python client of one Celery version: one `canvas_tasks.py --serve` process that runs the
 * scenarios one at a time as they are asked for (a Python start and Celery's imports once, not
 * once per scenario). A scenario that does not answer in time ends the process; the next one
 * starts a new process.
 */
class ScenarioClient {
  private child: ChildProcess | undefined;
  private stderr = '';
  private pending: ((line: string | Error) => void) | undefined;

  constructor(
    private readonly python: string,
    private readonly args: string[],
    private readonly env: () => NodeJS.ProcessEnv,
  ) {}

  /** Starts the process (Celery's imports) ahead of the first scenario; a no-op when running. */
  start(): ChildProcess {
    if (this.child !== undefined) return this.child;
    const child = spawn(this.python, [join(celeryDir, 'canvas_tasks.py'), '--serve', ...this.args], {
      cwd: celeryDir,
      env: this.env(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    // Answers are the JSON lines; anything else a library printed is kept with stderr.
    createInterface({ input: child.stdout! }).on('line', (line) =>
      /^\{"(outcome|error)":/.test(line) ? this.answer(line) : (this.stderr += `${line}\n`),
    );
    // Writing to a process that has just exited: reported by the 'exit' handler instead.
    child.stdin?.on('error', () => undefined);
    child.on('exit', (code, signal) => {
      if (this.child === child) this.child = undefined;
      this.answer(new Error(`the scenario client exited (${code ?? signal}):\n${this.stderr.slice(-3000)}`));
    });
    this.child = child;
    return child;
  }

  private answer(line: string | Error): void {
    const pending = this.pending;
    this.pending = undefined;
    pending?.(line);
  }

  /** Runs one scenario; its JSON outcome, or an error with the traceback. */
  async run(name: string, timeoutMs: number): Promise<Record<string, any>> {
    const child = this.start();
    const line = await new Promise<string | Error>((resolve) => {
      const timer = setTimeout(() => {
        this.pending = undefined;
        child.kill('SIGKILL');
        resolve(new Error(`no answer within ${timeoutMs} ms:\n${this.stderr.slice(-3000)}`));
      }, timeoutMs);
      this.pending = (answer) => {
        clearTimeout(timer);
        resolve(answer);
      };
      child.stdin!.write(`${name}\n`);
    });
    if (line instanceof Error) throw line;
    const answer = JSON.parse(line) as { outcome?: Record<string, any>; error?: string };
    if (answer.error !== undefined) throw new Error(answer.error);
    return answer.outcome ?? {};
  }

  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child === undefined) return;
    child.stdin?.end();
    await stopProcess(child, 10_000);
  }
}

let app: TestApp;
let database: string;
let results: ResultStore;
let tsWorker: Worker;
let rootToken: string;

beforeAll(async () => {
  await prepareCelery(110_000);
  app = await startTestApp({ TASK_WAIT_MAX_S: '30' });
  database = app.ctx.settings.serviceDatabase;
  results = new ResultStore(app.ctx.mongo, { database, collection: 'tombstone' });
  await app.users.createUser({ username: 'root', password: 'pw-superuser-1', isSuperuser: true });
  rootToken = await app.users.tokenFor('root');
  tsWorker = await testWorker({
    nodeName: tsNode,
    queues: [tsQueue],
    tasks: canvasTasks,
    resultDatabase: database,
    resultCollection: 'tombstone',
    concurrency: 2,
    // STARTED is stored (Celery's task_track_started), so a scenario can wait for a task to be
    // running before it terminates it, instead of guessing.
    trackStarted: true,
  });
  await tsWorker.run();
}, 180_000);

afterAll(async () => {
  await tsWorker?.close(1_000);
  await deleteQueues(brokerSettings(), [tsQueue]).catch(() => undefined);
  await app?.ctx.mongo
    .db(database)
    .dropDatabase()
    .catch(() => undefined);
  await app?.close();
});

describe.each(['.venv-celery-latest', '.venv'])('Celery in %s', (venv) => {
  const venvBin = join(repoRoot, venv, 'bin');
  const pyQueue = unique('canvas-py');
  const pyNode = `${unique('canvas-py')}@test`;
  let pyWorker: CeleryWorker;
  const client = new ScenarioClient(join(venvBin, 'python'), [tsQueue, pyQueue, '40'], pythonEnv);

  function pythonEnv(): NodeJS.ProcessEnv {
    return celeryEnv({ venv: join(repoRoot, venv), queue: pyQueue, resultDatabase: database });
  }

  async function scenario(name: string): Promise<Record<string, any>> {
    return client.run(name, 90_000).catch((error: Error) => {
      throw new Error(`scenario ${name} failed: ${error.message}\nworker log:\n${pyWorker.log().slice(-3000)}`);
    });
  }

  beforeAll(async () => {
    pyWorker = startCeleryWorker({ venv: join(repoRoot, venv), app: 'canvas_tasks', queue: pyQueue, node: pyNode, env: pythonEnv() });
    // The client's imports meanwhile.
    client.start();
    const session = new BrokerSession({ settings: brokerSettings() });
    const control = new ControlClient({ session });
    try {
      await session.waitUntilConnected(20_000);
      await waitForPing(control, pyNode, 60_000, pyWorker);
    } finally {
      await control.close();
      await session.close();
    }
  }, 90_000);

  afterAll(async () => {
    await client.close();
    await pyWorker?.stop();
    await deleteQueues(brokerSettings(), [pyQueue]).catch(() => undefined);
  });

  it('chain(py, ts, py): each step gets the previous result, parents link up', async () => {
    const out = await scenario('chain');
    expect(out).toMatchObject({ status: 'SUCCESS', result: 35 });
    const [first, middle, last] = out.ids as string[];
    const tsStep = await results.get(middle!);
    expect(tsStep).toMatchObject({ status: 'SUCCESS', result: 30, name: 'canvas.ts_mul', args: [3, 10], worker: tsNode });
    const raw = await app.ctx.mongo
      .db(database)
      .collection('tombstone')
      .findOne({ _id: last as never });
    expect(raw).toMatchObject({ status: 'SUCCESS', parent_id: middle });
    expect(
      (
        await app.ctx.mongo
          .db(database)
          .collection('tombstone')
          .findOne({ _id: middle as never })
      )?.parent_id,
    ).toBe(first);
  }, 90_000);

  it('a failing TS step fails the rest of the chain', async () => {
    // ts_fail(message) got the previous step's result, 3, as its message.
    expect(await scenario('chain_failure')).toMatchObject({ status: 'FAILURE', exc_type: 'Exception', exc_message: ['3'] });
  }, 90_000);

  it('chord: header on both workers, body on the TS worker (celery.chord_unlock)', async () => {
    const out = await scenario('chord');
    expect(out).toMatchObject({ status: 'SUCCESS', result: 28 });
    expect(await results.get(out.body_id as string)).toMatchObject({ status: 'SUCCESS', args: [[2, 6, 20]], worker: tsNode });
  }, 90_000);

  it('chord with a failing header task: the body fails with ChordError', async () => {
    const out = await scenario('chord_failure');
    // Celery's get() raises the header's failure itself, before the body is marked.
    expect(out).toMatchObject({ exc_type: 'Exception', exc_message: ['ts boom'] });
    const body = await results.waitForReady(out.body_id as string, { timeoutMs: 20_000 });
    expect(body.status).toBe('FAILURE');
    expect(body.exception).toMatchObject({ exc_type: 'ChordError', exc_module: 'celery.exceptions' });
    expect(body.exception?.exc_message[0]).toContain("Exception('ts boom')");
  }, 90_000);

  it('group across both workers, saved and restored by GroupResult', async () => {
    const out = await scenario('group');
    expect(out.result).toEqual([2, 9]);
    const tsMember = await app.ctx.mongo
      .db(database)
      .collection('tombstone')
      .findOne({ _id: (out.ids as string[])[1] as never });
    expect(tsMember).toMatchObject({ status: 'SUCCESS', group_id: out.group_id, worker: tsNode });
  }, 90_000);

  it('errback: a failed TS task sends its link_error to the Python worker with its id', async () => {
    const out = await scenario('errback');
    expect(out).toMatchObject({ status: 'FAILURE', exc_message: ['ts boom'] });
    expect(out.errback).toEqual({ status: 'SUCCESS', result: { failed: out.task_id, state: 'FAILURE' } });
  }, 90_000);

  it('errback: a revoked task sends none, on the Python worker as on the TS worker (expired, terminated)', async () => {
    const revoked = { status: 'REVOKED', exc_type: 'TaskRevokedError' };
    const failedErrback = { status: 'SUCCESS', result: expect.objectContaining({ state: 'FAILURE' }) };
    const py = await scenario('revoked_errback_py');
    expect(py).toMatchObject({
      expired: { ...revoked, exc_message: ['expired'] },
      failed: { status: 'FAILURE' },
      failed_errback: failedErrback,
    });
    expect(py.revoked_errback_states).toEqual(['PENDING']);
    const ts = await scenario('revoked_errback_ts');
    expect(ts).toMatchObject({
      expired: { ...revoked, exc_message: ['expired'] },
      terminated: { ...revoked, exc_message: ['terminated'] },
      failed: { status: 'FAILURE' },
      failed_errback: failedErrback,
    });
    expect(ts.revoked_errback_states).toEqual(['PENDING', 'PENDING']);
  }, 120_000);

  it('countdown: the TS worker holds the ETA task without blocking others', async () => {
    const out = await scenario('eta');
    expect(out.quick).toEqual({ status: 'SUCCESS', result: 9 });
    expect(out.held).toEqual({ status: 'SUCCESS', result: 4 });
    expect(out.quick_s).toBeLessThan(2.5);
    expect(out.held_s).toBeGreaterThanOrEqual(2.9);
  }, 90_000);

  it('expires: a task that expires while held for its eta is stored REVOKED, not run', async () => {
    expect(await scenario('expires')).toMatchObject({ status: 'REVOKED', exc_type: 'TaskRevokedError', exc_message: ['expired'] });
  }, 90_000);

  it('retries on the TS worker reach AsyncResult.get()', async () => {
    expect(await scenario('retry')).toMatchObject({ status: 'SUCCESS', result: { retries: 2 } });
  }, 90_000);

  it('past max_retries the task fails with MaxRetriesExceededError', async () => {
    expect(await scenario('retry_exhausted')).toMatchObject({ status: 'FAILURE', exc_type: 'MaxRetriesExceededError' });
  }, 90_000);
});

describe('through the API', () => {
  it('shows RETRY, then the retried task’s SUCCESS with its retry count', async () => {
    await until(
      async () => {
        const res = await call(app.url, 'GET', '/api/queue/?refresh=true&page_size=0', { token: rootToken });
        return res.json?.queues?.includes(tsQueue) === true;
      },
      20_000,
      'the worker to be listed',
    );
    const res = await call(app.url, 'POST', '/api/queue/run/canvas.ts_flaky/', {
      token: rootToken,
      body: { function: 'canvas.ts_flaky', queue: tsQueue, args: [1, 2] },
    });
    expect(res.status).toBe(202);
    const path = `/api/queue/task/${res.json.task_id}/`;
    const seen = new Set<string>();
    const done = await until(
      async () => {
        const r = await call(app.url, 'GET', path, { token: rootToken });
        if (typeof r.json?.status === 'string') seen.add(r.json.status);
        return r.json?.status === 'SUCCESS' ? r.json : undefined;
      },
      20_000,
      'the retried task',
    );
    expect(seen).toContain('RETRY');
    expect(done).toMatchObject({ status: 'SUCCESS', result: { retries: 1 } });
    expect(await results.get(res.json.task_id as string)).toMatchObject({ status: 'SUCCESS', retries: 1 });
  }, 60_000);
});
