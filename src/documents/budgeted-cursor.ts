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
        const batch = takeBatch(cursor);
        if (!cursor.closed) {
          this.share ??= this.batchBudget.join();
          const size = this.sizer.next(batch.count, batch.bytes);
          if (size !== undefined) setNextBatchSize(cursor, size);
        }
        const waitForNext = this.prefetch(cursor);
        for (let index = 0; index < batch.count; index += 1) yield new BsonRecord(batch.record(index), this.reader);
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

/** The records of a batch taken out of the driver, each made a view of its bytes as it is handed on. */
export interface RecordBatch {
  readonly count: number;
  /** The BSON bytes of all its records. */
  readonly bytes: number;
  record(index: number): Uint8Array;
}

/** What takeBatch reads of the driver's cursor response (its internals, see there). */
export interface DriverResponse {
  iterated?: unknown;
  length?: unknown;
  batch?: unknown;
  clear?: unknown;
}

/** BSON type of an embedded document: the type of every record of a batch (an array of them). */
const BSON_DOCUMENT = 3;
/** The parts of the driver's parsed element: [type, name offset, name length, offset, length]. */
const ELEMENT_TYPE = 0;
const ELEMENT_OFFSET = 3;
const ELEMENT_LENGTH = 4;

/**
 * Takes every record the driver holds out of it, as the view of its bytes in the batch the
 * engine sent (opened with RAW_RECORDS, the driver hands out the same views).
 *
 * The driver's own way, readBufferedDocuments, first makes each record an OnDemandDocument: its
 * fields parsed into an array of arrays, two dictionaries and a cache entry, all kept in the
 * batch's cache until the whole batch has been rendered, only for its bytes to be taken. On a long
 * read that was about a kilobyte per record that outlived the young generation (several
 * megabytes copied at every scavenge, then promoted and marked): much of the API's CPU. Here the
 * batch's own list of elements (parsed once per batch, and needed for its size) says where each
 * record is, and a view is made of it only when the record is handed on, to die young.
 *
 * The response, its batch, the elements, `clear` (what readBufferedDocuments leaves: nothing
 * buffered) and the cursor's `raw` setting are the driver's internals; when they are not what
 * this expects (another driver version, a cursor that decodes its records, a response that is not
 * a cursor's batch of documents), the driver's way is taken. The cursor-decoding test checks that
 * the driver's are as expected.
 */
export function takeBatch(cursor: AbstractCursor<Document>): RecordBatch {
  const { documents: response, deserializationOptions } = cursor as unknown as {
    documents?: DriverResponse | null;
    deserializationOptions?: { raw?: unknown };
  };
  const spans = response && deserializationOptions?.raw === true ? recordSpans(response) : undefined;
  if (spans === undefined) {
    // Opened with RAW_RECORDS: the driver hands out each record's bytes.
    const records = cursor.readBufferedDocuments() as unknown as Uint8Array[];
    let bytes = 0;
    for (const record of records) bytes += record.byteLength;
    return { count: records.length, bytes, record: (index) => records[index] as Uint8Array };
  }
  (response as { clear(): void }).clear();
  return spans;
}

/** The records the response holds (see takeBatch), or undefined when it is not as expected. */
export function recordSpans(response: DriverResponse): RecordBatch | undefined {
  const { iterated, length, clear } = response;
  if (typeof iterated !== 'number' || typeof length !== 'number' || typeof clear !== 'function' || 'isExplain' in response)
    return undefined;
  let batch: unknown;
  try {
    batch = response.batch;
  } catch {
    return undefined; // the driver's way raises the same error
  }
  const { bson, elements } = (batch ?? {}) as { bson?: unknown; elements?: unknown };
  if (!(bson instanceof Uint8Array) || !Array.isArray(elements) || elements.length - iterated !== length) return undefined;
  const spans = elements.slice(iterated) as unknown[];
  let bytes = 0;
  for (const element of spans) {
    if (!Array.isArray(element) || element[ELEMENT_TYPE] !== BSON_DOCUMENT) return undefined;
    const offset: unknown = element[ELEMENT_OFFSET];
    const size: unknown = element[ELEMENT_LENGTH];
    if (typeof offset !== 'number' || typeof size !== 'number' || offset < 0 || offset + size > bson.length) return undefined;
    bytes += size;
  }
  return {
    count: spans.length,
    bytes,
    record: (index) => {
      const element = spans[index] as number[];
      const offset = element[ELEMENT_OFFSET] as number;
      return bson.subarray(offset, offset + (element[ELEMENT_LENGTH] as number));
    },
  };
}
