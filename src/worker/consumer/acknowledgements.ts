/**
 * Settles the messages of one consumer channel, acknowledging in groups where AMQP allows it.
 *
 * An acknowledgement with `multiple` covers every unsettled delivery tag up to its own, so it is
 * only sent for a run of consecutive deliveries that are all to be acknowledged: the channel
 * remembers every delivery it hands out, in tag order, and when the acknowledgements of one turn
 * of the event loop go out, the longest settled run from the oldest unsettled delivery is
 * acknowledged with one frame; acknowledgements behind a delivery still in progress (a long task,
 * a task waiting for its ETA) go out one by one, at once, so they never wait for it. Rejections
 * and returns to the queue are sent at once and end their delivery's place in the order.
 *
 * A channel that closed took its unsettled messages back to the broker: settling on it does
 * nothing (the broker redelivers them).
 */
import type { Channel, Message } from 'amqplib';

export type Settlement = 'ack' | 'reject' | 'requeue';

/** What the acknowledgements need of an amqplib channel. */
export type AckChannel = Pick<Channel, 'ack' | 'nack'>;

const enum Slot {
  Unsettled,
  Acknowledged,
  Done,
}

export class ChannelAcknowledgements {
  /** Deliveries not yet sent to the broker as settled, oldest first, with their state. */
  private readonly order: Array<{ message: Message; slot: Slot }> = [];
  private readonly byTag = new Map<number, { message: Message; slot: Slot }>();
  private flushScheduled = false;
  private closed = false;

  constructor(private readonly channel: AckChannel) {}

  /** Every delivery of the channel must be announced here, in the order the broker sent them. */
  delivered(message: Message): void {
    const entry = { message, slot: Slot.Unsettled };
    this.order.push(entry);
    this.byTag.set(message.fields.deliveryTag, entry);
  }

  /** Settles a delivery; the first settlement of a message counts, later ones are ignored. */
  settle(message: Message, how: Settlement): void {
    const entry = this.byTag.get(message.fields.deliveryTag);
    if (entry === undefined || entry.slot !== Slot.Unsettled || entry.message !== message) return;
    if (how === 'ack') {
      entry.slot = Slot.Acknowledged;
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
      return;
    }
    entry.slot = Slot.Done;
    this.byTag.delete(message.fields.deliveryTag);
    this.send(() => this.channel.nack(message, false, how === 'requeue'));
    this.dropSettledHead();
  }

  /** Deliveries handed out and not yet settled (for tests and shutdown). */
  get unsettled(): number {
    let count = 0;
    for (const entry of this.order) if (entry.slot === Slot.Unsettled) count++;
    return count;
  }

  /** The channel is gone: nothing more is sent on it (the broker has taken its messages back). */
  close(): void {
    this.closed = true;
    this.order.length = 0;
    this.byTag.clear();
  }

  /** Sends the acknowledgements waiting for the end of this turn of the event loop. */
  flush(): void {
    this.flushScheduled = false;
    let lastOfRun: Message | null = null;
    let index = 0;
    for (; index < this.order.length; index++) {
      const entry = this.order[index]!;
      if (entry.slot === Slot.Unsettled) break;
      if (entry.slot === Slot.Acknowledged) {
        lastOfRun = entry.message;
        entry.slot = Slot.Done;
        this.byTag.delete(entry.message.fields.deliveryTag);
      }
    }
    // Every delivery before `index` is settled: one acknowledgement covers all of them.
    const run = lastOfRun;
    if (run !== null) this.send(() => this.channel.ack(run, true));
    // The rest wait behind a delivery still in progress: acknowledged one by one, and only the
    // unsettled ones stay in the order (so a delivery held for days keeps none of the others).
    const rest = this.order.splice(index);
    this.order.length = 0;
    for (const entry of rest) {
      if (entry.slot === Slot.Acknowledged) {
        entry.slot = Slot.Done;
        this.byTag.delete(entry.message.fields.deliveryTag);
        const { message } = entry;
        this.send(() => this.channel.ack(message));
      }
      if (entry.slot === Slot.Unsettled) this.order.push(entry);
    }
  }

  private dropSettledHead(): void {
    let index = 0;
    while (index < this.order.length && this.order[index]!.slot === Slot.Done) index++;
    if (index > 0) this.order.splice(0, index);
    // Settled entries further on are skipped by flush(), which drops them.
  }

  private send(frame: () => void): void {
    if (this.closed) return;
    try {
      frame();
    } catch {
      // Channel gone (connection lost): the broker requeues unacknowledged messages itself.
    }
  }
}
