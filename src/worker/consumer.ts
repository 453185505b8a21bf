/**
 * The task consumer (Celery's consumer blueprint, the part that talks to the broker): one channel
 * for every task queue of the worker, its prefetch window sized to the pool (and grown by the
 * tasks waiting on their result write, see prefetch-window.ts), and every delivery announced to
 * the channel's acknowledgements before the worker sees it (acknowledging several deliveries with
 * one frame needs to know all of them).
 */
import type { Channel, ConsumeMessage } from 'amqplib';
import type { TaskQueueType } from '../config/connections.js';
import { declareTaskQueue } from '../queue/protocol/entities.js';
import { ChannelAcknowledgements } from './acknowledgements.js';
import { PrefetchWindow } from './prefetch-window.js';

export interface TaskConsumer {
  channel: Channel;
  acks: ChannelAcknowledgements;
  window: PrefetchWindow;
  consumerTags: string[];
}

export interface ConsumeOptions {
  queues: readonly string[];
  /**
   * Unacknowledged messages of the channel while no result write is pending (per queue consumer
   * on quorum queues, which allow no channel-wide limit); 0 = unlimited.
   */
  prefetchCount: number;
  queueType: TaskQueueType | undefined;
  onMessage: (message: ConsumeMessage, acks: ChannelAcknowledgements, window: PrefetchWindow) => void;
}

export async function startConsuming(channel: Channel, options: ConsumeOptions): Promise<TaskConsumer> {
  const window = await PrefetchWindow.open(channel, options.prefetchCount, options.queueType !== 'quorum');
  const acks = new ChannelAcknowledgements(channel);
  const consumerTags: string[] = [];
  for (const queue of options.queues) {
    await declareTaskQueue(channel, queue, false, options.queueType);
    const { consumerTag } = await channel.consume(
      queue,
      (message) => {
        // null: consumer cancelled by the broker (queue deleted); the reconnect handles it.
        if (message === null) return;
        acks.delivered(message);
        options.onMessage(message, acks, window);
      },
      { noAck: false },
    );
    consumerTags.push(consumerTag);
  }
  return { channel, acks, window, consumerTags };
}
