/**
 * Interoperability with an unmodified Python Celery (pinned in test/support/celery/requirements.txt,
 * installed into .venv by test/support/python-celery.sh), over the same TLS RabbitMQ and
 * MongoDB-wire server:
 *   (a) a Python worker runs tasks the TS TaskPublisher sends, and the TS control client sees it;
 *   (b) a Python client's send_task + AsyncResult.get() runs on the TS worker;
 *   (c) `celery inspect ping|registered|active_queues --json` sees the TS worker;
 *   (d) Celery's event receiver (as `celery events` and Flower use it) reads the TS worker's task
 *       events, which it sends several to a `task.multi` message.
 */
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMongo } from '../../../src/db/mongo-client.js';
import { BrokerSession } from '../../../src/queue/connection/broker-session.js';
import { ControlClient } from '../../../src/queue/remote-control/control-client.js';
import { TaskPublisher } from '../../../src/queue/publishing/task-publisher.js';
import { ResultStore } from '../../../src/queue/results/result-store.js';
import type { Worker } from '../../../src/worker/worker.js';
import { celeryDir, celeryEnv } from '../../support/celery-env.js';
import { brokerSettings, deleteQueues, dropResultsAndClose, mongoSettings, repoRoot, unique } from './support.js';
import { prepareCelery, startCeleryWorker, testWorker, waitForPing, type CeleryWorker } from './fixtures.js';
import { until } from '../../support/until.js';
import { parseExactJson, type ExactJsonValue } from '../../../src/queue/protocol/exact-numbers.js';
import { plainJson } from '../../../src/render/plain-json.js';
import { toPlainValue } from '../../../src/render/plain-value.js';

const run = promisify(execFile);
const venvBin = join(repoRoot, '.venv/bin');
const database = 'cybercom_test';
const collection = unique('tombstone');
const pyQueue = unique('py-queue');
const tsQueue = unique('ts-queue');
const pyNode = `${unique('py')}@test`;
const tsNode = `${unique('ts')}@test`;

let mongo: MongoClient;
let results: ResultStore;
let session: BrokerSession;
let publisher: TaskPublisher;
let control: ControlClient;
let tsWorker: Worker;
let pyWorker: CeleryWorker;

/** Environment of every Python process: the service settings plus the test's queue and collection. */
function pythonEnv(queue: string): NodeJS.ProcessEnv {
  return celeryEnv({ venv: join(repoRoot, '.venv'), queue, resultDatabase: database, resultCollection: collection });
}

async function celeryCli(args: string[], queue: string): Promise<string> {
  const { stdout } = await run(join(venvBin, 'celery'), ['-A', 'interop_app', ...args], {
    cwd: celeryDir,
    env: pythonEnv(queue),
    timeout: 60_000,
  });
  return stdout;
}

/** Parses the JSON object `celery inspect --json` prints (the last line that is one). */
function inspectJson(stdout: string): Record<string, unknown> {
  const line = stdout
    .trim()
    .split('\n')
    .reverse()
    .find((l) => l.trim().startsWith('{'));
  if (line === undefined) throw new Error(`no JSON in celery output:\n${stdout}`);
  return JSON.parse(line) as Record<string, unknown>;
}

beforeAll(async () => {
  await prepareCelery(110_000);
  mongo = await connectMongo(mongoSettings());
  results = new ResultStore(mongo, { database, collection });
  session = new BrokerSession({ settings: brokerSettings() });
  await session.waitUntilConnected(20_000);
  publisher = new TaskPublisher({ session });
  control = new ControlClient({ session });

  tsWorker = await testWorker({
    nodeName: tsNode,
    queues: [tsQueue],
    resultDatabase: database,
    resultCollection: collection,
    concurrency: 2,
  });
  pyWorker = startCeleryWorker({ venv: join(repoRoot, '.venv'), queue: pyQueue, node: pyNode, env: pythonEnv(pyQueue) });

  await tsWorker.run();
  await waitForPing(control, pyNode, 60_000, pyWorker);
});

afterAll(async () => {
  await pyWorker?.stop();
  await tsWorker?.close(1_000);
  await publisher?.close();
  await control?.close();
  await deleteQueues(brokerSettings(), [pyQueue, tsQueue]).catch(() => undefined);
  await session?.close();
  await dropResultsAndClose(mongo, database, collection);
});

