/**
 * Sends Celery events on `celeryev`: worker events always (online, heartbeat, offline), task
 * events only while enabled (`-E` / WORKER_SEND_TASK_EVENTS, or the enable_events command).
 * Events are best effort, like Celery's: a missing channel or a failed publish drops the event.
 */
import type { ConfirmChannel } from 'amqplib';
import type { JsonObject } from '../queue/protocol/json.js';
import { EVENT_EXCHANGE } from '../queue/protocol/entities.js';
import {
  buildEvent,
  eventPublishOptions,
  eventRoutingKey,
  workerEventFields,
  type TaskEventType,
  type WorkerEventType,
  type WorkerStatus,
} from '../queue/protocol/events.js';

export class EventDispatcher {
  private channel: ConfirmChannel | null = null;
  taskEventsEnabled: boolean;

  constructor(
    private readonly hostname: string,
    private readonly nextClock: () => number,
    options: { taskEvents?: boolean } = {},
  ) {
    this.taskEventsEnabled = options.taskEvents ?? false;
  }

  /**
   * The channel to publish on (the caller declared `celeryev`); null while disconnected. A
   * confirm channel, so flush() can tell when the broker has the last events: amqplib writes
   * connection-level frames ahead of buffered messages, and a close right after a publish
   * would otherwise lose it (the worker-offline event, typically).
   */
  attach(channel: ConfirmChannel | null): void {
    this.channel = channel;
  }

  /** Waits (bounded) until the broker has confirmed every event sent so far. */
  async flush(timeoutMs = 2_000): Promise<void> {
    const channel = this.channel;
    if (channel === null) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      channel.waitForConfirms().catch(() => undefined),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ]);
    clearTimeout(timer);
  }

  sendWorkerEvent(type: WorkerEventType, status: WorkerStatus): boolean {
    return this.publish(type, workerEventFields(status));
  }

  sendTaskEvent(type: TaskEventType, fields: JsonObject): boolean {
    return this.taskEventsEnabled ? this.publish(type, fields) : false;
  }

  private publish(type: WorkerEventType | TaskEventType, fields: JsonObject): boolean {
    const channel = this.channel;
    if (channel === null) return false;
    const event = buildEvent(type, fields, { hostname: this.hostname, clock: this.nextClock() });
    try {
      channel.publish(
        EVENT_EXCHANGE,
        eventRoutingKey(type),
        Buffer.from(JSON.stringify(event), 'utf8'),
        eventPublishOptions(this.hostname),
      );
      return true;
    } catch {
      return false;
    }
  }
}
