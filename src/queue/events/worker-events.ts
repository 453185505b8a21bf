/**
 * The workers' Celery events, heard once per API process and handed to every part that wants
 * them (the metrics, the admin's Operations page): one queue of its own (exclusive, auto-deleted,
 * short message TTL, as Celery's event receivers declare theirs) bound to `celeryev` for
 * `task.#` and `worker.#`, consumed without acks, each message parsed once however many parts
 * listen. The queue exists while someone listens, and is declared again after every broker
 * reconnect.
 *
 * Workers send task events only when asked (`celery worker -E`, WORKER_SEND_TASK_EVENTS, or the
 * `enable_events` remote-control command). Like Flower, this sends `enable_events` to every
 * worker that comes online, so what the listeners see does not depend on how a worker was started.
 */
import { randomUUID } from 'node:crypto';
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import type { Logger } from '../../log/logger.js';
import type { BrokerSession } from '../connection/broker-session.js';
import { closeChannel } from '../connection/bounded-close.js';
import type { ControlClient } from '../remote-control/control-client.js';
import { EVENT_EXCHANGE, declareEventReceiverQueue } from '../protocol/entities.js';

export interface CeleryEvent {
  type: string;
  hostname?: unknown;
  [key: string]: unknown;
}

/** Gets each event; true when it tells of a worker this listener did not know to be online. */
export type WorkerEventListener = (event: CeleryEvent) => boolean | void;

export interface WorkerEventsOptions {
  session: BrokerSession;
  control: ControlClient;
  logger: Logger;
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

export class WorkerEvents {
  private readonly listeners = new Set<WorkerEventListener>();
  private channel: Channel | null = null;
  /** Bumped whenever listening starts or stops, so a subscription that finishes late knows it is stale. */
  private generation = 0;
  private readonly onConnected = (connection: ChannelModel): void => {
    void this.subscribe(connection, this.generation);
  };

  constructor(private readonly options: WorkerEventsOptions) {}

  /** Hands every event to `listener` until the returned function is called. */
  listen(listener: WorkerEventListener): () => Promise<void> {
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.start();
    else this.enableEvents();
    return async () => {
      if (!this.listeners.delete(listener)) return;
      if (this.listeners.size === 0) await this.stop();
    };
  }

  /** Asks one worker (or all) to send task events; best effort. */
  private enableEvents(node?: string): void {
    this.options.control.cast('enable_events', {}, node === undefined ? {} : { destination: [node] }).catch(() => undefined);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    await this.stop();
  }

  private start(): void {
    const { session } = this.options;
    this.generation++;
    session.on('connected', this.onConnected);
    if (session.connection !== null) void this.subscribe(session.connection, this.generation);
  }

  private async stop(): Promise<void> {
    this.generation++;
    this.options.session.off('connected', this.onConnected);
    const channel = this.channel;
    this.channel = null;
    if (channel) await closeChannel(channel);
  }

  private async subscribe(connection: ChannelModel, generation: number): Promise<void> {
    try {
      const channel = await connection.createChannel();
      channel.on('error', () => undefined);
      if (generation !== this.generation) {
        await closeChannel(channel);
        return;
      }
      const previous = this.channel;
      this.channel = channel;
      if (previous) await closeChannel(previous);
      const queue = await declareEventReceiverQueue(channel, `events.${randomUUID()}`, 'task.#');
      await channel.bindQueue(queue, EVENT_EXCHANGE, 'worker.#');
      await channel.consume(queue, (message) => this.onMessage(message), { noAck: true });
      this.enableEvents();
    } catch (error) {
      // A subscription that stopped meanwhile fails by design (its channel was closed).
      if (generation === this.generation) this.options.logger.warn({ err: error }, 'could not subscribe to worker events');
    }
  }

  private onMessage(message: ConsumeMessage | null): void {
    if (message === null) return;
    for (const event of eventsOf(message.content)) {
      let newWorker = false;
      for (const listener of this.listeners) if (listener(event) === true) newWorker = true;
      if (newWorker && typeof event.hostname === 'string') this.enableEvents(event.hostname);
    }
  }
}
