/** Acknowledging in groups: one frame for a settled run of deliveries, never past an unsettled one. */
import type { Message } from 'amqplib';
import { describe, expect, it } from 'vitest';
import { ChannelAcknowledgements } from '../../../../src/worker/consumer/acknowledgements.js';

function fakeChannel() {
  const frames: string[] = [];
  return {
    frames,
    ack: (message: Message, allUpTo?: boolean) => void frames.push(`ack ${message.fields.deliveryTag}${allUpTo ? ' multiple' : ''}`),
    nack: (message: Message, allUpTo?: boolean, requeue?: boolean) =>
      void frames.push(`nack ${message.fields.deliveryTag}${allUpTo ? ' multiple' : ''}${requeue ? ' requeue' : ''}`),
  };
}
const message = (tag: number): Message =>
  ({ fields: { deliveryTag: tag }, properties: {}, content: Buffer.alloc(0) }) as unknown as Message;
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function deliver(count: number): { acks: ChannelAcknowledgements; channel: ReturnType<typeof fakeChannel>; messages: Message[] } {
  const channel = fakeChannel();
  const acks = new ChannelAcknowledgements(channel as never);
  const messages = Array.from({ length: count }, (_, i) => message(i + 1));
  for (const m of messages) acks.delivered(m);
  return { acks, channel, messages };
}

describe('ChannelAcknowledgements', () => {
  it('acknowledges a run of settled deliveries with one multiple frame at the end of the turn', async () => {
    const { acks, channel, messages } = deliver(4);
    for (const m of messages) acks.settle(m, 'ack');
    expect(channel.frames).toEqual([]);
    await turn();
    expect(channel.frames).toEqual(['ack 4 multiple']);
    expect(acks.unsettled).toBe(0);
  });

  it('never covers an unsettled delivery: those behind it are acknowledged one by one', async () => {
    const { acks, channel, messages } = deliver(5);
    const [m1, m2, m3, m4, m5] = messages as [Message, Message, Message, Message, Message];
    acks.settle(m1, 'ack');
    acks.settle(m2, 'ack');
    acks.settle(m4, 'ack');
    acks.settle(m5, 'ack');
    await turn();
    expect(channel.frames).toEqual(['ack 2 multiple', 'ack 4', 'ack 5']);
    acks.settle(m3, 'ack');
    await turn();
    // The multiple frame may now cover 3 alone: 4 and 5 are settled at the broker already.
    expect(channel.frames.slice(3)).toEqual(['ack 3 multiple']);
    expect(acks.unsettled).toBe(0);
  });

  it('rejects and requeues at once, and acknowledges across them', async () => {
    const { acks, channel, messages } = deliver(3);
    const [m1, m2, m3] = messages as [Message, Message, Message];
    acks.settle(m1, 'ack');
    acks.settle(m2, 'requeue');
    acks.settle(m3, 'ack');
    expect(channel.frames).toEqual(['nack 2 requeue']);
    await turn();
    expect(channel.frames).toEqual(['nack 2 requeue', 'ack 3 multiple']);
    acks.settle(message(4), 'reject'); // never delivered on this channel: ignored
    expect(channel.frames).toHaveLength(2);
  });

  it('settles each delivery once: the first settlement wins', async () => {
    const { acks, channel, messages } = deliver(2);
    const [m1, m2] = messages as [Message, Message];
    acks.settle(m1, 'requeue');
    acks.settle(m1, 'ack');
    acks.settle(m2, 'ack');
    acks.settle(m2, 'reject');
    await turn();
    expect(channel.frames).toEqual(['nack 1 requeue', 'ack 2 multiple']);
  });

  it('flush() sends at once (shutdown), and a closed channel gets nothing more', async () => {
    const { acks, channel, messages } = deliver(2);
    acks.settle(messages[0]!, 'ack');
    acks.flush();
    expect(channel.frames).toEqual(['ack 1 multiple']);
    acks.close();
    acks.settle(messages[1]!, 'ack');
    await turn();
    expect(channel.frames).toEqual(['ack 1 multiple']);
  });

  it('a channel that throws (closed under it) does not throw at the caller', async () => {
    const acks = new ChannelAcknowledgements({
      ack: () => {
        throw new Error('Channel closed');
      },
      nack: () => {
        throw new Error('Channel closed');
      },
    });
    const [m1, m2] = [message(1), message(2)];
    acks.delivered(m1);
    acks.delivered(m2);
    expect(() => acks.settle(m1, 'requeue')).not.toThrow();
    acks.settle(m2, 'ack');
    expect(() => acks.flush()).not.toThrow();
    await turn();
  });
});
