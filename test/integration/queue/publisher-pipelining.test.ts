/**
 * The API publishes many task messages at once on one confirm channel, each settled by its own
 * confirm. What one message meets must stay with that message: a check of a queue that does not
 * exist (which the broker answers by closing the channel it was asked on) and a broker nack fail
 * exactly the publishes they concern, never the others in flight beside them. Real broker.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChannelModel } from 'amqplib';
import { BrokerSession } from '../../../src/queue/connection/broker-session.js';
import { TaskPublisher, mayHaveBeenPublished } from '../../../src/queue/publishing/task-publisher.js';
import { QueueUnavailableError } from '../../../src/queue/errors.js';
import { connectBroker } from '../../../src/queue/connection/broker-connection.js';
import { declareTaskQueue } from '../../../src/queue/protocol/entities.js';
import { brokerSettings, unique } from '../worker/support.js';

let session: BrokerSession;
let publisher: TaskPublisher;
let broker: ChannelModel;
const queues: string[] = [];

async function freshQueue(args?: Record<string, unknown>): Promise<string> {
  const name = unique('pipelined-');
  const channel = await broker.createChannel();
  try {
    if (args === undefined) await declareTaskQueue(channel, name);
    else await channel.assertQueue(name, { durable: true, autoDelete: false, arguments: args });
  } finally {
    await channel.close();
  }
  queues.push(name);
  return name;
}

async function depth(queue: string): Promise<number> {
  const channel = await broker.createChannel();
  try {
    return (await channel.checkQueue(queue)).messageCount;
  } finally {
    await channel.close();
  }
}

beforeAll(async () => {
  session = new BrokerSession({ settings: brokerSettings() });
  await session.waitUntilConnected(20_000);
  // How the API publishes: queues are only checked, never declared.
  publisher = new TaskPublisher({ session, declareQueues: 'passive' });
  broker = await connectBroker(brokerSettings());
});

afterAll(async () => {
  const channel = await broker?.createChannel();
  for (const queue of queues) await channel?.deleteQueue(queue).catch(() => undefined);
  await publisher?.close();
  await session?.close();
  await broker?.close().catch(() => undefined);
});

describe('publishes in flight together', () => {
  it('confirms hundreds of concurrent publishes, each once', async () => {
    const queue = await freshQueue();
    const published = await Promise.all(
      Array.from({ length: 400 }, (_, i) => publisher.publish({ taskName: 'tasks.add', args: [i, 1], queue })),
    );
    expect(new Set(published.map((p) => p.taskId)).size).toBe(400);
    expect(await depth(queue)).toBe(400);
  });

  it('a check of a missing queue fails only the publish to it', async () => {
    const queue = await freshQueue();
    await publisher.publish({ taskName: 'tasks.add', args: [0, 0], queue });
    const missing = unique('missing-');
    const outcomes = await Promise.allSettled([
      ...Array.from({ length: 30 }, (_, i) => publisher.publish({ taskName: 'tasks.add', args: [i, 1], queue })),
      publisher.publish({ taskName: 'tasks.add', args: [0, 1], queue: missing }),
      ...Array.from({ length: 30 }, (_, i) => publisher.publish({ taskName: 'tasks.add', args: [i, 2], queue })),
    ]);
    const refused = outcomes.filter((o) => o.status === 'rejected');
    expect(refused).toHaveLength(1);
    const error = (refused[0] as PromiseRejectedResult).reason as unknown;
    expect(error).toBeInstanceOf(QueueUnavailableError);
    expect((error as QueueUnavailableError).code).toBe('queue_unavailable');
    expect(mayHaveBeenPublished(error)).toBe(false);
    expect(outcomes[30]?.status).toBe('rejected');
    expect(await depth(queue)).toBe(61);
  });

  it('a nack fails exactly the messages the broker refused, as outcomes unknown', async () => {
    // A queue that refuses what does not fit: the broker nacks those publishes.
    const queue = await freshQueue({ 'x-max-length': 3, 'x-overflow': 'reject-publish' });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => publisher.publish({ taskName: 'tasks.add', args: [i, 1], queue })),
    );
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(3);
    expect(refused).toHaveLength(7);
    for (const { reason } of refused) {
      expect(reason).toBeInstanceOf(QueueUnavailableError);
      expect(mayHaveBeenPublished(reason)).toBe(true);
    }
    expect(await depth(queue)).toBe(3);
    // The channel stays usable: a nack is per message.
    const other = await freshQueue();
    await publisher.publish({ taskName: 'tasks.add', args: [1, 1], queue: other });
    expect(await depth(other)).toBe(1);
  });
});
