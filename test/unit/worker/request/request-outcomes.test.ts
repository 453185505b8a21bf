/**
 * The outcome flow of a request whose body ran: what is sent, stored, announced and reported,
 * and how its message is settled, with the result store, the broker and the event channel
 * replaced by in-memory stand-ins of the interfaces the worker's modules take.
 */
import type { ConsumeMessage } from 'amqplib';
import { MongoNetworkError, MongoServerError } from 'mongodb';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { JsonObject, JsonValue } from '../../../../src/queue/protocol/json.js';
import {
  buildTaskMessage,
  encodeTaskBody,
  taskPublishOptions,
  type TaskMessageInput,
} from '../../../../src/queue/protocol/task-message.js';
import { parseTaskMessage, type IncomingTask } from '../../../../src/queue/protocol/task-message-parser.js';
import type { PublishTaskInput } from '../../../../src/queue/publishing/task-publisher.js';
import { PythonException, formatTraceback, toExceptionInfo, type CeleryExceptionInfo } from '../../../../src/queue/results/exceptions.js';
import type { ResultStore } from '../../../../src/queue/results/result-store.js';
import type { ChannelAcknowledgements, Settlement } from '../../../../src/worker/consumer/acknowledgements.js';
import { OutcomeRecorder } from '../../../../src/worker/request/outcome-recorder.js';
import { RequestOutcomes, type TaskReport } from '../../../../src/worker/request/request-outcomes.js';
import { defineTask } from '../../../../src/worker/task-definition.js';
import type { TaskOutcome } from '../../../../src/worker/request/task-execution.js';
import { TaskRequest, requestMeta } from '../../../../src/worker/request/task-request.js';
import { Retry } from '../../../../src/worker/request/task-retry.js';

const NODE = 'unit@test';
const silent = pino({ level: 'silent' });
const sig = (task: string): JsonObject => ({ task, args: [], kwargs: {}, options: {}, subtask_type: null, immutable: false });

/** A task message as the worker's consumer receives it, parsed the way the strategy parses it. */
function incoming(input: Partial<TaskMessageInput> = {}): { task: IncomingTask; message: ConsumeMessage } {
  const built = buildTaskMessage({ taskName: 'tasks.add', taskId: 'task-1', args: [1, 2], ...input });
  const options = taskPublishOptions(built);
  const message = {
    content: encodeTaskBody(built),
    properties: { ...options, headers: asDelivered(options.headers ?? {}) },
    fields: { deliveryTag: 1, redelivered: false, exchange: '', routingKey: 'tasks', consumerTag: 'c' },
  } as unknown as ConsumeMessage;
  const parsed = parseTaskMessage(message);
  if (!parsed.ok) throw new Error(`test message refused: ${parsed.reason}`);
  return { task: parsed.task, message };
}

/** Headers as the broker delivers them: the typed values amqplib encodes (`{'!': 'int', value}`) arrive as plain values. */
function asDelivered(headers: Record<string, unknown>): Record<string, unknown> {
  const plain = (value: unknown): unknown =>
    value !== null && typeof value === 'object' && '!' in value && 'value' in value ? (value as { value: unknown }).value : value;
  return Object.fromEntries(Object.entries(headers).map(([key, value]) => [key, plain(value)]));
}

/** What the outcome flow did, in order. */
class Rig {
  readonly log: string[] = [];
  readonly stored: { state: string; taskId: string; detail: unknown }[] = [];
  readonly published: PublishTaskInput[] = [];
  readonly events: { type: string; fields: JsonObject }[] = [];
  readonly reports: TaskReport[] = [];
  /** Makes the next writes of the store fail with this error. */
  failWrites: Error | null = null;
  failPublish: Error | null = null;
  /** States whose write the database refuses for good (as it does a document too large). */
  readonly refused = new Set<string>();
  readonly graceOver = new AbortController();

  private readonly store = {
    markSuccess: (taskId: string, value: unknown) => this.write('SUCCESS', taskId, value),
    markFailure: (taskId: string, exception: CeleryExceptionInfo, traceback: string | null) =>
      this.write('FAILURE', taskId, { exception, traceback }),
    markRetry: (taskId: string, exception: CeleryExceptionInfo | null) => this.write('RETRY', taskId, exception),
    markRevoked: (taskId: string, reason: string) => this.write('REVOKED', taskId, reason),
  } as unknown as ResultStore;

