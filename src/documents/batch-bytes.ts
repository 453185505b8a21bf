/**
 * How many records each batch after the first may hold. A streamed read holds the batch it is
 * rendering and the one asked for ahead of it (as the records' BSON bytes), so their size in
 * bytes — not in records — is what a read costs the API's memory, and what a client that stops
 * reading keeps pinned until the send timeout cuts it off. Left alone, the engine fills each
 * batch to 16 MiB: two of them pinned per stalled export, and sixteen stalled exports held over
 * half a gigabyte.
 *
 * The reads under way share one budget of batch bytes (BatchBudget): what each holds — the batch
 * it renders, and the one it asked for ahead — counts against it, and a read asks for its next
 * batch only what is left (at most half the budget, at least MIN_BATCH_BYTES). One export alone
 * gets large batches (few round trips, the engine's own pace); many at once get small ones,
 * together never much more than the budget, even when the first of them took large batches and
 * then stopped reading. The first batch keeps the size the read asks for (the engine's 101
 * records for a whole result, the page for a page), so a short result still takes one round trip.
 */

/** The bytes of batches all streamed reads of one API process may hold together. */
export const STREAM_BATCH_BUDGET = 8 * 1024 * 1024;
/** The smallest batch a read asks for, however little of the budget is left. */
export const MIN_BATCH_BYTES = 256 * 1024;
/** Bounds of a sized batch: never fewer records than this, whatever their size... */
const MIN_BATCH_RECORDS = 16;
/** ...nor more (tiny records: past this, fewer round trips no longer matter). */
const MAX_BATCH_RECORDS = 100_000;

/** A read's part in the budget, from when it first needs a batch after its first until it ends. */
export interface BatchShare {
  /**
   * Takes a batch of `bytes` into rendering (the one before it is done with) and answers the
   * bytes the next batch may hold, which the read holds from now on too.
   */
  next(bytes: number): number;
  /** Gives everything back; calling it again does nothing. */
  leave(): void;
}

/** The budget of batch bytes shared by the streamed reads of one process. */
export class BatchBudget {
  private heldBytes = 0;

  constructor(private readonly totalBytes = STREAM_BATCH_BUDGET) {}

  join(): BatchShare {
    let held = 0;
    let joined = true;
    return {
      next: (bytes) => {
        if (!joined) return MIN_BATCH_BYTES;
        this.heldBytes -= held;
        const left = this.totalBytes - this.heldBytes - bytes;
        const ahead = Math.min(this.totalBytes / 2, Math.max(MIN_BATCH_BYTES, left));
        held = bytes + ahead;
        this.heldBytes += held;
        return ahead;
      },
      leave: () => {
        if (!joined) return;
        joined = false;
        this.heldBytes -= held;
        held = 0;
      },
    };
  }

  /** Bytes the reads under way hold (or asked for) now. */
  get held(): number {
    return this.heldBytes;
  }
}

/** Tracks the bytes read by one cursor and sizes its batches from its share of the budget. */
export class BatchSizer {
  private records = 0;
  private bytes = 0;

  constructor(private readonly share: Pick<BatchShare, 'next'>) {}

  /** Counts a batch (its records and their BSON bytes) just taken out of the driver; returns the size of the next one, in records. */
  next(records: number, bytes: number): number | undefined {
    this.bytes += bytes;
    this.records += records;
    if (this.records === 0) return undefined;
    const average = this.bytes / this.records;
    return Math.min(MAX_BATCH_RECORDS, Math.max(MIN_BATCH_RECORDS, Math.floor(this.share.next(bytes) / Math.max(1, average))));
  }
}
