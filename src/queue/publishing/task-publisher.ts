/**
 * Publishes Celery task messages and resolves only after the broker's publisher confirm
 * (at-least-once: the API answers 202 only for a message RabbitMQ has taken responsibility for).
 * Like Celery it publishes persistent messages to the default exchange with routing key = queue,
 * after declaring the queue the way Celery does (or only checking it, when told to).
 */
import { randomUUID } from 'node:crypto';
import type { Channel, ChannelModel, ConfirmChannel } from 'amqplib';
import type { ExactJsonObject, ExactJsonValue } from '../protocol/exact-numbers.js';
import { DEFAULT_QUEUE, declareTaskQueue } from '../protocol/entities.js';
import {
  buildTaskMessage,
  encodeTaskBody,
  taskPublishOptions,
  type HeaderValue,
  type TaskEmbed,
  type TaskMessage,
} from '../protocol/task-message.js';
import { QueueUnavailableError } from '../errors.js';
import { brokerUnavailable, type BrokerSession } from '../connection/broker-session.js';
import { closeChannel } from '../connection/bounded-close.js';
import { withDeadline } from '../../lib/deadline.js';

export type QueueDeclaration = 'assert' | 'passive' | 'none';

export interface TaskPublisherOptions {
  session: BrokerSession;
  /** `assert` declares like Celery (default); `passive` only checks the queue exists; `none` skips. */
  declareQueues?: QueueDeclaration;
  /** How long to wait for the broker's confirm before giving up (ms). */
  confirmTimeoutMs?: number;
}

export interface PublishTaskInput {
  taskName: string;
  taskId?: string;
  args?: ExactJsonValue[];
  kwargs?: ExactJsonObject;
  queue?: string;
  authenticatedUser?: string | null;
  /** Custom headers beside `authenticated_user` (they cannot replace protocol headers). */
  headers?: Record<string, HeaderValue>;
  /** Hard time limit in seconds, or both limits. */
  timeLimit?: number | { hard?: number | null; soft?: number | null };
  eta?: Date;
  expires?: Date;
  ignoreResult?: boolean;
  /** Protocol fields a worker sets when it sends retries and canvas steps; absent for new tasks. */
  retries?: number;
  rootId?: string | null;
  parentId?: string | null;
  groupId?: string | null;
  groupIndex?: number | null;
  shadow?: string | null;
  priority?: number;
  embed?: TaskEmbed;
}

export interface PublishedTask {
  taskId: string;
  queue: string;
  message: TaskMessage;
}

/**
 * A confirm channel with what this publisher knows about it: the queues it has checked (or is
 * checking), the messages the broker returned as unroutable (by correlation id) whose confirm is
 * still due, and whether its connection's write buffer is full.
 *
 * Any number of messages are in flight on it at once, each settled by its own confirm: the
 * broker confirms them in batches (`multiple`), so N concurrent submissions cost about one
 * confirm round trip, not N.
 */
interface PublisherChannel {
  connection: ChannelModel;
  channel: Promise<ConfirmChannel>;
  /** One check per queue, shared by every publish that needs it meanwhile. */
  declared: Map<string, Promise<void>>;
  returned: Set<string>;
  /** Set while `publish` has said the buffer is full; resolves on 'drain' (or when the channel closes). */
  full: Promise<void> | null;
}

/**
 * A plain channel for queue declarations and checks. A failed check (404) or declaration (406)
 * closes the channel it was made on; made on the confirm channel it would fail every other
 * publish in flight there, with an outcome nobody can know.
 */
interface DeclarationChannel {
  connection: ChannelModel;
  channel: Promise<Channel>;
}

/**
 * Failures after the message was handed to the broker (no confirm in time, a nack, the channel
 * closing before the confirm): the broker may or may not have queued it. Every other failure of
 * `publish` means the message was certainly not queued.
 */
const outcomeUnknown = new WeakSet<object>();

export function mayHaveBeenPublished(error: unknown): boolean {
  return typeof error === 'object' && error !== null && outcomeUnknown.has(error);
}

function unknownOutcome<E extends object>(error: E): E {
  outcomeUnknown.add(error);
  return error;
}

