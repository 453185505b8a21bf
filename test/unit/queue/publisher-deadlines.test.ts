/**
 * A broker that stops answering never holds a submission: the confirm channel it does not open,
 * or a queue check it does not answer, fails the publish with 503 broker_timeout within the
 * confirm timeout, and is dropped, so the next publish asks afresh and goes through once the
 * broker answers again. The connection and channels are stand-ins (no broker here).
 */
import { EventEmitter } from 'node:events';
import type { ChannelModel } from 'amqplib';
import { describe, expect, it } from 'vitest';
import type { BrokerSession } from '../../../src/queue/connection/broker-session.js';
import { TaskPublisher } from '../../../src/queue/publishing/task-publisher.js';
import { settledWithin } from '../../support/until.js';

const CONFIRM_TIMEOUT_MS = 100;

/** A channel that answers everything at once: publishes are confirmed, every queue exists. */
class AnsweringChannel extends EventEmitter {
  publish(_exchange: string, _queue: string, _body: Buffer, _options: unknown, confirmed: (error: unknown) => void): boolean {
    setImmediate(() => confirmed(null));
    return true;
  }
  async checkQueue(): Promise<void> {}
  async close(): Promise<void> {}
}

const never = <T>(): Promise<T> => new Promise<T>(() => undefined);

/** A broker connection whose channels open (or never open) as `opens` says, one entry per channel asked for. */
function publisherOver(opens: { confirm: boolean[]; plain: boolean[]; check?: boolean[] }) {
  const asked = { confirm: 0, plain: 0, checks: 0 };
  const channel = (answers: boolean) => {
    if (!answers) return never<AnsweringChannel>();
    const opened = new AnsweringChannel();
    opened.checkQueue = () => (opens.check?.[asked.checks++] === false ? never() : Promise.resolve());
    return Promise.resolve(opened);
  };
  const connection = {
    createConfirmChannel: () => channel(opens.confirm[asked.confirm++] ?? true),
    createChannel: () => channel(opens.plain[asked.plain++] ?? true),
  } as unknown as ChannelModel;
  const session = { require: () => connection } as unknown as BrokerSession;
  return { publisher: new TaskPublisher({ session, declareQueues: 'passive', confirmTimeoutMs: CONFIRM_TIMEOUT_MS }), asked };
}

describe('TaskPublisher with a broker that stops answering', () => {
  it('a confirm channel the broker never opens fails the publish in time, and the next publish opens a new one', async () => {
    const { publisher, asked } = publisherOver({ confirm: [false], plain: [] });
    await expect(settledWithin(publisher.publish({ taskName: 'tasks.add' }))).rejects.toMatchObject({ code: 'broker_timeout' });
    await expect(settledWithin(publisher.publish({ taskName: 'tasks.add' }))).resolves.toMatchObject({ queue: 'celery' });
    expect(asked.confirm).toBe(2);
  });

  it('a queue check the broker never answers fails the publish in time, and is asked again next time', async () => {
    const { publisher, asked } = publisherOver({ confirm: [], plain: [], check: [false] });
    await expect(settledWithin(publisher.publish({ taskName: 'tasks.add' }))).rejects.toMatchObject({ code: 'broker_timeout' });
    await expect(settledWithin(publisher.publish({ taskName: 'tasks.add' }))).resolves.toMatchObject({ queue: 'celery' });
    expect(asked.checks).toBe(2);
  });
});