describe('(a) Python Celery worker ← TS publisher and control client', () => {
  it('runs a task and stores a result the TS side reads', async () => {
    const { taskId } = await publisher.publish({ taskName: 'interop.add', args: [2, 3], queue: pyQueue });
    const result = await results.waitForReady(taskId, { timeoutMs: 30_000 });
    expect(result).toMatchObject({ status: 'SUCCESS', result: 5 });
    // Written by Celery 5.2.6 itself: date_done is a naive ISO string.
    const raw = await mongo
      .db(database)
      .collection(collection)
      .findOne({ _id: taskId as never });
    expect(raw?.date_done).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?$/);
  });

  it('keeps numbers as Python wrote them: arguments 2.0 and 1 give the float 3.0, read back as 3.0', async () => {
    const args = parseExactJson('[2.0, 1]') as ExactJsonValue[];
    const { taskId } = await publisher.publish({ taskName: 'interop.add', args, queue: pyQueue });
    const result = await results.waitForReady(taskId, { timeoutMs: 30_000 });
    const raw = await mongo
      .db(database)
      .collection(collection)
      .findOne({ _id: taskId as never });
    expect(raw?.result).toBe('3.0'); // a float: Python was given 2.0, not 2
    expect(result.status).toBe('SUCCESS');
    expect(plainJson(toPlainValue(result.result))).toBe('3.0');
  });

  it('reports a Python exception in Celery’s failure format', async () => {
    const { taskId } = await publisher.publish({ taskName: 'interop.fail', args: ['boom'], queue: pyQueue });
    const result = await results.waitForReady(taskId, { timeoutMs: 30_000 });
    expect(result.status).toBe('FAILURE');
    expect(result.exception).toEqual({ exc_type: 'ValueError', exc_message: ['boom'], exc_module: 'builtins' });
    expect(result.traceback).toContain('ValueError: boom');
  });

  it('delivers the authenticated_user header to self.request', async () => {
    const { taskId } = await publisher.publish({ taskName: 'interop.whoami', queue: pyQueue, authenticatedUser: 'dave' });
    expect(await results.waitForReady(taskId, { timeoutMs: 30_000 })).toMatchObject({ status: 'SUCCESS', result: 'dave' });
  });

  it('honours an eta written by the TS publisher (Celery 5.2.6 parses our timestamp format)', async () => {
    const eta = new Date(Date.now() + 1_500);
    const { taskId, message } = await publisher.publish({ taskName: 'interop.add', args: [1, 1], queue: pyQueue, eta });
    expect(message.headers.eta).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    const result = await results.waitForReady(taskId, { timeoutMs: 30_000 });
    expect(result).toMatchObject({ status: 'SUCCESS', result: 2 });
    expect(result.dateDone!.getTime()).toBeGreaterThanOrEqual(eta.getTime() - 50);
  });

  it('honours a revoke sent by the TS control client', async () => {
    const taskId = crypto.randomUUID();
    const replies = await control.revoke(taskId, { reply: true, destination: [pyNode], timeoutMs: 5_000 });
    expect(replies[pyNode]).toEqual({ ok: `tasks ${taskId} flagged as revoked` });
    await publisher.publish({ taskName: 'interop.add', args: [1, 2], queue: pyQueue, taskId });
    const result = await results.waitForReady(taskId, { timeoutMs: 30_000 });
    expect(result.status).toBe('REVOKED');
    expect(result.exception).toMatchObject({ exc_type: 'TaskRevokedError', exc_module: 'celery.exceptions' });
  });

  it('lists its tasks with docstrings through the TS control client', async () => {
    const replies = await control.registered(['__doc__'], { destination: [pyNode], timeoutMs: 5_000 });
    expect(replies[pyNode]).toEqual([
      { name: 'interop.add', attributes: { __doc__: 'Add two numbers.' } },
      { name: 'interop.fail', attributes: { __doc__: 'Always raise ValueError with the given message.' } },
      { name: 'interop.nodoc', attributes: {} },
      { name: 'interop.noop', attributes: { __doc__: 'Do nothing (used by the queue benchmark).' } },
      { name: 'interop.whoami', attributes: { __doc__: 'Return the user named in the authenticated_user header.' } },
    ]);
    const queues = await control.activeQueues({ destination: [pyNode], timeoutMs: 5_000 });
    expect(queues[pyNode]?.map((q) => q.name)).toEqual([pyQueue]);
  });
});

