/**
 * A driver cursor whose every round trip (the first batch and each later one) draws on the
 * request's query budget. The cursor is opened lazily, on the first round trip, with the budget
 * then remaining as its server-side limit.
 */
import type { AbstractCursor, Document } from 'mongodb';
import type { QueryBudget } from './query-budget.js';

export type CursorOpener = (maxTimeMS: number, signal: AbortSignal) => Promise<AbstractCursor<Document>>;

export class BudgetedCursor implements AsyncIterable<Document> {
  private cursor: AbstractCursor<Document> | undefined;
  /** Aborted when the budget runs out: the driver then closes the cursor on the server. */
  private readonly controller = new AbortController();

  constructor(
    private readonly open: CursorOpener,
    private readonly budget: QueryBudget,
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

  /** Whole batches at a time: no timer per record, only per round trip. */
  async *[Symbol.asyncIterator](): AsyncIterator<Document> {
    while (await this.hasNext()) {
      for (const doc of (this.cursor as AbstractCursor<Document>).readBufferedDocuments()) yield doc;
    }
  }

  async close(): Promise<void> {
    if (this.cursor === undefined) return;
    // After a timeout the abort already closes it; a round trip still in flight is not waited for.
    if (this.controller.signal.aborted) return;
    await this.cursor.close();
  }
}
