/**
 * The task channel's prefetch window: how many unacknowledged messages the broker lets the worker
 * hold. Celery's window (concurrency × prefetch multiplier) counts the messages waiting for a pool
 * slot, because Celery acknowledges a message as its task starts (`acks_late=False`). This worker
 * acknowledges only once the outcome is stored, so a task whose body is done but whose result
 * write is still on its way keeps its message, and with it a place in the window: at concurrency 1
 * the window filled with finished tasks and the next ones waited in the broker for a database
 * round trip. The window therefore grows by the tasks waiting on their result write and shrinks
 * as their messages are settled, the way Celery grows its own window for the ETA tasks it holds.
 *
 * Growing a window that consumers already use needs RabbitMQ's channel-wide limit (`basic.qos`
 * with `global`): the per-consumer limit is fixed when a consumer starts. Quorum queues refuse
 * consumers on a channel with a channel-wide limit, so on them the window stays fixed per
 * consumer, as before.
 *
 * Updates are coalesced: at most one `basic.qos` in flight, sent after the turn of the event loop
 * in which the count changed, and only when the limit differs from the one last sent. The channel's
 * acknowledgements send a pending update just before their own frames (`sendPending`), so the
 * room of a settled message goes before its acknowledgement frees its place and the broker never
 * sees the window wider than it is.
 */
import type { Channel } from 'amqplib';

/** What the window needs of an amqplib channel. */
export type QosChannel = Pick<Channel, 'prefetch'>;

export class PrefetchWindow {
  private recording = 0;
  private sent: number;
  private updating = false;
  private scheduled = false;
  private closed = false;

  /**
   * `base`: the window with no result write pending (0 = unlimited, never changed); `growable`:
   * whether the channel carries a channel-wide limit that can follow the pending writes.
   */
  constructor(
    private readonly channel: QosChannel,
    readonly base: number,
    readonly growable: boolean,
  ) {
    this.sent = base;
  }

  /** Sets the channel's limit before its consumers start. */
  static async open(channel: QosChannel, base: number, growable: boolean): Promise<PrefetchWindow> {
    if (growable) {
      // Per consumer unlimited: the channel-wide limit is the one that counts.
      await channel.prefetch(0, false);
      await channel.prefetch(base, true);
    } else await channel.prefetch(base, false);
    return new PrefetchWindow(channel, base, growable);
  }

  /** The limit the window should have now. */
  get limit(): number {
    return this.base === 0 || !this.growable ? this.base : this.base + this.recording;
  }

  /** A task's body is done and its outcome is being written: its message gets room beside the window. */
  recordingStarted(): void {
    if (this.base === 0 || !this.growable) return;
    this.recording++;
    this.schedule();
  }

  /** That task's message is settled (or the write ended otherwise): the room goes. */
  recordingEnded(): void {
    if (this.base === 0 || !this.growable || this.recording === 0) return;
    this.recording--;
    this.schedule();
  }

  /** Sends a changed limit now, unless an update is already on its way (it sends the latest limit after). */
  sendPending(): void {
    if (!this.updating && !this.closed && this.limit !== this.sent) void this.update();
  }

  /** The channel is gone: nothing more is sent on it. */
  close(): void {
    this.closed = true;
  }

  private schedule(): void {
    if (this.scheduled || this.updating || this.closed) return;
    this.scheduled = true;
    // The tasks finishing in this turn of the event loop share one update.
    setImmediate(() => {
      this.scheduled = false;
      void this.update();
    });
  }

  private async update(): Promise<void> {
    const target = this.limit;
    if (this.closed || this.updating || target === this.sent) return;
    this.updating = true;
    try {
      await this.channel.prefetch(target, true);
      this.sent = target;
    } catch {
      // Channel gone (connection lost): the next channel starts with its own window.
      this.closed = true;
    } finally {
      this.updating = false;
    }
    if (this.limit !== this.sent) this.schedule();
  }
}
