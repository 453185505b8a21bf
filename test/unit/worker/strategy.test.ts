/** What a consumed message is to the worker: refused, unregistered, or a task to run. */
import type { ConsumeMessage } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { buildTaskMessage, encodeTaskBody, taskPublishOptions } from '../../../src/queue/protocol/task-message.js';
import { defineTask } from '../../../src/worker/task-definition.js';
import { receiveMessage } from '../../../src/worker/strategy.js';

const noop = defineTask({ name: 'tasks.noop', run: () => null });
const lookup = (name: string) => (name === noop.name ? noop : undefined);

function consumed(taskName: string): ConsumeMessage {
  const m = buildTaskMessage({ taskName });
  const options = taskPublishOptions(m);
  return {
    content: encodeTaskBody(m),
    properties: { ...options, headers: options.headers },
    fields: { deliveryTag: 1, redelivered: false, exchange: '', routingKey: 'celery', consumerTag: 'c' },
  } as unknown as ConsumeMessage;
}

describe('receiveMessage', () => {
  it('turns a task message of a registered task into a request to run', () => {
    const received = receiveMessage(consumed('tasks.noop'), lookup);
    expect(received.kind).toBe('task');
    if (received.kind === 'task') expect(received.definition).toBe(noop);
  });

  it('names an unregistered task', () => {
    const received = receiveMessage(consumed('tasks.unknown'), lookup);
    expect(received.kind).toBe('unregistered');
    if (received.kind === 'unregistered') expect(received.task.taskName).toBe('tasks.unknown');
  });

  it('refuses a message that is not a protocol-2 task message', () => {
    const message = { content: Buffer.from('{}'), properties: { headers: {} }, fields: { deliveryTag: 1 } } as unknown as ConsumeMessage;
    const received = receiveMessage(message, lookup);
    expect(received).toMatchObject({ kind: 'invalid', reason: 'not-protocol-2' });
  });
});
