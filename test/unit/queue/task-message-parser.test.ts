import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Message } from 'amqplib';
import { parseTaskMessage } from '../../../src/queue/protocol/task-message-parser.js';
import { buildTaskMessage, encodeTaskBody, taskPublishOptions } from '../../../src/queue/protocol/task-message.js';
import { decodeTable, encodeTable } from './amqp-wire.js';

interface Fixture {
  fields: Message['fields'];
  properties: Message['properties'];
  body: string;
}

function fixture(name: string): Pick<Message, 'content' | 'properties' | 'fields'> {
  const raw = JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')) as Fixture;
  return { fields: raw.fields, properties: raw.properties, content: Buffer.from(raw.body, 'utf8') };
}

function message(headers: Record<string, unknown>, body: string, contentType: string | undefined) {
  return {
    fields: { deliveryTag: 1, redelivered: false, exchange: '', routingKey: 'celery' } as Message['fields'],
    properties: { contentType, headers } as unknown as Message['properties'],
    content: Buffer.from(body, 'utf8'),
  };
}

describe('parseTaskMessage', () => {
  it('reads a Celery 5.2.6 send_task message with a custom authenticated_user header', () => {
    const parsed = parseTaskMessage(fixture('python-5.2.6-send-task.json'));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const t = parsed.task;
    expect(t.taskName).toBe('proj.tasks.add');
    expect(t.taskId).toBe('9c7d4a1e-0b2f-4c33-9a52-3b8f4a3e6f11');
    expect(t.args).toEqual([2, 2]);
    expect(t.kwargs).toEqual({});
    expect(t.embed).toEqual({ callbacks: null, errbacks: null, chain: null, chord: null });
    expect(t.eta).toBeNull();
    expect(t.expires).toBeNull();
    expect(t.timeLimit).toEqual({ hard: null, soft: null });
    expect(t.rootId).toBe(t.taskId);
    expect(t.parentId).toBeNull();
    expect(t.origin).toBe('gen4242@client-host');
    expect(t.authenticatedUser).toBe('alice');
    expect(t.customHeaders).toEqual({ authenticated_user: 'alice' });
    expect(t.correlationId).toBe(t.taskId);
    expect(t.deliveryInfo).toEqual({ exchange: '', routingKey: 'celery', redelivered: false, priority: 0 });
  });

  it('reads a kombu 5.3 message: envelopes decoded to kombu 5.2.4 values, timestamps and limits parsed', () => {
    const parsed = parseTaskMessage(fixture('python-5.3-send-task-envelopes.json'));
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    const t = parsed.task;
    expect(t.args).toEqual(['1b4e28ba-2fa1-11d2-883f-0016d3cca427', '2024-06-19T19:23:24.611430Z']);
    expect(t.kwargs).toEqual({ when: '2024-06-19T00:00:00', amount: '1.50', raw: 'hi' });
    expect(t.eta?.toISOString()).toBe('2024-06-19T19:23:24.611Z');
    // +02:00 offset: 21:23 local is 19:23 UTC.
    expect(t.expires?.toISOString()).toBe('2024-06-19T19:23:24.611Z');
    expect(t.timeLimit).toEqual({ hard: 30, soft: 20 });
    expect(t.retries).toBe(2);
    expect(t.groupId).toBe('4d6f0c43-3d0b-4a4f-9d43-1d2a5e6f7a88');
    expect(t.groupIndex).toBe(3);
    expect(t.ignoreResult).toBe(true);
    expect(t.authenticatedUser).toBeNull();
    // 5.3's protocol additions are not mistaken for custom headers.
    expect(t.customHeaders).toEqual({});
    expect(t.deliveryInfo.redelivered).toBe(true);
    expect(t.deliveryInfo.routingKey).toBe('special');
  });

  it('round-trips what buildTaskMessage produces', () => {
    const built = buildTaskMessage({
      taskName: 'tasks.add',
      args: [1, 'x'],
      kwargs: { k: [1] },
      authenticatedUser: 'bob',
      timeLimit: { hard: 5 },
    });
    const parsed = parseTaskMessage({
      content: encodeTaskBody(built),
      // Through the wire encoding and back, as a consumer receives it.
      properties: {
        ...taskPublishOptions(built),
        headers: decodeTable(encodeTable(taskPublishOptions(built).headers)),
      } as unknown as Message['properties'],
      fields: { deliveryTag: 1, redelivered: false, exchange: '', routingKey: 'q' } as Message['fields'],
    });
    expect(parsed.ok && parsed.task).toMatchObject({
      taskId: built.headers.id,
      args: [1, 'x'],
      kwargs: { k: [1] },
      authenticatedUser: 'bob',
      timeLimit: { hard: 5, soft: null },
    });
  });

  const good = '[[], {}, {}]';
  const headers = { task: 'tasks.add', id: 'abc' };

  it.each([
    ['not-protocol-2', { id: 'abc' }, good, 'application/json'],
    ['missing-id', { task: 'tasks.add' }, good, 'application/json'],
    ['untrusted-content', headers, good, 'application/x-python-serialize'],
    ['untrusted-content', headers, good, undefined],
    ['undecodable-body', headers, '[[], {', 'application/json'],
    ['undecodable-body', headers, '[[{"__type__": "pickle", "__value__": "x"}], {}, {}]', 'application/json'],
    ['invalid-task', headers, '[[], {}]', 'application/json'],
    ['invalid-task', headers, '[{}, {}, {}]', 'application/json'],
    ['invalid-task', headers, '[[], [], {}]', 'application/json'],
    ['invalid-task', { ...headers, eta: 'tomorrow' }, good, 'application/json'],
  ] as const)('refuses with %s', (reason, h, body, contentType) => {
    const parsed = parseTaskMessage(message(h, body, contentType));
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.reason).toBe(reason);
    expect(parsed.detail.length).toBeGreaterThan(0);
  });

  it('keeps the task id and name of a refused message for the error report', () => {
    const parsed = parseTaskMessage(message(headers, 'nope', 'application/json'));
    expect(parsed).toMatchObject({ ok: false, taskId: 'abc', taskName: 'tasks.add' });
  });

  it('tolerates a null embed and a missing timelimit', () => {
    const parsed = parseTaskMessage(message(headers, '[[1], {"a": 2}, null]', 'application/json'));
    expect(parsed.ok && parsed.task.embed).toEqual({ callbacks: null, errbacks: null, chain: null, chord: null });
    expect(parsed.ok && parsed.task.timeLimit).toEqual({ hard: null, soft: null });
  });
});
