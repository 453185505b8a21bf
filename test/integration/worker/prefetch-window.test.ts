/**
 * The task channel's prefetch window on the real broker: a message whose task is done but whose
 * result is still being written makes room for one more delivery (RabbitMQ applies the grown
 * channel-wide limit to the running consumer), and the room goes a moment after it is settled. On a quorum
 * queue, which refuses a channel-wide limit, the window stays the fixed per-consumer one and the
 * consumer keeps working.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChannelModel, ConsumeMessage } from 'amqplib';
import { connectBroker } from '../../../src/queue/connection/broker-connection.js';
import type { TaskQueueType } from '../../../src/config/connections.js';
import { declareTaskQueue } from '../../../src/queue/protocol/entities.js';
import { startConsuming, type TaskConsumer } from '../../../src/worker/consumer/consumer.js';
import { ROOM_LINGER_MS } from '../../../src/worker/consumer/prefetch-window.js';
import { until } from '../../support/until.js';
import { brokerSettings, deleteQueues, unique } from './support.js';

let broker: ChannelModel;
const queues: string[] = [];
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  broker = await connectBroker(brokerSettings());
});

afterAll(async () => {
  await broker?.close().catch(() => undefined);
  await deleteQueues(brokerSettings(), queues);
});

/** A queue holding `count` messages, consumed with a window of one message. */
async function consumeOneAtATime(queueType: TaskQueueType, count: number): Promise<{ consumer: TaskConsumer; received: ConsumeMessage[] }> {
  const queue = unique(`window-${queueType}`);
  queues.push(queue);
  const publishing = await broker.createConfirmChannel();
  await declareTaskQueue(publishing, queue, false, queueType);
  for (let i = 0; i < count; i++) publishing.sendToQueue(queue, Buffer.from(String(i)));
  await publishing.waitForConfirms();
  await publishing.close();
  const received: ConsumeMessage[] = [];
  const consumer = await startConsuming(await broker.createChannel(), {
    queues: [queue],
    prefetchCount: 1,
    queueType,
    onMessage: (message) => void received.push(message),
  });
  await until(() => received.length === 1, 5_000, 'the first delivery');
  return { consumer, received };
}

describe('prefetch window', () => {
  it('lets one more message in for each task waiting on its result write, and no more once its room is given back', async () => {
    const { consumer, received } = await consumeOneAtATime('classic', 4);
    await pause(300);
    expect(received).toHaveLength(1);

    // The first task's body is done; its result is being written, its message still unacknowledged.
    consumer.window.takeRoom();
    await until(() => received.length === 2, 5_000, 'a second delivery into the room of the first');
    await pause(300);
    expect(received).toHaveLength(2);

    // Settled: its room lingers a moment, for the next task to finish (here a third message comes in)…
    consumer.acks.settle(received[0]!, 'ack');
    consumer.window.giveRoomBack();
    await until(() => received.length === 3, 5_000, 'a third delivery into the lingering room');
    // …then goes: the window is one message again, taken by the third while the second is unsettled.
    await pause(ROOM_LINGER_MS + 300);
    consumer.acks.settle(received[1]!, 'ack');
    await pause(300);
    expect(received).toHaveLength(3);
    consumer.acks.settle(received[2]!, 'ack');
    await until(() => received.length === 4, 5_000, 'a fourth delivery once the window was free');
    await consumer.channel.close();
  });

  it('keeps a fixed per-consumer window on a quorum queue', async () => {
    const { consumer, received } = await consumeOneAtATime('quorum', 3);
    consumer.window.takeRoom();
    await pause(300);
    expect(received).toHaveLength(1);
    consumer.acks.settle(received[0]!, 'ack');
    consumer.window.giveRoomBack();
    await until(() => received.length === 2, 5_000, 'the second delivery after the first was acknowledged');
    await consumer.channel.close();
  });
});
