/**
 * Test files run side by side on one broker and one engine: each vitest worker works in a broker
 * vhost of its own and under a database prefix of its own (test/support/services.ts). A
 * broadcast in one vhost (Celery's remote control is a fanout exchange) reaches no queue of
 * another vhost, so one file's `enable_events` or `rate_limit` never reaches another file's
 * workers.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it, inject } from 'vitest';
import { connectBroker } from '../../../src/queue/connection/broker-connection.js';
import { testSettings } from '../../support/app.js';
import { testServices, withVhost } from '../../support/services.js';
import { until } from '../../support/until.js';
import { brokerSettings } from '../worker/support.js';

describe('the test worker’s own services', () => {
  it('are its broker vhost and its database prefix, which the service settings use', () => {
    const services = testServices();
    const worker = Number(process.env.VITEST_POOL_ID);
    expect(services.worker).toBe(worker);
    expect(services.broker.vhost).toBe(`test-w${worker}`);
    for (const url of services.env.BROKER_URL?.split(';') ?? []) expect(new URL(url).pathname).toBe(`/test-w${worker}`);
    expect(new URL(services.broker.url).pathname).toBe(`/test-w${worker}`);
    expect(services.databasePrefix).toBe(`w${worker}_`);
    expect(testSettings().serviceDatabase.startsWith(`w${worker}_`)).toBe(true);
  });

  it('hear no broadcast of another vhost, and another vhost hears none of theirs', async () => {
    const own = testServices();
    const other = { ...own.env, BROKER_URL: withVhost(own.env.BROKER_URL as string, inject('services').broker.vhost) };
    expect(other.BROKER_URL).not.toBe(own.env.BROKER_URL);
    const exchange = `vhost-probe-${randomUUID()}`;
    const connections = await Promise.all([connectBroker(brokerSettings(own.env)), connectBroker(brokerSettings(other))]);
    try {
      const [mine, theirs] = await Promise.all(connections.map((c) => c.createChannel()));
      if (!mine || !theirs) throw new Error('no channel');
      const queues: string[] = [];
      for (const channel of [mine, theirs]) {
        await channel.assertExchange(exchange, 'fanout', { autoDelete: true });
        const { queue } = await channel.assertQueue('', { exclusive: true });
        await channel.bindQueue(queue, exchange, '');
        queues.push(queue);
      }
      mine.publish(exchange, '', Buffer.from('mine'));
      theirs.publish(exchange, '', Buffer.from('theirs'));
      // Both messages routed (each queue holds one), then a moment more for any stray copy.
      await until(async () => (await mine.checkQueue(queues[0] as string)).messageCount > 0, 5_000, 'the message in this vhost');
      await until(async () => (await theirs.checkQueue(queues[1] as string)).messageCount > 0, 5_000, 'the message in the other vhost');
      await new Promise((resolve) => setTimeout(resolve, 300));
      const received = async (channel: typeof mine, queue: string): Promise<string[]> => {
        const bodies: string[] = [];
        for (let message = await channel.get(queue, { noAck: true }); message; message = await channel.get(queue, { noAck: true })) {
          bodies.push(message.content.toString());
        }
        return bodies;
      };
      expect(await received(mine, queues[0] as string)).toEqual(['mine']);
      expect(await received(theirs, queues[1] as string)).toEqual(['theirs']);
      await Promise.all([mine.deleteExchange(exchange), theirs.deleteExchange(exchange)]);
    } finally {
      await Promise.all(connections.map((c) => c.close().catch(() => undefined)));
    }
  });
});
