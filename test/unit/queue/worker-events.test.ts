/**
 * One subscription to the workers' events per process, whatever number of parts listen: the
 * broker side is a recording stand-in (what the class asks of a connection and a channel), so
 * this checks the fan-out and the subscription's life, not AMQP (the metrics and Operations
 * integration tests do that against RabbitMQ).
 */
import { EventEmitter } from 'node:events';
import type { ChannelModel, ConsumeMessage } from 'amqplib';
import { describe, expect, it } from 'vitest';
import type { BrokerSession } from '../../../src/queue/connection/broker-session.js';
import type { ControlClient } from '../../../src/queue/remote-control/control-client.js';
import { WorkerEvents, eventsOf, type CeleryEvent } from '../../../src/queue/events/worker-events.js';
import { createLogger } from '../../../src/log/logger.js';

function standIn() {
  const queues: string[] = [];
  const closed: string[] = [];
  const casts: Array<{ method: string; destination?: string[] }> = [];
  let deliver: (message: ConsumeMessage | null) => void = () => undefined;
  const connection = {
    createChannel: async () => {
      let name = '';
      return {
        on: () => undefined,
        // Closes wait for the channel's 'close' event as well as for close() (bounded-close.ts).
        once: () => undefined,
        off: () => undefined,
        assertExchange: async () => ({}),
        assertQueue: async (queue: string) => {
          name = queue;
          queues.push(queue);
          return { queue };
        },
        bindQueue: async () => ({}),
        consume: async (_queue: string, onMessage: (message: ConsumeMessage | null) => void) => {
          deliver = onMessage;
          return { consumerTag: 't' };
        },
        close: async () => {
          closed.push(name);
        },
      };
    },
  } as unknown as ChannelModel;
  const session = Object.assign(new EventEmitter(), { connection }) as unknown as BrokerSession;
  const control = {
    cast: async (method: string, _args: unknown, options: { destination?: string[] }) => {
      casts.push({ method, destination: options.destination });
    },
  } as unknown as ControlClient;
  const events = new WorkerEvents({ session, control, logger: createLogger('silent') });
  const send = (body: unknown) => deliver({ content: Buffer.from(JSON.stringify(body)) } as ConsumeMessage);
  return { events, queues, closed, casts, send };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('WorkerEvents', () => {
  it('hears the workers once however many parts listen, and hands every event to each', async () => {
    const { events, queues, send } = standIn();
    const metrics: CeleryEvent[] = [];
    const operations: CeleryEvent[] = [];
    events.listen((e) => void metrics.push(e));
    events.listen((e) => void operations.push(e));
    await settle();
    expect(queues).toHaveLength(1);
    send([
      { type: 'task-received', uuid: 'a', name: 't.add' },
      { type: 'task-succeeded', uuid: 'a' },
    ]);
    expect(metrics.map((e) => e.type)).toEqual(['task-received', 'task-succeeded']);
    expect(operations).toEqual(metrics);
  });

  it('asks a newly seen worker for task events once, even when several listeners are new to it', async () => {
    const { events, casts, send } = standIn();
    events.listen((e) => e.type === 'worker-online');
    events.listen((e) => e.type === 'worker-online');
    await settle();
    casts.length = 0;
    send({ type: 'worker-online', hostname: 'w1@host' });
    send({ type: 'worker-heartbeat', hostname: 'w1@host' });
    await settle();
    expect(casts).toEqual([{ method: 'enable_events', destination: ['w1@host'] }]);
  });

  it('drops its queue when the last listener stops, and subscribes again for the next one', async () => {
    const { events, queues, closed, send } = standIn();
    const first: CeleryEvent[] = [];
    const stopFirst = events.listen((e) => void first.push(e));
    const stopSecond = events.listen(() => undefined);
    await settle();
    await stopFirst();
    expect(closed).toEqual([]);
    send({ type: 'worker-heartbeat', hostname: 'w1@host' });
    expect(first).toEqual([]);
    await stopSecond();
    expect(closed).toEqual([queues[0]]);

    const again: CeleryEvent[] = [];
    events.listen((e) => void again.push(e));
    await settle();
    expect(queues).toHaveLength(2);
    send({ type: 'worker-heartbeat', hostname: 'w1@host' });
    expect(again.map((e) => e.type)).toEqual(['worker-heartbeat']);
  });
});

describe('eventsOf', () => {
  it('reads one event or a task.multi array, and nothing from what is not an event', () => {
    expect(eventsOf(Buffer.from('{"type":"task-started","uuid":"a"}'))).toEqual([{ type: 'task-started', uuid: 'a' }]);
    expect(eventsOf(Buffer.from('[{"type":"a"},{"no":"type"},3,{"type":"b"}]')).map((e) => e.type)).toEqual(['a', 'b']);
    expect(eventsOf(Buffer.from('not json'))).toEqual([]);
  });
});
