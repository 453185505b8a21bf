/**
 * Task arguments reach the worker written as they were submitted. Celery's Python workers read
 * the message with Python's json module: `3.0` is a float there, `3` an int, and a 20-digit
 * integer that exact int. The API used to pass arguments on as JSON.stringify writes them, so a
 * Python task was given `3` for `3.0` and a rounded integer. The message is read here straight
 * from the broker (nothing consumes the queue), decoded by Python's json, and the task log's
 * copy is checked for the BSON types a record body would get.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import type { ChannelModel } from 'amqplib';
import { call, uniqueName, type TestApp } from '../../support/app.js';
import { appWithIdleQueue } from './support.js';

let app: TestApp;
let queue: string;
let token: string;
let broker: ChannelModel;

beforeAll(async () => {
  ({ app, queue, token, broker } = await appWithIdleQueue('numbers'));
});

afterAll(async () => {
  await broker?.close().catch(() => undefined);
  await app?.close();
});

/** Submits the body's text as it is, then takes the message it published off the queue. */
async function publishedFor(text: string): Promise<{ taskId: string; body: string; argsrepr: unknown; kwargsrepr: unknown }> {
  const res = await call(app.url, 'POST', '/api/queue/run/tasks.add/', { token, rawBody: text });
  expect(res.status, res.text).toBe(202);
  const taskId = (res.json as { task_id: string }).task_id;
  const channel = await broker.createChannel();
  try {
    for (;;) {
      const message = await channel.get(queue, { noAck: true });
      if (message === false) throw new Error(`the message of ${taskId} is not on ${queue}`);
      const headers = message.properties.headers ?? {};
      if (headers.id !== taskId) continue;
      return { taskId, body: message.content.toString('utf8'), argsrepr: headers.argsrepr, kwargsrepr: headers.kwargsrepr };
    }
  } finally {
    await channel.close().catch(() => undefined);
  }
}

/** What Python's json module (as kombu's JSON serializer uses it) makes of a body: each value's type and repr. */
function asPythonReadsIt(body: string): string {
  const script = [
    'import json, sys',
    'args, kwargs, _ = json.loads(sys.stdin.read())',
    'print(json.dumps([[type(v).__name__, repr(v)] for v in args + [kwargs["x"]["y"][0]]]))',
  ].join('\n');
  return execFileSync('python3', ['-c', script], { input: body, encoding: 'utf8' }).trim();
}

describe('numbers in task arguments', () => {
  const submitted = (marker: string) =>
    `{"function": "tasks.add", "queue": "${queue}", "args": [3.0, 12345678901234567890, -0.0, 1e3, 2.5, 7, 1e400, 9007199254740993], ` +
    `"kwargs": {"x": {"y": [1.0]}, "marker": "${marker}"}}`;

  it('are published written as submitted, so that a Python worker reads floats and exact integers', async () => {
    const marker = uniqueName('numbers');
    const { body, argsrepr, kwargsrepr } = await publishedFor(submitted(marker));
    expect(body.startsWith('[[3.0,12345678901234567890,-0.0,1e3,2.5,7,1e400,9007199254740993],{"x":{"y":[1.0]},')).toBe(true);
    expect(JSON.parse(asPythonReadsIt(body))).toEqual([
      ['float', '3.0'],
      ['int', '12345678901234567890'],
      ['float', '-0.0'],
      ['float', '1000.0'],
      ['float', '2.5'],
      ['int', '7'],
      ['float', 'inf'],
      ['int', '9007199254740993'],
      ['float', '1.0'],
    ]);
    // The headers Celery's monitors show read as Python's repr of the same values.
    expect(argsrepr).toBe('[3.0, 12345678901234567890, -0.0, 1000.0, 2.5, 7, inf, 9007199254740993]');
    expect(kwargsrepr).toBe(`{'x': {'y': [1.0]}, 'marker': '${marker}'}`);
  });

  it('are kept in the task log with the BSON types a record body gets', async () => {
    const marker = uniqueName('numbers');
    const { taskId } = await publishedFor(submitted(marker));
    const log = app.ctx.serviceDb.collection('task_log');
    const typed = async (path: string, type: string) => log.countDocuments({ _id: taskId as never, [path]: { $type: type } });
    expect(await typed('args.0', 'double')).toBe(1);
    // Beyond int64 an integer is a double, as in a record body.
    expect(await typed('args.1', 'double')).toBe(1);
    expect(await typed('args.7', 'long')).toBe(1);
    expect(await typed('args.3', 'double')).toBe(1);
    expect(await typed('args.5', 'int')).toBe(1);
    expect(await typed('kwargs.x.y.0', 'double')).toBe(1);
  });

  it('leave a body without such literals as JSON.stringify writes it', async () => {
    const { body } = await publishedFor(
      `{"function": "tasks.add", "queue": "${queue}", "args": [1, 2.5, "3.0"], "kwargs": {"x": {"y": [4]}}}`,
    );
    expect(body.startsWith('[[1,2.5,"3.0"],{"x":{"y":[4]}},')).toBe(true);
  });

  it('refuse a body that is not JSON with the JSON error, as before', async () => {
    const res = await call(app.url, 'POST', '/api/queue/run/tasks.add/', { token, rawBody: '{"function": "tasks.add", "args": [3.0,]}' });
    expect(res.status).toBe(400);
    expect((res.json as { error: unknown }).error).toBeDefined();
  });
});
