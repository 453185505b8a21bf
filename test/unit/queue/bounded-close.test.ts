import { EventEmitter } from 'node:events';
import type { Channel, ChannelModel } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { closeChannel, closeConnection } from '../../../src/queue/connection/bounded-close.js';

/**
 * Stand-ins shaped like amqplib's: `close()` settles only when the broker confirms, which these
 * broker never does unless told to.
 */
class FakeChannel extends EventEmitter {
  closeCalls = 0;
  close(): Promise<void> {
    this.closeCalls++;
    return new Promise(() => undefined);
  }
}

class FakeConnection extends FakeChannel {
  destroyed: Error | undefined;
  readonly connection = {
    stream: {
      destroy: (error?: Error) => {
        this.destroyed = error;
        // amqplib turns the socket's error into the connection's close.
        setImmediate(() => this.emit('close', error));
      },
    },
  };
}

const elapsed = async (work: Promise<void>): Promise<number> => {
  const started = Date.now();
  await work;
  return Date.now() - started;
};

describe('closeChannel', () => {
  it('gives up waiting for a broker that never confirms after the time limit', async () => {
    const channel = new FakeChannel();
    const ms = await elapsed(closeChannel(channel as unknown as Channel, 50));
    expect(channel.closeCalls).toBe(1);
    expect(ms).toBeGreaterThanOrEqual(45);
    expect(ms).toBeLessThan(1_000);
  });

  it('ends as soon as the channel closes another way (its connection died)', async () => {
    const channel = new FakeChannel();
    setTimeout(() => channel.emit('close'), 10);
    expect(await elapsed(closeChannel(channel as unknown as Channel, 5_000))).toBeLessThan(1_000);
  });

  it('ends at once when the channel was closed already (close() fails)', async () => {
    const channel = new FakeChannel();
    channel.close = () => Promise.reject(new Error('Channel closed'));
    expect(await elapsed(closeChannel(channel as unknown as Channel, 5_000))).toBeLessThan(1_000);
  });
});

describe('closeConnection', () => {
  it('drops the socket of a connection the broker does not let go of, and resolves once it closed', async () => {
    const connection = new FakeConnection();
    let closed = false;
    connection.once('close', () => (closed = true));
    await closeConnection(connection as unknown as ChannelModel, 50);
    expect(connection.destroyed?.message).toMatch(/did not confirm the close/);
    expect(closed).toBe(true);
  });

  it('leaves the socket alone when the broker confirms in time', async () => {
    const connection = new FakeConnection();
    connection.close = () => Promise.resolve();
    await closeConnection(connection as unknown as ChannelModel, 5_000);
    expect(connection.destroyed).toBeUndefined();
  });
});