/**
 * A channel being opened, which calls `forget` when it closes or fails to open, so that its holder
 * drops it and the next use opens a new one. Its errors are left to that close: a channel error
 * always closes the channel, and an unhandled 'error' event would end the process.
 */
function forgottenWhenGone<C extends Channel>(
  opening: Promise<C>,
  forget: () => void,
  setUp: (channel: C) => void = () => undefined,
): Promise<C> {
  const channel = opening.then((opened) => {
    opened.on('error', () => undefined);
    setUp(opened);
    opened.once('close', forget);
    return opened;
  });
  channel.catch(forget);
  return channel;
}

/** How much longer than its parts the preparation of a publish may take in all (see publish). */
const PREPARE_GRACE_MS = 1_000;

/** The broker did not get ready to take a message in time (nothing was handed over). */
function notReadyInTime(): QueueUnavailableError {
  return new QueueUnavailableError('broker_timeout', 'The task broker did not answer in time; the task was not submitted.');
}

/**
 * A channel being opened, given up (and forgotten, see forgottenWhenGone) when the broker has not
 * opened it within `ms`; one that opens after all is closed at once, since nobody holds it.
 */
function openedInTime<C extends Channel>(ms: number, open: () => Promise<C>): Promise<C> {
  return withDeadline(ms, notReadyInTime, async (signal) => {
    const channel = await open();
    if (signal.aborted) void closeChannel(channel);
    return channel;
  });
}

export class TaskPublisher {
  private readonly session: BrokerSession;
  private readonly declareQueues: QueueDeclaration;
  private readonly confirmTimeoutMs: number;
  /** Python's per-client "oid", carried in `reply_to`. */
  private readonly oid = randomUUID();
  private channel: PublisherChannel | null = null;
  private declarations: DeclarationChannel | null = null;

  constructor(options: TaskPublisherOptions) {
    this.session = options.session;
    this.declareQueues = options.declareQueues ?? 'assert';
    this.confirmTimeoutMs = options.confirmTimeoutMs ?? 10_000;
  }

  async publish(input: PublishTaskInput): Promise<PublishedTask> {
    const queue = input.queue ?? DEFAULT_QUEUE;
    const timeLimit = typeof input.timeLimit === 'number' ? { hard: input.timeLimit } : input.timeLimit;
    const message = buildTaskMessage({
      taskName: input.taskName,
      taskId: input.taskId,
      args: input.args,
      kwargs: input.kwargs,
      authenticatedUser: input.authenticatedUser ?? null,
      extraHeaders: input.headers,
      timeLimit,
      eta: input.eta,
      expires: input.expires,
      ignoreResult: input.ignoreResult,
      retries: input.retries,
      rootId: input.rootId,
      parentId: input.parentId,
      groupId: input.groupId,
      groupIndex: input.groupIndex,
      shadow: input.shadow,
      priority: input.priority,
      embed: input.embed,
      replyTo: this.oid,
    });

    const slot = this.channelSlot();
    // Nothing has been handed to the broker until the publish itself: a broker that does not get
    // the channel, the queue check or the write buffer ready in time has certainly not queued it.
    // The channel and the check have deadlines of their own, which drop them for later publishes
    // (see openedInTime, declared); this one, a little longer, bounds the three steps together.
    const prepareMs = this.confirmTimeoutMs + Math.min(PREPARE_GRACE_MS, this.confirmTimeoutMs);
    const channel = await withDeadline(prepareMs, notReadyInTime, async () => {
      const ready = await slot.channel.catch((error: unknown) => {
        throw error instanceof QueueUnavailableError ? error : brokerUnavailable();
      });
      if (this.declareQueues !== 'none') await this.declared(slot, queue);
      while (slot.full !== null) await slot.full;
      return ready;
    });
    await this.confirmedPublish(slot, channel, queue, message);
    return { taskId: message.headers.id, queue, message };
  }

  async close(): Promise<void> {
    const slot = this.channel;
    const declarations = this.declarations;
    this.channel = null;
    this.declarations = null;
    for (const held of [slot, declarations]) {
      const channel = await held?.channel.catch(() => null);
      if (channel) await closeChannel(channel);
    }
  }

