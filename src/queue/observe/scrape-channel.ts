/**
 * The AMQP channel scrapes use for their checks (queue depths, the broker's round trip). A
 * passive declare of a queue that does not exist makes the broker close the channel, so the
 * channel is opened again whenever it is gone; everything here is bounded by a timeout so a
 * slow broker slows a scrape down by at most that.
 */
import type { Channel, ChannelModel } from 'amqplib';
import pTimeout from 'p-timeout';
import type { BrokerSession } from '../connection/broker-session.js';
import { closeChannel } from '../connection/bounded-close.js';

export const SCRAPE_TIMEOUT_MS = 2_000;

export function withTimeout<T>(work: Promise<T>, timeoutMs = SCRAPE_TIMEOUT_MS): Promise<T> {
  return pTimeout(work, { milliseconds: timeoutMs, message: `no answer within ${timeoutMs} ms` });
}

export class ScrapeChannel {
  private current: { connection: ChannelModel; channel: Promise<Channel> } | null = null;

  constructor(private readonly session: BrokerSession) {}

  /** The live channel, opened on demand; rejects when the broker is not connected. */
  async get(): Promise<Channel> {
    const connection = this.session.require();
    if (this.current?.connection !== connection) {
      const slot = { connection, channel: this.open(connection) };
      slot.channel.catch(() => {
        if (this.current === slot) this.current = null;
      });
      this.current = slot;
    }
    return this.current.channel;
  }

  async close(): Promise<void> {
    const slot = this.current;
    this.current = null;
    const channel = await slot?.channel.catch(() => null);
    if (channel) await closeChannel(channel);
  }

  private async open(connection: ChannelModel): Promise<Channel> {
    const channel = await connection.createChannel();
    channel.on('error', () => undefined);
    channel.once('close', () => {
      if (this.current?.connection === connection) this.current = null;
    });
    return channel;
  }
}
