/**
 * The task consumer (Celery's consumer blueprint, the part that talks to the broker): one channel
 * for every task queue of the worker, its prefetch sized to the pool, and every delivery announced
 * to the channel's acknowledgements before the worker sees it (acknowledging several deliveries
 * with one frame needs to know all of them).
 */
import type { Channel, ConsumeMessage } from 'amqplib';
import type { TaskQueueType } from '../config/connections.js';
import { declareTaskQueue } from '../queue/protocol/entities.js';
import { ChannelAcknowledgements } from './acknowledgements.js';

export interface TaskConsumer {
  channel: Channel;
  acks: ChannelAcknowledgements;
  consumerTags: string[];
}

export interface ConsumeOptions {
  queues: readonly string[];
  /** Unacknowledged messages per queue consumer; 0 = unlimited. */
  prefetchCount: number;
  queueType: TaskQueueType | undefined;
  onMessage: (message: ConsumeMessage, acks: ChannelAcknowledgements) => void;
}

export async function startConsuming(channel: Channel, options: ConsumeOptions): Promise<TaskConsumer> {
  const acks = new ChannelAcknowledgements(channel);
  // Per-consumer limit (global=false): works for classic and quorum queues alike.
  await channel.prefetch(options.prefetchCount, false);
  const consumerTags: string[] = [];
  for (const queue of options.queues) {
    await declareTaskQueue(channel, queue, false, options.queueType);
    const { consumerTag } = await channel.consume(
      queue,
      (message) => {
        // null: consumer cancelled by the broker (queue deleted); the reconnect handles it.
        if (message === null) return;
        acks.delivered(message);
        options.onMessage(message, acks);
      },
      { noAck: false },
    );
    consumerTags.push(consumerTag);
  }
  return { channel, acks, consumerTags };
}
