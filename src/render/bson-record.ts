/**
 * A record as a store reads it: still its BSON bytes, decoded (or, for JSON, rendered straight
 * from the bytes) only when it is written. A long read then never holds decoded records, and a
 * JSON or NDJSON read skips the objects altogether.
 */
import { maxJsonBytes } from './bson-json.js';

/** How the records of one collection are read, with that collection's decoder settings. */
export interface BsonRecordReader<T> {
  /** The record as the driver would have handed it out. */
  decode(bytes: Uint8Array): T;
  /**
   * The record with its numbers as their BSON classes (Double, Int32, Long), so that a double
   * is told from an integer, but otherwise rendered as `decode` renders; absent when the
   * settings rule that out (the record is then rendered from `decode`).
   */
  decodeTyped?(bytes: Uint8Array): T;
  /**
   * Writes the record's JSON, exactly the UTF-8 of `plainJson(toPlainValue(record))` (the record's decodeTyped),
   * into `target` at `offset` (room for maxJsonBytes(bytes.length) required), and returns the
   * offset after it; -1 when only the decoder can say (see bson-json.ts). Absent when the
   * settings rule the shortcut out.
   */
  writeJson?(bytes: Uint8Array, target: Buffer, offset: number): number;
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

  /** See BsonRecordReader.decodeTyped: the record as the renderers read it. */
  decodeTyped(): T {
    return (this.reader.decodeTyped ?? this.reader.decode)(this.bytes);
  }

  /** See BsonRecordReader.writeJson; -1 as well when the reader has no shortcut. */
  writeJson(target: Buffer, offset: number): number {
    return this.reader.writeJson?.(this.bytes, target, offset) ?? -1;
  }

  /** The JSON that writeJson writes, as UTF-8 bytes (undefined for -1). */
  jsonBytes(): Buffer | undefined {
    const target = Buffer.allocUnsafe(maxJsonBytes(this.bytes.length));
    const end = this.writeJson(target, 0);
    return end < 0 ? undefined : target.subarray(0, end);
  }

  /** The JSON that writeJson writes, as text (undefined for -1). */
  json(): string | undefined {
    return this.jsonBytes()?.toString('utf8');
  }
}
