/**
 * Remote control keeps working with stock Python Celery once the Lamport `clock` header has
 * grown: past 127 (where amqplib would switch to a 16-bit field, which py-amqp ≤ 5.3.1 reads as a
 * string) and past 32767. Checked against both Python stacks the tests install (the Debian
 * baseline Celery 5.2.6 with py-amqp 5.1.1, and the newest release):
 *   - `celery inspect ping|registered` reads the TypeScript worker's replies;
 *   - a Python worker starts (its mingle `hello` is answered by the TypeScript worker) and answers
 *     the service's control client, whose requests carry the high clock.
 * The clocks are raised the way a peer with a high clock raises them: one request carrying it,
 * after which the TypeScript worker and the control client move past it (Lamport).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Channel, ChannelModel } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectBroker } from '../../../src/queue/connection/broker-connection.js';
import { BrokerSession } from '../../../src/queue/connection/broker-session.js';
import { ControlClient } from '../../../src/queue/remote-control/control-client.js';
import { PIDBOX_EXCHANGE, declarePidboxExchange } from '../../../src/queue/protocol/entities.js';
import type { Worker } from '../../../src/worker/worker.js';
import { celeryDir, celeryEnv } from '../../support/celery-env.js';
import { brokerSettings, deleteQueues, repoRoot, unique } from './support.js';
import { prepareCelery, startCeleryWorker, testWorker, waitForPing, type CeleryWorker } from './fixtures.js';
import { until } from '../../support/until.js';

const run = promisify(execFile);
const STACKS = [
  { name: 'celery 5.2.6 / py-amqp 5.1.1', venv: join(repoRoot, '.venv') },
  { name: 'newest celery', venv: join(repoRoot, '.venv-celery-latest') },
];
const database = 'cybercom_test';
const collection = unique('tombstone');
const tsQueue = unique('ts-clock');
const tsNode = `${unique('ts-clock')}@test`;

let session: BrokerSession;
let control: ControlClient;
let tsWorker: Worker;
let spyConnection: ChannelModel;
let spyChannel: Channel;
/** The `clock` header of every control request addressed to a node, as it crossed the wire. */
const requestClocks = new Map<string, number[]>();
const pyQueues: string[] = [];

function pythonEnv(venv: string, queue: string): NodeJS.ProcessEnv {
  return celeryEnv({ venv, queue, resultDatabase: database, resultCollection: collection });
}

/** `celery inspect <command> -d <tsNode> --json`: the replies, or the failure with its output. */
async function inspect(venv: string, command: string): Promise<Record<string, unknown>> {
  try {
    const { stdout } = await run(
      join(venv, 'bin/celery'),
      ['-A', 'interop_app', 'inspect', command, '-d', tsNode, '--json', '--timeout', '5'],
      {
        cwd: celeryDir,
        env: pythonEnv(venv, tsQueue),
        timeout: 60_000,
      },
    );
    const line = stdout
      .trim()
      .split('\n')
      .reverse()
      .find((l) => l.trim().startsWith('{'));
    return line === undefined ? { output: stdout } : (JSON.parse(line) as Record<string, unknown>);
  } catch (error) {
    const e = error as { code?: unknown; stdout?: string; stderr?: string };
    return { failed: e.code, output: `${e.stdout ?? ''}\n${e.stderr ?? ''}`.slice(-2000) };
  }
}

/** What a kombu peer whose clock is `clock` sends: one request (no reply wanted) to the TS worker. */
async function sendRequestWithClock(clock: number): Promise<void> {
  const body = { method: 'ping', arguments: {}, destination: [tsNode], pattern: null, matcher: null };
  spyChannel.publish(PIDBOX_EXCHANGE, '', Buffer.from(JSON.stringify(body)), {
    contentType: 'application/json',
    contentEncoding: 'utf-8',
    headers: { clock: { '!': 'int', value: clock }, expires: { '!': 'int', value: 0 } },
  });
}

/** Raises the TS worker's clock past `floor`, and the control client's past the worker's. */
async function raiseClocks(floor: number): Promise<number> {
  await sendRequestWithClock(floor);
  const reply = await until(
    async () => {
      const replies = await control.broadcast('clock', {}, { destination: [tsNode], timeoutMs: 2_000 });
      const value = (replies[tsNode] as { clock?: number } | undefined)?.clock;
      return typeof value === 'number' && value > floor ? value : undefined;
    },
    15_000,
    `the TS worker's clock to pass ${floor}`,
  );
  return reply;
}

