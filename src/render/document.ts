import type { EnvelopeHead, PlainValue } from './types.js';

/**
 * One format's serializer, split so that a streamed envelope and a whole-value rendering come
 * out byte for byte the same:
 *   whole({count, meta, next, previous, results: [r0, r1, ...]})
 *     === envelopeOpen(head) + envelopeRecord(r0, 0) + envelopeRecord(r1, 1) + ... + envelopeClose(n)
 * Inputs are plain values (see toPlainValue); outputs are complete text pieces, never partial
 * characters, so each piece can be written to the response on its own.
 */
export interface DocumentWriter {
  /** The complete document for one value. */
  whole(value: PlainValue): string;
  /** Document prologue and the envelope up to and including the opening of `results`. */
  envelopeOpen(head: EnvelopeHead): string;
  /** One element of `results`; `index` is its 0-based position (separators depend on it). */
  envelopeRecord(record: PlainValue, index: number): string;
  /**
   * The same element from the record's JSON text (`JSON.stringify` of its plain value), for the
   * formats that write records as JSON: a record read as BSON is then never turned into objects.
   */
  envelopeRecordJson?(json: string, index: number): string;
  /**
   * For formats whose element is the record's JSON as it is, between fixed ASCII text: that text
   * before and after the element at `index`. The JSON is then written as bytes, never as text.
   */
  recordJsonFrame?(index: number): readonly [before: string, after: string];
  /** Closes `results`, the envelope and the document after `recordCount` records. */
  envelopeClose(recordCount: number): string;
  /**
   * Text written when a stream fails mid-way, for formats read by people; machine formats have
   * none, their truncated document must simply fail to parse.
   */
  readonly abortNotice?: string;
}
