/**
 * How many records each batch after the first may hold, from the size of the records read so
 * far: a streamed read holds the batch it is rendering and the one asked for ahead of it (as the
 * records' BSON bytes), so their size in bytes — not in records — is what a read costs the API's
 * memory, and what a client that stops reading keeps pinned until the send timeout cuts it off.
 * Left alone, the engine fills each batch to 16 MiB: two of them pinned per stalled export, and
 * sixteen stalled exports held over half a gigabyte.
 *
 * Every batch after the first aims at `BATCH_BYTES` of records. The first batch keeps the size the
 * read asks for (the engine's 101 records for a whole result, the page for a page), so a short
 * result still takes one round trip.
 */
/** Bytes of records (BSON) a batch after the first aims at. */
export const BATCH_BYTES = 1024 * 1024;
/** Bounds of a sized batch: never fewer records than this, whatever their size... */
const MIN_BATCH_RECORDS = 16;
/** ...nor more (tiny records: the per-record cost of decoding then dominates the bytes). */
const MAX_BATCH_RECORDS = 10_000;

/** Tracks the bytes read by one cursor and sizes its batches. */
export class BatchSizer {
  private records = 0;
  private bytes = 0;

  /** Counts a batch (each record's BSON bytes) just taken out of the driver; returns the size of the next one, in records. */
  next(batch: readonly Uint8Array[]): number | undefined {
    for (const record of batch) this.bytes += record.byteLength;
    this.records += batch.length;
    if (this.records === 0) return undefined;
    const average = this.bytes / this.records;
    return Math.min(MAX_BATCH_RECORDS, Math.max(MIN_BATCH_RECORDS, Math.floor(BATCH_BYTES / Math.max(1, average))));
  }
}