describe('(b) Python send_task + AsyncResult.get() → TS worker', () => {
  async function sendAndWait(task: string, args: unknown[], headers: Record<string, string> = {}): Promise<Record<string, unknown>> {
    const { stdout } = await run(
      join(venvBin, 'python'),
      [join(celeryDir, 'send_and_wait.py'), task, JSON.stringify(args), '{}', JSON.stringify(headers), '30'],
      { cwd: celeryDir, env: pythonEnv(tsQueue), timeout: 60_000 },
    );
    return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
  }

  it('gets the result of tasks.add', async () => {
    expect(await sendAndWait('tasks.add', [2, 3])).toMatchObject({ status: 'SUCCESS', result: 5 });
  });

  it('passes its authenticated_user header to the TS task', async () => {
    expect(await sendAndWait('tasks.whoami', [], { authenticated_user: 'erin' })).toMatchObject({ status: 'SUCCESS', result: 'erin' });
  });

  it('gets the TS failure as a Python exception with the traceback', async () => {
    const out = await sendAndWait('tasks.fail', ['boom']);
    expect(out).toMatchObject({ status: 'FAILURE', exc_type: 'Exception', exc_module: 'builtins', exc_message: ['boom'] });
    expect(out.traceback).toMatch(/^Traceback \(most recent call last\):[\s\S]*Exception: boom/);
  });
});

describe('(c) celery inspect CLI → TS worker', () => {
  it('ping', async () => {
    expect(inspectJson(await celeryCli(['inspect', 'ping', '-d', tsNode, '--json', '-t', '5'], tsQueue))).toEqual({
      [tsNode]: { ok: 'pong' },
    });
  });

  it('registered __doc__', async () => {
    const replies = inspectJson(await celeryCli(['inspect', 'registered', '__doc__', '-d', tsNode, '--json', '-t', '5'], tsQueue));
    expect(replies[tsNode]).toEqual([
      'tasks.add [__doc__=Add two numbers.]',
      'tasks.fail [__doc__=Always fail, with the given message.]',
      'tasks.noop [__doc__=Do nothing.]',
      'tasks.sleep [__doc__=Sleep for the given number of seconds, then return it.]',
      'tasks.whoami [__doc__=Return the name of the user who submitted the task.]',
      'tasks.write_record [__doc__=Insert kwargs["record"] into the data-store collection kwargs["database"].kwargs["collection"] with the submitting user\'s permissions; return its id.]',
    ]);
  });

  it('active_queues', async () => {
    const replies = inspectJson(await celeryCli(['inspect', 'active_queues', '-d', tsNode, '--json', '-t', '5'], tsQueue));
    expect(replies[tsNode]).toEqual([expect.objectContaining({ name: tsQueue, routing_key: tsQueue, durable: true, exclusive: false })]);
  });
});

describe('(d) Celery event receiver ← TS worker task events', () => {
  it('sees received, started and succeeded for every task, from single and task.multi messages', async () => {
    const tasks = 6;
    await control.cast('enable_events', {}, { destination: [tsNode] });
    const receiver = spawn(join(venvBin, 'python'), ['capture_events.py', tsNode, String(tasks), '60'], {
      cwd: celeryDir,
      env: pythonEnv(tsQueue),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    receiver.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    receiver.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => receiver.once('exit', (code) => resolve(code)));
    try {
      await until(
        async () => {
          if (receiver.exitCode !== null) throw new Error(`event receiver exited (${receiver.exitCode}):\n${err}`);
          return out.startsWith('ready\n') || undefined;
        },
        60_000,
        'the Python event receiver to listen',
      );
      const published = await Promise.all(
        Array.from({ length: tasks }, (_, i) => publisher.publish({ taskName: 'tasks.add', args: [i, 1], queue: tsQueue })),
      );
      expect(await exited, err).toBe(0);
      const events = out
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => JSON.parse(line) as { type: string; uuid: string; name: string | null });
      for (const { taskId } of published) {
        const types = events.filter((e) => e.uuid === taskId).map((e) => e.type);
        expect(types, `events of ${taskId}`).toEqual(['task-received', 'task-started', 'task-succeeded']);
      }
      expect(events.find((e) => e.type === 'task-received')?.name).toBe('tasks.add');
    } finally {
      receiver.kill();
      await control.cast('disable_events', {}, { destination: [tsNode] });
    }
  });
});
