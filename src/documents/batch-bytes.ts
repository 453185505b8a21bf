/**
 * How many records the batch ahead of a long read may hold, from the size of the records read so
 * far: a batch of a streamed read is held (as the records' BSON bytes) while it is rendered, with
 * the next one arriving beside it, so its size in bytes (not in records) is what the API's memory
 * follows. Left alone, the engine fills each batch to 16 MiB (about 16,000 records of 1 kB).
 *
 * The engine's own batch size is kept while the records read so far are fewer bytes than one
 * chunk of output (SinkWriter's 64 KiB): until then a streamed response has sent nothing, and a
 * later batch that outlasts the query time limit can still be refused with a clean error. A
 * small batch there would start the response sooner and turn that refusal into a cut-off
 * download. Once that much was read the response is under way (or the read is nearly done), and
 * each batch ahead is sized to hold about `BATCH_BYTES`.
 */
/** The bytes of records read before batches are sized: about one chunk of streamed output. */
const FULL_BATCHES_UNTIL_BYTES = 64 * 1024;
/** Bytes of records (BSON) a sized batch aims at. */
export const BATCH_BYTES = 1024 * 1024;
/** Bounds of a sized batch: never fewer records than this, whatever their size... */
const MIN_BATCH_RECORDS = 16;
/** ...nor more (tiny records: the per-record cost of decoding then dominates the bytes). */
const MAX_BATCH_RECORDS = 10_000;

/** Tracks the bytes read by one cursor and sizes its batches. */
export class BatchSizer {
  private bytesRead = 0;

  /**
   * Counts a batch (each record's BSON bytes) just taken out of the driver. Returns the number of records the next batch
   * should hold, or undefined to leave the engine's size.
   */
  next(batch: readonly Uint8Array[]): number | undefined {
    if (batch.length === 0) return undefined;
    const bytes = batch.reduce((sum, record) => sum + record.byteLength, 0);
    const average = bytes / batch.length;
    this.bytesRead += bytes;
    if (this.bytesRead < FULL_BATCHES_UNTIL_BYTES) return undefined;
    return Math.min(MAX_BATCH_RECORDS, Math.max(MIN_BATCH_RECORDS, Math.floor(BATCH_BYTES / Math.max(1, average))));
  }
}
