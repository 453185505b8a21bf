/**
 * One task message the worker took on (Celery's Request): the parsed task, its definition, the
 * delivery it came in, and the copies of it the broker redelivered while it ran (after a
 * reconnect). Settling it settles all of them, once: whatever path ends the request (stored,
 * refused, handed back at shutdown), the first settlement wins and later ones do nothing, so no
 * message is ever acknowledged twice or both acknowledged and returned.
 */
import type { ConsumeMessage } from 'amqplib';
import type { IncomingTask } from '../../queue/protocol/task-message-parser.js';
import type { RequestMeta } from '../../queue/results/result-document.js';
import type { TaskState } from '../../queue/results/states.js';
import type { ChannelAcknowledgements, Settlement } from '../consumer/acknowledgements.js';
import type { PrefetchWindow } from '../consumer/prefetch-window.js';
import type { TaskDefinition } from '../task-definition.js';

/** A message as it arrived, with the acknowledgements and the prefetch window of the channel it arrived on. */
export interface Delivery {
  message: ConsumeMessage;
  acks: ChannelAcknowledgements;
  window?: PrefetchWindow;
}

export class TaskRequest {
  private readonly duplicates: Delivery[] = [];
  private settledAs: Settlement | null = null;
  private recording = false;
  private held = false;
  /**
   * The task's final state as read when the message arrived (null: none), for a first delivery
   * the worker checks ahead of its slot; undefined when nobody asked yet.
   */
  finalStateRead: Promise<TaskState | null> | undefined;

  constructor(
    readonly delivery: Delivery,
    readonly task: IncomingTask,
    readonly definition: TaskDefinition,
  ) {}

  get taskId(): string {
    return this.task.taskId;
  }

  get message(): ConsumeMessage {
    return this.delivery.message;
  }

  /** The broker's first delivery of this message: no worker received it before (AMQP's `redelivered` is false). */
  get firstDelivery(): boolean {
    return !this.delivery.message.fields.redelivered;
  }

  /** How the request was settled, or null while it is open. */
  get settlement(): Settlement | null {
    return this.settledAs;
  }

  /** A redelivered copy of this request's message: settled together with it. */
  addDuplicate(duplicate: Delivery): void {
    if (this.settledAs !== null) duplicate.acks.settle(duplicate.message, this.settledAs);
    else this.duplicates.push(duplicate);
  }

  /** Whether `other` is this very message again (not a retry, which has the same id but a new count). */
  isCopyOf(other: IncomingTask): boolean {
    return other.taskId === this.task.taskId && other.retries === this.task.retries;
  }

  /**
   * The task's body is done and its outcome is being written: until the message is settled it
   * takes room beside the channel's prefetch window, not a place in it.
   */
  startRecording(): void {
    if (this.recording || this.settledAs !== null) return;
    this.recording = true;
    this.delivery.window?.takeRoom();
  }

  /** Gives the room back (settling does it too, before the acknowledgement goes out). */
  stopRecording(): void {
    if (!this.recording) return;
    this.recording = false;
    this.delivery.window?.giveRoomBack();
  }

  /** Held until its ETA: its message takes room beside the window until it is due (or settled). */
  holdForEta(): void {
    if (this.held || this.settledAs !== null) return;
    this.held = true;
    this.delivery.window?.takeRoom();
  }

  /** Due (or settled): it counts in the window's own places again. */
  releaseHold(): void {
    if (!this.held) return;
    this.held = false;
    this.delivery.window?.giveRoomBack();
  }

  /** Acknowledges the message and its copies (the outcome is stored); see `settle`. */
  ack(): boolean {
    return this.settle('ack');
  }

  /** Returns the message and its copies to their queue, to run again; see `settle`. */
  requeue(): boolean {
    return this.settle('requeue');
  }

  /** Drops the message and its copies (never to run); see `settle`. */
  reject(): boolean {
    return this.settle('reject');
  }

  /** Settles the message and its copies; only the first call does anything. Answers whether it was that one. */
  settle(how: Settlement): boolean {
    if (this.settledAs !== null) return false;
    this.stopRecording();
    this.releaseHold();
    this.settledAs = how;
    this.delivery.acks.settle(this.delivery.message, how);
    for (const duplicate of this.duplicates) duplicate.acks.settle(duplicate.message, how);
    this.duplicates.length = 0;
    return true;
  }
}

/** What a result document records of the request that produced it. */
export function requestMeta(task: IncomingTask, worker: string): RequestMeta {
  return {
    name: task.taskName,
    args: task.args,
    kwargs: task.kwargs,
    worker,
    retries: task.retries,
    queue: task.deliveryInfo.routingKey,
    parentId: task.parentId,
    groupId: task.groupId,
  };
}
