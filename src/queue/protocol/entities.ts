/**
 * Every exchange and queue Celery uses, declared with exactly kombu 5.2.4's parameters (type,
 * durability, auto-delete, arguments). RabbitMQ closes the channel (406 PRECONDITION_FAILED) when a declaration differs
 * from the existing entity, so these are the only declarations in the code base.
 *
 * amqplib defaults to durable exchanges and queues: every option is therefore spelled out.
 */
import type { Channel, Options } from 'amqplib';
import { fieldTable } from './amqp-table.js';
import type { TaskQueueType } from '../../config/connections.js';

/** `control_queue_ttl` (300 s) and `control_queue_expires` (10 s) in ms. */
export const CONTROL_QUEUE_MESSAGE_TTL_MS = 300_000;
export const CONTROL_QUEUE_EXPIRES_MS = 10_000;
/** `event_queue_ttl` (5 s) and `event_queue_expires` (60 s) in ms. */
export const EVENT_QUEUE_MESSAGE_TTL_MS = 5_000;
export const EVENT_QUEUE_EXPIRES_MS = 60_000;

export const DEFAULT_QUEUE = 'celery';
export const PIDBOX_EXCHANGE = 'celery.pidbox';
export const REPLY_EXCHANGE = 'reply.celery.pidbox';
export const EVENT_EXCHANGE = 'celeryev';

export const mailboxQueueName = (nodeName: string): string => `${nodeName}.celery.pidbox`;
export const replyQueueName = (oid: string): string => `${oid}.reply.celery.pidbox`;

/** Queue options of a task queue as Celery declares it (durable, no arguments). */
export const TASK_QUEUE_OPTIONS: Options.AssertQueue = { durable: true, autoDelete: false, exclusive: false };

/**
 * A task queue of the given type. `quorum` carries exactly what Celery >= 5.5 declares with
 * `task_default_queue_type = "quorum"` (`x-queue-type` and nothing else): any other argument,
 * e.g. `x-delivery-limit`, would make RabbitMQ refuse one side's declaration with 406
 * PRECONDITION_FAILED. Limits for quorum queues belong in a policy, which never clashes.
 */
export function taskQueueOptions(type: TaskQueueType = 'classic'): Options.AssertQueue {
  if (type === 'classic') return TASK_QUEUE_OPTIONS;
  return { ...TASK_QUEUE_OPTIONS, arguments: { 'x-queue-type': type } };
}
const TASK_EXCHANGE_OPTIONS: Options.AssertExchange = { durable: true, autoDelete: false, internal: false };

/**
 * Celery's declaration of a task queue: a direct exchange named like the queue, the durable
 * queue, and the binding. With `passive`, only checks that the queue exists (for brokers whose
 * queues carry arguments we don't know, e.g. `x-max-priority`).
 */
export async function declareTaskQueue(channel: Channel, queue: string, passive = false, type: TaskQueueType = 'classic'): Promise<void> {
  if (passive) {
    await channel.checkQueue(queue);
    return;
  }
  await channel.assertExchange(queue, 'direct', TASK_EXCHANGE_OPTIONS);
  await channel.assertQueue(queue, taskQueueOptions(type));
  await channel.bindQueue(queue, queue, queue);
}

/** `celery.pidbox`: fanout, not durable. */
export async function declarePidboxExchange(channel: Channel): Promise<void> {
  await channel.assertExchange(PIDBOX_EXCHANGE, 'fanout', { durable: false, autoDelete: false, internal: false });
}

/** `reply.celery.pidbox`: direct, not durable. */
export async function declareReplyExchange(channel: Channel): Promise<void> {
  await channel.assertExchange(REPLY_EXCHANGE, 'direct', { durable: false, autoDelete: false, internal: false });
}

/** `celeryev`: topic, durable. */
export async function declareEventExchange(channel: Channel): Promise<void> {
  await channel.assertExchange(EVENT_EXCHANGE, 'topic', { durable: true, autoDelete: false, internal: false });
}

/**
 * Options of a pidbox queue (a worker mailbox or a client reply box): kombu's arguments, but
 * `exclusive` (pitfall 14: RabbitMQ 4.3 refuses transient non-exclusive queues; exclusive is
 * legal everywhere and these queues belong to one connection anyway).
 */
export const PIDBOX_QUEUE_OPTIONS: Options.AssertQueue = {
  durable: false,
  autoDelete: true,
  exclusive: true,
  // Typed like kombu's own declaration ('I'), not amqplib's narrowest guess.
  arguments: fieldTable({ 'x-expires': CONTROL_QUEUE_EXPIRES_MS, 'x-message-ttl': CONTROL_QUEUE_MESSAGE_TTL_MS }),
};

/** A worker's mailbox `<nodename>.celery.pidbox`, bound to the fanout exchange. */
export async function declareWorkerMailbox(channel: Channel, nodeName: string): Promise<string> {
  await declarePidboxExchange(channel);
  const queue = mailboxQueueName(nodeName);
  await channel.assertQueue(queue, PIDBOX_QUEUE_OPTIONS);
  await channel.bindQueue(queue, PIDBOX_EXCHANGE, '');
  return queue;
}

/** A control client's reply box `<oid>.reply.celery.pidbox`, bound with routing key `<oid>`. */
export async function declareReplyQueue(channel: Channel, oid: string): Promise<string> {
  await declareReplyExchange(channel);
  const queue = replyQueueName(oid);
  await channel.assertQueue(queue, PIDBOX_QUEUE_OPTIONS);
  await channel.bindQueue(queue, REPLY_EXCHANGE, oid);
  return queue;
}

/** An event receiver queue `celeryev.<id>` bound with `pattern` (default all events). */
export async function declareEventReceiverQueue(channel: Channel, id: string, pattern = '#'): Promise<string> {
  await declareEventExchange(channel);
  const queue = `celeryev.${id}`;
  await channel.assertQueue(queue, {
    durable: false,
    autoDelete: true,
    exclusive: true,
    arguments: fieldTable({ 'x-message-ttl': EVENT_QUEUE_MESSAGE_TTL_MS, 'x-expires': EVENT_QUEUE_EXPIRES_MS }),
  });
  await channel.bindQueue(queue, EVENT_EXCHANGE, pattern);
  return queue;
}

/**
 * kombu 5.2.4 `Queue.as_dict(recurse=True)` of a default task queue: the item shape of the
 * `active_queues` remote-control reply.
 */
export function kombuQueueDict(queue: string, type: TaskQueueType = 'classic'): Record<string, unknown> {
  return {
    name: queue,
    exchange: {
      name: queue,
      type: 'direct',
      arguments: null,
      durable: true,
      passive: false,
      auto_delete: false,
      delivery_mode: null,
      no_declare: false,
    },
    routing_key: queue,
    queue_arguments: type === 'classic' ? null : { 'x-queue-type': type },
    binding_arguments: null,
    consumer_arguments: null,
    durable: true,
    exclusive: false,
    auto_delete: false,
    no_ack: false,
    alias: null,
    bindings: [],
    no_declare: null,
    expires: null,
    message_ttl: null,
    max_length: null,
    max_length_bytes: null,
    max_priority: null,
  };
}
