/**
 * The task channel's prefetch window: how many unacknowledged messages the broker lets the worker
 * hold. Celery's window (concurrency × prefetch multiplier) counts the messages waiting for a pool
 * slot, because Celery acknowledges a message as its task starts (`acks_late=False`). This worker
 * acknowledges only once the outcome is stored, so a task whose body is done but whose result
 * write is still on its way keeps its message, and with it a place in the window: at concurrency 1
 * the window filled with finished tasks and the next ones waited in the broker for a database
 * round trip. The window therefore grows by the tasks waiting on their result write. It grows
 * the same way by the tasks held until their ETA, as Celery's does: their messages stay
 * unacknowledged until they run, and without that room a few tasks due tomorrow would fill the
 * window and keep every task due now in the broker.
 *
 * Growing a window that consumers already use needs RabbitMQ's channel-wide limit (`basic.qos`
 * with `global`): the per-consumer limit is fixed when a consumer starts. Quorum queues refuse
 * consumers on a channel with a channel-wide limit, so on them the window stays fixed per
 * consumer, as before.
 *
 * Room is granted at once (after the turn of the event loop in which it was needed) and given
 * back lazily: the limit comes down only to the largest need of the last `lingerMs`. On a
 * busy worker one result write ends as the next task's body ends, so the room of a settled
 * message goes straight to the next task's, with no `basic.qos` between them. Given back at once,
 * each room went back and came again one broker round trip later, and as `basic.qos` is a
 * request the channel answers one at a time, the next deliveries waited for both: at concurrency
 * 1 that wait, not the task, set the pace. So for up to `lingerMs` after the writes slow down
 * the worker may hold the room of writes that have ended, as unstarted messages.
 *
 * At most one `basic.qos` is in flight; a change made meanwhile goes out as soon as it is answered,
 * and only when the limit differs from the one last sent.
 */
import type { Channel } from 'amqplib';

/** What the window needs of an amqplib channel. */
export type QosChannel = Pick<Channel, 'prefetch'>;

/** How long the room of settled messages stays granted before the limit comes down. */
export const ROOM_LINGER_MS = 100;

export class PrefetchWindow {
  private beside = 0;
  /** The limit the broker applies (last sent) and the one to send next. */
  private sent: number;
  private wanted: number;
  /** The largest limit that tasks finishing since the current linger period began needed. */
  private peak = 0;
  private updating = false;
  private scheduled = false;
  private lingering: NodeJS.Timeout | null = null;
  private closed = false;

  /**
   * `base`: the window with no result write pending (0 = unlimited, never changed); `growable`:
   * whether the channel carries a channel-wide limit that can follow the pending writes.
   */
  constructor(
    private readonly channel: QosChannel,
    readonly base: number,
    readonly growable: boolean,
    private readonly lingerMs = ROOM_LINGER_MS,
  ) {
    this.sent = base;
    this.wanted = base;
  }

  /** Sets the channel's limit before its consumers start. */
  static async open(channel: QosChannel, base: number, growable: boolean, lingerMs = ROOM_LINGER_MS): Promise<PrefetchWindow> {
    if (growable) {
      // Per consumer unlimited: the channel-wide limit is the one that counts.
      await channel.prefetch(0, false);
      await channel.prefetch(base, true);
    } else await channel.prefetch(base, false);
    return new PrefetchWindow(channel, base, growable, lingerMs);
  }

  /** The limit the window needs now. */
  get limit(): number {
    return this.adjustable ? this.base + this.beside : this.base;
  }

  /** The limit last granted to the broker (or on its way to it). */
  get granted(): number {
    return this.wanted;
  }

  /**
   * A message that keeps no place in the window gets room beside it: a task whose body is done
   * and whose outcome is being written, or a task held until its ETA.
   */
  takeRoom(): void {
    if (!this.adjustable) return;
    this.beside++;
    this.peak = Math.max(this.peak, this.limit);
    if (this.limit > this.wanted) {
      this.wanted = this.limit;
      this.scheduleUpdate();
    }
  }

  /** That message is settled, or its task is due and joins the window: its room goes after the linger. */
  giveRoomBack(): void {
    if (!this.adjustable || this.beside === 0) return;
    this.beside--;
    if (this.limit < this.wanted) this.linger();
  }

  /** The channel is gone: nothing more is sent on it. */
  close(): void {
    this.closed = true;
    if (this.lingering !== null) clearTimeout(this.lingering);
    this.lingering = null;
  }

  private get adjustable(): boolean {
    return this.base !== 0 && this.growable;
  }

  /** Lowers the limit at the end of the period to what it needs now or needed for a task that finished during it. */
  private linger(): void {
    if (this.lingering !== null || this.closed) return;
    this.peak = 0;
    this.lingering = setTimeout(() => {
      this.lingering = null;
      const needed = Math.max(this.peak, this.limit);
      if (needed < this.wanted) {
        this.wanted = needed;
        void this.update();
      }
      if (this.limit < this.wanted) this.linger();
    }, this.lingerMs);
    // A pending shrink must not keep a stopping worker alive.
    this.lingering.unref();
  }

  private scheduleUpdate(): void {
    if (this.scheduled || this.updating || this.closed) return;
    this.scheduled = true;
    // The tasks finishing in this turn of the event loop share one update.
    setImmediate(() => {
      this.scheduled = false;
      void this.update();
    });
  }

  private async update(): Promise<void> {
    while (!this.closed && !this.updating && this.wanted !== this.sent) {
      const target = this.wanted;
      this.updating = true;
      try {
        await this.channel.prefetch(target, true);
        this.sent = target;
      } catch {
        // Channel gone (connection lost): the next channel starts with its own window.
        this.close();
      } finally {
        this.updating = false;
      }
    }
  }
}
