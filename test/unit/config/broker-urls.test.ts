/**
 * BROKER_URL with the nodes of a cluster (`;` or `,` between addresses, as in Celery's
 * broker_url) and TASK_QUEUE_TYPE, as the API and the worker read them; and the broker session
 * trying the addresses in turn, starting after the node it lost.
 */
import { EventEmitter } from 'node:events';
import type { ChannelModel } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { brokerEnvSchema, splitBrokerUrls, toBrokerSettings, type BrokerSettings } from '../../../src/config/connections.js';
import { ConfigError, loadSettings } from '../../../src/config/settings.js';
import { BrokerSession } from '../../../src/queue/connection/broker-session.js';
import { loadWorkerConfig } from '../../../src/worker/config.js';

const minimal = { SECRET_KEY: 'k'.repeat(40), MONGO_URI: 'mongodb://localhost:27017/' };

describe('BROKER_URL with several nodes', () => {
  it('splits on ; and , and drops blanks', () => {
    expect(splitBrokerUrls('amqps://a:5671/v; amqps://b:5671/v ,amqps://c:5671/v;')).toEqual([
      'amqps://a:5671/v',
      'amqps://b:5671/v',
      'amqps://c:5671/v',
    ]);
  });

  it('gives the first address as url and the others as alternates, for the API and the worker alike', () => {
    const env = { ...minimal, BROKER_URL: 'amqps://a:5671/v;amqps://b:5671/v;amqps://c:5671/v', TASK_QUEUE_TYPE: 'quorum' };
    for (const broker of [loadSettings(env).broker, loadWorkerConfig(env).broker]) {
      expect(broker?.url).toBe('amqps://a:5671/v');
      expect(broker?.alternateUrls).toEqual(['amqps://b:5671/v', 'amqps://c:5671/v']);
      expect(broker?.queueType).toBe('quorum');
    }
  });

  it('keeps a single address as it was, with classic queues by default', () => {
    const broker = toBrokerSettings(brokerEnvSchema.parse({ BROKER_URL: 'amqps://mq:5671/vhost' }));
    expect(broker).toMatchObject({ url: 'amqps://mq:5671/vhost', alternateUrls: [], queueType: 'classic' });
  });

  it('refuses a list with an address that is not amqp(s), and an unknown queue type', () => {
    expect(() => loadSettings({ ...minimal, BROKER_URL: 'amqps://a:5671/v;http://b/' })).toThrow(ConfigError);
    expect(() => loadSettings({ ...minimal, BROKER_URL: ';' })).toThrow(/BROKER_URL/);
    expect(() => loadSettings({ ...minimal, BROKER_URL: 'amqps://a/v', TASK_QUEUE_TYPE: 'stream' })).toThrow(/TASK_QUEUE_TYPE/);
  });
});

/** Stands in for an amqplib connection: only what BrokerSession uses. */
class FakeConnection extends EventEmitter {
  async close(): Promise<void> {
    this.emit('close');
  }
}

describe('BrokerSession with several addresses', () => {
  it('connects to the first node that answers and, after losing it, starts with the next one', async () => {
    const settings: BrokerSettings = { url: 'amqps://a/v', alternateUrls: ['amqps://b/v', 'amqps://c/v'], heartbeatSeconds: 0 };
    const down = new Set(['amqps://a/v']);
    const tried: string[] = [];
    const connections: FakeConnection[] = [];
    const session = new BrokerSession({
      settings,
      initialDelayMs: 1,
      connect: async (s) => {
        tried.push(s.url);
        expect(s.alternateUrls).toEqual([]);
        if (down.has(s.url)) throw new Error(`${s.url} refused`);
        const connection = new FakeConnection();
        connections.push(connection);
        return connection as unknown as ChannelModel;
      },
    });
    await session.waitUntilConnected(5_000);
    expect(tried).toEqual(['amqps://a/v', 'amqps://b/v']);
    expect(session.address).toBe('amqps://b/v');

    // b dies (a is back): the next attempt starts with c, the node after the lost one.
    down.clear();
    down.add('amqps://b/v');
    tried.length = 0;
    const reconnected = new Promise<void>((resolve) => session.once('connected', () => resolve()));
    connections[0]?.emit('close', new Error('node b died'));
    expect(session.connected).toBe(false);
    await reconnected;
    expect(tried).toEqual(['amqps://c/v']);
    expect(session.address).toBe('amqps://c/v');
    await session.close();
  });

  it('retries with a delay when no node answers, and reports every node’s error', async () => {
    const errors: Error[] = [];
    const session = new BrokerSession({
      settings: { url: 'amqps://a/v', alternateUrls: ['amqps://b/v'], heartbeatSeconds: 0 },
      initialDelayMs: 5_000,
      connect: async (s) => {
        throw new Error(`${s.url} refused`);
      },
    });
    const retrying = new Promise<void>((resolve) =>
      session.once('retrying', (error) => {
        errors.push(error);
        resolve();
      }),
    );
    session.start();
    await retrying;
    expect(errors[0]?.message).toContain('amqps://a/v refused');
    expect(errors[0]?.message).toContain('amqps://b/v refused');
    await session.close();
  });
});
