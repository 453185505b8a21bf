/**
 * A record as a store reads it: still its BSON bytes, decoded (or, for JSON, rendered straight
 * from the bytes) only when it is written. A long read then never holds decoded records, and a
 * JSON or NDJSON read skips the objects altogether.
 */

/** How the records of one collection are read, with that collection's decoder settings. */
export interface BsonRecordReader<T> {
  /** The record as the driver would have handed it out. */
  decode(bytes: Uint8Array): T;
  /**
   * The record's JSON, exactly `JSON.stringify(toPlainValue(decode(bytes)))`, or undefined when
   * only the decoder can say (see bson-json.ts). Absent when the settings rule the shortcut out.
   */
  json?(bytes: Uint8Array): string | undefined;
}

export class BsonRecord<T = unknown> {
  constructor(
    /** A view into the cursor's batch, not a copy. */
    readonly bytes: Uint8Array,
    private readonly reader: BsonRecordReader<T>,
  ) {}

  decode(): T {
    return this.reader.decode(this.bytes);
  }

  /** See BsonRecordReader.json. */
  json(): string | undefined {
    return this.reader.json?.(this.bytes);
  }
}
