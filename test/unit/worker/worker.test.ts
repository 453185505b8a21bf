import { EventEmitter } from 'node:events';
import type { ChannelModel } from 'amqplib';
import type { MongoClient } from 'mongodb';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import type { BrokerSession } from '../../../src/queue/connection/broker-session.js';
import type { PublishedTask } from '../../../src/queue/publishing/task-publisher.js';
import { Worker } from '../../../src/worker/worker.js';
import type { WorkerServices } from '../../../src/worker/worker-services.js';

// The Worker over fake services: a broker session that connects when told to, channels that
// answer every call, a database client that records its close. What is checked is the wiring:
// the order things start and stop in, and that one failing stop does not keep the rest open.

type Log = string[];

/** A channel that answers every AMQP call (declarations, consume, prefetch, publish, cancel, acks). */
function fakeChannel(log: Log, name: string): unknown {
  const emitter = new EventEmitter();
  let tags = 0;
  return new Proxy(emitter, {
    get(target, property) {
      if (property in target) {
        const value = (target as unknown as Record<string | symbol, unknown>)[property];
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      }
      if (property === 'then') return undefined;
      return (...args: unknown[]) => {
        log.push(`${name}.${String(property)}${property === 'cancel' ? ` ${String(args[0])}` : ''}`);
        if (property === 'publish' || property === 'sendToQueue') return true;
        if (property === 'ack' || property === 'nack') return undefined;
        return Promise.resolve(
          property === 'consume' ? { consumerTag: `${name}-tag-${++tags}` } : { queue: 'q', messageCount: 0, consumerCount: 0 },
        );
      };
    },
  });
}

function fakeConnection(log: Log): ChannelModel {
  let channels = 0;
  const connection = new EventEmitter() as unknown as ChannelModel;
  Object.assign(connection, {
    createChannel: async () => fakeChannel(log, `channel${++channels}`),
    createConfirmChannel: async () => fakeChannel(log, `channel${++channels}`),
    close: async () => void log.push('connection.close'),
  });
  return connection;
}

class FakeSession extends EventEmitter {
  connection: ChannelModel | null = null;
  constructor(private readonly log: Log) {
    super();
  }
  get connected(): boolean {
    return this.connection !== null;
  }
  get address(): string | null {
    return this.connection === null ? null : 'amqps://broker';
  }
  start(): this {
    this.log.push('session.start');
    return this;
  }
  connect(): void {
    this.connection = fakeConnection(this.log);
    this.emit('connected', this.connection);
  }
  async close(): Promise<void> {
    this.log.push('session.close');
    this.connection = null;
  }
}

function services(log: Log, database: { failures?: number; never?: boolean } = {}) {
  const session = new FakeSession(log);
  let attempts = 0;
  const publisher = {
    publish: vi.fn(async (): Promise<PublishedTask> => Promise.reject(new Error('no messages are sent here'))),
    close: vi.fn(async () => void log.push('publisher.close')),
  };
  const client = {
    db: () => ({ databaseName: 'results', collection: () => ({}) }),
    close: async () => void log.push('database.close'),
  } as unknown as MongoClient;
  const openDatabase = async (): Promise<MongoClient> => {
    attempts += 1;
    log.push(`database.open #${attempts}`);
    if (database.never === true || attempts <= (database.failures ?? 0)) throw new Error('not yet');
    return client;
  };
  const given: WorkerServices = { session: session as unknown as BrokerSession, openDatabase, publisher };
  return { session, publisher, given };
}

function worker(given: WorkerServices): Worker {
  return new Worker(
    {
      nodeName: 'unit@test',
      queues: ['q'],
      tasks: [],
      broker: { url: 'amqps://broker', heartbeatSeconds: 10 },
      resultDatabase: 'results',
      resultCollection: 'celery_taskmeta',
      mingle: false,
      shutdownGraceMs: 50,
      logger: pino({ level: 'silent' }),
    },
    given,
  );
}

describe('the Worker over fake services', () => {
  it('opens the database (retrying), then the session, and is ready once the first connection consumes', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout'] });
    try {
      const log: Log = [];
      const { session, given } = services(log, { failures: 1 });
      const w = worker(given);
      let ready = false;
      const running = w.run().then(() => (ready = true));
      await vi.advanceTimersByTimeAsync(1_000);
      expect(log).toEqual(['database.open #1', 'database.open #2', 'session.start']);
      expect(ready).toBe(false);
      session.connect();
      await vi.advanceTimersByTimeAsync(0);
      await running;
      expect(ready).toBe(true);
      expect(log).toContain('channel3.consume');
      expect(w.brokerAddress).toBe('amqps://broker');
    } finally {
      vi.useRealTimers();
    }
  });

  it('stops in reverse: deliveries, then the connection, the publisher and the database', async () => {
    const log: Log = [];
    const { session, given } = services(log);
    const w = worker(given);
    const running = w.run();
    await vi.waitFor(() => expect(log).toContain('session.start'));
    session.connect();
    await running;
    log.length = 0;
    const closed = new Promise<void>((resolve) => w.once('closed', resolve));
    await w.close();
    await closed;
    const order = ['channel3.cancel channel3-tag-1', 'session.close', 'publisher.close', 'database.close'];
    expect(log.filter((entry) => order.includes(entry))).toEqual(order);
    // worker-offline went out on the event channel before the connection closed.
    expect(log.indexOf('channel1.publish')).toBeGreaterThanOrEqual(0);
    expect(log.lastIndexOf('channel1.publish')).toBeLessThan(log.indexOf('session.close'));
  });

  it('closed while the database never answers: run() returns, nothing was started, everything is closed', async () => {
    const log: Log = [];
    const { given } = services(log, { never: true });
    const w = worker(given);
    const running = w.run();
    await vi.waitFor(() => expect(log).toContain('database.open #1'));
    await w.close();
    await running;
    expect(log).not.toContain('session.start');
    expect(log.filter((entry) => !entry.startsWith('database.open'))).toEqual(['session.close', 'publisher.close']);
  });

  it('a stop that fails is logged and the steps after it still stop', async () => {
    const log: Log = [];
    const { session, publisher, given } = services(log);
    publisher.close.mockRejectedValueOnce(new Error('broker gone'));
    const w = worker(given);
    const running = w.run();
    await vi.waitFor(() => expect(log).toContain('session.start'));
    session.connect();
    await running;
    const closed = vi.fn();
    w.once('closed', closed);
    await w.close();
    expect(publisher.close).toHaveBeenCalledOnce();
    expect(log.slice(-2)).toEqual(['session.close', 'database.close']);
    expect(closed).toHaveBeenCalledOnce();
  });
});
