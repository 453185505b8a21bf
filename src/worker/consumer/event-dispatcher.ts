/**
 * Sends Celery events on `celeryev`: worker events always (online, heartbeat, offline), task
 * events only while enabled (`-E` / WORKER_SEND_TASK_EVENTS, or the enable_events command).
 * Events are best effort, like Celery's: a missing channel or a failed publish drops the event.
 *
 * Task events are sent in groups, as Celery's own worker does: they are buffered for a moment
 * and go out as one `task.multi` message holding the array (a lone event goes out as itself,
 * under its own routing key). A busy worker sends three or four events per task; one message
 * for many of them costs the worker, the broker and every monitor far less than one each.
 * Celery's receivers (Flower, `celery events`) and this service's accept both forms.
 */
import type { ConfirmChannel } from 'amqplib';
import type { JsonObject } from '../../queue/protocol/json.js';
import { EVENT_EXCHANGE } from '../../queue/protocol/entities.js';
import {
  buildEvent,
  eventPublishOptions,
  eventRoutingKey,
  workerEventFields,
  type TaskEventType,
  type WorkerEventType,
  type WorkerStatus,
} from '../../queue/protocol/events.js';

/** Task events sent together at most; more go out at once without waiting for the timer. */
export const TASK_EVENT_BATCH_LIMIT = 100;
/** How long the first buffered task event waits for others. */
export const TASK_EVENT_BATCH_MS = 50;
const MULTI_ROUTING_KEY = 'task.multi';

export class EventDispatcher {
  private channel: ConfirmChannel | null = null;
  private buffered: Array<{ type: TaskEventType; event: JsonObject }> = [];
  private flushTimer: NodeJS.Timeout | null = null;
  /** The same for every event of this worker, so built once (amqplib does not change it). */
  private readonly publishOptions: ReturnType<typeof eventPublishOptions>;
  taskEventsEnabled: boolean;

  constructor(
    private readonly hostname: string,
    private readonly nextClock: () => number,
    options: { taskEvents?: boolean } = {},
  ) {
    this.taskEventsEnabled = options.taskEvents ?? false;
    this.publishOptions = eventPublishOptions(hostname);
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

  /** Sends the buffered task events, then waits (bounded) until the broker has confirmed every event sent so far. */
  async flush(timeoutMs = 2_000): Promise<void> {
    this.sendBuffered();
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
    return this.publish(eventRoutingKey(type), this.event(type, workerEventFields(status)));
  }

  /** Buffers a task event (see above); false when task events are off or there is no channel. */
  sendTaskEvent(type: TaskEventType, fields: JsonObject): boolean {
    if (!this.taskEventsEnabled || this.channel === null) return false;
    this.buffered.push({ type, event: this.event(type, fields) });
    if (this.buffered.length >= TASK_EVENT_BATCH_LIMIT) this.sendBuffered();
    else if (this.flushTimer === null) {
      this.flushTimer = setTimeout(() => this.sendBuffered(), TASK_EVENT_BATCH_MS);
      this.flushTimer.unref();
    }
    return true;
  }

  private sendBuffered(): void {
    if (this.flushTimer !== null) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const batch = this.buffered;
    this.buffered = [];
    const [first] = batch;
    if (first === undefined) return;
    if (batch.length === 1) this.publish(eventRoutingKey(first.type), first.event);
    else
      this.publish(
        MULTI_ROUTING_KEY,
        batch.map((b) => b.event),
      );
  }

  /** Built when it happens, so its clock and timestamp are those of the moment, not of the send. */
  private event(type: WorkerEventType | TaskEventType, fields: JsonObject): JsonObject {
    return buildEvent(type, fields, { hostname: this.hostname, clock: this.nextClock() });
  }

  private publish(routingKey: string, body: JsonObject | JsonObject[]): boolean {
    const channel = this.channel;
    if (channel === null) return false;
    try {
      channel.publish(EVENT_EXCHANGE, routingKey, Buffer.from(JSON.stringify(body), 'utf8'), this.publishOptions);
      return true;
    } catch {
      return false;
    }
  }
}