  readonly outcomes = new RequestOutcomes({
    nodeName: NODE,
    settings: { defaultQueue: 'celery' },
    logger: silent,
    recorder: new OutcomeRecorder({ store: () => this.store, logger: silent, graceOver: this.graceOver.signal, deadlineMs: () => 0 }),
    forgetDeliveries: () => Promise.resolve(),
    events: {
      taskEventsEnabled: true,
      sendTaskEvent: (type, fields) => {
        this.log.push(`event ${type}`);
        this.events.push({ type, fields });
        return true;
      },
    },
    publish: (message) => {
      if (this.failPublish) return Promise.reject(this.failPublish);
      this.log.push(`publish ${message.taskName}`);
      this.published.push(message);
      return Promise.resolve();
    },
    report: (report) => {
      this.log.push(`report ${report.state}`);
      this.reports.push(report);
    },
  });

  request(input: Partial<TaskMessageInput> = {}): TaskRequest {
    const { task, message } = incoming(input);
    const acks = {
      settle: (_message: ConsumeMessage, how: Settlement) => void this.log.push(`settle ${how}`),
    } as unknown as ChannelAcknowledgements;
    return new TaskRequest({ message, acks }, task, defineTask({ name: task.taskName, run: () => null }));
  }

  finish(request: TaskRequest, outcome: TaskOutcome, storesResults = true): Promise<void> {
    return this.outcomes.finish(request, outcome, requestMeta(request.task, NODE), storesResults);
  }

  private write(state: string, taskId: string, detail: unknown): Promise<void> {
    if (this.failWrites) return Promise.reject(this.failWrites);
    if (this.refused.has(state)) return Promise.reject(new MongoServerError({ code: 10334, errmsg: 'BSONObj size is invalid', ok: 0 }));
    this.log.push(`store ${state} ${taskId}`);
    this.stored.push({ state, taskId, detail });
    return Promise.resolve();
  }
}

const failure = (error: Error, runtimeMs = 5): TaskOutcome => ({
  state: 'FAILURE',
  error,
  exception: toExceptionInfo(error),
  traceback: formatTraceback(error),
  runtimeMs,
});