function startPythonWorker(venv: string): CeleryWorker {
  const queue = unique('py-clock');
  pyQueues.push(queue);
  const node = `${unique('py-clock')}@test`;
  // Mingle stays on: at start the worker asks every worker (the TS one among them) for `hello`.
  return startCeleryWorker({ venv, queue, node, env: pythonEnv(venv, queue), mingle: true });
}

beforeAll(async () => {
  await prepareCelery(300_000);
  session = new BrokerSession({ settings: brokerSettings() });
  await session.waitUntilConnected(20_000);
  control = new ControlClient({ session });

  spyConnection = await connectBroker(brokerSettings());
  spyChannel = await spyConnection.createChannel();
  await declarePidboxExchange(spyChannel);
  const { queue } = await spyChannel.assertQueue('', { exclusive: true, autoDelete: true, durable: false });
  await spyChannel.bindQueue(queue, PIDBOX_EXCHANGE, '');
  await spyChannel.consume(
    queue,
    (message) => {
      if (message === null) return;
      const clock = (message.properties.headers as Record<string, unknown> | undefined)?.clock;
      const { destination } = JSON.parse(message.content.toString('utf8')) as { destination?: string[] | null };
      if (typeof clock !== 'number' || !Array.isArray(destination)) return;
      for (const node of destination) requestClocks.set(node, [...(requestClocks.get(node) ?? []), clock]);
    },
    { noAck: true },
  );

  tsWorker = await testWorker({
    nodeName: tsNode,
    queues: [tsQueue],
    resultDatabase: database,
    resultCollection: collection,
    concurrency: 1,
  });
  await tsWorker.run();
  await waitForPing(control, tsNode, 20_000);
}, 360_000);

afterAll(async () => {
  await tsWorker?.close(1_000);
  await control?.close();
  await spyConnection?.close().catch(() => undefined);
  await deleteQueues(brokerSettings(), [tsQueue, ...pyQueues]).catch(() => undefined);
  await session?.close();
});

describe.each([
  ['past 127 (a 16-bit value to amqplib)', 200],
  ['past 32767', 40_000],
])('with the clocks %s', (_label, floor) => {
  beforeAll(async () => {
    expect(await raiseClocks(floor)).toBeGreaterThan(floor);
  }, 30_000);

  it.each(STACKS)(
    '$name: celery inspect ping and registered read the TS worker’s replies',
    async ({ venv }) => {
      const ping = await inspect(venv, 'ping');
      expect(ping, JSON.stringify(ping)).toEqual({ [tsNode]: { ok: 'pong' } });
      const registered = await inspect(venv, 'registered');
      expect(registered[tsNode], JSON.stringify(registered)).toEqual(expect.arrayContaining(['tasks.add', 'tasks.sleep']));
    },
    120_000,
  );

  it.each(STACKS)(
    '$name: a worker starts, and answers the service’s control client',
    async ({ venv }) => {
      const worker = startPythonWorker(venv);
      try {
        const pong = await waitForPing(control, worker.node, 60_000, worker);
        expect(pong).toEqual({ ok: 'pong' });
        // It went through mingle (the TS worker's hello reply carried the high clock) and is still up.
        expect(worker.log()).toMatch(/mingle: all alone|mingle: sync complete/);
        const replies = await control.registered(['__doc__'], { destination: [worker.node], timeoutMs: 5_000 });
        expect(replies[worker.node]?.map((t) => t.name)).toContain('interop.add');
        // The requests it answered really carried clocks past the floor.
        const clocks = requestClocks.get(worker.node) ?? [];
        expect(clocks.length).toBeGreaterThan(0);
        expect(Math.min(...clocks)).toBeGreaterThan(floor);
        expect(worker.child.exitCode).toBeNull();
        expect(worker.log()).not.toMatch(/IndexError|UnexpectedFrame|FrameSyntaxError|Unrecoverable error/);
      } finally {
        await worker.stop(15_000);
      }
    },
    120_000,
  );
});
