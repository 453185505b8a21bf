/**
 * The dead-letter queue: where a worker parks a task message that was delivered too many times
 * without finishing (a worker crashed or was stopped while running it, again and again), so it
 * stops running and an administrator can look at it. The queue belongs to this service alone
 * (Celery workers never declare it), so it is an ordinary durable queue without arguments.
 *
 * A parked message is the original, unchanged (body, properties, headers), plus headers saying
 * why, from which queue, after how many deliveries and when.
 */
import type { Channel, ConfirmChannel, GetMessage, Message, Options, Replies } from 'amqplib';
import type { TaskQueueType } from '../../config/connections.js';
import { isJsonObject, type JsonValue } from '../protocol/json.js';
import { parseTaskMessage } from '../protocol/task-message-parser.js';

export const DEAD_LETTER_QUEUE = 'cybercom.dead_letter';

export const DEAD_LETTER_HEADERS = {
  reason: 'x-cybercom-dead-letter-reason',
  originalQueue: 'x-cybercom-original-queue',
  originalExchange: 'x-cybercom-original-exchange',
  deliveryCount: 'x-cybercom-delivery-count',
  parkedAt: 'x-cybercom-dead-lettered-at',
} as const;

/** Of the same type as the task queues (TASK_QUEUE_TYPE), so on a cluster it is replicated too. */
function deadLetterQueueOptions(type: TaskQueueType): Options.AssertQueue {
  return type === 'classic' ? { durable: true } : { durable: true, arguments: { 'x-queue-type': type } };
}

export async function declareDeadLetterQueue(channel: Channel, type: TaskQueueType = 'classic'): Promise<Replies.AssertQueue> {
  return channel.assertQueue(DEAD_LETTER_QUEUE, deadLetterQueueOptions(type));
}

export interface ParkInfo {
  reason: string;
  deliveryCount: number;
  now?: Date;
  queueType?: TaskQueueType;
}

/** Copies `message` into the dead-letter queue and resolves once the broker confirmed it. */
export async function parkMessage(channel: ConfirmChannel, message: Message, info: ParkInfo): Promise<void> {
  await declareDeadLetterQueue(channel, info.queueType);
  const p = message.properties;
  const options: Options.Publish = {
    headers: {
      ...(p.headers ?? {}),
      [DEAD_LETTER_HEADERS.reason]: info.reason,
      [DEAD_LETTER_HEADERS.originalQueue]: message.fields.routingKey,
      [DEAD_LETTER_HEADERS.originalExchange]: message.fields.exchange,
      [DEAD_LETTER_HEADERS.deliveryCount]: info.deliveryCount,
      [DEAD_LETTER_HEADERS.parkedAt]: (info.now ?? new Date()).toISOString(),
    },
    // Kept until an administrator purges it: persistent and without the original expiration.
    persistent: true,
  };
  // user_id is left out: the broker refuses it unless it names the publishing connection's user.
  for (const key of [
    'contentType',
    'contentEncoding',
    'priority',
    'correlationId',
    'replyTo',
    'messageId',
    'timestamp',
    'type',
    'appId',
  ] as const) {
    const value: unknown = p[key];
    if (value !== undefined && value !== null) (options as Record<string, unknown>)[key] = value;
  }
  channel.publish('', DEAD_LETTER_QUEUE, message.content, options);
  await channel.waitForConfirms();
}

export interface DeadLetter {
  task_id: string | null;
  task_name: string | null;
  args: JsonValue[] | null;
  kwargs: { [key: string]: JsonValue } | null;
  reason: string | null;
  original_queue: string | null;
  delivery_count: number | null;
  dead_lettered_at: string | null;
}

export function describeDeadLetter(message: GetMessage): DeadLetter {
  const headers: Record<string, unknown> = isJsonObject(message.properties.headers) ? message.properties.headers : {};
  const text = (value: unknown): string | null =>
    typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('utf8') : null;
  const parsed = parseTaskMessage(message);
  const count = headers[DEAD_LETTER_HEADERS.deliveryCount];
  return {
    task_id: parsed.ok ? parsed.task.taskId : text(headers.id),
    task_name: parsed.ok ? parsed.task.taskName : text(headers.task),
    args: parsed.ok ? parsed.task.args : null,
    kwargs: parsed.ok ? parsed.task.kwargs : null,
    reason: text(headers[DEAD_LETTER_HEADERS.reason]),
    original_queue: text(headers[DEAD_LETTER_HEADERS.originalQueue]),
    delivery_count: typeof count === 'number' ? count : null,
    dead_lettered_at: text(headers[DEAD_LETTER_HEADERS.parkedAt]),
  };
}

/**
 * Reads up to `limit` parked messages without removing any: each is fetched unacknowledged and
 * all are handed back (requeued) before the channel closes. Also answers how many are parked.
 */
export async function peekDeadLetters(
  channel: Channel,
  limit: number,
  type: TaskQueueType = 'classic',
): Promise<{ count: number; letters: DeadLetter[] }> {
  const { messageCount } = await declareDeadLetterQueue(channel, type);
  const letters: DeadLetter[] = [];
  let fetched = false;
  try {
    for (let i = 0; i < Math.min(limit, messageCount); i++) {
      const message = await channel.get(DEAD_LETTER_QUEUE, { noAck: false });
      if (message === false) break;
      fetched = true;
      letters.push(describeDeadLetter(message));
    }
  } finally {
    if (fetched) channel.nackAll(true);
  }
  return { count: messageCount, letters };
}

/** Removes every parked message; answers how many there were. */
export async function purgeDeadLetters(channel: Channel, type: TaskQueueType = 'classic'): Promise<number> {
  await declareDeadLetterQueue(channel, type);
  const { messageCount } = await channel.purgeQueue(DEAD_LETTER_QUEUE);
  return messageCount;
}
