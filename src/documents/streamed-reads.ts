/**
 * Caps the streamed reads one caller (a user, or a client address for anonymous callers) has
 * under way at once. A streamed read is one whose answer is not one bounded page: all records
 * (`page_size=0`, which every CSV and NDJSON export is unless a page is asked for) or a page
 * larger than the store fetches in one batch. Each holds a cursor and its batches for as long as
 * its client takes to read it; a caller who opens many and reads none of them would otherwise hold
 * that much memory each until the send timeout cuts them off. Beyond the caller's share: 429
 * `too_many_streamed_reads` with Retry-After, before the engine is asked anything. The counts are
 * this API process's own (see caller-slots.ts).
 */
import { ApiError } from '../errors.js';
import { CallerSlots, type ReleaseSlot } from './caller-slots.js';
import { MAX_FIRST_BATCH } from './store.js';

/**
 * When to try again: a streamed read has no known end (its client sets the pace), so this is a
 * short pause, after which a read that finished (or a stalled one cut off) has freed its slot.
 */
const RETRY_AFTER_SECONDS = 5;

/** Whether a read of pages of `pageSize` records (0: all of them) streams. */
export function isStreamedRead(pageSize: number): boolean {
  return pageSize === 0 || pageSize > MAX_FIRST_BATCH;
}

export class StreamedReadLimiter {
  private readonly slots = new CallerSlots();

  constructor(private readonly perCaller: number) {}

  /** Takes a slot for `caller`, or throws 429 (with Retry-After) when the caller has none left. */
  acquire(caller: string): ReleaseSlot {
    const mine = this.slots.inUse(caller);
    if (mine >= this.perCaller) {
      throw new ApiError(
        429,
        'too_many_streamed_reads',
        `You already have ${mine} whole-result reads or exports streaming; at most ${this.perCaller} may stream at a time. Retry when one has finished.`,
        { limit: this.perCaller },
        { 'Retry-After': String(RETRY_AFTER_SECONDS) },
      );
    }
    return this.slots.take(caller);
  }

  /** Streamed reads under way for one caller, or for everyone. */
  inUse(caller?: string): number {
    return this.slots.inUse(caller);
  }
}
