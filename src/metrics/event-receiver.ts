/**
 * Listens to the workers' Celery events for the metrics: a queue of its own (exclusive,
 * auto-deleted, short message TTL, as Celery's event receivers declare theirs) bound to
 * `celeryev` for `task.#` and `worker.#`, consumed without acks. Re-subscribes after every
 * broker reconnect.
 *
 * Workers send task events only when asked (`celery worker -E`, WORKER_SEND_TASK_EVENTS, or the
 * `enable_events` remote-control command). Like Flower, the receiver sends `enable_events` to
 * every worker that comes online, so outcome counts do not depend on how a worker was started.
 */
import { randomUUID } from 'node:crypto';
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import type { Logger } from '../log/logger.js';
import type { BrokerSession } from '../queue/control/broker-session.js';
import type { ControlClient } from '../queue/control/control-client.js';
import { EVENT_EXCHANGE, declareEventReceiverQueue } from '../queue/protocol/entities.js';

export interface CeleryEvent {
  type: string;
  hostname?: unknown;
  [key: string]: unknown;
}

export interface EventReceiverOptions {
  session: BrokerSession;
  control: ControlClient;
  logger: Logger;
  onEvent: (event: CeleryEvent) => boolean | void;
}

const isEvent = (value: unknown): value is CeleryEvent =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { type?: unknown }).type === 'string';

/** The events in one message: Celery sends one event, or an array of them (`task.multi`). */
export function eventsOf(body: Buffer): CeleryEvent[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return [];
  }
  return (Array.isArray(parsed) ? parsed : [parsed]).filter(isEvent);
}

export class EventReceiver {
  private channel: Channel | null = null;
  private closed = false;
  private readonly onConnected = (connection: ChannelModel): void => {
    void this.subscribe(connection);
  };

  constructor(private readonly options: EventReceiverOptions) {}

  start(): this {
    const { session } = this.options;
    session.on('connected', this.onConnected);
    if (session.connection !== null) void this.subscribe(session.connection);
    return this;
  }

  /** Asks one worker (or all) to send task events; best effort. */
  enableEvents(node?: string): void {
    this.options.control.cast('enable_events', {}, node === undefined ? {} : { destination: [node] }).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.options.session.off('connected', this.onConnected);
    const channel = this.channel;
    this.channel = null;
    await channel?.close().catch(() => undefined);
  }

  private async subscribe(connection: ChannelModel): Promise<void> {
    if (this.closed) return;
    try {
      const channel = await connection.createChannel();
      channel.on('error', () => undefined);
      this.channel = channel;
      const queue = await declareEventReceiverQueue(channel, `metrics.${randomUUID()}`, 'task.#');
      await channel.bindQueue(queue, EVENT_EXCHANGE, 'worker.#');
      await channel.consume(queue, (message) => this.onMessage(message), { noAck: true });
      this.enableEvents();
    } catch (error) {
      this.options.logger.warn({ err: error }, 'metrics: could not subscribe to worker events');
    }
  }

  private onMessage(message: ConsumeMessage | null): void {
    if (message === null) return;
    for (const event of eventsOf(message.content)) {
      const newWorker = this.options.onEvent(event);
      if (newWorker === true && typeof event.hostname === 'string') this.enableEvents(event.hostname);
    }
  }
}