  /** Resolves once `queue` is known to exist (declared or checked) on this channel's connection. */
  private declared(slot: PublisherChannel, queue: string): Promise<void> {
    let known = slot.declared.get(queue);
    if (known === undefined) {
      // Within the deadline, so a check the broker never answers is dropped like a failed one
      // instead of holding every later publish to the queue.
      known = withDeadline(this.confirmTimeoutMs, notReadyInTime, () => this.declare(slot.connection, queue)).catch((error: unknown) => {
        slot.declared.delete(queue);
        throw error instanceof QueueUnavailableError
          ? error
          : new QueueUnavailableError('queue_unavailable', `Queue "${queue}" could not be declared: ${(error as Error).message}`);
      });
      slot.declared.set(queue, known);
    }
    return known;
  }

  private async declare(connection: ChannelModel, queue: string): Promise<void> {
    if (this.declarations?.connection !== connection) {
      const declarations: DeclarationChannel = {
        connection,
        channel: forgottenWhenGone(
          openedInTime(this.confirmTimeoutMs, () => connection.createChannel()),
          () => {
            if (this.declarations === declarations) this.declarations = null;
          },
        ),
      };
      this.declarations = declarations;
    }
    const channel = await this.declarations.channel.catch(() => {
      throw brokerUnavailable();
    });
    await declareTaskQueue(channel, queue, this.declareQueues === 'passive');
  }

  /** The confirm channel of the current connection, (re)opened when the connection changed or it closed. */
  private channelSlot(): PublisherChannel {
    const connection = this.session.require();
    if (this.channel && this.channel.connection === connection) return this.channel;
    const slot: PublisherChannel = {
      connection,
      declared: new Map<string, Promise<void>>(),
      returned: new Set<string>(),
      full: null,
      // A broker that closes the channel fails its unconfirmed publishes; the next publish opens a
      // new one. So does one that does not open it in time: a channel the broker never opens must
      // not stay the one every publish waits for.
      channel: forgottenWhenGone(
        openedInTime(this.confirmTimeoutMs, () => connection.createConfirmChannel()),
        () => {
          if (this.channel === slot) this.channel = null;
        },
        (channel) => {
          // The broker returns a mandatory message no queue took before it confirms it.
          channel.on('return', (returned: { properties: { correlationId?: string } }) => {
            if (returned.properties.correlationId !== undefined) slot.returned.add(returned.properties.correlationId);
          });
        },
      ),
    };
    this.channel = slot;
    return slot;
  }

  /**
   * Resolves once the broker has the message on a queue. Mandatory, because a message published
   * to a queue that no longer exists is otherwise confirmed and silently dropped: the caller
   * would be told the task was accepted while nothing will ever run it.
   */
  private confirmedPublish(slot: PublisherChannel, channel: ConfirmChannel, queue: string, message: TaskMessage): Promise<void> {
    const id = message.properties.correlationId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(unknownOutcome(new QueueUnavailableError('broker_timeout', 'The task broker did not confirm the message in time.'))),
        this.confirmTimeoutMs,
      );
      try {
        // Default exchange, routing key = queue: what Celery does for direct-exchange routes.
        const writable = channel.publish(
          '',
          queue,
          encodeTaskBody(message),
          { ...taskPublishOptions(message), mandatory: true },
          (error: unknown) => {
            clearTimeout(timer);
            if (error) {
              reject(unknownOutcome(brokerUnavailable()));
            } else if (slot.returned.delete(id)) {
              slot.declared.delete(queue);
              reject(new QueueUnavailableError('queue_unavailable', `Queue "${queue}" no longer exists; no worker consumes it now.`));
            } else {
              resolve();
            }
          },
        );
        // The message is buffered either way; later ones wait until the socket takes more.
        if (!writable) this.waitForDrain(slot, channel);
      } catch {
        clearTimeout(timer);
        reject(brokerUnavailable());
      }
    });
  }

  private waitForDrain(slot: PublisherChannel, channel: ConfirmChannel): void {
    if (slot.full !== null) return;
    slot.full = new Promise<void>((resolve) => {
      const done = (): void => {
        channel.off('drain', done);
        channel.off('close', done);
        slot.full = null;
        resolve();
      };
      channel.on('drain', done);
      channel.on('close', done);
    });
  }
}
