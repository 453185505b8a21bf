/**
 * Succeeded and failed tasks per minute over the last hour, in memory: sixty one-minute buckets
 * keyed by the minute they stand for, so a bucket older than an hour is simply not reported and
 * is reused when its slot comes round again.
 */
export const MINUTES = 60;
const MINUTE_MS = 60_000;

export type Outcome = 'succeeded' | 'failed';

export interface MinuteCount {
  /** Start of the minute (ms since the epoch). */
  minute: number;
  succeeded: number;
  failed: number;
}

interface Bucket {
  minute: number;
  succeeded: number;
  failed: number;
}

export class MinuteCounts {
  private readonly buckets: Bucket[] = Array.from({ length: MINUTES }, () => ({ minute: -1, succeeded: 0, failed: 0 }));

  add(outcome: Outcome, at: number, count = 1): void {
    const minute = Math.floor(at / MINUTE_MS) * MINUTE_MS;
    const slot = this.buckets[Math.floor(at / MINUTE_MS) % MINUTES] as Bucket;
    if (slot.minute !== minute) {
      // A count older than the slot's current minute belongs to a minute no longer kept.
      if (slot.minute > minute) return;
      slot.minute = minute;
      slot.succeeded = 0;
      slot.failed = 0;
    }
    slot[outcome] += count;
  }

  /** The last hour, oldest minute first, the current (still running) minute last. */
  series(now = Date.now()): MinuteCount[] {
    const current = Math.floor(now / MINUTE_MS);
    const out: MinuteCount[] = [];
    for (let m = current - MINUTES + 1; m <= current; m++) {
      const slot = this.buckets[m % MINUTES] as Bucket;
      const minute = m * MINUTE_MS;
      out.push(slot.minute === minute ? { minute, succeeded: slot.succeeded, failed: slot.failed } : { minute, succeeded: 0, failed: 0 });
    }
    return out;
  }
}
