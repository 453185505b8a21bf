/**
 * A driver cursor whose every round trip (the first batch and each later one) draws on the
 * request's query budget. The cursor is opened lazily, on the first round trip, with the budget
 * then remaining as its server-side limit. It is opened with RAW_RECORDS: each record is handed
 * on as its bytes, decoded only by whoever needs its values (see raw-records.ts).
 */
import type { AbstractCursor, Document } from 'mongodb';
import { BsonRecord, type BsonRecordReader } from '../render/bson-record.js';
import { BatchSizer, MIN_BATCH_BYTES, type BatchBudget, type BatchShare } from './batch-bytes.js';
import type { QueryBudget } from './query-budget.js';

export type CursorOpener = (maxTimeMS: number, signal: AbortSignal) => Promise<AbstractCursor<Document>>;

export class BudgetedCursor implements AsyncIterable<BsonRecord<Document>> {
  private cursor: AbstractCursor<Document> | undefined;
  /** Aborted when the budget runs out: the driver then closes the cursor on the server. */
  private readonly controller = new AbortController();
  /** The round trip asked for ahead of the reader (see the iterator). */
  private ahead: Promise<boolean> = Promise.resolve(false);
  /** This read's share of the process's batch bytes, taken once a batch after the first is needed. */
  private share: BatchShare | undefined;
  private readonly sizer = new BatchSizer({ next: (bytes) => this.share?.next(bytes) ?? MIN_BATCH_BYTES });

  constructor(
    private readonly open: CursorOpener,
    private readonly budget: QueryBudget,
    private readonly reader: BsonRecordReader<Document>,
    private readonly batchBudget: BatchBudget,
  ) {}

  /** True when a record is ready; asks the database (within the budget) only when none is buffered. */
  async hasNext(): Promise<boolean> {
    const cursor = this.cursor;
    if (cursor !== undefined) {
      if (cursor.bufferedCount() > 0) return true;
      if (cursor.closed) return false; // exhausted: no round trip, so no budget needed
    }
    return this.budget.run(async (maxTimeMS, signal) => {
      this.cursor ??= await this.open(maxTimeMS, signal);
      return this.cursor.hasNext();
    }, this.controller);
  }

  /**
   * Whole batches at a time: no timer per record, only per round trip. The next batch is asked
   * for as soon as the current one is taken out of the driver, so the engine produces it while
   * this one is rendered and written, instead of the two taking turns (a long download then
   * costs about the slower of the two, not their sum). The budget counts that round trip only
   * from when the reader waits for it (QueryBudget.wait): time spent rendering is the API's, not
   * the database's. One batch ahead at most, and the batches after the first sized in bytes
   * from this read's share of the batch budget (see batch-bytes.ts): a client that stops reading
   * stops the cursor one batch later, with two batches of that share pinned, not two of the
   * engine's 16 MiB. They are held as BSON bytes, each record decoded only as it is handed on, so
   * a batch costs its bytes, not objects.
   */
  async *[Symbol.asyncIterator](): AsyncIterator<BsonRecord<Document>> {
    try {
      let more = this.hasNext();
      while (await more) {
        const cursor = this.cursor as AbstractCursor<Document>;
        // Opened with RAW_RECORDS: the driver hands out each record's bytes.
        const batch = cursor.readBufferedDocuments() as unknown as Uint8Array[];
        if (!cursor.closed) {
          this.share ??= this.batchBudget.join();
          const size = this.sizer.next(batch);
          if (size !== undefined) setNextBatchSize(cursor, size);
        }
        const waitForNext = this.prefetch(cursor);
        for (const bytes of batch) yield new BsonRecord(bytes, this.reader);
        more = waitForNext();
      }
    } finally {
      this.share?.leave();
    }
  }

  /** Starts the next round trip now; the function returned waits for it within the budget. */
  private prefetch(cursor: AbstractCursor<Document>): () => Promise<boolean> {
    if (cursor.closed) return () => Promise.resolve(false); // exhausted: no round trip
    const next = this.budget.remainingMs() > 0 ? cursor.hasNext() : Promise.resolve(true);
    // Awaited by the reader, or by close() when the reader stops early (its failure is then of
    // no interest, but must not surface as an unhandled rejection).
    this.ahead = next.catch(() => false);
    return () => this.budget.wait(next, this.controller);
  }

  async close(): Promise<void> {
    this.share?.leave();
    if (this.cursor === undefined) return;
    // The driver closes a cursor only between round trips: let the batch asked for ahead land.
    await this.ahead;
    // After a timeout the abort already closes it; a round trip still in flight is not waited for.
    if (this.controller.signal.aborted) return;
    await this.cursor.close();
  }
}

/**
 * The driver sends each getMore with its cursor's batch size as it stands then, but offers no
 * public way to change it once the cursor is open: the option is set where the driver keeps it.
 * Should a driver version keep it elsewhere, batches would silently go back to the engine's size:
 * the stalled-exports test measures the memory that costs, and fails.
 */
function setNextBatchSize(cursor: AbstractCursor<Document>, size: number): void {
  const options = (cursor as unknown as { cursorOptions?: { batchSize?: number } }).cursorOptions;
  if (typeof options === 'object' && options !== null) options.batchSize = size;
}
