import type { ConfirmChannel } from 'amqplib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { EventDispatcher, TASK_EVENT_BATCH_LIMIT, TASK_EVENT_BATCH_MS } from '../../../../src/worker/consumer/event-dispatcher.js';
import { EVENT_EXCHANGE } from '../../../../src/queue/protocol/entities.js';

interface Sent {
  exchange: string;
  routingKey: string;
  body: unknown;
}

function recordingChannel(sent: Sent[]): ConfirmChannel {
  return {
    publish: (exchange: string, routingKey: string, content: Buffer) => {
      sent.push({ exchange, routingKey, body: JSON.parse(content.toString('utf8')) });
      return true;
    },
    waitForConfirms: () => Promise.resolve(),
  } as unknown as ConfirmChannel;
}

describe('EventDispatcher', () => {
  let sent: Sent[];
  let clock: number;
  let dispatcher: EventDispatcher;

  beforeEach(() => {
    vi.useFakeTimers();
    sent = [];
    clock = 0;
    dispatcher = new EventDispatcher('w1@host', () => ++clock, { taskEvents: true });
    dispatcher.attach(recordingChannel(sent));
  });
  afterEach(() => vi.useRealTimers());

  it('sends the task events of a moment as one task.multi message, in order, each with its own clock', () => {
    dispatcher.sendTaskEvent('task-received', { uuid: 'a', name: 't.add' });
    dispatcher.sendTaskEvent('task-started', { uuid: 'a' });
    dispatcher.sendTaskEvent('task-succeeded', { uuid: 'a', result: '2', runtime: 0.1 });
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(TASK_EVENT_BATCH_MS);
    expect(sent).toHaveLength(1);
    const [message] = sent as [Sent];
    expect(message.exchange).toBe(EVENT_EXCHANGE);
    expect(message.routingKey).toBe('task.multi');
    const events = message.body as Array<Record<string, unknown>>;
    expect(events.map((e) => [e.type, e.uuid, e.clock, e.hostname])).toEqual([
      ['task-received', 'a', 1, 'w1@host'],
      ['task-started', 'a', 2, 'w1@host'],
      ['task-succeeded', 'a', 3, 'w1@host'],
    ]);
  });

  it("stamps each event with the moment it was built and Python's UTC offset of that moment (daylight saving time included)", () => {
    const zone = process.env.TZ;
    process.env.TZ = 'America/Chicago';
    try {
      const winter = new Date('2026-01-15T12:00:00Z');
      vi.setSystemTime(winter);
      dispatcher.sendTaskEvent('task-received', { uuid: 'w', name: 't.add' });
      vi.setSystemTime(new Date('2026-07-15T12:00:00Z'));
      dispatcher.sendTaskEvent('task-started', { uuid: 'w' });
      vi.advanceTimersByTime(TASK_EVENT_BATCH_MS);
      const events = sent[0]?.body as Array<Record<string, unknown>>;
      expect(events.map((e) => [e.type, e.utcoffset, e.timestamp])).toEqual([
        ['task-received', 6, winter.getTime() / 1000],
        ['task-started', 5, Date.parse('2026-07-15T12:00:00Z') / 1000],
      ]);
    } finally {
      process.env.TZ = zone;
      if (zone === undefined) delete process.env.TZ;
    }
  });

  it('sends a lone task event as itself, under its own routing key', () => {
    dispatcher.sendTaskEvent('task-failed', { uuid: 'b', exception: "ValueError('x')", traceback: null });
    vi.advanceTimersByTime(TASK_EVENT_BATCH_MS);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.routingKey).toBe('task.failed');
    expect(sent[0]?.body).toMatchObject({ type: 'task-failed', uuid: 'b', hostname: 'w1@host' });
  });

  it('sends a full batch at once, without waiting for the timer', () => {
    for (let i = 0; i < TASK_EVENT_BATCH_LIMIT + 1; i++) dispatcher.sendTaskEvent('task-received', { uuid: `t${i}` });
    expect(sent).toHaveLength(1);
    expect((sent[0]?.body as unknown[]).length).toBe(TASK_EVENT_BATCH_LIMIT);
    vi.advanceTimersByTime(TASK_EVENT_BATCH_MS);
    expect(sent).toHaveLength(2);
    expect(sent[1]?.body).toMatchObject({ uuid: `t${TASK_EVENT_BATCH_LIMIT}` });
  });

  it('flush() sends what is buffered before waiting for the confirms', async () => {
    dispatcher.sendTaskEvent('task-received', { uuid: 'c' });
    dispatcher.sendTaskEvent('task-revoked', { uuid: 'c', terminated: false, signum: null, expired: false });
    await dispatcher.flush();
    expect(sent.map((s) => s.routingKey)).toEqual(['task.multi']);
  });

  it('sends worker events at once and task events only while enabled', () => {
    dispatcher.sendWorkerEvent('worker-heartbeat', { active: 1, processed: 2 });
    expect(sent.map((s) => s.routingKey)).toEqual(['worker.heartbeat']);
    dispatcher.taskEventsEnabled = false;
    expect(dispatcher.sendTaskEvent('task-received', { uuid: 'd' })).toBe(false);
    vi.advanceTimersByTime(TASK_EVENT_BATCH_MS);
    expect(sent).toHaveLength(1);
  });

  it('drops task events while it has no channel, as Celery does', () => {
    dispatcher.attach(null);
    expect(dispatcher.sendTaskEvent('task-received', { uuid: 'e' })).toBe(false);
    vi.advanceTimersByTime(TASK_EVENT_BATCH_MS);
    expect(sent).toEqual([]);
  });
});
