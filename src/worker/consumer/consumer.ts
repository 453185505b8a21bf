/**
 * The worker's consumer (Celery's consumer blueprint, the part that talks to the broker): on
 * every connection of the broker session it opens the event channel, the control mailbox's
 * channel and the task channel; it consumes every task queue of the worker on that one channel,
 * its prefetch window sized to the pool (and grown by the tasks waiting on their result write,
 * see prefetch-window.ts), and announces every delivery to the channel's acknowledgements before
 * the worker sees it (acknowledging several deliveries with one frame needs to know all of
 * them). A channel the broker closes ends the connection, so the session reconnects and
 * everything is attached afresh.
 */
import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import pTimeout from 'p-timeout';
import type { Logger } from 'pino';
import type { TaskQueueType } from '../../config/connections.js';
import { BROKER_CLOSE_TIMEOUT_MS } from '../../queue/connection/bounded-close.js';
import { declareEventExchange, declareTaskQueue } from '../../queue/protocol/entities.js';
import { ChannelAcknowledgements } from './acknowledgements.js';
import { PrefetchWindow } from './prefetch-window.js';
import type { Delivery } from '../request/task-request.js';
import type { WorkerSettings } from '../worker-options.js';

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

export interface ConsumerOptions {
  queues: readonly string[];
  /** `prefetchCount`: the task channel's prefetch window with no result write pending. */
  settings: Pick<WorkerSettings, 'prefetchCount'>;
  queueType: TaskQueueType | undefined;
  /** The session's current connection: a channel closing on another one needs no reconnect. */
  currentConnection: () => ChannelModel | null;
  events: { attach(channel: ConfirmChannel | null): void };
  mailbox: { attach(channel: Channel): Promise<void> };
  /** True once the worker is closing: channels closing then are expected. */
  stopping: () => boolean;
  onDelivery: (delivery: Delivery) => void;
  logger: Logger;
}

export class Consumer {
  private tasks: TaskConsumer | null = null;

  constructor(private readonly options: ConsumerOptions) {}

  /** (Re)creates the channels on a fresh connection; false when they could not be set up (the connection is closed, to start over). */
  async attach(connection: ChannelModel): Promise<boolean> {
    const { events, mailbox, logger } = this.options;
    try {
      const eventChannel = await this.openChannel(connection, true);
      await declareEventExchange(eventChannel);
      events.attach(eventChannel);

      await mailbox.attach(await this.openChannel(connection));

      this.tasks = await startConsuming(await this.openChannel(connection), {
        queues: this.options.queues,
        prefetchCount: this.options.settings.prefetchCount,
        queueType: this.options.queueType,
        onMessage: (message, acks, window) => this.options.onDelivery({ message, acks, window }),
      });
      return true;
    } catch (error) {
      // Typically a declaration clash (406). Start over on a new connection after a pause.
      logger.error({ err: error }, 'could not set up consumers; reconnecting');
      await connection.close().catch(() => undefined);
      return false;
    }
  }

  /** The connection is lost: its channels, and the unacknowledged messages with them, are gone. */
  detach(): void {
    this.options.events.attach(null);
    this.tasks?.acks.close();
    this.tasks?.window.close();
    this.tasks = null;
  }

  /**
   * No new deliveries. Bounded: a broker that stopped answering would hold the reply (and the
   * stop) until the heartbeat gave up; messages that still arrive go back to the queue with the
   * connection.
   */
  async cancel(): Promise<void> {
    const tasks = this.tasks;
    if (tasks === null) return;
    const cancels = Promise.all(tasks.consumerTags.map((tag) => tasks.channel.cancel(tag))).catch(() => undefined);
    await pTimeout(cancels, { milliseconds: BROKER_CLOSE_TIMEOUT_MS }).catch(() => undefined);
  }

  /** Sends the acknowledgements waiting for the end of this turn of the event loop (before disconnecting). */
  flush(): void {
    this.tasks?.acks.flush();
  }

  private async openChannel(connection: ChannelModel, confirm: true): Promise<ConfirmChannel>;
  private async openChannel(connection: ChannelModel): Promise<Channel>;
  private async openChannel(connection: ChannelModel, confirm = false): Promise<Channel> {
    const { logger } = this.options;
    const channel = confirm ? await connection.createConfirmChannel() : await connection.createChannel();
    channel.on('error', (error: Error) => logger.warn({ err: error.message }, 'broker channel error'));
    channel.once('close', () => {
      // A channel closed by the broker while the connection lives: rebuild everything cleanly.
      if (this.options.currentConnection() === connection && !this.options.stopping()) {
        logger.warn('broker closed a channel; reconnecting');
        void connection.close().catch(() => undefined);
      }
    });
    return channel;
  }
}
