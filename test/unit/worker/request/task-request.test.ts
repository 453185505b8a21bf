/** A request settles its message and the redelivered copies of it exactly once. */
import type { ConsumeMessage } from 'amqplib';
import { describe, expect, it } from 'vitest';
import type { IncomingTask } from '../../../../src/queue/protocol/task-message-parser.js';
import type { ChannelAcknowledgements, Settlement } from '../../../../src/worker/consumer/acknowledgements.js';
import type { PrefetchWindow } from '../../../../src/worker/consumer/prefetch-window.js';
import { defineTask } from '../../../../src/worker/task-definition.js';
import { TaskRequest, type Delivery } from '../../../../src/worker/request/task-request.js';

function recordingAcks(log: string[], name: string): ChannelAcknowledgements {
  return {
    settle: (message: ConsumeMessage, how: Settlement) => void log.push(`${name}:${message.fields.deliveryTag}:${how}`),
  } as unknown as ChannelAcknowledgements;
}
const delivery = (log: string[], channel: string, tag: number): Delivery => ({
  message: { fields: { deliveryTag: tag } } as ConsumeMessage,
  acks: recordingAcks(log, channel),
});
const task = (retries = 0): IncomingTask => ({ taskId: 'id-1', taskName: 'tasks.noop', retries }) as IncomingTask;
const noop = defineTask({ name: 'tasks.noop', run: () => null });

describe('TaskRequest', () => {
  it('settles the message and every duplicate once; later settlements do nothing', () => {
    const log: string[] = [];
    const request = new TaskRequest(delivery(log, 'a', 1), task(), noop);
    request.addDuplicate(delivery(log, 'b', 7));
    expect(request.settlement).toBeNull();
    expect(request.settle('ack')).toBe(true);
    expect(request.settle('requeue')).toBe(false);
    expect(log).toEqual(['a:1:ack', 'b:7:ack']);
    expect(request.settlement).toBe('ack');
  });

  it.each([
    ['ack', (r: TaskRequest) => r.ack()],
    ['requeue', (r: TaskRequest) => r.requeue()],
    ['reject', (r: TaskRequest) => r.reject()],
  ] as const)('%s settles once; a second ack, requeue or reject does nothing', (how, settle) => {
    const log: string[] = [];
    const request = new TaskRequest(delivery(log, 'a', 1), task(), noop);
    expect(settle(request)).toBe(true);
    expect(settle(request)).toBe(false);
    expect([request.ack(), request.requeue(), request.reject()]).toEqual([false, false, false]);
    expect(log).toEqual([`a:1:${how}`]);
    expect(request.settlement).toBe(how);
  });

  it('a duplicate arriving after the settlement is settled the same way at once', () => {
    const log: string[] = [];
    const request = new TaskRequest(delivery(log, 'a', 1), task(), noop);
    request.settle('requeue');
    request.addDuplicate(delivery(log, 'b', 2));
    expect(log).toEqual(['a:1:requeue', 'b:2:requeue']);
  });

  it('tells a copy of its message from a retry of its task', () => {
    const request = new TaskRequest(delivery([], 'a', 1), task(0), noop);
    expect(request.isCopyOf(task(0))).toBe(true);
    expect(request.isCopyOf(task(1))).toBe(false);
  });

  it('takes room beside the prefetch window while its outcome is written, and gives it back before it is acknowledged', () => {
    const log: string[] = [];
    const window = {
      takeRoom: () => void log.push('room taken'),
      giveRoomBack: () => void log.push('room given back'),
    } as unknown as PrefetchWindow;
    const request = new TaskRequest({ ...delivery(log, 'a', 1), window }, task(), noop);
    request.startRecording();
    request.startRecording();
    request.settle('ack');
    request.stopRecording();
    request.startRecording();
    expect(log).toEqual(['room taken', 'room given back', 'a:1:ack']);
  });

  it('takes room beside the prefetch window while held for its ETA, once, until it is due or settled', () => {
    const log: string[] = [];
    const window = {
      takeRoom: () => void log.push('room taken'),
      giveRoomBack: () => void log.push('room given back'),
    } as unknown as PrefetchWindow;
    const due = new TaskRequest({ ...delivery(log, 'a', 1), window }, task(), noop);
    due.holdForEta();
    due.holdForEta(); // held again after a timer's wake-up: still one room
    due.releaseHold();
    due.releaseHold();
    due.settle('ack');
    const requeued = new TaskRequest({ ...delivery(log, 'b', 2), window }, task(), noop);
    requeued.holdForEta();
    requeued.settle('requeue');
    requeued.holdForEta();
    expect(log).toEqual(['room taken', 'room given back', 'a:1:ack', 'room taken', 'room given back', 'b:2:requeue']);
  });
});