describe('RequestOutcomes', () => {
  it('SUCCESS: the callbacks are sent, then the result stored, then the event; the message acknowledged last', async () => {
    const rig = new Rig();
    const request = rig.request({ embed: { callbacks: [sig('tasks.next')], errbacks: null, chain: null, chord: null } });
    await rig.finish(request, { state: 'SUCCESS', value: 3, runtimeMs: 12 });
    expect(rig.log).toEqual(['publish tasks.next', 'store SUCCESS task-1', 'event task-succeeded', 'settle ack', 'report SUCCESS']);
    expect(rig.published[0]).toMatchObject({ args: [3], parentId: 'task-1', queue: 'celery' });
    expect(rig.reports).toEqual([{ taskId: 'task-1', taskName: 'tasks.add', state: 'SUCCESS', runtimeMs: 12 }]);
    expect(rig.outcomes.processedTotal).toBe(1);
  });

  it('SUCCESS whose callback cannot be sent: nothing stored, the message back in its queue, reported REQUEUED', async () => {
    const rig = new Rig();
    rig.failPublish = new Error('broker gone');
    const request = rig.request({ embed: { callbacks: [sig('tasks.next')], errbacks: null, chain: null, chord: null } });
    await rig.finish(request, { state: 'SUCCESS', value: 3, runtimeMs: 12 });
    expect(rig.log).toEqual(['settle requeue', 'report REQUEUED']);
    expect(rig.outcomes.processedTotal).toBe(0);
  });

  it('FAILURE: the exception and its traceback are stored and announced, the errbacks sent with the failed id', async () => {
    const rig = new Rig();
    const request = rig.request({ embed: { callbacks: null, errbacks: [sig('tasks.on_error')], chain: null, chord: null } });
    const error = new PythonException('ValueError', ['bad input']);
    await rig.finish(request, failure(error));
    expect(rig.log).toEqual(['store FAILURE task-1', 'publish tasks.on_error', 'event task-failed', 'settle ack', 'report FAILURE']);
    const stored = rig.stored[0]!.detail as { exception: CeleryExceptionInfo; traceback: string };
    expect(stored.exception).toMatchObject({ exc_type: 'ValueError', exc_message: ['bad input'] });
    expect(stored.traceback).toBe(formatTraceback(error));
    expect(rig.events[0]!.fields).toMatchObject({
      uuid: 'task-1',
      exception: "ValueError('bad input')",
      traceback: formatTraceback(error),
    });
    expect(rig.published[0]).toMatchObject({ taskName: 'tasks.on_error', args: ['task-1'] });
  });

  it('FAILURE in a chain: the remaining steps are stored as failed too', async () => {
    const rig = new Rig();
    const step = { ...sig('tasks.later'), options: { task_id: 'later-1' } };
    await rig.finish(rig.request({ embed: { callbacks: null, errbacks: null, chain: [step], chord: null } }), failure(new Error('boom')));
    expect(rig.stored.map((s) => `${s.state} ${s.taskId}`)).toEqual(['FAILURE task-1', 'FAILURE later-1']);
  });

  it('RETRY: the same message is sent again with retries + 1 before RETRY is stored; not counted as processed', async () => {
    const rig = new Rig();
    const when = new Date(Date.now() + 60_000);
    const retry = new Retry(when, new Error('try later'), [7], { x: 1 });
    await rig.finish(rig.request({ retries: 2, kwargs: { x: 0 } }), { state: 'RETRY', retry, runtimeMs: 3 });
    expect(rig.log).toEqual(['publish tasks.add', 'store RETRY task-1', 'event task-retried', 'settle ack', 'report RETRY']);
    expect(rig.published[0]).toMatchObject({ taskId: 'task-1', retries: 3, eta: when, args: [7], kwargs: { x: 1 }, queue: 'tasks' });
    expect(rig.outcomes.processedTotal).toBe(0);
  });

  it('RETRY that cannot be sent: the message goes back to run again now, nothing stored', async () => {
    const rig = new Rig();
    rig.failPublish = new Error('broker gone');
    const retry = new Retry(new Date(), null, [], {});
    await rig.finish(rig.request(), { state: 'RETRY', retry, runtimeMs: 3 });
    expect(rig.log).toEqual(['settle requeue', 'report REQUEUED']);
  });

  it('REVOKED (terminated while running): stored and announced as terminated', async () => {
    const rig = new Rig();
    await rig.finish(rig.request(), { state: 'REVOKED', reason: 'terminated', runtimeMs: 9 });
    expect(rig.log).toEqual(['store REVOKED task-1', 'event task-revoked', 'settle ack', 'report REVOKED']);
    expect(rig.events[0]!.fields).toMatchObject({ terminated: true, signum: 15 });
  });

  it('ABANDONED at shutdown: nothing stored, the message back in its queue', async () => {
    const rig = new Rig();
    await rig.finish(rig.request(), { state: 'ABANDONED', runtimeMs: 30_000 });
    expect(rig.log).toEqual(['settle requeue', 'report REQUEUED']);
  });

  it('a result write cut short by the end of the grace period returns the message instead of acknowledging it', async () => {
    const rig = new Rig();
    rig.failWrites = new MongoNetworkError('connection reset');
    rig.graceOver.abort();
    await rig.finish(rig.request(), { state: 'SUCCESS', value: 1, runtimeMs: 1 });
    expect(rig.log).toEqual(['settle requeue', 'report REQUEUED']);
  });

  it('a result the database refuses for good is replaced by a FAILURE saying why, and the message acknowledged', async () => {
    const rig = new Rig();
    rig.refused.add('SUCCESS');
    await rig.finish(rig.request(), { state: 'SUCCESS', value: 'x', runtimeMs: 1 });
    expect(rig.log).toEqual(['store FAILURE task-1', 'event task-failed', 'settle ack', 'report FAILURE']);
    expect((rig.stored[0]!.detail as { exception: CeleryExceptionInfo }).exception.exc_message[0]).toMatch(
      /^the task's result could not be stored/,
    );
  });

  it('settles a request once: whatever settles it later does nothing', async () => {
    const rig = new Rig();
    const request = rig.request();
    await rig.finish(request, { state: 'SUCCESS', value: null, runtimeMs: 1 });
    expect(request.requeue()).toBe(false);
    expect(request.reject()).toBe(false);
    expect(rig.log.filter((line) => line.startsWith('settle'))).toEqual(['settle ack']);
  });

  it('a task whose result is not kept stores nothing and is still acknowledged', async () => {
    const rig = new Rig();
    await rig.finish(rig.request(), { state: 'SUCCESS', value: 1 as JsonValue, runtimeMs: 1 }, false);
    expect(rig.log).toEqual(['event task-succeeded', 'settle ack', 'report SUCCESS']);
  });
});
